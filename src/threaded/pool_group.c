/*
 * The Threaded backend's groups (split from pool.c, which it calls; pool.c never calls here): the
 * group record, group_async / group_concurrent, group_await and group_cancel.
 *
 * Invariants:
 * - The record is allocated at the first member (cio_group.token points to it) and freed by the
 *   group's await or cancel once `running` is 0 (group_release takes the pool's mu once more, so
 *   the last member, which wakes the awaiter under it, has let go).
 * - The record has no lock and no member list: members are counted in `running` before they are
 *   queued and counted out by their worker under the pool's mu (pool.c). Cancelers set `canceled`
 *   and walk the pool's `running` list under the pool's mu for the group's members, so a member
 *   they kick is still running; members still queued see `canceled` when a worker takes them, new
 *   ones when they are counted in.
 * - A member's result is discarded; a member that could not be queued runs inline (group_async)
 *   or is refused (group_concurrent).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"
#include "pool.h"
#include "list.h"

static void *group_new(void)
{
    return CIO__SYS(calloc, group_get)(1, sizeof(struct cio__t_group));
}

static struct cio__t_group *group_get(cio_group *g, bool create)
{
    return (struct cio__t_group *)cio__lazy_record(&g->token, create, group_new, free);
}

/* Runs a group member inline: the member's result is discarded, like on a worker. */
static void group_inline(cio_threaded *t, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    cio__t_count(&t->n_inline);
    (void)cio__run_inline(fn, ctx, ctx_size);
}

static struct cio_any_future *group_task(cio_threaded *t, cio_group *g, struct cio__t_group **grp, cio_task_fn fn,
                                         const void *ctx, size_t ctx_size)
{
    struct cio__t_group *gr = group_get(g, true);
    *grp = gr;
    if (gr == NULL)
        return NULL;
    struct cio_any_future *task = cio__t_make_task(t, fn, ctx, ctx_size);
    if (task == NULL)
        return NULL;
    cio__t_group_link(gr, task);
    return task;
}

void cio__t_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio__t_group *gr = NULL;
    if (ctx_size <= CIO__T_BLOCK_CTX) {
        bool full = false;
        gr = group_get(g, true);
        if (gr != NULL && cio__t_async_recycled(t, gr, fn, ctx, ctx_size, &full) != NULL)
            return;
        if (full) {
            group_inline(t, fn, ctx, ctx_size);
            return;
        }
    }
    struct cio_any_future *task = cio__t_async_room(t) ? group_task(t, g, &gr, fn, ctx, ctx_size) : NULL;
    if (task != NULL && cio__t_submit(t, task, true))
        return;
    if (task != NULL)
        cio__t_group_drop(gr, task);
    group_inline(t, fn, ctx, ctx_size);
}

cio_err cio__t_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio__t_group *gr = NULL;
    struct cio_any_future *task = group_task(t, g, &gr, fn, ctx, ctx_size);
    if (task == NULL)
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    if (!cio__t_submit(t, task, false)) {
        cio__t_group_drop(gr, task);
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    }
    return CIO_OK;
}

/* Requests cancellation of every running member; returns whether any is still in a syscall with
 * the request pending (to be signalled again). */
static bool group_signal_all(cio_threaded *t, struct cio__t_group *gr, bool first)
{
    bool again = false;
    cio__t_lock(&t->mu);
    if (first)
        atomic_store_explicit(&gr->canceled, 1, memory_order_release);
    for (struct cio_any_future *m = t->running; m != NULL; m = m->rnext)
        if (m->group == gr)
            again |= first ? cio__t_request_cancel(m) : cio__t_resignal(m);
    cio__mu_unlock(&t->mu);
    return again;
}

/* One futex wait on the group's `seq` (a worker counts as blocked meanwhile: pool.c). */
static cio_err group_sleep(struct cio__t_group *gr, uint32_t seq, cio_timeout to, bool cancelable)
{
    cio__t_pool_block(true);
    cio_err e = cio__t_os_futex_wait(&gr->seq, seq, to, cancelable);
    cio__t_pool_block(false);
    return e;
}

static void group_wait_all(cio_threaded *t, struct cio__t_group *gr, bool canceling)
{
    int64_t backoff = CIO__T_RESIGNAL_FIRST_NS; /* as pool.c's wait_canceled */
    bool again = canceling;
    if (again)
        cio__t_yield_while(&gr->running, 0, false, CIO__T_CANCEL_YIELD_NS);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&gr->seq, memory_order_acquire);
        if (atomic_load_explicit(&gr->running, memory_order_acquire) == 0)
            return;
        cio_timeout to = again ? cio_timeout_ns(backoff) : CIO_TIMEOUT_NONE;
        (void)group_sleep(gr, seq, to, false);
        if (again) {
            again = group_signal_all(t, gr, false);
            if (backoff < 10000000)
                backoff *= 2;
        }
    }
}

static void group_release(cio_threaded *t, cio_group *g, struct cio__t_group *gr)
{
    /* The last member bumped seq and woke us under the pool's mu; taking it once more waits until
     * it let go. */
    cio__t_lock(&t->mu);
    cio__mu_unlock(&t->mu);
    atomic_store_explicit(&g->token, 0, memory_order_release);
    free(gr);
}

cio_err cio__t_group_await(void *ud, cio_group *g)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio__t_group *gr = group_get(g, false);
    if (gr == NULL)
        return CIO_OK;
    cio_err result = CIO_OK;
    cio__t_yield_while(&gr->running, 0, false, CIO__T_IDLE_YIELD_NS); /* as cio__t_await */
    for (;;) {
        uint32_t seq = atomic_load_explicit(&gr->seq, memory_order_acquire);
        if (atomic_load_explicit(&gr->running, memory_order_acquire) == 0)
            break;
        cio_err e = group_sleep(gr, seq, CIO_TIMEOUT_NONE, true);
        if (e == CIO_E_CANCELED) {
            bool again = group_signal_all(t, gr, true);
            group_wait_all(t, gr, again);
            result = CIO_E_CANCELED;
            break;
        }
    }
    group_release(t, g, gr);
    return CIO__IN_SET(cancelable, result);
}

void cio__t_group_cancel(void *ud, cio_group *g)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio__t_group *gr = group_get(g, false);
    if (gr == NULL)
        return;
    bool again = group_signal_all(t, gr, true);
    group_wait_all(t, gr, again);
    group_release(t, g, gr);
}
