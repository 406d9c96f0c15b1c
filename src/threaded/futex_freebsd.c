/*
 * Futex wait/wake on FreeBSD through _umtx_op(2): UMTX_OP_WAIT_UINT_PRIVATE compares the 32-bit
 * word and sleeps, UMTX_OP_WAKE_PRIVATE wakes up to n sleepers of that word.
 *
 * Invariants:
 * - Waits and wakes are process-private (the _PRIVATE operations): cio futex words never live in
 *   shared memory, and private waits are hashed by address without an object lookup.
 * - A timeout is handed to the kernel as an absolute deadline (struct _umtx_time with UMTX_ABSTIME,
 *   passed as uaddr = its size, uaddr2 = its address), computed once up front, so EINTR retries never
 *   extend it: CLOCK_REALTIME for a CIO_CLOCK_REAL deadline, CLOCK_MONOTONIC otherwise. The
 *   deadline, the bracket and the outcome are wait_posix.c's loop (joined by futex_common.c); only
 *   the syscall (cio__t_futex_wait_once) is here.
 * - A word that already differs returns at once with success (the kernel compares under its own
 *   lock); so does a wake-up that may be spurious: callers re-check their condition.
 * - A cancelable wait is a bracketed syscall (cancel.c): the cancel signal, installed without
 *   SA_RESTART, makes _umtx_op fail with EINTR.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/umtx.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "task.h"
#include "threaded.h"
#include "futex_common.h"

int cio__t_futex_wait_once(const _Atomic(uint32_t) *ptr, uint32_t expected, const cio__os_deadline *d)
{
    struct _umtx_time deadline;
    deadline._flags = UMTX_ABSTIME;
    deadline._timeout = cio__os_timespec(d->ns);
    deadline._clockid = (uint32_t)cio__os_deadline_clockid(d);
    void *obj = (void *)(uintptr_t)(const volatile void *)ptr;
    int rc = _umtx_op(obj, UMTX_OP_WAIT_UINT_PRIVATE, (unsigned long)expected,
                      d->timed ? (void *)(uintptr_t)sizeof deadline : NULL, d->timed ? &deadline : NULL);
    return rc == 0 ? 0 : errno;
}

void cio__t_futex_wake_n(const _Atomic(uint32_t) *ptr, int n)
{
    (void)_umtx_op((void *)(uintptr_t)(const volatile void *)ptr, UMTX_OP_WAKE_PRIVATE, (unsigned long)n, NULL, NULL);
}
