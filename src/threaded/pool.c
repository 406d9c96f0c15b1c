/*
 * The Threaded backend's worker pool: async, concurrent, await, cancel and groups.
 *
 * Invariants:
 * - `mu` guards the run queue (FIFO: head/tail), the worker counts, the limits, the free list of
 *   task blocks and `shutdown`. No other lock is taken while holding it, except that a group's
 *   `mu` may be taken after it (lock order: pool mu, then group mu; never the reverse).
 * - `busy` counts tasks queued or running on workers; async runs inline once busy >= async_limit,
 *   concurrent fails once busy >= concurrent_limit (default unlimited): concurrent oversubscribes
 *   the CPUs so that two concurrent tasks can always rendezvous. `async_full` mirrors
 *   busy >= async_limit (written under mu) so that async can run inline without taking mu.
 * - Every queued task has a worker: enqueue either hands it to an idle worker (`idle` > `wakeups`,
 *   one wakeup granted per task, announced by bumping `wake_gen`) or spawns a new worker. Nothing
 *   ever waits behind a busy pool. A worker counts as idle from the moment it gives up `busy` for
 *   a finished task (same critical section), so a submit right after an await never starts a
 *   thread while one is about to be free; it then takes work only through a granted wakeup.
 * - Yield before sleeping: a worker that runs out of work stays counted idle and, without mu,
 *   sched_yields for up to IDLE_YIELD_NS watching `wake_gen` before it waits on `work`; an
 *   awaiter does the same on the task's `done` word (a group awaiter on `running`) before its
 *   futex wait; a canceler that had to signal its task, for CANCEL_YIELD_NS; an untimed wait
 *   through the futex slots (src/core's mutex, condition, queue, event …) for SYNC_YIELD_NS.
 *   Waking a sleeping thread costs a context switch on the same CPU and, on KVM guests with
 *   halt-polling off, ~26 µs for a halted vCPU; a serial async/await loop hands work back within
 *   a few µs. Yielding (not spinning) lets the thread waited for run at once when it shares the
 *   CPU, and a waker that finds nobody in the kernel is not preempted by the thread it wakes.
 * - Workers retire after idle_timeout_ms without work; destroy waits until busy == 0 and no worker
 *   is left, so it returns only after every task finished. Tasks taken by a worker are on the
 *   `running` list (under mu) until they finish: a destroy that still finds some after
 *   DESTROY_GRACE_MS cancels them (and signals again, as a canceler does), and a debug build
 *   reports those that still run after DESTROY_REPORT_MS (ignoring cancellation) instead of hanging
 *   silently.
 * - A future's block is freed by whoever awaits/cancels it, after `done` is FINISHED. A group member's
 *   block is freed by its own worker after it unlinked itself from the group.
 * - Task blocks are recycled through a free list (at most FREE_MAX blocks of BLOCK_CTX bytes of
 *   context), so a hot async/await loop does not call malloc; with a recycled block async takes mu
 *   once (limit check, block, enqueue). `work` is signalled after mu is released.
 * - The OS pieces (aligned blocks, CPU count, stack size) are pool_posix.c / pool_windows.c; the
 *   threads, locks and condition variables are POSIX threads (winpthreads on Windows). Yielding
 *   before sleeping (cio__t_yield_while), the cancellation slots and the futex slots are
 *   pool_slots.c's; create and destroy are pool_life.c's (the records of both: pool.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "overflow.h"
#include "list.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"
#include "pool.h"

#define BLOCK_CTX 256u
#define FREE_MAX 64u
#define RESIGNAL_FIRST_NS 50000 /* wait_canceled */
#define CANCEL_YIELD_NS 50000   /* wait_canceled */
#define IDLE_YIELD_NS 20000     /* worker_main, cio__t_await */

/* ---- task blocks ------------------------------------------------------------------------------- */

/* Clears a block's header for a new task (its context area and capacity stay). */
static void task_reset(cio_threaded *t, struct cio_any_future *task)
{
    unsigned char *ctx = task->ctx;
    size_t cap = task->capacity;
    memset(task, 0, sizeof *task);
    task->ctx = ctx;
    task->capacity = cap;
    task->owner = t;
    task->signalers = &t->signalers;
    task->kicks = &t->kicks;
}

