/*
 * time_posix.c's OS piece on OpenBSD, which has neither clock_nanosleep nor getrandom: a sleep step
 * is nanosleep for what is left of the deadline, entropy is getentropy(2).
 *
 * Invariants:
 * - A step measures what is left of the deadline (fixed once by time_posix.c, on CLOCK_MONOTONIC or
 *   CLOCK_REALTIME) and sleeps that long; after it, or after EINTR, the next step measures again,
 *   so an interruption never lengthens the sleep.
 * - cio_random's seed comes from cio__os_seed (seed_getentropy.c: getentropy never blocks on
 *   OpenBSD, the kernel's pool is seeded at boot); cio_random_secure reads getentropy every call, in
 *   256-byte pieces (its limit per call).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "internal.h"
#include "os.h"
#include "time_posix.h"

#define GETENTROPY_MAX 256

int cio__os_sleep_step(const cio__os_deadline *d)
{
    struct timespec left;
    if (d->timed && !cio__os_deadline_left(d, &left))
        return 0;
    if (!d->timed)
        left = cio__os_timespec(INT64_MAX); /* forever: as long as nanosleep sleeps */
    return nanosleep(&left, NULL) == 0 ? CIO__OS_SLEEP_AGAIN : errno;
}

/* ---- cio_random_secure (the seed: seed_getentropy.c) ----------------------------------------- */

cio_err cio__os_random_secure(void *ud, void *buf, size_t len)
{
    (void)ud;
    cio_err e = cio__t_cancel_point();
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
