/*
 * The clocks of the Threaded backend on the POSIX kernels and WASI: cio__os_now over clock_gettime
 * and cio__os_clock_resolution over clock_getres; CIO_CLOCK_BOOT is CLOCK_BOOTTIME where the OS has
 * it, the monotonic clock elsewhere (WASI); a clock the host does not provide reads 0, as cio/io.h
 * says. The lowest
 * layer of the time code (wait_posix.c and time_posix.c read the clocks through it; it calls
 * nothing of theirs). Evented uses the same function (src/evented/slots.h).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

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

cio_timestamp cio__os_now(void *ud, cio_clock clock)
{
    (void)ud;
    struct timespec ts;
    if (CIO__SYS(clock_gettime, now)(os_clock(clock), &ts) != 0)
        return (cio_timestamp){0};
    return (cio_timestamp){(int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec};
}

/* clock_getres never blocks: no cancellation bracket. */
cio_err cio__os_clock_resolution(void *ud, cio_clock clock, int64_t *ns)
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
