/*
 * cio_rwlock: many readers or one writer, writer-preferring, built as a monitor: rw->mutex guards
 * the three fields below, rw->cond queues every blocked reader and writer.
 *
 * State (under rw->mutex):
 *     readers          readers holding the lock
 *     writer           a writer holds the lock (then readers == 0)
 *     writers_waiting  writers blocked in lock: while non-zero, new readers wait behind them, so a
 *                      stream of readers cannot starve a writer
 * A reader may enter when !writer && writers_waiting == 0; a writer when !writer && readers == 0.
 *
 * Who does what:
 *   - lock/lock_shared register, sleep on the condition until they may enter, then enter.
 *     Every change that may let someone in (writer unlock, last reader out, a waiting writer that
 *     gives up) broadcasts: readers and writers share one condition, so a single signal could
 *     reach a task that still may not enter.
 *   - a canceled writer unregisters (writers_waiting--) and broadcasts before returning, so the
 *     readers it was holding back proceed: no stale state survives a cancel. A canceled reader
 *     changes nothing (the condition passes on any wake it swallowed).
 *   - try_lock takes the internal mutex uncancelably (a short critical section) so its answer
 *     depends only on the lock's state: it never succeeds while a reader or writer holds the lock.
 *   - broadcasts happen with rw->mutex held, so the lock may be freed as soon as a waiter returns.
 * Lock order: rw->mutex only; the internal mutex is never held while the caller does anything else.
 */
#include <assert.h>

#include "cio/sync.h"
#include "internal.h"

static bool may_enter(const cio_rwlock *rw, bool shared)
{
    return !rw->writer && (shared ? rw->writers_waiting == 0 : rw->readers == 0);
}

static void enter(cio_rwlock *rw, bool shared)
{
    if (shared)
        rw->readers++;
    else
        rw->writer = true;
}

/* try_lock and try_lock_shared. */
static bool try_enter(cio_io io, cio_rwlock *rw, bool shared)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    bool ok = may_enter(rw, shared);
    if (ok)
        enter(rw, shared);
    cio_mutex_unlock(io, &rw->mutex);
    return ok;
}

/* lock and lock_shared, cancelable or not: a writer that cannot enter at once registers in
 * writers_waiting while it sleeps; a canceled one unregisters and broadcasts (see the top). */
static cio_err lock(cio_io io, cio_rwlock *rw, bool shared, bool cancelable)
{
    if (!cancelable)
        cio_mutex_lock_uncancelable(io, &rw->mutex);
    else
        CIO__TRY(cio_mutex_lock(io, &rw->mutex));
    bool registered = !shared && !may_enter(rw, shared);
    if (registered)
        rw->writers_waiting++;
    while (!may_enter(rw, shared)) {
        cio_err err = CIO_OK;
        if (!cancelable)
            cio_condition_wait_uncancelable(io, &rw->cond, &rw->mutex);
        else
            err = cio_condition_wait(io, &rw->cond, &rw->mutex);
        if (err != CIO_OK) {
            /* Give up: readers queued behind a writer may now enter. */
            if (registered && --rw->writers_waiting == 0 && !rw->writer)
                cio_condition_broadcast(io, &rw->cond);
            cio_mutex_unlock(io, &rw->mutex);
            return err;
        }
    }
    if (registered)
        rw->writers_waiting--;
    enter(rw, shared);
    cio_mutex_unlock(io, &rw->mutex);
    return CIO_OK;
}

/* ---- exclusive, then shared -------------------------------------------------------------------- */

bool cio_rwlock_try_lock(cio_io io, cio_rwlock *rw)
{
    return try_enter(io, rw, false);
}

bool cio_rwlock_try_lock_shared(cio_io io, cio_rwlock *rw)
{
    return try_enter(io, rw, true);
}

cio_err cio_rwlock_lock(cio_io io, cio_rwlock *rw)
{
    return CIO__IN_SET(cancelable, lock(io, rw, false, true));
}

cio_err cio_rwlock_lock_shared(cio_io io, cio_rwlock *rw)
{
    return CIO__IN_SET(cancelable, lock(io, rw, true, true));
}

void cio_rwlock_lock_uncancelable(cio_io io, cio_rwlock *rw)
{
    (void)lock(io, rw, false, false);
}

void cio_rwlock_lock_shared_uncancelable(cio_io io, cio_rwlock *rw)
{
    (void)lock(io, rw, true, false);
}

void cio_rwlock_unlock(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    assert(rw->writer && rw->readers == 0 && "cio_rwlock_unlock: not locked exclusively");
    rw->writer = false;
    cio_condition_broadcast(io, &rw->cond);
    cio_mutex_unlock(io, &rw->mutex);
}

void cio_rwlock_unlock_shared(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    assert(rw->readers > 0 && !rw->writer && "cio_rwlock_unlock_shared: not locked shared");
    if (--rw->readers == 0)
        cio_condition_broadcast(io, &rw->cond);
    cio_mutex_unlock(io, &rw->mutex);
}
