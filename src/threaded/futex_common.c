/*
 * The futex slots on Linux, FreeBSD and OpenBSD: the wait is wait_posix.c's loop (the deadline, the
 * bracket, the outcome) over the OS file's single wait, the wake clamps the count to what the OS
 * calls take. The system calls themselves are futex_<os>.c's (futex_common.h).
 */
#include <limits.h>
#include <stdint.h>

#include "futex_common.h"
#include "internal.h"
#include "task.h"

cio_err cio__t_os_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable)
{
    return cio__os_futex_wait_loop(ptr, expected, timeout, cancelable, cio__t_futex_wait_once);
}

void cio__t_os_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters != 0)
        cio__t_futex_wake_n(ptr, max_waiters > (uint32_t)INT_MAX ? INT_MAX : (int)max_waiters);
}
