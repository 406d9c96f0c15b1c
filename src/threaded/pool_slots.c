/*
 * The Threaded backend's waits that need no pool state (split from pool.c): yielding before
 * sleeping (cio__t_yield_while, which the pool's workers, awaiters and cancelers use as well), the
 * cancellation slots and the futex slots of cio/io.h.
 *
 * Invariants: see pool.c's top comment ("Yield before sleeping"): nobody spins, a yield ends as soon
 * as the word changes or the time is up, and a clock that cannot be read means no yielding at all
 * (the caller sleeps at once). The slots act on the calling thread's task (cio__t_current) only, or
 * on the thread itself when it is no worker.
 */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"
#include "pool.h"

#define SYNC_YIELD_NS 20000 /* the futex slots */

/* ---- cancellation slots --------------------------------------------------------------------------- */

cio_err cio__t_check_cancel(void *ud)
{
    (void)ud;
    return CIO__IN_SET(cancelable, cio__t_cancel_point());
}

void cio__t_recancel(void *ud)
{
    (void)ud;
    struct cio_any_future *task = cio__t_current;
    if (task == NULL)
        return;
    uint32_t s = atomic_load_explicit(&task->cancel, memory_order_acquire);
    assert((s & CIO__T_ACK) && "cio_recancel without a received cancel request");
    while (s & CIO__T_ACK) {
        uint32_t n = (s & ~CIO__T_ACK) | CIO__T_REQ;
        if (atomic_compare_exchange_weak_explicit(&task->cancel, &s, n, memory_order_acq_rel, memory_order_acquire))
            break;
    }
}

static _Thread_local cio_cancel_protection foreign_protection;

cio_cancel_protection cio__t_swap_cancel_protection(void *ud, cio_cancel_protection prot)
{
    (void)ud;
    struct cio_any_future *task = cio__t_current;
    cio_cancel_protection *slot = task != NULL ? &task->protection : &foreign_protection;
    cio_cancel_protection old = *slot;
    *slot = prot;
    return old;
}

/* ---- futex slots ------------------------------------------------------------------------------------ */

/* What cio_mutex, cio_condition, cio_queue, cio_event … (src/core) wait with. An untimed wait first
 * yields for up to SYNC_YIELD_NS while the word holds `expected`, like await (top comment): on one
 * CPU the thread it waits for runs at once and its wake finds nobody in the kernel (no futex call,
 * no preemption of the waker, which may still hold the lock the woken one needs next); on another
 * CPU it saves the wake-up of a halted vCPU. A pending cancel request ends the yielding (the
 * futex wait's bracket then reports it). Timed waits sleep at once. */
static void yield_on_word(const _Atomic(uint32_t) *ptr, uint32_t expected, bool cancelable)
{
    int64_t start = cio__t_mono_ns();
    if (start < 0)
        return;
    int64_t end = start + SYNC_YIELD_NS;
    while (atomic_load_explicit(ptr, memory_order_acquire) == expected && !(cancelable && cio__t_cancel_pending())) {
        int64_t now = cio__t_mono_ns();
        if (now < 0 || now >= end)
            return;
        sched_yield();
    }
}

/* The OS wait, with a worker counted blocked meanwhile: a task it waits for that is still queued
 * gets a worker of its own at once (pool.c's progress guarantee). */
static cio_err sleep_on_word(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, bool cancelable)
{
    cio__t_pool_block(true);
    cio_err e = cio__t_os_futex_wait(ptr, expected, timeout, cancelable);
    cio__t_pool_block(false);
    return e;
}

cio_err cio__t_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout)
{
    (void)ud;
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE) {
        yield_on_word(ptr, expected, true);
        if (atomic_load_explicit(ptr, memory_order_acquire) != expected && !cio__t_cancel_pending())
            return CIO_OK;
    }
    return CIO__IN_SET(futex_wait, sleep_on_word(ptr, expected, timeout, true));
}

void cio__t_futex_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    (void)ud;
    yield_on_word(ptr, expected, false);
    if (atomic_load_explicit(ptr, memory_order_acquire) != expected)
        return;
    (void)sleep_on_word(ptr, expected, CIO_TIMEOUT_NONE, false);
}

void cio__t_futex_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    (void)ud;
    cio__t_os_futex_wake(ptr, max_waiters);
}
