/*
 * The Threaded backend without threads (WASI preview1 has none): the pool.c slots for a backend
 * whose only unit of concurrency is the caller.
 *
 * Invariants:
 * - async (and group_async) always run the task inline, on a copy of its context aligned to
 *   CIO_CONTEXT_ALIGN, before returning: no future or group record is ever made, so cio_await,
 *   cio_cancel, cio_group_await and cio_group_cancel return in the wrappers (src/core/io.c) without
 *   reaching the backend. The await/cancel slots exist for the vtable and treat a call as a bug.
 * - concurrent and group_concurrent fail with ConcurrencyUnavailable: nothing can run beside the
 *   caller. The async/concurrent limits are recorded (cio_threaded_set_*_limit) and change nothing.
 * - Nothing can cancel the one thread: check_cancel is CIO_OK, recancel has no request to re-arm,
 *   cancel protection is a plain global that only swaps.
 * - Futex: no other thread can change a word or wake a waiter, so futex_wait returns at once when
 *   the value differs (CIO_OK), otherwise sleeps out its timeout and returns Timeout. With no
 *   timeout, a value that can never change would block forever: futex_wait returns CIO_OK as a
 *   spurious wake-up (callers re-check, per cio/io.h), and futex_wait_uncancelable likewise.
 *   futex_wake has nobody to wake.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "stderr_lock.h"
#include "threaded.h"


struct cio_threaded {
    size_t async_limit;      /* recorded only */
    size_t concurrent_limit; /* recorded only */
    size_t tasks_inline;     /* every async and group_async call (one thread: no atomics) */
};

static cio_cancel_protection protection = CIO_CANCEL_UNBLOCKED;

/* ---- tasks and groups ------------------------------------------------------------------------- */

struct cio_any_future *cio__t_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result)
{
    ((cio_threaded *)ud)->tasks_inline++;
    *inline_result = cio__run_inline(fn, ctx, ctx_size);
    return NULL;
}

cio_err cio__t_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out)
{
    (void)ud;
    (void)fn;
    (void)ctx;
    (void)ctx_size;
    (void)out;
    return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
}

cio_err cio__t_await(void *ud, struct cio_any_future *task)
{
    (void)ud;
    (void)task;
    return CIO__BUG("await of a future the single-threaded backend never made");
}

cio_err cio__t_cancel(void *ud, struct cio_any_future *task)
{
    (void)ud;
    (void)task;
    return CIO__BUG("cancel of a future the single-threaded backend never made");
}

void cio__t_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    (void)g;
    ((cio_threaded *)ud)->tasks_inline++;
    (void)cio__run_inline(fn, ctx, ctx_size); /* a member's result is discarded */
}

cio_err cio__t_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    (void)ud;
    (void)g;
    (void)fn;
    (void)ctx;
    (void)ctx_size;
    return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
}

cio_err cio__t_group_await(void *ud, cio_group *g)
{
    (void)ud;
    (void)g;
    return CIO_OK;
}

void cio__t_group_cancel(void *ud, cio_group *g)
{
    (void)ud;
    (void)g;
}

/* ---- cancellation ------------------------------------------------------------------------------ */

cio_err cio__t_check_cancel(void *ud)
{
    (void)ud;
    return CIO__IN_SET(cancelable, cio__t_cancel_point());
}

void cio__t_recancel(void *ud)
{
    (void)ud;
}

cio_cancel_protection cio__t_swap_cancel_protection(void *ud, cio_cancel_protection prot)
{
    (void)ud;
    cio_cancel_protection old = protection;
    protection = prot;
    return old;
}

/* ---- futex ------------------------------------------------------------------------------------- */

cio_err cio__t_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout)
{
    (void)ud;
    if (atomic_load_explicit(ptr, memory_order_acquire) != expected || timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return CIO_OK; /* differs, or a spurious wake-up instead of blocking for good */
    (void)cio__os_sleep(NULL, timeout);
    return CIO__IN_SET(futex_wait, CIO_E_TIMEOUT);
}

void cio__t_futex_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    (void)ud;
    (void)ptr;
    (void)expected;
}

void cio__t_futex_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    (void)ud;
    (void)ptr;
    (void)max_waiters;
}

/* ---- create / destroy -------------------------------------------------------------------------- */

cio_err cio_threaded_create(const cio_threaded_options *options, cio_threaded **out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio__stderr_set_threads(cio__t_futex_wait, cio__t_futex_wake); /* how threads wait for the stderr lock */
    cio_threaded *t = (cio_threaded *)CIO__SYS(calloc, wasi_threaded_create)(1, sizeof *t);
    if (t == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    t->async_limit = options != NULL ? options->async_limit : 0;
    t->concurrent_limit = options != NULL && options->concurrent_limit != 0 ? options->concurrent_limit : SIZE_MAX;
    *out = t;
    return CIO_OK;
}

void cio_threaded_destroy(cio_threaded *t)
{
    free(t); /* every task already finished: they all ran inline */
}

void cio_threaded_set_async_limit(cio_threaded *t, size_t limit)
{
    t->async_limit = limit;
}

void cio_threaded_set_concurrent_limit(cio_threaded *t, size_t limit)
{
    t->concurrent_limit = limit;
}

void cio_threaded_get_stats(cio_threaded *t, cio_threaded_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out); /* nothing is ever kicked, nothing runs on a worker */
    if (t != NULL)
        out->tasks_inline = t->tasks_inline;
}
