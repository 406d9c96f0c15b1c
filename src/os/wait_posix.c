/*
 * Deadlines and the futex wait loop shared by the Threaded backend's POSIX futexes and sleep (see
 * wait_posix.h for the pattern).
 *
 * Invariants:
 * - A deadline is read from the clocks once, in cio__os_deadline_of; cio__os_deadline_left measures
 *   what is left against the same clock, so waiting again never moves the deadline.
 * - The wait loop closes the bracket exactly once on every path out of it; on EINTR with a cancel
 *   request pending, cio__t_syscall_interrupted has closed it already.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "os.h"
#include "wait_posix.h"

#define NS_PER_S 1000000000LL

cio__os_deadline cio__os_deadline_of(cio_timeout timeout)
{
    cio__os_deadline d = {false, CIO_CLOCK_AWAKE, INT64_MAX};
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return d;
    d.timed = true;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        d.clock = CIO_CLOCK_REAL;
        d.ns = timeout.ns;
        return d;
    }
    int64_t remaining = timeout.ns;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
        remaining = timeout.ns - cio__os_now(NULL, timeout.clock).ns;
    d.ns = cio__deadline_after(cio__os_now(NULL, CIO_CLOCK_AWAKE).ns, remaining);
    return d;
}

clockid_t cio__os_deadline_clockid(const cio__os_deadline *d)
{
    return d->clock == CIO_CLOCK_REAL ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

struct timespec cio__os_timespec(int64_t ns)
{
    struct timespec ts;
    if (ns < 0)
        ns = 0;
    ts.tv_sec = (time_t)(ns / NS_PER_S);
    ts.tv_nsec = (long)(ns % NS_PER_S);
    return ts;
}

bool cio__os_deadline_left(const cio__os_deadline *d, struct timespec *left)
{
    int64_t ns = d->ns - cio__os_now(NULL, d->clock).ns;
    if (ns <= 0)
        return false;
    *left = cio__os_timespec(ns);
    return true;
}

cio_err cio__os_futex_wait_loop(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, bool cancelable,
                                cio__os_wait_once_fn once)
{
    cio__os_deadline d = cio__os_deadline_of(timeout);
    if (cancelable) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return e;
    }
    for (;;) {
        int err = once(ptr, expected, &d);
        if (err == EINTR) {
            if (cancelable) {
                cio_err e = cio__t_syscall_interrupted();
                if (e != CIO_OK)
                    return e; /* CIO_E_CANCELED: the bracket is closed */
            }
            continue;
        }
        if (cancelable)
            cio__t_syscall_end();
        if (err == 0 || err == EAGAIN)
            return CIO_OK; /* woken (re-check), or the value already differed */
        if (err == ETIMEDOUT)
            return CIO_E_TIMEOUT;
        cio__mapped m = cio__errno_futex_wait(err);
        return m.action == CIO__MAP_BUG ? CIO__BUG("futex wait") : m.err;
    }
}
