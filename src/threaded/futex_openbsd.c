/*
 * Futex wait/wake on OpenBSD through futex(2): FUTEX_WAIT compares the 32-bit word and sleeps,
 * FUTEX_WAKE wakes up to n sleepers of that word; both with FUTEX_PRIVATE_FLAG.
 *
 * Invariants:
 * - Waits and wakes are process-private: cio futex words never live in shared memory.
 * - OpenBSD's FUTEX_WAIT timeout is relative. The deadline is fixed once, up front (on the clock the
 *   caller named: CLOCK_REALTIME for a CIO_CLOCK_REAL deadline, CLOCK_MONOTONIC otherwise), and each
 *   retry after EINTR/ECANCELED waits only for what is left of it, so retries never extend it
 *   (wait_posix.c's loop, joined by futex_common.c: the deadline, the bracket and the outcome; only
 *   the syscall, cio__t_futex_wait_once, is here).
 * - EAGAIN (the word already differed) is success; so is a wake-up that may be spurious: callers
 *   re-check their condition.
 * - ECANCELED is OpenBSD's EINTR for a signal whose handler has SA_RESTART; both are a retry (or,
 *   for a cancelable wait with a request pending, CIO_E_CANCELED: cancel.c's bracket).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/futex.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "task.h"
#include "threaded.h"
#include "futex_common.h"

int cio__t_futex_wait_once(const _Atomic(uint32_t) *ptr, uint32_t expected, const cio__os_deadline *d)
{
    struct timespec left;
    if (d->timed && !cio__os_deadline_left(d, &left))
        return ETIMEDOUT;
    volatile uint32_t *word = (volatile uint32_t *)(uintptr_t)(const volatile void *)ptr;
    int rc = futex(word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, (int)expected, d->timed ? &left : NULL, NULL);
    int err = rc == 0 ? 0 : errno;
    return err == ECANCELED ? EINTR : err; /* ECANCELED: a signal whose handler has SA_RESTART */
}

void cio__t_futex_wake_n(const _Atomic(uint32_t) *ptr, int n)
{
    (void)futex((volatile uint32_t *)(uintptr_t)(const volatile void *)ptr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL,
                NULL);
}
