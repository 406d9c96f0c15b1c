/*
 * The OS half of the futex slots where the kernel has a wait-on-address call (futex_linux.c,
 * futex_freebsd.c, futex_openbsd.c); futex_common.c joins it to wait_posix.c's wait loop. NetBSD
 * (futex_netbsd.c) and Windows (futex_windows.c) implement the slots whole.
 */
#ifndef CIO_THREADED_FUTEX_COMMON_H
#define CIO_THREADED_FUTEX_COMMON_H

#include <stdint.h>

#include "wait_posix.h"

/* One OS wait on *ptr while it holds `expected`, toward d (a cio__os_wait_once_fn). */
int cio__t_futex_wait_once(const _Atomic(uint32_t) *ptr, uint32_t expected, const cio__os_deadline *d);
/* Wakes up to n (1..INT_MAX) sleepers of *ptr. */
void cio__t_futex_wake_n(const _Atomic(uint32_t) *ptr, int n);

#endif /* CIO_THREADED_FUTEX_COMMON_H */