static struct cio_any_future *task_alloc(cio_threaded *t, size_t ctx_size)
{
    struct cio_any_future *task = NULL;
    if (ctx_size <= BLOCK_CTX) {
        pthread_mutex_lock(&t->mu);
        task = t->free_list;
        if (task != NULL) {
            t->free_list = task->next;
            t->free_count--;
        }
        pthread_mutex_unlock(&t->mu);
    }
    if (task == NULL) {
        size_t cap = ctx_size <= BLOCK_CTX ? BLOCK_CTX : ctx_size;
        size_t header = (sizeof(struct cio_any_future) + CIO_CONTEXT_ALIGN - 1) & ~(size_t)(CIO_CONTEXT_ALIGN - 1);
        if (cap > SIZE_MAX - header - CIO_CONTEXT_ALIGN)
            return NULL;
        void *mem = cio__t_block_alloc(header + cap);
        if (mem == NULL)
            return NULL;
        task = (struct cio_any_future *)mem;
        task->capacity = cap;
        task->ctx = (unsigned char *)mem + header;
    }
    task_reset(t, task);
    return task;
}

static void task_free(cio_threaded *t, struct cio_any_future *task)
{
    if (task->capacity == BLOCK_CTX) {
        pthread_mutex_lock(&t->mu);
        if (t->free_count < FREE_MAX) {
            task->next = t->free_list;
            t->free_list = task;
            t->free_count++;
            task = NULL;
        }
        pthread_mutex_unlock(&t->mu);
    }
    cio__t_block_free(task);
}

/* ---- running a task ------------------------------------------------------------------------------ */

static void group_member_done(struct cio_any_future *task);

static void run_task(struct cio_any_future *task)
{
    struct cio_any_future *prev = cio__t_current;
    cio__t_record_thread(task);
    cio__t_current = task;
    cio_err r = task->fn(task->ctx);
    cio__t_current = prev;
    task->result = r;
    /* The worker is free again before anyone learns the task finished, so an await followed by an
     * async finds room under the async limit instead of running inline; and it counts as idle from
     * the same moment, so that such an async hands the task to it instead of starting a thread. */
    cio_threaded *t = task->owner;
    pthread_mutex_lock(&t->mu);
    CIO__LIST_UNLINK(t->running, task, rprev, rnext);
    t->busy--;
    t->idle++;
    atomic_store_explicit(&t->async_full, t->busy >= t->async_limit, memory_order_relaxed);
    if (t->shutdown && t->busy == 0)
        pthread_cond_broadcast(&t->quiet);
    pthread_mutex_unlock(&t->mu);
    if (task->group != NULL) {
        group_member_done(task); /* under the group's mu, which its cancelers hold while kicking */
    } else {
        /* seq_cst: against signal_if_blocked. Only an awaiter that announced itself may sleep. */
        if (atomic_exchange_explicit(&task->done, CIO__T_FINISHED, memory_order_seq_cst) == CIO__T_SLEEPER)
            cio__t_os_futex_wake(&task->done, UINT32_MAX);
    }
    cio__t_quiesce(&t->signalers); /* no kick may reach this thread once it runs on (task.h) */
}

