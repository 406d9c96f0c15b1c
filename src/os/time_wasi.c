/*
 * Sleep and randomness for the Threaded backend on WASI (wasi-libc over preview1's poll_oneoff and
 * random_get). The clocks are clock_posix.c's (clock_time_get; WASI has no suspend-aware clock, so
 * CIO_CLOCK_BOOT is the monotonic one there); cio_random itself is random_chacha.c.
 *
 * Invariants:
 * - Sleep turns its timeout into a deadline once, on the timeout's own clock, then sleeps relative
 *   slices on the monotonic clock until that clock reads the deadline: an early return from the host
 *   only means another slice, never a short sleep, and a retry never lengthens it.
 * - Nothing can cancel a sleep here (one thread, no signals), so CIO_TIMEOUT_NONE sleeps for good,
 *   as it does on a thread nobody cancels elsewhere.
 * - cio_random_secure and the ChaCha seed (seed_getentropy.c) read random_get through getentropy (at
 *   most 256 bytes a call); random_secure never falls back.
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
