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
 * - A step returns 0 once the deadline has passed, CIO__OS_SLEEP_AGAIN when it woke before it (the
 *   next step measures again), or an errno; with no timeout, sleep goes on until canceled.
 * - The clocks are clock_posix.c's (this file calls down to it and to wait_posix.c, never back).
 * - cio_random is random_chacha.c's generator; its seed and cio_random_secure are the OS piece's.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "os.h"
#include "time_posix.h"


cio_err cio__os_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    cio__os_deadline d = cio__os_deadline_of(timeout);
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(sleep, e);
    for (;;) {
        int err = cio__os_sleep_step(&d);
        if (err == 0 && d.timed)
            break;
        if (err == 0 || err == CIO__OS_SLEEP_AGAIN)
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
