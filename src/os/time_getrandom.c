/*
 * time_posix.c's OS piece on Linux, FreeBSD and NetBSD: a sleep step is clock_nanosleep to the
 * absolute deadline, entropy is getrandom(2).
 *
 * Invariants:
 * - clock_nanosleep(TIMER_ABSTIME) returns 0 only at the deadline; a deadline past a 32-bit
 *   time_t is slept toward in steps of the largest one it can say (CIO__OS_SLEEP_AGAIN).
 * - cio_random's seed comes from getrandom with GRND_NONBLOCK: false when the pool is not ready yet
 *   (random_chacha.c falls back). cio_random_secure reads getrandom every call, in the bracket,
 *   with no fallback.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"
#include "time_posix.h"

#define NS_PER_S 1000000000LL

int cio__os_sleep_step(const cio__os_deadline *d)
{
    struct timespec ts = cio__os_timespec(d->ns);
    bool clamped = (int64_t)ts.tv_sec != d->ns / NS_PER_S;
    if (clamped) { /* 32-bit time_t: sleep "forever" in steps */
        ts.tv_sec = (time_t)INT32_MAX;
        ts.tv_nsec = 0;
    }
    int rc = CIO__SYS(clock_nanosleep, sleep)(cio__os_deadline_clockid(d), TIMER_ABSTIME, &ts, NULL);
    return rc == 0 && clamped ? CIO__OS_SLEEP_AGAIN : rc;
}

/* ---- cio_random's seed (the generator is random_chacha.c) ------------------------------------- */

bool cio__os_seed(void *buf, size_t len)
{
    return CIO__SYS(getrandom, os_seed)(buf, len, GRND_NONBLOCK) == (ssize_t)len;
}

cio_err cio__os_random_secure(void *ud, void *buf, size_t len)
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
