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

static bool writer_may_enter(const cio_rwlock *rw)
{
    return !rw->writer && rw->readers == 0;
}

static bool reader_may_enter(const cio_rwlock *rw)
{
    return !rw->writer && rw->writers_waiting == 0;
}

/* ---- exclusive --------------------------------------------------------------------------------- */

bool cio_rwlock_try_lock(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    bool ok = writer_may_enter(rw);
    if (ok)
        rw->writer = true;
    cio_mutex_unlock(io, &rw->mutex);
    return ok;
}

cio_err cio_rwlock_lock(cio_io io, cio_rwlock *rw)
{
    cio_err err = cio_mutex_lock(io, &rw->mutex);
    if (err != CIO_OK)
        return CIO__IN_SET(cancelable, err);
    if (!writer_may_enter(rw)) {
        rw->writers_waiting++;
        do {
            err = cio_condition_wait(io, &rw->cond, &rw->mutex);
            if (err != CIO_OK) {
                /* Give up: readers queued behind us may now enter. */
                if (--rw->writers_waiting == 0 && !rw->writer)
                    cio_condition_broadcast(io, &rw->cond);
                cio_mutex_unlock(io, &rw->mutex);
                return CIO__IN_SET(cancelable, err);
            }
        } while (!writer_may_enter(rw));
        rw->writers_waiting--;
    }
    rw->writer = true;
    cio_mutex_unlock(io, &rw->mutex);
    return CIO_OK;
}

void cio_rwlock_lock_uncancelable(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    if (!writer_may_enter(rw)) {
        rw->writers_waiting++;
        do
            cio_condition_wait_uncancelable(io, &rw->cond, &rw->mutex);
        while (!writer_may_enter(rw));
        rw->writers_waiting--;
    }
    rw->writer = true;
    cio_mutex_unlock(io, &rw->mutex);
}

void cio_rwlock_unlock(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    assert(rw->writer && rw->readers == 0 && "cio_rwlock_unlock: not locked exclusively");
    rw->writer = false;
    cio_condition_broadcast(io, &rw->cond);
    cio_mutex_unlock(io, &rw->mutex);
}

/* ---- shared ------------------------------------------------------------------------------------ */

bool cio_rwlock_try_lock_shared(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    bool ok = reader_may_enter(rw);
    if (ok)
        rw->readers++;
    cio_mutex_unlock(io, &rw->mutex);
    return ok;
}

cio_err cio_rwlock_lock_shared(cio_io io, cio_rwlock *rw)
{
    cio_err err = cio_mutex_lock(io, &rw->mutex);
    if (err != CIO_OK)
        return CIO__IN_SET(cancelable, err);
    while (!reader_may_enter(rw)) {
        err = cio_condition_wait(io, &rw->cond, &rw->mutex);
        if (err != CIO_OK) {
            cio_mutex_unlock(io, &rw->mutex);
            return CIO__IN_SET(cancelable, err);
        }
    }
    rw->readers++;
    cio_mutex_unlock(io, &rw->mutex);
    return CIO_OK;
}

void cio_rwlock_lock_shared_uncancelable(cio_io io, cio_rwlock *rw)
{
    cio_mutex_lock_uncancelable(io, &rw->mutex);
    while (!reader_may_enter(rw))
        cio_condition_wait_uncancelable(io, &rw->cond, &rw->mutex);
    rw->readers++;
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
