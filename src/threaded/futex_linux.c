/*
 * Futex wait/wake on Linux through the raw futex syscall (numbers from platform/cio/sysnum.h; with
 * the 64-bit time_t the library is built with, futex_time64 on 32-bit targets).
 *
 * Invariants:
 * - Waits are private (FUTEX_PRIVATE_FLAG): cio futex words never live in shared memory.
 * - A timeout becomes an absolute CLOCK_MONOTONIC deadline once, up front (FUTEX_WAIT_BITSET), so
 *   EINTR retries never extend it; a CIO_CLOCK_REAL deadline uses FUTEX_CLOCK_REALTIME.
 * - A cancelable wait is a bracketed syscall (cancel.c): the cancel signal makes it return EINTR.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/sysnum.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

#define NS_PER_S 1000000000LL

/* The futex system call that takes this build's struct timespec: the library is built with a
 * 64-bit time_t everywhere (CMakeLists.txt), which on 32-bit targets (mips o32, arm) is
 * futex_time64's; the original futex there takes 32-bit seconds. */
#if defined(CIO_SYS_FUTEX_TIME64)
#define FUTEX_NR (sizeof(time_t) > sizeof(long) ? CIO_SYS_FUTEX_TIME64 : CIO_SYS_FUTEX)
#else
#define FUTEX_NR CIO_SYS_FUTEX
#endif

static struct timespec to_timespec(int64_t ns)
{
    struct timespec ts;
    if (ns < 0)
        ns = 0;
    ts.tv_sec = (time_t)(ns / NS_PER_S);
    ts.tv_nsec = (long)(ns % NS_PER_S);
    return ts;
}

/* The deadline of `timeout`: on CLOCK_REALTIME for a CIO_CLOCK_REAL deadline, CLOCK_MONOTONIC
 * otherwise. Returns false for CIO_TIMEOUT_KIND_NONE. */
static _Bool deadline_of(cio_timeout timeout, struct timespec *abs, int *op_clock)
{
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return 0;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        *abs = to_timespec(timeout.ns);
        *op_clock = FUTEX_CLOCK_REALTIME;
        return 1;
    }
    int64_t remaining = timeout.ns;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
        remaining = timeout.ns - cio__t_now(NULL, timeout.clock).ns;
    *abs = to_timespec(cio__deadline_after(cio__t_now(NULL, CIO_CLOCK_AWAKE).ns, remaining));
    *op_clock = 0;
    return 1;
}

cio_err cio__t_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable)
{
    struct timespec abs;
    int clock_flag = 0;
    _Bool timed = deadline_of(timeout, &abs, &clock_flag);
    if (cancelable) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return e;
    }
    for (;;) {
        long rc;
        if (timed)
            rc = CIO__SYS(futex, futex_wait)(FUTEX_NR, (const void *)ptr,
                                             FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | clock_flag, expected, &abs, NULL,
                                             FUTEX_BITSET_MATCH_ANY);
        else
            rc = CIO__SYS(futex, futex_wait)(FUTEX_NR, (const void *)ptr, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, NULL,
                                             NULL, 0);
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
        if (err == EAGAIN)
            return CIO_OK; /* the value already differed */
        if (err == ETIMEDOUT)
            return CIO_E_TIMEOUT;
        cio__mapped m = cio__errno_futex_wait(err);
        return m.action == CIO__MAP_BUG ? CIO__BUG("futex wait") : m.err;
    }
    if (cancelable)
        cio__t_syscall_end();
    return CIO_OK;
}

void cio__t_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters == 0)
        return;
    int n = max_waiters > (uint32_t)INT_MAX ? INT_MAX : (int)max_waiters;
    (void)CIO__SYS(futex, futex_wake)(FUTEX_NR, (const void *)ptr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, (uint32_t)n, NULL, NULL, 0);
}