static void *worker_main(void *arg)
{
    cio_threaded *t = (cio_threaded *)arg;
    char top; /* near the top of this thread's stack (the overflow message's estimate) */
    cio__t_worker_stack((uintptr_t)&top, t->stack_size);
    cio__overflow_thread_begin();
    cio__t_signals_unblock();
    pthread_mutex_lock(&t->mu);
    bool idle = false; /* counted in t->idle: from run_task, or below */
    for (;;) {
        if (!idle) {
            struct cio_any_future *task = t->head;
            if (task != NULL) {
                t->head = task->next;
                if (t->head == NULL)
                    t->tail = NULL;
                CIO__LIST_PUSH(t->running, task, rprev, rnext);
                pthread_mutex_unlock(&t->mu);
                run_task(task); /* busy--, and counts this worker idle */
                pthread_mutex_lock(&t->mu);
                idle = true;
                continue;
            }
            if (t->shutdown)
                break;
            t->idle++;
            idle = true;
        }
        if (t->wakeups == 0) {
            /* Counted idle while yielding, so that enqueue grants this worker the next task. */
            uint32_t gen = atomic_load_explicit(&t->wake_gen, memory_order_relaxed);
            pthread_mutex_unlock(&t->mu);
            cio__t_yield_while(&t->wake_gen, gen, true, IDLE_YIELD_NS);
            pthread_mutex_lock(&t->mu);
        }
        struct timespec deadline;
        if (CIO__SYS(clock_gettime, worker_idle)(CLOCK_REALTIME, &deadline) != 0) {
            deadline.tv_sec = 0; /* no clock: time out at once (the worker retires if idle) */
            deadline.tv_nsec = 0;
        }
        deadline.tv_sec += (time_t)(t->idle_timeout_ms / 1000u);
        deadline.tv_nsec += (long)(t->idle_timeout_ms % 1000u) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        bool timed_out = false;
        while (t->wakeups == 0 && !t->shutdown && !timed_out)
            timed_out = pthread_cond_timedwait(&t->work, &t->mu, &deadline) == ETIMEDOUT;
        t->idle--;
        idle = false;
        if (t->wakeups > 0) {
            t->wakeups--;
            continue;
        }
        if (t->shutdown || (timed_out && t->head == NULL))
            break;
    }
    cio__overflow_thread_end(); /* before destroy can see it gone (a syscall and a free, under mu) */
    cio__t_worker_stack(0, 0);
    t->workers--;
    if (t->workers == 0)
        pthread_cond_broadcast(&t->quiet);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* With mu held: puts the task on the queue and makes sure a worker will take it: either grants an
 * idle worker a wakeup (*signal: the caller signals `work` after unlocking mu, so the worker does
 * not wake into a held mutex) or starts a worker. Returns false (and leaves the queue unchanged)
 * when no worker exists and none can be started. */
static bool enqueue_locked(cio_threaded *t, struct cio_any_future *task, bool *signal)
{
    *signal = false;
    if (t->idle > t->wakeups) {
        t->wakeups++;
        atomic_fetch_add_explicit(&t->wake_gen, 1, memory_order_release);
        *signal = true;
    } else {
        pthread_attr_t attr;
        pthread_t th;
        if (CIO__SYS(pthread_attr_init, enqueue)(&attr) != 0)
            return false;
        (void)pthread_attr_setstacksize(&attr, t->stack_size);
        (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = CIO__SYS(pthread_create, enqueue)(&th, &attr, worker_main, t);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            return false;
        t->workers++;
    }
    CIO__FIFO_PUSH(t->head, t->tail, task, next);
    t->busy++;
    cio__t_count(&t->n_workers); /* under mu: exact */
    atomic_store_explicit(&t->async_full, t->busy >= t->async_limit, memory_order_relaxed);
    return true;
}

/* Starts the task on a worker unless the async (or concurrent) limit is reached or no thread can be
 * had. */
static bool submit(cio_threaded *t, struct cio_any_future *task, bool is_async)
{
    bool signal = false;
    pthread_mutex_lock(&t->mu);
    size_t limit = is_async ? t->async_limit : t->concurrent_limit;
    bool ok = t->busy < limit && !t->shutdown && enqueue_locked(t, task, &signal);
    pthread_mutex_unlock(&t->mu);
    if (signal)
        pthread_cond_signal(&t->work);
    return ok;
}

static void group_link(struct cio__t_group *gr, struct cio_any_future *task);
static void group_abandon(cio_threaded *t, struct cio__t_group *gr, struct cio_any_future *task);

/* async's (and group_async's) common case in one critical section: the limit check, a recycled
 * block and the enqueue (the context is copied into the block under mu: at most BLOCK_CTX bytes; a
 * group member is linked into `gr` under mu too, taking the group's mu after the pool's). Returns
 * the queued task; NULL with *full set when the task must run inline (limit reached, shutting
 * down, no worker could be started); NULL with *full clear when no recycled block is free (the
 * caller allocates). */
static struct cio_any_future *async_recycled(cio_threaded *t, struct cio__t_group *gr, cio_task_fn fn, const void *ctx,
                                             size_t ctx_size, bool *full)
{
    bool signal = false, abandon = false;
    /* Full by the hint: inline without touching mu (no cache-line traffic with busy workers). A
     * stale hint only moves a task between inline and a worker, both valid for async. */
    if (atomic_load_explicit(&t->async_full, memory_order_relaxed)) {
        *full = true;
        return NULL;
    }
    pthread_mutex_lock(&t->mu);
    struct cio_any_future *task = NULL;
    *full = t->busy >= t->async_limit || t->shutdown;
    if (!*full && t->free_list != NULL) {
        task = t->free_list;
        t->free_list = task->next;
        t->free_count--;
        task_reset(t, task);
        task->fn = fn;
        task->site = cio__spawn_site();
        task->ctx_size = ctx_size;
        if (ctx_size > 0)
            memcpy(task->ctx, ctx, ctx_size);
        if (gr != NULL)
            group_link(gr, task);
        if (!enqueue_locked(t, task, &signal)) {
            if (gr != NULL) {
                abandon = true; /* unlinked and freed below, without mu */
            } else {
                task->next = t->free_list;
                t->free_list = task;
                t->free_count++;
            }
            *full = true;
        }
    }
    pthread_mutex_unlock(&t->mu);
    if (signal)
        pthread_cond_signal(&t->work);
    if (*full && task != NULL) {
        if (abandon)
            group_abandon(t, gr, task);
        task = NULL;
    }
    return task;
}

static struct cio_any_future *make_task(cio_threaded *t, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    struct cio_any_future *task = task_alloc(t, ctx_size);
    if (task == NULL)
        return NULL;
    task->fn = fn;
    task->site = cio__spawn_site();
    task->ctx_size = ctx_size;
    if (ctx_size > 0)
        memcpy(task->ctx, ctx, ctx_size);
    return task;
}

/* ---- futures -------------------------------------------------------------------------------------- */

struct cio_any_future *cio__t_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio_any_future *task = NULL;
    bool full = false;
    if (ctx_size <= BLOCK_CTX) {
        task = async_recycled(t, NULL, fn, ctx, ctx_size, &full);
        if (task != NULL)
            return task;
    }
    if (!full) {
        pthread_mutex_lock(&t->mu);
        bool room = t->busy < t->async_limit;
        pthread_mutex_unlock(&t->mu);
        if (room)
            task = make_task(t, fn, ctx, ctx_size);
    }
    if (task != NULL && submit(t, task, true))
        return task;
    if (task != NULL)
        task_free(t, task);
    cio__t_count(&t->n_inline);
    *inline_result = cio__run_inline(fn, ctx, ctx_size);
    return NULL;
}

cio_err cio__t_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio_any_future *task = make_task(t, fn, ctx, ctx_size);
    if (task == NULL)
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    if (!submit(t, task, false)) {
        task_free(t, task);
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    }
    *out = task;
    return CIO_OK;
}

