/*
 * cio_condition: a condition variable over the futex slots of a cio_io (the design of Zig's
 * Io.Condition, with the Aug-2026 fix for signals that race a cancel).
 *
 * State encoding:
 *     cond->state  bits 0..15  waiters: tasks registered in wait and not yet gone
 *                  bits 16..31 signals: wake-ups granted to registered waiters, not yet consumed
 *     cond->epoch  a counter bumped by every signal/broadcast; waiters futex-wait on it
 *     cond->sleepers  waiters between announcing a futex wait and its return (a wake is a system
 *                  call; a signal makes it only when somebody may be asleep in the kernel)
 * Invariant: signals <= waiters (a signal is only granted to a waiter that has none yet).
 * At most 65535 simultaneous waiters (asserted).
 *
 * Who does what:
 *   - wait (holding the mutex): reads the epoch, registers (waiters++), unlocks the mutex and sleeps
 *     while the epoch is unchanged (it checks the epoch itself first: a signal that came while it
 *     was unlocking, or preempted, needs no futex call). Each time it wakes it re-reads the epoch and then the state; if
 *     a signal is pending it consumes one (waiters--, signals--) and returns. A signal granted after
 *     the state check bumps the epoch after it, so the next futex wait does not sleep.
 *   - signal: if waiters > signals, grants one (signals++), bumps the epoch, wakes one futex waiter
 *     if sleepers > 0. The waiter raises sleepers, then re-reads the epoch before its futex wait;
 *     the signaler bumps the epoch, then reads sleepers (all seq_cst): one of them sees the other.
 *     broadcast grants to every registered waiter and wakes them all. Neither needs the mutex.
 *   - a wait that ends in CIO_E_CANCELED or CIO_E_TIMEOUT deregisters (waiters--). If that would
 *     leave signals > waiters, the signal was surplus and it takes it away too (signals--). The
 *     futex wake that went with some pending signal may have landed on this very waiter (the kernel
 *     woke it, then it saw the cancel or the deadline), so if any signal is still pending after it
 *     leaves, it bumps the epoch and wakes one waiter: the signal passes on, never gets lost.
 *   - every wait re-acquires the mutex, uncancelably, before returning, whatever the result.
 *
 * Lock order: the caller's mutex is the only lock; the state word is lock-free.
 * Memory order: registering (release) happens-before a signaler's CAS (acquire) sees it, so the
 * waiter's epoch read precedes the signaler's bump; the signaler's state CAS (release) precedes its
 * epoch bump (release), which the waiter reads (acquire) before reading the state (acquire).
 */
#include <assert.h>
#include <stdatomic.h>

#include "cio/sync.h"
#include "internal.h"

#define ONE_WAITER ((uint32_t)1)
#define ONE_SIGNAL ((uint32_t)1 << 16)
#define WAITERS(s) ((s)&0xffffu)
#define SIGNALS(s) ((s) >> 16)

static void wake_epoch(cio_io io, cio_condition *cond, uint32_t n)
{
    atomic_fetch_add_explicit(&cond->epoch, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&cond->sleepers, memory_order_seq_cst) != 0)
        CIO__VT(io)->futex_wake(io.userdata, &cond->epoch, n);
}

/* One futex wait on the epoch, unless it moved since the caller read it (then a signal or
 * broadcast came while the caller was unlocking or preempted, and it looks for it without entering
 * the kernel). The sleeper count is raised around the wait: seq_cst against wake_epoch's bump and
 * load, so either the waiter sees the new epoch or the signaler sees the sleeper and wakes it. */
static cio_err sleep_on(cio_io io, cio_condition *cond, uint32_t epoch, cio_timeout timeout, bool cancelable)
{
    cio_err err = CIO_OK;
    atomic_fetch_add_explicit(&cond->sleepers, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&cond->epoch, memory_order_seq_cst) == epoch) {
        if (cancelable)
            err = CIO__VT(io)->futex_wait(io.userdata, &cond->epoch, epoch, timeout);
        else
            CIO__VT(io)->futex_wait_uncancelable(io.userdata, &cond->epoch, epoch);
    }
    atomic_fetch_sub_explicit(&cond->sleepers, 1, memory_order_relaxed);
    return err;
}

