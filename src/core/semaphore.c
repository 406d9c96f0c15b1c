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

/* wait and wait_timeout: CIO_TIMEOUT_NONE waits as cio_condition_wait does (never Timeout). */
static cio_err wait_until(cio_io io, cio_semaphore *sem, cio_timeout deadline)
{
    CIO__TRY(cio_mutex_lock(io, &sem->mutex));
    while (sem->permits == 0) {
        cio_err err = cio_condition_wait_timeout(io, &sem->cond, &sem->mutex, deadline);
        if (err != CIO_OK) {
            cio_mutex_unlock(io, &sem->mutex);
            return err;
        }
    }
    sem->permits--;
    cio_mutex_unlock(io, &sem->mutex);
    return CIO_OK;
}

cio_err cio_semaphore_wait(cio_io io, cio_semaphore *sem)
{
    return CIO__IN_SET(cancelable, wait_until(io, sem, CIO_TIMEOUT_NONE));
}

cio_err cio_semaphore_wait_timeout(cio_io io, cio_semaphore *sem, cio_timeout timeout)
{
    return CIO__IN_SET(condition_wait_timeout, wait_until(io, sem, cio__timeout_to_deadline(io, timeout)));
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
