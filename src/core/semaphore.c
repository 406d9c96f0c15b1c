/*
 * cio_semaphore: a counting semaphore (Zig's Io.Semaphore) built as a monitor: a cio_mutex guards
 * `permits`, a cio_condition queues the tasks waiting for one.
 *
 * Invariants (under sem->mutex): permits is the number of posts not yet consumed by a wait.
 * Who does what:
 *   - wait: locks, sleeps on the condition while permits == 0, takes one, unlocks. A wait that
 *     fails (CIO_E_CANCELED while locking or waiting, CIO_E_TIMEOUT) consumes nothing; a post's
 *     signal it may have swallowed is passed on by the condition itself (condition.c).
 *   - post: locks (uncancelably), adds one, signals one waiter while still holding the mutex (so the
 *     semaphore may be freed by a waiter as soon as it returns), unlocks.
 * Lock order: sem->mutex only.
 */
#include <assert.h>

#include "cio/sync.h"
#include "internal.h"

cio_err cio_semaphore_wait(cio_io io, cio_semaphore *sem)
{
    cio_err err = cio_mutex_lock(io, &sem->mutex);
    if (err != CIO_OK)
        return CIO__IN_SET(cancelable, err);
    while (sem->permits == 0) {
        err = cio_condition_wait(io, &sem->cond, &sem->mutex);
        if (err != CIO_OK) {
            cio_mutex_unlock(io, &sem->mutex);
            return CIO__IN_SET(cancelable, err);
        }
    }
    sem->permits--;
    cio_mutex_unlock(io, &sem->mutex);
    return CIO_OK;
}

cio_err cio_semaphore_wait_timeout(cio_io io, cio_semaphore *sem, cio_timeout timeout)
{
    timeout = cio__timeout_to_deadline(io, timeout);
    cio_err err = cio_mutex_lock(io, &sem->mutex);
    if (err != CIO_OK)
        return CIO__IN_SET(condition_wait_timeout, err);
    while (sem->permits == 0) {
        err = cio_condition_wait_timeout(io, &sem->cond, &sem->mutex, timeout);
        if (err != CIO_OK) {
            cio_mutex_unlock(io, &sem->mutex);
            return CIO__IN_SET(condition_wait_timeout, err);
        }
    }
    sem->permits--;
    cio_mutex_unlock(io, &sem->mutex);
    return CIO_OK;
}

void cio_semaphore_wait_uncancelable(cio_io io, cio_semaphore *sem)
{
    cio_mutex_lock_uncancelable(io, &sem->mutex);
    while (sem->permits == 0)
        cio_condition_wait_uncancelable(io, &sem->cond, &sem->mutex);
    sem->permits--;
    cio_mutex_unlock(io, &sem->mutex);
}

void cio_semaphore_post(cio_io io, cio_semaphore *sem)
{
    cio_mutex_lock_uncancelable(io, &sem->mutex);
    assert(sem->permits < UINT32_MAX && "cio_semaphore_post: too many permits");
    sem->permits++;
    cio_condition_signal(io, &sem->cond);
    cio_mutex_unlock(io, &sem->mutex);
}
