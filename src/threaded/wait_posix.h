/*
 * Deadlines and the futex wait loop of the Threaded backend on the POSIX kernels (Linux, FreeBSD,
 * NetBSD, OpenBSD), shared by futex_<os>.c and time_posix.c (wait_posix.c). Include after
 * "threaded.h".
 *
 * A deadline is fixed once, before the first wait, so that retries after EINTR or a spurious wake-up
 * never extend it: a CIO_CLOCK_REAL deadline stays on the real-time clock (CLOCK_REALTIME), every
 * other timeout becomes an absolute time on CIO_CLOCK_AWAKE (CLOCK_MONOTONIC).
 *
 * The futex wait loop, with the OS call in the middle written by each futex_<os>.c:
 *
 *     cio__t_wait w;
 *     cio_err result = cio__t_wait_begin(&w, timeout, cancelable);  // the deadline, the bracket
 *     if (result != CIO_OK)
 *         return result;                                            // canceled before waiting
 *     int err;
 *     do {
 *         err = <one OS wait toward w.deadline> ? errno : 0;
 *     } while (!cio__t_wait_done(&w, err, &result));              // EINTR: again (or canceled)
 *     return result;
 */
#ifndef CIO_THREADED_WAIT_POSIX_H
#define CIO_THREADED_WAIT_POSIX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cio/io.h"

typedef struct cio__t_deadline {
    bool timed;      /* false: no timeout, wait until woken (or canceled) */
    cio_clock clock; /* CIO_CLOCK_REAL or CIO_CLOCK_AWAKE */
    int64_t ns;      /* the deadline on that clock (INT64_MAX when untimed) */
} cio__t_deadline;

cio__t_deadline cio__t_deadline_of(cio_timeout timeout);
/* The deadline's clock as the OS names it: CLOCK_REALTIME or CLOCK_MONOTONIC. */
clockid_t cio__t_deadline_clockid(const cio__t_deadline *d);
/* ns (on any clock) as a timespec; negative counts as 0. */
struct timespec cio__t_timespec(int64_t ns);
/* What is left of a timed deadline as a relative timespec; false once it has passed. */
bool cio__t_deadline_left(const cio__t_deadline *d, struct timespec *left);

typedef struct cio__t_wait {
    cio__t_deadline deadline;
    bool cancelable;
} cio__t_wait;

/* Fixes the deadline, then (cancelable) opens the syscall bracket: CIO_OK, or CIO_E_CANCELED with
 * nothing to close. */
cio_err cio__t_wait_begin(cio__t_wait *w, cio_timeout timeout, bool cancelable);
/* After one OS wait that gave `err` (0 woken, possibly spuriously; EINTR a signal; EAGAIN the word
 * already differed; ETIMEDOUT; anything else through the futex_wait error map): false to wait again
 * (a signal with no cancel request), or true with *result (CIO_OK, CIO_E_TIMEOUT, CIO_E_CANCELED, a
 * mapped error) and the bracket closed. */
bool cio__t_wait_done(cio__t_wait *w, int err, cio_err *result);

#endif /* CIO_THREADED_WAIT_POSIX_H */
