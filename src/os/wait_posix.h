/*
 * Deadlines and the futex wait loop of the Threaded backend on the POSIX kernels (Linux, FreeBSD,
 * NetBSD, OpenBSD), shared by futex_<os>.c and time_posix.c (wait_posix.c). Include after
 * "os.h".
 *
 * A deadline is fixed once, before the first wait, so that retries after EINTR or a spurious wake-up
 * never extend it: a CIO_CLOCK_REAL deadline stays on the real-time clock (CLOCK_REALTIME), every
 * other timeout becomes an absolute time on CIO_CLOCK_AWAKE (CLOCK_MONOTONIC).
 *
 * The futex wait loop (cio__os_futex_wait_loop) fixes the deadline, opens the syscall bracket and
 * calls the OS piece's one wait until it is over; each futex_<os>.c supplies only that one wait.
 */
#ifndef CIO_THREADED_WAIT_POSIX_H
#define CIO_THREADED_WAIT_POSIX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cio/io.h"

typedef struct cio__os_deadline {
    bool timed;      /* false: no timeout, wait until woken (or canceled) */
    cio_clock clock; /* CIO_CLOCK_REAL or CIO_CLOCK_AWAKE */
    int64_t ns;      /* the deadline on that clock (INT64_MAX when untimed) */
} cio__os_deadline;

cio__os_deadline cio__os_deadline_of(cio_timeout timeout);
/* The deadline's clock as the OS names it: CLOCK_REALTIME or CLOCK_MONOTONIC. */
clockid_t cio__os_deadline_clockid(const cio__os_deadline *d);
/* ns (on any clock) as a timespec; negative counts as 0. */
struct timespec cio__os_timespec(int64_t ns);
/* What is left of a timed deadline as a relative timespec; false once it has passed. */
bool cio__os_deadline_left(const cio__os_deadline *d, struct timespec *left);

/* One OS wait on *ptr while it holds `expected`, toward d: 0 (woken, possibly spuriously), or an
 * errno: EINTR a signal, EAGAIN the word already differed, ETIMEDOUT, anything else goes through
 * the futex_wait error map. */
typedef int (*cio__os_wait_once_fn)(const _Atomic(uint32_t) *ptr, uint32_t expected, const cio__os_deadline *d);

/* cio__t_os_futex_wait over `once`: CIO_OK (woken or the value differed: re-check), CIO_E_TIMEOUT,
 * CIO_E_CANCELED (cancelable, in the bracket), or a mapped error. A signal with no cancel request
 * waits again, toward the same deadline. */
cio_err cio__os_futex_wait_loop(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, bool cancelable,
                                cio__os_wait_once_fn once);

#endif /* CIO_THREADED_WAIT_POSIX_H */
