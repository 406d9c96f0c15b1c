/* The signal that knocks a Threaded worker out of a blocked syscall on POSIX systems (cancel_posix.c
 * installs its no-op handler; cancel_linux.c / cancel_pthread.c send it). Include <signal.h> first.
 *
 * SIGURG: ignored by default (so a stray one is harmless if a program replaces our handler) and
 * almost never used otherwise; Go's runtime uses it for preemption for the same reasons. */
#ifndef CIO_THREADED_CANCEL_POSIX_H
#define CIO_THREADED_CANCEL_POSIX_H

#define CIO__T_CANCEL_SIGNAL SIGURG

#endif
