/*
 * The OS piece of time_posix.c (time_getrandom.c or time_openbsd.c; cio__os_seed and
 * cio__os_random_secure, declared in threaded.h, come from the same piece).
 */
#ifndef CIO_THREADED_TIME_POSIX_H
#define CIO_THREADED_TIME_POSIX_H

#include "wait_posix.h"

/* cio__os_sleep_step's "woke before the deadline: measure and sleep again" (no errno is negative). */
#define CIO__OS_SLEEP_AGAIN (-1)

/* One sleep toward d (for an untimed d, as long as the OS sleeps at most), inside the caller's
 * syscall bracket: 0 when d has passed (or the OS slept to it), CIO__OS_SLEEP_AGAIN when it woke
 * before, otherwise the errno (EINTR: a signal). */
int cio__os_sleep_step(const cio__os_deadline *d);

#endif /* CIO_THREADED_TIME_POSIX_H */
