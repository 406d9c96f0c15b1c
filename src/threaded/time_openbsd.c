/*
 * Clocks, sleep and randomness for the Threaded backend on OpenBSD, which has neither
 * clock_nanosleep nor getrandom (time_posix.c's tools): sleep is nanosleep against a fixed deadline,
 * entropy is getentropy(2).
 *
 * Invariants:
 * - Sleep fixes its deadline once, up front (CLOCK_MONOTONIC, or CLOCK_REALTIME for a CIO_CLOCK_REAL
 *   deadline), then sleeps with nanosleep for what is left of it; after EINTR (a stray signal) it
 *   measures again, so an interruption never lengthens the sleep. The sleep is a bracketed syscall:
 *   the cancel signal ends it with CIO_E_CANCELED.
 * - cio_random's seed comes from cio__t_os_seed (getentropy never blocks on OpenBSD: the kernel's
 *   pool is seeded at boot); cio_random_secure reads getentropy every call, in 256-byte pieces (its
 *   limit per call).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "internal.h"
#include "task.h"
#include "threaded.h"

#define NS_PER_S 1000000000LL
#define GETENTROPY_MAX 256

static clockid_t os_clock(cio_clock clock)
{
    switch (clock) {
    case CIO_CLOCK_REAL: return CLOCK_REALTIME;
    case CIO_CLOCK_BOOT: return CLOCK_BOOTTIME;
    case CIO_CLOCK_CPU_PROCESS: return CLOCK_PROCESS_CPUTIME_ID;
    case CIO_CLOCK_CPU_THREAD: return CLOCK_THREAD_CPUTIME_ID;
    default: return CLOCK_MONOTONIC;
    }
}

cio_timestamp cio__t_now(void *ud, cio_clock clock)
{
    (void)ud;
    struct timespec ts;
    if (clock_gettime(os_clock(clock), &ts) != 0)
        return (cio_timestamp){0};
    return (cio_timestamp){(int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec};
}

cio_err cio__t_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    cio_clock clk = CIO_CLOCK_AWAKE;
    int64_t deadline;
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE) {
        deadline = INT64_MAX;
    } else if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        clk = CIO_CLOCK_REAL;
        deadline = timeout.ns;
    } else {
        int64_t remaining = timeout.ns;
        if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
            remaining = timeout.ns - cio__t_now(NULL, timeout.clock).ns;
        deadline = cio__deadline_after(cio__t_now(NULL, CIO_CLOCK_AWAKE).ns, remaining);
    }
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(sleep, e);
    for (;;) {
        int64_t left = deadline - cio__t_now(NULL, clk).ns;
        if (left <= 0)
            break;
        struct timespec ts;
        ts.tv_sec = (time_t)(left / NS_PER_S);
        ts.tv_nsec = (long)(left % NS_PER_S);
        if (nanosleep(&ts, NULL) == 0)
            continue; /* measure again: the deadline decides, and forever means until canceled */
        int err = errno;
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

/* ---- cio_random's seed (the generator is random_chacha.c) ------------------------------------- */

bool cio__t_os_seed(void *buf, size_t len)
{
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        size_t n = len > GETENTROPY_MAX ? GETENTROPY_MAX : len;
        if (getentropy(p, n) != 0)
            return false;
        p += n;
        len -= n;
    }
    return true;
}

cio_err cio__t_random_secure(void *ud, void *buf, size_t len)
{
    (void)ud;
    cio_err e = cio__t_check_cancel();
    if (e != CIO_OK)
        return CIO__IN_SET(random_secure, e);
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        size_t n = len > GETENTROPY_MAX ? GETENTROPY_MAX : len;
        if (getentropy(p, n) != 0) {
            cio__mapped m = cio__errno_getrandom(errno);
            return CIO__IN_SET(random_secure, m.action == CIO__MAP_BUG ? CIO__BUG("getentropy") : m.err);
        }
        p += n;
        len -= n;
    }
    return CIO_OK;
}
