/*
 * cio_mutex: a futex mutex that counts its sleepers, over the futex slots of a cio_io.
 *
 * State encoding (mutex->state, one 32-bit futex word):
 *     bit 0       LOCKED: somebody owns the mutex
 *     bits 1..31  sleepers: tasks inside the slow path of lock (registered, asleep or about to be)
 *
 * Who does what:
 *   - lock: CAS 0 -> LOCKED (fast path, no futex, not a cancellation point). Otherwise, while the
 *     word shows the mutex free it tries to set LOCKED; when it is held the task registers as a
 *     sleeper (+2) and futex-waits on the exact word it saw. It owns the mutex when a CAS sets
 *     LOCKED, and in the slow path that same CAS deregisters it (-2).
 *   - unlock: clears LOCKED; wakes one sleeper only if any are registered. Unlike the three-state
 *     mutex (Drepper's #2, which leaves the word "contended" after every slow acquisition and so
 *     pays a futile futex wake at the next unlock), a lock acquired through the slow path does not
 *     make the next unlock call the kernel unless somebody still sleeps. A sleeper that was woken
 *     but has not taken the lock yet still counts, so an unlock may wake a second one: harmless.
 *   - a cancelable lock whose futex wait returns CIO_E_CANCELED deregisters and gives up. It may
 *     have consumed the wake an unlock meant for the remaining sleepers; if the mutex is free and
 *     sleepers remain it passes the wake on: futex_wake(1). If the mutex is held, its owner's
 *     unlock sees the sleepers. A spurious wake is harmless (the sleeper re-checks); a lost one
 *     would be a deadlock.
 *   - any change of the word (another sleeper arriving, LOCKED cleared) makes a futex wait on the
 *     old value return at once, so a sleeper never sleeps on a free mutex.
 *
 * Memory order: the CAS that sets LOCKED is acquire, unlock is release; sleeper registration
 * needs no ordering of its own (every transition is an RMW of the one word, so the unlocker's
 * RMW and a sleeper's are totally ordered and one of them sees the other).
 * No owner tracking, no recursion: unlocking a mutex one does not hold is a bug (asserted).
 */
#include <assert.h>
#include <stdatomic.h>

#include "cio/sync.h"
#include "internal.h"

#define LOCKED ((uint32_t)1)
#define SLEEPER ((uint32_t)2)

bool cio_mutex_try_lock(cio_mutex *mutex)
{
    uint32_t s = atomic_load_explicit(&mutex->state, memory_order_relaxed);
    while (!(s & LOCKED)) {
        if (atomic_compare_exchange_weak_explicit(&mutex->state, &s, s | LOCKED, memory_order_acquire,
                                                  memory_order_relaxed))
            return true;
    }
    return false;
}

static bool fast_lock(cio_mutex *mutex)
{
    uint32_t expected = 0;
    return atomic_compare_exchange_strong_explicit(&mutex->state, &expected, LOCKED, memory_order_acquire,
                                                   memory_order_relaxed);
}

/* The slow path: takes the mutex if it is free, otherwise registers as a sleeper. Returns true if
 * it took the mutex; false with *seen = the word after registering. */
static bool lock_or_register(cio_mutex *mutex, uint32_t *seen)
{
    uint32_t s = atomic_load_explicit(&mutex->state, memory_order_relaxed);
    for (;;) {
        if (!(s & LOCKED)) {
            if (atomic_compare_exchange_weak_explicit(&mutex->state, &s, s | LOCKED, memory_order_acquire,
                                                      memory_order_relaxed))
                return true;
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&mutex->state, &s, s + SLEEPER, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *seen = s + SLEEPER;
            return false;
        }
    }
}

/* A registered sleeper: takes the mutex (and deregisters) if it is free. */
static bool sleeper_try_take(cio_mutex *mutex, uint32_t *seen)
{
    uint32_t s = atomic_load_explicit(&mutex->state, memory_order_relaxed);
    while (!(s & LOCKED)) {
        if (atomic_compare_exchange_weak_explicit(&mutex->state, &s, (s | LOCKED) - SLEEPER, memory_order_acquire,
                                                  memory_order_relaxed))
            return true;
    }
    *seen = s;
    return false;
}

cio_err cio_mutex_lock(cio_io io, cio_mutex *mutex)
{
    uint32_t seen;
    if (fast_lock(mutex) || lock_or_register(mutex, &seen))
        return CIO_OK;
    do {
        cio_err err = CIO__VT(io)->futex_wait(io.userdata, &mutex->state, seen, CIO_TIMEOUT_NONE);
        if (err == CIO_E_CANCELED) {
            uint32_t s = atomic_fetch_sub_explicit(&mutex->state, SLEEPER, memory_order_relaxed) - SLEEPER;
            if (!(s & LOCKED) && s >= SLEEPER)
                CIO__VT(io)->futex_wake(io.userdata, &mutex->state, 1); /* pass the wake on */
            return CIO__IN_SET(cancelable, err);
        }
        /* CIO_OK: woken, spurious, or the word had changed; anything else (no timeout): re-check. */
    } while (!sleeper_try_take(mutex, &seen));
    return CIO_OK;
}

void cio_mutex_lock_uncancelable(cio_io io, cio_mutex *mutex)
{
    uint32_t seen;
    if (fast_lock(mutex) || lock_or_register(mutex, &seen))
        return;
    do
        CIO__VT(io)->futex_wait_uncancelable(io.userdata, &mutex->state, seen);
    while (!sleeper_try_take(mutex, &seen));
}

void cio_mutex_unlock(cio_io io, cio_mutex *mutex)
{
    uint32_t prev = atomic_fetch_sub_explicit(&mutex->state, LOCKED, memory_order_release);
    assert((prev & LOCKED) && "cio_mutex_unlock: mutex not locked");
    if (prev != LOCKED)
        CIO__VT(io)->futex_wake(io.userdata, &mutex->state, 1);
}
