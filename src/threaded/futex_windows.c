/*
 * Futex wait/wake on Windows: WaitOnAddress / WakeByAddressSingle / WakeByAddressAll.
 *
 * Invariants:
 * - A timeout becomes an absolute deadline once, up front (on CIO_CLOCK_REAL for a REAL deadline,
 *   on CIO_CLOCK_AWAKE otherwise), so spurious returns and retries never extend it; each
 *   WaitOnAddress gets the remaining time rounded up to whole milliseconds, and Timeout is reported
 *   only once the deadline has really passed.
 * - WaitOnAddress is not alertable, so a cancelable wait publishes its word in the task's
 *   `waiting_on` before the cancellation bracket opens and clears it after the bracket closed;
 *   cancel_windows.c wakes that address. Any return from the wait is then checked for a pending
 *   request (cio__t_syscall_interrupted): Canceled if one arrived, otherwise a normal wake-up.
 * - Waking more waiters than asked is allowed (futex callers re-check their condition): any count
 *   above one wakes all.
 * - A timed wait that gives up with Timeout wakes one other waiter of the word first. A
 *   WakeByAddressSingle may pick a waiter whose timeout is expiring at that moment (Wine 8's
 *   RtlWaitOnAddress then reports the timeout, and the wake is spent on a thread that leaves);
 *   passing it on turns that lost wake-up into at most one spurious one. Found as a hang of
 *   test_sync's condition_wait_timeout under load. Likewise a cancelable wait that ends Canceled
 *   after a wake-up (which may have been a real one, not the kick) passes one on.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

/* Milliseconds until `deadline` on `clock`, rounded up; 0 when it has passed. */
static DWORD ms_until(cio_clock clock, int64_t deadline, bool *passed)
{
    int64_t left = deadline - cio__os_now(NULL, clock).ns;
    *passed = left <= 0;
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)ms;
}

cio_err cio__t_os_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable)
{
    cio_clock clock = CIO_CLOCK_AWAKE;
    int64_t deadline = INT64_MAX;
    bool timed = timeout.kind != CIO_TIMEOUT_KIND_NONE;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        clock = CIO_CLOCK_REAL;
        deadline = timeout.ns;
    } else if (timed) {
        int64_t remaining = timeout.ns;
        if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
            remaining = timeout.ns - cio__os_now(NULL, timeout.clock).ns;
        deadline = cio__deadline_after(cio__os_now(NULL, CIO_CLOCK_AWAKE).ns, remaining);
    }
    struct cio_any_future *self = cancelable ? cio__t_current : NULL;
    if (self != NULL)
        atomic_store_explicit(&self->waiting_on, (uintptr_t)ptr, memory_order_seq_cst);
    cio_err result = CIO_OK;
    if (cancelable) {
        result = cio__t_syscall_begin();
        if (result != CIO_OK)
            goto out;
    }
    bool waited = false;
    for (;;) {
        DWORD ms = INFINITE;
        if (timed) {
            bool passed;
            ms = ms_until(clock, deadline, &passed);
            if (passed) {
                result = CIO_E_TIMEOUT;
                /* A wake-up that chose this waiter as it timed out is not lost: pass it on. */
                if (waited)
                    WakeByAddressSingle((void *)ptr);
                break;
            }
        }
        uint32_t want = expected;
        waited = true;
        if (CIO__SYS(WaitOnAddress, futex_wait)((volatile void *)ptr, &want, sizeof want, ms))
            break; /* woken, spuriously, or the value already differed */
        if (GetLastError() != ERROR_TIMEOUT) {
            result = CIO__BUG("WaitOnAddress");
            break;
        }
        /* timed out: loop to check the deadline (the wait rounds to milliseconds) */
    }
    if (cancelable) {
        if (result == CIO_OK) {
            result = cio__t_syscall_interrupted(); /* a kick's wake-up carries a request */
            if (result != CIO_OK) {
                /* The wake-up may have been a real one meant for some waiter: pass it on. */
                WakeByAddressSingle((void *)ptr);
                goto out;
            }
        }
        cio__t_syscall_end();
    }
out:
    if (self != NULL)
        atomic_store_explicit(&self->waiting_on, 0, memory_order_seq_cst);
    return result;
}

void cio__t_os_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters == 0)
        return;
    if (max_waiters == 1)
        WakeByAddressSingle((void *)ptr);
    else
        WakeByAddressAll((void *)ptr);
}