/* Waits for `task` to finish after a cancel request. `signalled`: the request found it in a
 * syscall and signalled it. A signal is lost only when it lands between cio__t_syscall_begin and
 * the syscall itself, so the canceler must come back and re-signal while the request stays
 * pending, but the common case should not pay for that: a timed futex wait costs 10-20 µs more
 * than an untimed one on the KVM guests this is measured on (the timer), and re-signalling at
 * once cost a second signal. So a signalled task first gets CANCEL_YIELD_NS of sched_yield (it
 * runs at once if it shares this CPU; on another CPU this covers its wake-up), then timed waits
 * from RESIGNAL_FIRST_NS doubling to 10 ms, re-signalling after each. */
static bool finished(struct cio_any_future *task)
{
    return atomic_load_explicit(&task->done, memory_order_acquire) == CIO__T_FINISHED;
}

/* One futex wait for the task's end. The awaiter first announces itself (RUNNING -> SLEEPER), so
 * that the worker makes the wake system call only when somebody may sleep (task.h). */
static cio_err sleep_until_finished(struct cio_any_future *task, cio_timeout timeout, bool cancelable)
{
    uint32_t v = CIO__T_RUNNING;
    if (!atomic_compare_exchange_strong_explicit(&task->done, &v, CIO__T_SLEEPER, memory_order_seq_cst,
                                                 memory_order_acquire) &&
        v == CIO__T_FINISHED)
        return CIO_OK;
    return cio__t_os_futex_wait(&task->done, CIO__T_SLEEPER, timeout, cancelable);
}

static void wait_canceled(struct cio_any_future *task, bool signalled)
{
    int64_t backoff = RESIGNAL_FIRST_NS;
    bool again = signalled;
    if (again)
        cio__t_yield_while(&task->done, CIO__T_FINISHED, false, CANCEL_YIELD_NS);
    while (!finished(task)) {
        cio_timeout to = again ? cio_timeout_ns(backoff) : CIO_TIMEOUT_NONE;
        (void)sleep_until_finished(task, to, false);
        if (finished(task))
            break;
        again = cio__t_resignal(task);
        if (backoff < 10000000)
            backoff *= 2;
    }
}

