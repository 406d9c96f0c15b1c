/*
 * Futex wait/wake on Linux through the raw futex syscall (numbers from platform/internal/cio/sysnum.h; with
 * the 64-bit time_t the library is built with, futex_time64 on 32-bit targets).
 *
 * Invariants:
 * - Waits are private (FUTEX_PRIVATE_FLAG): cio futex words never live in shared memory.
 * - A timeout becomes an absolute CLOCK_MONOTONIC deadline once, up front (FUTEX_WAIT_BITSET), so
 *   EINTR retries never extend it; a CIO_CLOCK_REAL deadline uses FUTEX_CLOCK_REALTIME. The
 *   deadline, the bracket and the outcome are wait_posix.c's loop (joined by futex_common.c); only
 *   the syscall (cio__t_futex_wait_once) is here.
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
#include "futex_common.h"

/* The futex system call that takes this build's struct timespec: the library is built with a
 * 64-bit time_t everywhere (CMakeLists.txt), which on 32-bit targets (mips o32, arm) is
 * futex_time64's; the original futex there takes 32-bit seconds. */
#if defined(CIO_SYS_FUTEX_TIME64)
#define FUTEX_NR (sizeof(time_t) > sizeof(long) ? CIO_SYS_FUTEX_TIME64 : CIO_SYS_FUTEX)
#else
#define FUTEX_NR CIO_SYS_FUTEX
#endif

int cio__t_futex_wait_once(const _Atomic(uint32_t) *ptr, uint32_t expected, const cio__os_deadline *d)
{
    long rc;
    if (d->timed) {
        struct timespec abs = cio__os_timespec(d->ns);
        int clock_flag = d->clock == CIO_CLOCK_REAL ? FUTEX_CLOCK_REALTIME : 0;
        rc = CIO__SYS(futex, futex_wait)(FUTEX_NR, (const void *)ptr,
                                         FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | clock_flag, expected, &abs, NULL,
                                         FUTEX_BITSET_MATCH_ANY);
    } else {
        rc = CIO__SYS(futex, futex_wait)(FUTEX_NR, (const void *)ptr, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, NULL,
                                         NULL, 0);
    }
    return rc == 0 ? 0 : errno;
}

void cio__t_futex_wake_n(const _Atomic(uint32_t) *ptr, int n)
{
    (void)CIO__SYS(futex, futex_wake)(FUTEX_NR, (const void *)ptr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, (uint32_t)n, NULL,
                                      NULL, 0);
}
