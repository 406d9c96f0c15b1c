/*
 * Clocks, sleep and randomness for the Threaded backend on POSIX (Linux).
 *
 * Invariants:
 * - Sleep turns its timeout into an absolute CLOCK_MONOTONIC (or CLOCK_REALTIME) deadline once, so
 *   a signal that interrupts clock_nanosleep never lengthens the sleep; it is a bracketed syscall.
 * - cio_random is random_chacha.c's generator; its seed comes from cio__t_os_seed here (getrandom,
 *   never blocking: false when the pool is not ready yet, and random_chacha.c falls back).
 * - cio_random_secure reads the OS every call (getrandom), with no fallback.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

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

cio_err cio__t_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    clockid_t clk = CLOCK_MONOTONIC;
    int64_t deadline;
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE) {
        deadline = INT64_MAX;
    } else if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        clk = CLOCK_REALTIME;
        deadline = timeout.ns;
    } else {
        int64_t remaining = timeout.ns;
        if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
            remaining = timeout.ns - cio__t_now(NULL, timeout.clock).ns;
        deadline = cio__deadline_after(cio__t_now(NULL, CIO_CLOCK_AWAKE).ns, remaining);
    }
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline / NS_PER_S);
    ts.tv_nsec = (long)(deadline % NS_PER_S);
    if ((int64_t)ts.tv_sec != deadline / NS_PER_S) { /* 32-bit time_t: sleep "forever" in steps */
        ts.tv_sec = (time_t)INT32_MAX;
        ts.tv_nsec = 0;
    }
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(sleep, e);
    for (;;) {
        int rc = CIO__SYS(clock_nanosleep, sleep)(clk, TIMER_ABSTIME, &ts, NULL);
        if (rc == 0) {
            if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
                continue; /* forever means until canceled */
            break;
        }
        if (rc == EINTR) {
            e = cio__t_syscall_interrupted();
            if (e != CIO_OK)
                return CIO__IN_SET(sleep, e);
            continue;
        }
        cio__t_syscall_end();
        cio__mapped m = cio__errno_nanosleep(rc);
        return CIO__IN_SET(sleep, m.action == CIO__MAP_BUG ? CIO__BUG("clock_nanosleep") : m.err);
    }
    cio__t_syscall_end();
    return CIO_OK;
}

/* ---- cio_random's seed (the generator is random_chacha.c) ------------------------------------- */

bool cio__t_os_seed(void *buf, size_t len)
{
    return CIO__SYS(getrandom, os_seed)(buf, len, GRND_NONBLOCK) == (ssize_t)len;
}

cio_err cio__t_random_secure(void *ud, void *buf, size_t len)
{
    (void)ud;
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return CIO__IN_SET(random_secure, e);
        ssize_t n = CIO__SYS(getrandom, random_secure)(p, len > 33554431u ? 33554431u : len, 0);
        if (n < 0) {
            int err = errno;
            if (err == EINTR) {
                e = cio__t_syscall_interrupted();
                if (e != CIO_OK)
                    return CIO__IN_SET(random_secure, e);
                cio__t_syscall_end();
                continue;
            }
            cio__t_syscall_end();
            cio__mapped m = cio__errno_getrandom(err);
            return CIO__IN_SET(random_secure, m.action == CIO__MAP_BUG ? CIO__BUG("getrandom") : m.err);
        }
        cio__t_syscall_end();
        p += n;
        len -= (size_t)n;
    }
    return CIO_OK;
}