static cio_err finish_future(cio_threaded *t, struct cio_any_future *task)
{
    cio_err r = task->result;
    task_free(t, task);
    return r;
}

cio_err cio__t_await(void *ud, struct cio_any_future *task)
{
    cio_threaded *t = (cio_threaded *)ud;
    cio__t_yield_while(&task->done, CIO__T_FINISHED, false, IDLE_YIELD_NS);
    for (;;) {
        if (finished(task))
            return finish_future(t, task);
        cio_err e = sleep_until_finished(task, CIO_TIMEOUT_NONE, true);
        if (e == CIO_E_CANCELED) {
            /* The awaiter was canceled: forward the request, wait, and hand the request back to
             * the awaiter unless the awaited task acknowledged it. */
            bool sent = cio__t_request_cancel(task);
            wait_canceled(task, sent);
            uint32_t s = atomic_load_explicit(&task->cancel, memory_order_acquire);
            if (!(s & CIO__T_ACK) && cio__t_current != NULL)
                atomic_fetch_xor_explicit(&cio__t_current->cancel, CIO__T_ACK | CIO__T_REQ, memory_order_acq_rel);
            return finish_future(t, task);
        }
    }
}

cio_err cio__t_cancel(void *ud, struct cio_any_future *task)
{
    cio_threaded *t = (cio_threaded *)ud;
    if (!finished(task)) {
        bool sent = cio__t_request_cancel(task);
        wait_canceled(task, sent);
    }
    return finish_future(t, task);
}

/* ---- groups ------------------------------------------------------------------------------------- */

static void *group_new(void)
{
    struct cio__t_group *gr = (struct cio__t_group *)CIO__SYS(calloc, group_get)(1, sizeof *gr);
    if (gr != NULL)
        pthread_mutex_init(&gr->mu, NULL);
    return gr;
}

static void group_free(void *p)
{
    struct cio__t_group *gr = (struct cio__t_group *)p;
    pthread_mutex_destroy(&gr->mu);
    free(gr);
}

static struct cio__t_group *group_get(cio_group *g, bool create)
{
    return (struct cio__t_group *)cio__lazy_record(&g->token, create, group_new, group_free);
}

static void group_link(struct cio__t_group *gr, struct cio_any_future *task)
{
    task->group = gr;
    atomic_fetch_add_explicit(&gr->running, 1, memory_order_acq_rel);
    pthread_mutex_lock(&gr->mu);
    CIO__LIST_PUSH(gr->members, task, gprev, gnext);
    if (atomic_load_explicit(&gr->canceled, memory_order_acquire))
        atomic_fetch_or_explicit(&task->cancel, CIO__T_REQ, memory_order_acq_rel);
    pthread_mutex_unlock(&gr->mu);
}

static void group_unlink_locked(struct cio__t_group *gr, struct cio_any_future *task)
{
    CIO__LIST_UNLINK(gr->members, task, gprev, gnext);
}

/* Unlinks a member and frees its block; the last one out bumps `seq` and wakes the awaiter, both
 * under mu: the awaiter takes mu before it frees the record (group_release), so the record (and
 * the futex word) outlives the wake. Nothing here touches the record after the unlock. */
static void group_drop(struct cio__t_group *gr, struct cio_any_future *task)
{
    cio_threaded *t = task->owner;
    pthread_mutex_lock(&gr->mu);
    group_unlink_locked(gr, task);
    uint32_t left = atomic_fetch_sub_explicit(&gr->running, 1, memory_order_acq_rel) - 1;
    if (left == 0) {
        atomic_fetch_add_explicit(&gr->seq, 1, memory_order_release);
        cio__t_os_futex_wake(&gr->seq, UINT32_MAX);
    }
    pthread_mutex_unlock(&gr->mu);
    task_free(t, task);
}

static void group_member_done(struct cio_any_future *task)
{
    group_drop(task->group, task);
}

/* Runs a group member inline: the member's result is discarded, like on a worker. */
static void group_inline(cio_threaded *t, struct cio__t_group *gr, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    (void)gr;
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
    struct cio_any_future *task = make_task(t, fn, ctx, ctx_size);
    if (task == NULL)
        return NULL;
    group_link(gr, task);
    return task;
}

