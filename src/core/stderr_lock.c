/*
 * The process-wide recursive stderr lock (Zig's lockStderr/tryLockStderr/unlockStderr), one for the
 * whole process, shared by every Io instance of every backend.
 *
 * Invariants:
 * - `word` is a three-state futex word: 0 free, 1 held, 2 held and maybe waited for. Only the
 *   holder writes `owner` (non-zero: the holder's task identity) and `depth`; another task reads
 *   `owner` only to tell that it is not itself, which a stale value cannot fake (a task's identity is
 *   written only by that task).
 * - A waiter waits with the backend's own futex slot, so a fiber does not block its loop thread and
 *   the wait is a cancellation point; a canceled lock leaves the state as it found it (a waiter
 *   that set 2 only causes one spare wake).
 */
#include <stdatomic.h>

#include "stderr_lock.h"

static _Atomic(uint32_t) word;
static _Atomic(uintptr_t) owner;
static uint32_t depth;

static void took(uintptr_t self)
{
    atomic_store_explicit(&owner, self, memory_order_relaxed);
    depth = 1;
}

cio_err cio__stderr_lock(uintptr_t self, void *ud, cio__stderr_wait_fn wait)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) == self) {
        depth++;
        return CIO_OK;
    }
    uint32_t expected = 0;
    if (atomic_compare_exchange_strong_explicit(&word, &expected, 1, memory_order_acquire, memory_order_relaxed)) {
        took(self);
        return CIO_OK;
    }
    for (;;) {
        if (atomic_exchange_explicit(&word, 2, memory_order_acquire) == 0) {
            took(self);
            return CIO_OK;
        }
        cio_err err = wait(ud, &word, 2, CIO_TIMEOUT_NONE);
        if (err == CIO_E_CANCELED)
            return err;
    }
}

bool cio__stderr_try_lock(uintptr_t self)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) == self) {
        depth++;
        return true;
    }
    uint32_t expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&word, &expected, 1, memory_order_acquire, memory_order_relaxed))
        return false;
    took(self);
    return true;
}

void cio__stderr_unlock(uintptr_t self, void *ud, cio__stderr_wake_fn wake)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) != self || depth == 0)
        return; /* not the holder: a caller's mistake, ignored rather than breaking another's lock */
    if (--depth > 0)
        return;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    if (atomic_exchange_explicit(&word, 0, memory_order_release) == 2)
        wake(ud, &word, 1);
}
