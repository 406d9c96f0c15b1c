/*
 * Clocks and sleep for the Threaded backend on the POSIX kernels (Linux, FreeBSD, NetBSD, OpenBSD).
 * What differs per OS is one sleep step and the entropy source, in the OS piece CMakeLists.txt
 * adds beside this file: time_getrandom.c (clock_nanosleep to an absolute deadline, getrandom) or
 * time_openbsd.c (nanosleep for what is left, getentropy).
 *
 * Invariants:
 * - Sleep fixes its deadline once, up front (wait_posix.c: CLOCK_MONOTONIC, or CLOCK_REALTIME for a
 *   CIO_CLOCK_REAL deadline), so a signal that interrupts a step never lengthens the sleep; the
 *   whole sleep is one bracketed syscall (cancel.c): the cancel signal ends it with CIO_E_CANCELED.
 * - A step returns 0 once the deadline has passed, CIO__T_SLEEP_AGAIN when it woke before it (the
 *   next step measures again), or an errno; with no timeout, sleep goes on until canceled.
 * - cio_random is random_chacha.c's generator; its seed and cio_random_secure are the OS piece's.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"
#include "time_posix.h"

#define NS_PER_S 1000000000LL

static clockid_t os_clock(cio_clock clock)
{
    switch (clock) {
    case CIO_CLOCK_REAL: return CLOCK_REALTIME;
#ifdef CLOCK_BOOTTIME
    case CIO_CLOCK_BOOT: return CLOCK_BOOTTIME;
#endif
    case CIO_CLOCK_CPU_PROCESS: return CLOCK_PROCESS_CPUTIME_ID;
    case CIO_CLOCK_CPU_THREAD: return CLOCK_THREAD_CPUTIME_ID;
    default: return CLOCK_MONOTONIC;
    }
}

cio_timestamp cio__t_now(void *ud, cio_clock clock)
{
    (void)ud;
    struct timespec ts;
    if (CIO__SYS(clock_gettime, now)(os_clock(clock), &ts) != 0)
        return (cio_timestamp){0};
    return (cio_timestamp){(int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec};
}

/* clock_getres never blocks: no cancellation bracket. */
cio_err cio__t_clock_resolution(void *ud, cio_clock clock, int64_t *ns)
{
    (void)ud;
    if (ns == NULL || (unsigned)clock > (unsigned)CIO_CLOCK_CPU_THREAD)
        return CIO_E_INVALID_ARGUMENT;
    *ns = 0;
    struct timespec ts;
    cio_err e = CIO_OK;
    if (CIO__SYS(clock_getres, clock_resolution)(os_clock(clock), &ts) != 0) {
        cio__mapped m = cio__errno_clock_getres(errno);
        e = m.action == CIO__MAP_BUG ? CIO__BUG("clock_getres") : m.err;
    } else {
        *ns = (int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec;
        if (*ns <= 0)
            *ns = 1; /* finer than a nanosecond */
    }
    return CIO__IN_SET(clock_resolution, e);
}

cio_err cio__t_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    cio__t_deadline d = cio__t_deadline_of(timeout);
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(sleep, e);
    for (;;) {
        int err = cio__t_sleep_step(&d);
        if (err == 0 && d.timed)
            break;
        if (err == 0 || err == CIO__T_SLEEP_AGAIN)
            continue; /* forever means until canceled; an early wake-up measures again */
        if (err == EINTR) {
            e = cio__t_syscall_interrupted();
            if (e != CIO_OK)
                return CIO__IN_SET(sleep, e);
            continue;
        }
        cio__t_syscall_end();
        cio__mapped m = cio__errno_nanosleep(err);
        return CIO__IN_SET(sleep, m.action == CIO__MAP_BUG ? CIO__BUG("nanosleep") : m.err);
    }
    cio__t_syscall_end();
    return CIO_OK;
}
