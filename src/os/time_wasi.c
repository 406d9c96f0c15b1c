/*
 * Clocks, sleep and randomness for the Threaded backend on WASI (wasi-libc over preview1's
 * clock_time_get, poll_oneoff and random_get). cio_random itself is random_chacha.c.
 *
 * Invariants:
 * - now: CIO_CLOCK_BOOT is the monotonic clock (WASI has no suspend-aware one); a clock the host does
 *   not provide reads 0, as cio/io.h says.
 * - Sleep turns its timeout into a deadline once, on the timeout's own clock, then sleeps relative
 *   slices on the monotonic clock until that clock reads the deadline: an early return from the host
 *   only means another slice, never a short sleep, and a retry never lengthens it.
 * - Nothing can cancel a sleep here (one thread, no signals), so CIO_TIMEOUT_NONE sleeps for good,
 *   as it does on a thread nobody cancels elsewhere.
 * - cio_random_secure and the ChaCha seed read random_get through getentropy (at most 256 bytes a
 *   call); random_secure never falls back.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

#define NS_PER_S 1000000000LL
#define SLICE_NS (3600LL * NS_PER_S) /* "forever" sleeps an hour at a time */

cio_timestamp cio__os_now(void *ud, cio_clock clock)
{
    (void)ud;
    clockid_t id;
    switch (clock) {
    case CIO_CLOCK_REAL: id = CLOCK_REALTIME; break;
    case CIO_CLOCK_CPU_PROCESS: id = CLOCK_PROCESS_CPUTIME_ID; break;
    case CIO_CLOCK_CPU_THREAD: id = CLOCK_THREAD_CPUTIME_ID; break;
    default: id = CLOCK_MONOTONIC; break;
    }
    struct timespec ts;
    if (CIO__SYS(clock_gettime, wasi_now)(id, &ts) != 0)
        return (cio_timestamp){0};
    return (cio_timestamp){(int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec};
}

/* clock_getres (preview 1's clock_res_get) never blocks. */
cio_err cio__os_clock_resolution(void *ud, cio_clock clock, int64_t *ns)
{
    (void)ud;
    if (ns == NULL || (unsigned)clock > (unsigned)CIO_CLOCK_CPU_THREAD)
        return CIO_E_INVALID_ARGUMENT;
    *ns = 0;
    clockid_t id;
    switch (clock) {
    case CIO_CLOCK_REAL: id = CLOCK_REALTIME; break;
    case CIO_CLOCK_CPU_PROCESS: id = CLOCK_PROCESS_CPUTIME_ID; break;
    case CIO_CLOCK_CPU_THREAD: id = CLOCK_THREAD_CPUTIME_ID; break;
    default: id = CLOCK_MONOTONIC; break;
    }
    struct timespec ts;
    cio_err e = CIO_OK;
    if (CIO__SYS(clock_getres, wasi_clock_resolution)(id, &ts) != 0) {
        cio__mapped m = cio__errno_clock_getres(errno);
        e = m.action == CIO__MAP_BUG ? CIO__BUG("clock_getres") : m.err;
    } else {
        *ns = (int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec;
        if (*ns <= 0)
            *ns = 1;
    }
    return CIO__IN_SET(clock_resolution, e);
}

cio_err cio__os_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    bool forever = timeout.kind == CIO_TIMEOUT_KIND_NONE;
    cio_clock clock = timeout.clock;
    int64_t deadline = 0;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE) {
        deadline = timeout.ns;
    } else if (!forever) {
        deadline = cio__deadline_after(cio__os_now(NULL, clock).ns, timeout.ns);
    }
    for (;;) {
        int64_t left = SLICE_NS;
        if (!forever) {
            left = deadline - cio__os_now(NULL, clock).ns;
            if (left <= 0)
                return CIO_OK;
            if (left > SLICE_NS)
                left = SLICE_NS;
        }
        struct timespec ts = {(time_t)(left / NS_PER_S), (long)(left % NS_PER_S)};
        int rc = CIO__SYS(clock_nanosleep, wasi_sleep)(CLOCK_MONOTONIC, 0, &ts, NULL);
        if (rc != 0 && rc != EINTR) {
            cio__mapped m = cio__errno_nanosleep(rc);
            return CIO__IN_SET(sleep, m.action == CIO__MAP_BUG ? CIO__BUG("clock_nanosleep") : m.err);
        }
    }
}

bool cio__os_seed(void *buf, size_t len)
{
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        size_t n = len > 256 ? 256 : len;
        if (CIO__SYS(getentropy, wasi_os_seed)(p, n) != 0)
            return false;
        p += n;
        len -= n;
    }
    return true;
}

cio_err cio__os_random_secure(void *ud, void *buf, size_t len)
{
    (void)ud;
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        size_t n = len > 256 ? 256 : len;
        if (CIO__SYS(getentropy, wasi_random_secure)(p, n) != 0) {
            cio__mapped m = cio__errno_getrandom(errno);
            if (m.action == CIO__MAP_RETRY)
                continue;
            if (m.action == CIO__MAP_BUG)
                return CIO__IN_SET(random_secure, CIO__BUG("getentropy"));
            return CIO__IN_SET(random_secure, m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED);
        }
        p += n;
        len -= n;
    }
    return CIO_OK;
}
