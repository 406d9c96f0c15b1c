/*
 * Futex wait/wake on FreeBSD through _umtx_op(2): UMTX_OP_WAIT_UINT_PRIVATE compares the 32-bit
 * word and sleeps, UMTX_OP_WAKE_PRIVATE wakes up to n sleepers of that word.
 *
 * Invariants:
 * - Waits and wakes are process-private (the _PRIVATE operations): cio futex words never live in
 *   shared memory, and private waits are hashed by address without an object lookup.
 * - A timeout is handed to the kernel as an absolute deadline (struct _umtx_time with UMTX_ABSTIME,
 *   passed as uaddr = its size, uaddr2 = its address), computed once up front, so EINTR retries never
 *   extend it: CLOCK_REALTIME for a CIO_CLOCK_REAL deadline, CLOCK_MONOTONIC otherwise.
 * - A word that already differs returns at once with success (the kernel compares under its own
 *   lock); so does a wake-up that may be spurious: callers re-check their condition.
 * - A cancelable wait is a bracketed syscall (cancel.c): the cancel signal, installed without
 *   SA_RESTART, makes _umtx_op fail with EINTR.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/umtx.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "task.h"
#include "threaded.h"

#define NS_PER_S 1000000000LL

static struct timespec to_timespec(int64_t ns)
{
    struct timespec ts;
    if (ns < 0)
        ns = 0;
    ts.tv_sec = (time_t)(ns / NS_PER_S);
    ts.tv_nsec = (long)(ns % NS_PER_S);
    return ts;
}

/* Fills `t` with the absolute deadline of `timeout`; false for CIO_TIMEOUT_KIND_NONE. */
static _Bool deadline_of(cio_timeout timeout, struct _umtx_time *t)
{
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return 0;
    t->_flags = UMTX_ABSTIME;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        t->_timeout = to_timespec(timeout.ns);
        t->_clockid = CLOCK_REALTIME;
        return 1;
    }
    int64_t remaining = timeout.ns;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
        remaining = timeout.ns - cio__t_now(NULL, timeout.clock).ns;
    t->_timeout = to_timespec(cio__deadline_after(cio__t_now(NULL, CIO_CLOCK_AWAKE).ns, remaining));
    t->_clockid = CLOCK_MONOTONIC;
    return 1;
}

cio_err cio__t_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable)
{
    struct _umtx_time deadline;
    _Bool timed = deadline_of(timeout, &deadline);
    void *obj = (void *)(uintptr_t)(const volatile void *)ptr;
    if (cancelable) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return e;
    }
    for (;;) {
        int rc = _umtx_op(obj, UMTX_OP_WAIT_UINT_PRIVATE, (unsigned long)expected,
                          timed ? (void *)(uintptr_t)sizeof deadline : NULL, timed ? &deadline : NULL);
        if (rc == 0)
            break;
        int err = errno;
        if (err == EINTR) {
            if (cancelable) {
                cio_err e = cio__t_syscall_interrupted();
                if (e != CIO_OK)
                    return e;
            }
            continue;
        }
        if (cancelable)
            cio__t_syscall_end();
        if (err == ETIMEDOUT)
            return CIO_E_TIMEOUT;
        cio__mapped m = cio__errno_futex_wait(err);
        return m.action == CIO__MAP_BUG ? CIO__BUG("_umtx_op wait") : m.err;
    }
    if (cancelable)
        cio__t_syscall_end();
    return CIO_OK;
}

void cio__t_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters == 0)
        return;
    unsigned long n = max_waiters > (uint32_t)INT_MAX ? (unsigned long)INT_MAX : (unsigned long)max_waiters;
    (void)_umtx_op((void *)(uintptr_t)(const volatile void *)ptr, UMTX_OP_WAKE_PRIVATE, n, NULL, NULL);
}