/* Registers the caller; returns the epoch to wait on. The mutex must be held. */
static uint32_t enter(cio_condition *cond)
{
    uint32_t epoch = atomic_load_explicit(&cond->epoch, memory_order_acquire);
    uint32_t prev = atomic_fetch_add_explicit(&cond->state, ONE_WAITER, memory_order_acq_rel);
    assert(WAITERS(prev) < 0xffffu && "cio_condition: too many waiters");
    (void)prev;
    return epoch;
}

/* After a wake-up: consumes a pending signal if there is one. */
static bool try_consume(cio_condition *cond, uint32_t *epoch)
{
    *epoch = atomic_load_explicit(&cond->epoch, memory_order_acquire);
    uint32_t state = atomic_load_explicit(&cond->state, memory_order_acquire);
    while (SIGNALS(state) > 0) {
        if (atomic_compare_exchange_weak_explicit(&cond->state, &state, state - ONE_WAITER - ONE_SIGNAL,
                                                  memory_order_acq_rel, memory_order_acquire))
            return true;
    }
    return false;
}

/* Deregisters after a timeout or cancel, passing any pending signal on (see the top comment). */
static void leave(cio_io io, cio_condition *cond)
{
    uint32_t state = atomic_load_explicit(&cond->state, memory_order_relaxed);
    uint32_t next;
    do {
        next = state - ONE_WAITER;
        if (SIGNALS(next) > WAITERS(next))
            next -= ONE_SIGNAL; /* the surplus signal was ours */
    } while (
        !atomic_compare_exchange_weak_explicit(&cond->state, &state, next, memory_order_acq_rel, memory_order_relaxed));
    if (SIGNALS(next) > 0)
        wake_epoch(io, cond, 1);
}

static cio_err wait_common(cio_io io, cio_condition *cond, cio_mutex *mutex, cio_timeout timeout)
{
    uint32_t epoch = enter(cond);
    cio_mutex_unlock(io, mutex);
    cio_err err;
    for (;;) {
        err = sleep_on(io, cond, epoch, timeout, true);
        if (err == CIO_E_CANCELED || err == CIO_E_TIMEOUT) {
            leave(io, cond);
            break;
        }
        if (try_consume(cond, &epoch)) {
            err = CIO_OK;
            break;
        }
    }
    cio_mutex_lock_uncancelable(io, mutex);
    return err;
}

cio_err cio_condition_wait(cio_io io, cio_condition *cond, cio_mutex *mutex)
{
    cio_err err = wait_common(io, cond, mutex, CIO_TIMEOUT_NONE);
    return CIO__IN_SET(cancelable, err);
}

cio_err cio_condition_wait_timeout(cio_io io, cio_condition *cond, cio_mutex *mutex, cio_timeout timeout)
{
    cio_err err = wait_common(io, cond, mutex, cio__timeout_to_deadline(io, timeout));
    return CIO__IN_SET(condition_wait_timeout, err);
}

void cio_condition_wait_uncancelable(cio_io io, cio_condition *cond, cio_mutex *mutex)
{
    uint32_t epoch = enter(cond);
    cio_mutex_unlock(io, mutex);
    do
        (void)sleep_on(io, cond, epoch, CIO_TIMEOUT_NONE, false);
    while (!try_consume(cond, &epoch));
    cio_mutex_lock_uncancelable(io, mutex);
}

void cio_condition_signal(cio_io io, cio_condition *cond)
{
    uint32_t state = atomic_load_explicit(&cond->state, memory_order_acquire);
    do {
        if (WAITERS(state) <= SIGNALS(state))
            return; /* nobody left to grant a signal to */
    } while (!atomic_compare_exchange_weak_explicit(&cond->state, &state, state + ONE_SIGNAL, memory_order_acq_rel,
                                                    memory_order_acquire));
    wake_epoch(io, cond, 1);
}

void cio_condition_broadcast(cio_io io, cio_condition *cond)
{
    uint32_t state = atomic_load_explicit(&cond->state, memory_order_acquire);
    uint32_t grant;
    do {
        grant = WAITERS(state) - SIGNALS(state);
        if (WAITERS(state) <= SIGNALS(state))
            return;
    } while (!atomic_compare_exchange_weak_explicit(&cond->state, &state, state + grant * ONE_SIGNAL,
                                                    memory_order_acq_rel, memory_order_acquire));
    wake_epoch(io, cond, grant);
}