static void group_abandon(cio_threaded *t, struct cio__t_group *gr, struct cio_any_future *task)
{
    (void)t;
    group_drop(gr, task);
}

void cio__t_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio__t_group *gr = NULL;
    if (ctx_size <= BLOCK_CTX) {
        bool full = false;
        gr = group_get(g, true);
        if (gr != NULL && async_recycled(t, gr, fn, ctx, ctx_size, &full) != NULL)
            return;
        if (full) {
            group_inline(t, gr, fn, ctx, ctx_size);
            return;
        }
    }
    pthread_mutex_lock(&t->mu);
    bool room = t->busy < t->async_limit;
    pthread_mutex_unlock(&t->mu);
    struct cio_any_future *task = room ? group_task(t, g, &gr, fn, ctx, ctx_size) : NULL;
    if (task != NULL && submit(t, task, true))
        return;
    if (task != NULL)
        group_abandon(t, gr, task);
    group_inline(t, gr, fn, ctx, ctx_size);
}

cio_err cio__t_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio__t_group *gr = NULL;
    struct cio_any_future *task = group_task(t, g, &gr, fn, ctx, ctx_size);
    if (task == NULL)
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    if (!submit(t, task, false)) {
        group_abandon(t, gr, task);
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    }
    return CIO_OK;
}

/* Requests cancellation of every member; returns whether any is still in a syscall with the
 * request pending (to be signalled again). */
static bool group_signal_all(struct cio__t_group *gr, bool first)
{
    bool again = false;
    pthread_mutex_lock(&gr->mu);
    if (first)
        atomic_store_explicit(&gr->canceled, 1, memory_order_release);
    for (struct cio_any_future *m = gr->members; m != NULL; m = m->gnext)
        again |= first ? cio__t_request_cancel(m) : cio__t_resignal(m);
    pthread_mutex_unlock(&gr->mu);
    return again;
}

static void group_wait_all(struct cio__t_group *gr, bool canceling)
{
    int64_t backoff = RESIGNAL_FIRST_NS; /* as wait_canceled */
    bool again = canceling;
    if (again)
        cio__t_yield_while(&gr->running, 0, false, CANCEL_YIELD_NS);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&gr->seq, memory_order_acquire);
        if (atomic_load_explicit(&gr->running, memory_order_acquire) == 0)
            return;
        cio_timeout to = again ? cio_timeout_ns(backoff) : CIO_TIMEOUT_NONE;
        (void)cio__t_os_futex_wait(&gr->seq, seq, to, false);
        if (again) {
            again = group_signal_all(gr, false);
            if (backoff < 10000000)
                backoff *= 2;
        }
    }
}

static void group_release(cio_group *g, struct cio__t_group *gr)
{
    /* The last member bumped seq and woke us under mu; taking mu once more waits until it let go. */
    pthread_mutex_lock(&gr->mu);
    pthread_mutex_unlock(&gr->mu);
    atomic_store_explicit(&g->token, 0, memory_order_release);
    group_free(gr);
}

cio_err cio__t_group_await(void *ud, cio_group *g)
{
    (void)ud;
    struct cio__t_group *gr = group_get(g, false);
    if (gr == NULL)
        return CIO_OK;
    cio_err result = CIO_OK;
    cio__t_yield_while(&gr->running, 0, false, IDLE_YIELD_NS); /* as cio__t_await */
    for (;;) {
        uint32_t seq = atomic_load_explicit(&gr->seq, memory_order_acquire);
        if (atomic_load_explicit(&gr->running, memory_order_acquire) == 0)
            break;
        cio_err e = cio__t_os_futex_wait(&gr->seq, seq, CIO_TIMEOUT_NONE, true);
        if (e == CIO_E_CANCELED) {
            bool again = group_signal_all(gr, true);
            group_wait_all(gr, again);
            result = CIO_E_CANCELED;
            break;
        }
    }
    group_release(g, gr);
    return CIO__IN_SET(cancelable, result);
}

void cio__t_group_cancel(void *ud, cio_group *g)
{
    (void)ud;
    struct cio__t_group *gr = group_get(g, false);
    if (gr == NULL)
        return;
    bool again = group_signal_all(gr, true);
    group_wait_all(gr, again);
    group_release(g, gr);
}
