/*
 * cio_mutex: the classic three-state futex mutex (Drepper, "Futexes Are Tricky", mutex #2), over
 * the futex slots of a cio_io.
 *
 * State encoding (mutex->state, one 32-bit futex word):
 *     0  unlocked
 *     1  locked, nobody waiting (as far as the owner knows)
 *     2  locked, and some task may be waiting on the futex ("contended")
 *
 * Who does what:
 *   - lock: CAS 0 -> 1 (fast path, no futex, not a cancellation point). Otherwise it announces
 *     itself by swapping in 2 and sleeps on the futex while the word is 2; it owns the lock as soon
 *     as a swap returns 0. A lock acquired through the slow path leaves the word at 2 (it cannot
 *     know whether others still wait), which costs at most one spurious wake at unlock.
 *   - unlock: swap in 0; wake one waiter only if the old value was 2.
 *   - a cancelable lock whose futex wait returns CIO_E_CANCELED gives up without the lock. It may
 *     have consumed the one wake an unlock sent (the kernel woke it, then it saw the cancel), and
 *     the unlocker reset the word to 0, so no later unlock would wake the remaining sleepers. The
 *     giving-up waiter therefore passes the wake on: futex_wake(1). A spurious wake is harmless (the
 *     woken waiter swaps 2 in and re-checks); a lost one would be a deadlock.
 *
 * Memory order: acquiring transitions (CAS/swap that observe 0) are acquire, unlock is release.
 * No owner tracking, no recursion: unlocking a mutex one does not hold is a bug (asserted).
 */
#include <assert.h>
#include <stdatomic.h>

#include "cio/sync.h"
#include "internal.h"

enum { UNLOCKED = 0, LOCKED = 1, CONTENDED = 2 };

bool cio_mutex_try_lock(cio_mutex *mutex)
{
    uint32_t expected = UNLOCKED;
    return atomic_compare_exchange_strong_explicit(&mutex->state, &expected, LOCKED, memory_order_acquire,
                                                   memory_order_relaxed);
}

cio_err cio_mutex_lock(cio_io io, cio_mutex *mutex)
{
    uint32_t expected = UNLOCKED;
    if (atomic_compare_exchange_strong_explicit(&mutex->state, &expected, LOCKED, memory_order_acquire,
                                                memory_order_relaxed))
        return CIO_OK;
    /* Someone holds it. Mark it contended; if the swap finds it free we own it. */
    while (atomic_exchange_explicit(&mutex->state, CONTENDED, memory_order_acquire) != UNLOCKED) {
        cio_err err = io.vtable->futex_wait(io.userdata, &mutex->state, CONTENDED, CIO_TIMEOUT_NONE);
        if (err == CIO_E_CANCELED) {
            /* We may have swallowed the wake an unlock meant for a waiter: pass it on. */
            io.vtable->futex_wake(io.userdata, &mutex->state, 1);
            return CIO__IN_SET(cancelable, err);
        }
        /* CIO_OK: woken or spurious; anything else (no timeout was given): re-check. */
    }
    return CIO_OK;
}

void cio_mutex_lock_uncancelable(cio_io io, cio_mutex *mutex)
{
    uint32_t expected = UNLOCKED;
    if (atomic_compare_exchange_strong_explicit(&mutex->state, &expected, LOCKED, memory_order_acquire,
                                                memory_order_relaxed))
        return;
    while (atomic_exchange_explicit(&mutex->state, CONTENDED, memory_order_acquire) != UNLOCKED)
        io.vtable->futex_wait_uncancelable(io.userdata, &mutex->state, CONTENDED);
}

void cio_mutex_unlock(cio_io io, cio_mutex *mutex)
{
    uint32_t prev = atomic_exchange_explicit(&mutex->state, UNLOCKED, memory_order_release);
    assert(prev != UNLOCKED && "cio_mutex_unlock: mutex not locked");
    if (prev == CONTENDED)
        io.vtable->futex_wake(io.userdata, &mutex->state, 1);
}
