/*
 * Futex wait/wake on OpenBSD through futex(2): FUTEX_WAIT compares the 32-bit word and sleeps,
 * FUTEX_WAKE wakes up to n sleepers of that word; both with FUTEX_PRIVATE_FLAG.
 *
 * Invariants:
 * - Waits and wakes are process-private: cio futex words never live in shared memory.
 * - OpenBSD's FUTEX_WAIT timeout is relative. The deadline is fixed once, up front (on the clock the
 *   caller named: CLOCK_REALTIME for a CIO_CLOCK_REAL deadline, CLOCK_MONOTONIC otherwise), and each
 *   retry after EINTR/ECANCELED waits only for what is left of it, so retries never extend it.
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

#define NS_PER_S 1000000000LL

typedef struct {
    _Bool timed;
    cio_clock clock; /* CIO_CLOCK_REAL or CIO_CLOCK_AWAKE */
    int64_t at;      /* ns on that clock */
} deadline;

static deadline deadline_of(cio_timeout timeout)
{
    deadline d = {0, CIO_CLOCK_AWAKE, 0};
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return d;
    d.timed = 1;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        d.clock = CIO_CLOCK_REAL;
        d.at = timeout.ns;
        return d;
    }
    int64_t remaining = timeout.ns;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
        remaining = timeout.ns - cio__t_now(NULL, timeout.clock).ns;
    d.at = cio__deadline_after(cio__t_now(NULL, CIO_CLOCK_AWAKE).ns, remaining);
    return d;
}

/* What is left of d as a relative timespec; false once it has passed. */
static _Bool remaining(const deadline *d, struct timespec *ts)
{
    int64_t left = d->at - cio__t_now(NULL, d->clock).ns;
    if (left <= 0)
        return 0;
    ts->tv_sec = (time_t)(left / NS_PER_S);
    ts->tv_nsec = (long)(left % NS_PER_S);
    return 1;
}

cio_err cio__t_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable)
{
    deadline d = deadline_of(timeout);
    volatile uint32_t *word = (volatile uint32_t *)(uintptr_t)(const volatile void *)ptr;
    if (cancelable) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return e;
    }
    for (;;) {
        struct timespec left;
        if (d.timed && !remaining(&d, &left)) {
            if (cancelable)
                cio__t_syscall_end();
            return CIO_E_TIMEOUT;
        }
        int rc = futex(word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, (int)expected, d.timed ? &left : NULL, NULL);
        if (rc == 0)
            break;
        int err = errno;
        if (err == EINTR || err == ECANCELED) {
            if (cancelable) {
                cio_err e = cio__t_syscall_interrupted();
                if (e != CIO_OK)
                    return e;
            }
            continue;
        }
        if (cancelable)
            cio__t_syscall_end();
        if (err == EAGAIN)
            return CIO_OK; /* the value already differed */
        if (err == ETIMEDOUT)
            return CIO_E_TIMEOUT;
        cio__mapped m = cio__errno_futex_wait(err);
        return m.action == CIO__MAP_BUG ? CIO__BUG("futex wait") : m.err;
    }
    if (cancelable)
        cio__t_syscall_end();
    return CIO_OK;
}

void cio__t_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters == 0)
        return;
    int n = max_waiters > (uint32_t)INT_MAX ? INT_MAX : (int)max_waiters;
    (void)futex((volatile uint32_t *)(uintptr_t)(const volatile void *)ptr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
                NULL, NULL);
}
