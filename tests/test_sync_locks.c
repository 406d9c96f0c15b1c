/*
 * cio/sync.h: Mutex, RwLock and Semaphore — contention, try-lock, cancellation and lost-wakeup
 * tests. Event and Condition are in test_sync.c; Queue and Select are in test_queue.c.
 *
 * Tasks never call cmocka asserts (they run on other threads): they return a cio_err or record what
 * they saw in shared state, and the test thread checks it. CIO_E_UNEXPECTED from a task means one of
 * its own checks failed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <string.h>
#include <cmocka.h>

#include "cio.h"
#include "sync_helpers.h"
#include "swallow_io.h"

/* ==== Mutex ====================================================================================== */

#define MUTEX_TASKS 4
#define MUTEX_ITERS 10000

typedef struct {
    cio_io io;
    cio_mutex *mutex;
    uint32_t *counter;
    bool uncancelable;
} mutex_ctx;

static cio_err mutex_incrementer(void *ctx)
{
    mutex_ctx *c = (mutex_ctx *)ctx;
    for (int i = 0; i < MUTEX_ITERS; i++) {
        if (c->uncancelable) {
            cio_mutex_lock_uncancelable(c->io, c->mutex);
        } else {
            cio_err err = cio_mutex_lock(c->io, c->mutex);
            if (err != CIO_OK)
                return err;
        }
        *c->counter += 1;
        cio_mutex_unlock(c->io, c->mutex);
    }
    return CIO_OK;
}

static void test_mutex_contention(void **state)
{
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    uint32_t counter = 0;
    cio_future f[MUTEX_TASKS];
    for (int i = 0; i < MUTEX_TASKS; i++) {
        mutex_ctx c = {io, &mutex, &counter, i % 2 == 1};
        f[i] = start(io, mutex_incrementer, &c, sizeof c);
    }
    for (int i = 0; i < MUTEX_TASKS; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    assert_int_equal(counter, MUTEX_TASKS * MUTEX_ITERS);
    assert_int_equal(atomic_load(&mutex.state), 0);
}

static void test_mutex_try_lock(void **state)
{
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    assert_true(cio_mutex_try_lock(&mutex));
    assert_false(cio_mutex_try_lock(&mutex));
    cio_mutex_unlock(io, &mutex);
    assert_int_equal(cio_mutex_lock(io, &mutex), CIO_OK);
    assert_false(cio_mutex_try_lock(&mutex));
    cio_mutex_unlock(io, &mutex);
    cio_mutex_lock_uncancelable(io, &mutex);
    cio_mutex_unlock(io, &mutex);
    assert_true(cio_mutex_try_lock(&mutex));
    cio_mutex_unlock(io, &mutex);
}

static cio_err lock_unlock_task(void *ctx)
{
    mutex_ctx *c = (mutex_ctx *)ctx;
    cio_err err = cio_mutex_lock(c->io, c->mutex);
    if (err != CIO_OK)
        return err;
    *c->counter += 1;
    cio_mutex_unlock(c->io, c->mutex);
    return CIO_OK;
}

static void test_mutex_cancel(void **state)
{
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    uint32_t counter = 0;
    mutex_ctx c = {io, &mutex, &counter, false};
    cio_mutex_lock_uncancelable(io, &mutex);
    cio_future a = start(io, lock_unlock_task, &c, sizeof c);
    cio_future b = start(io, lock_unlock_task, &c, sizeof c);
    assert_int_equal(cancel_promptly(io, &a), CIO_E_CANCELED);
    /* The canceled waiter gave up without the lock; the other one still gets it. */
    cio_mutex_unlock(io, &mutex);
    assert_int_equal(cio_await(io, &b), CIO_OK);
    assert_int_equal(counter, 1);
    assert_true(cio_mutex_try_lock(&mutex));
    cio_mutex_unlock(io, &mutex);
}

/* As test_condition_cancel_passes_signal_on for the mutex: waiter A's futex waits report
 * CIO_E_CANCELED even when woken by the unlock, so A gives up; the wake must reach waiter B. */
typedef struct {
    mutex_ctx base;
    cio_event *done;
} swallow_mutex_ctx;

static cio_err swallow_lock_task(void *ctx)
{
    swallow_mutex_ctx *c = (swallow_mutex_ctx *)ctx;
    cio_err err = lock_unlock_task(&c->base);
    if (c->done != NULL)
        cio_event_set(c->base.io, c->done);
    return err;
}

static void test_mutex_cancel_passes_wake_on(void **state)
{
    cio_io io = cio_test_io(state);
    swallow_ud ua = {NULL, true}, ub = {NULL, false};
    cio_io io_a = swallow_io(io, &ua), io_b = swallow_io(io, &ub);

    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_event b_done = CIO_EVENT_INIT;
    uint32_t counter = 0;
    swallow_word = &mutex.state;
    swallow_mutex_ctx ca = {{io_a, &mutex, &counter, false}, NULL};
    swallow_mutex_ctx cb = {{io_b, &mutex, &counter, false}, &b_done};
    cio_mutex_lock_uncancelable(io, &mutex);
    cio_future a = start(io, swallow_lock_task, &ca, sizeof ca);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK); /* A first: a FIFO futex wakes A */
    cio_future b = start(io, swallow_lock_task, &cb, sizeof cb);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    cio_mutex_unlock(io, &mutex);
    cio_err b_woke = cio_event_wait_timeout(io, &b_done, cio_timeout_ms(2000));
    if (b_woke != CIO_OK) /* the wake was lost: unblock B, then fail */
        cio_futex_wake(io, &mutex.state, UINT32_MAX);
    assert_int_equal(cio_await(io, &b), CIO_OK);
    assert_int_equal(cio_cancel(io, &a), CIO_E_CANCELED);
    assert_int_equal(b_woke, CIO_OK);
    assert_int_equal(counter, 1);
}

/* ==== RwLock ===================================================================================== */

typedef struct {
    cio_io io;
    cio_rwlock *rw;
    _Atomic(uint32_t) *readers, *writers, *violations, *max_readers;
    uint32_t iters;
} rw_ctx;

static cio_err concurrent_reader(void *ctx)
{
    rw_ctx *c = (rw_ctx *)ctx;
    cio_err err = cio_rwlock_lock_shared(c->io, c->rw);
    if (err != CIO_OK)
        return err;
    atomic_fetch_add(c->readers, 1);
    /* Hold the lock until all three readers are inside at once (or give up after 2 s). */
    for (int i = 0; i < 2000 && atomic_load(c->readers) < 3; i++)
        (void)cio_sleep(c->io, cio_timeout_ms(1));
    uint32_t seen = atomic_load(c->readers), max = atomic_load(c->max_readers);
    while (seen > max && !atomic_compare_exchange_weak(c->max_readers, &max, seen)) {
    }
    cio_rwlock_unlock_shared(c->io, c->rw);
    return CIO_OK;
}

static cio_err rw_stress_reader(void *ctx)
{
    rw_ctx *c = (rw_ctx *)ctx;
    for (uint32_t i = 0; i < c->iters; i++) {
        if (i % 3 == 2) {
            if (!cio_rwlock_try_lock_shared(c->io, c->rw))
                continue;
        } else if (i % 3 == 1) {
            cio_rwlock_lock_shared_uncancelable(c->io, c->rw);
        } else {
            cio_err err = cio_rwlock_lock_shared(c->io, c->rw);
            if (err != CIO_OK)
                return err;
        }
        atomic_fetch_add(c->readers, 1);
        if (atomic_load(c->writers) != 0)
            atomic_fetch_add(c->violations, 1);
        atomic_fetch_sub(c->readers, 1);
        cio_rwlock_unlock_shared(c->io, c->rw);
    }
    return CIO_OK;
}

static cio_err rw_stress_writer(void *ctx)
{
    rw_ctx *c = (rw_ctx *)ctx;
    for (uint32_t i = 0; i < c->iters; i++) {
        if (i % 3 == 2) {
            if (!cio_rwlock_try_lock(c->io, c->rw))
                continue;
        } else if (i % 3 == 1) {
            cio_rwlock_lock_uncancelable(c->io, c->rw);
        } else {
            cio_err err = cio_rwlock_lock(c->io, c->rw);
            if (err != CIO_OK)
                return err;
        }
        if (atomic_fetch_add(c->writers, 1) != 0 || atomic_load(c->readers) != 0)
            atomic_fetch_add(c->violations, 1);
        atomic_fetch_sub(c->writers, 1);
        cio_rwlock_unlock(c->io, c->rw);
    }
    return CIO_OK;
}

static void test_rwlock(void **state)
{
    cio_io io = cio_test_io(state);
    cio_rwlock rw = CIO_RWLOCK_INIT;
    _Atomic(uint32_t) readers = 0, writers = 0, violations = 0, max_readers = 0;
    rw_ctx c = {io, &rw, &readers, &writers, &violations, &max_readers, 2000};

    /* Readers share the lock. */
    cio_future f[5];
    for (int i = 0; i < 3; i++)
        f[i] = start(io, concurrent_reader, &c, sizeof c);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    assert_int_equal(atomic_load(&max_readers), 3);

    /* A writer excludes readers and writers. */
    atomic_store(&readers, 0);
    for (int i = 0; i < 5; i++)
        f[i] = start(io, i < 2 ? rw_stress_writer : rw_stress_reader, &c, sizeof c);
    for (int i = 0; i < 5; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    assert_int_equal(atomic_load(&violations), 0);
}

static void test_rwlock_try_lock(void **state)
{
    cio_io io = cio_test_io(state);
    cio_rwlock rw = CIO_RWLOCK_INIT;
    assert_true(cio_rwlock_try_lock_shared(io, &rw));
    assert_false(cio_rwlock_try_lock(io, &rw)); /* never while a reader holds it */
    assert_true(cio_rwlock_try_lock_shared(io, &rw));
    cio_rwlock_unlock_shared(io, &rw);
    assert_false(cio_rwlock_try_lock(io, &rw));
    cio_rwlock_unlock_shared(io, &rw);
    assert_true(cio_rwlock_try_lock(io, &rw));
    assert_false(cio_rwlock_try_lock(io, &rw));
    assert_false(cio_rwlock_try_lock_shared(io, &rw));
    cio_rwlock_unlock(io, &rw);
    assert_int_equal(cio_rwlock_lock(io, &rw), CIO_OK);
    cio_rwlock_unlock(io, &rw);
    assert_int_equal(cio_rwlock_lock_shared(io, &rw), CIO_OK);
    cio_rwlock_unlock_shared(io, &rw);
}

static cio_err rw_writer_once(void *ctx)
{
    rw_ctx *c = (rw_ctx *)ctx;
    cio_err err = cio_rwlock_lock(c->io, c->rw);
    if (err == CIO_OK)
        cio_rwlock_unlock(c->io, c->rw);
    return err;
}

static void test_rwlock_cancel_writer(void **state)
{
    cio_io io = cio_test_io(state);
    cio_rwlock rw = CIO_RWLOCK_INIT;
    rw_ctx c = {io, &rw, NULL, NULL, NULL, NULL, 0};
    assert_int_equal(cio_rwlock_lock_shared(io, &rw), CIO_OK);
    cio_future w = start(io, rw_writer_once, &c, sizeof c);
    /* Once the writer is queued, new readers wait behind it. */
    for (int i = 0; i < 2000 && cio_rwlock_try_lock_shared(io, &rw); i++) {
        cio_rwlock_unlock_shared(io, &rw);
        assert_int_equal(cio_sleep(io, cio_timeout_ms(1)), CIO_OK);
    }
    assert_false(cio_rwlock_try_lock_shared(io, &rw));
    assert_int_equal(cancel_promptly(io, &w), CIO_E_CANCELED);
    /* No stale state: readers enter again, and the lock is free once the reader leaves. */
    assert_true(cio_rwlock_try_lock_shared(io, &rw));
    cio_rwlock_unlock_shared(io, &rw);
    cio_rwlock_unlock_shared(io, &rw);
    assert_true(cio_rwlock_try_lock(io, &rw));
    cio_rwlock_unlock(io, &rw);
}

/* ==== Semaphore ================================================================================== */

typedef struct {
    cio_io io;
    cio_semaphore *sem;
    _Atomic(uint32_t) *active, *max_active;
} sem_ctx;

static cio_err sem_worker(void *ctx)
{
    sem_ctx *c = (sem_ctx *)ctx;
    cio_err err = cio_semaphore_wait(c->io, c->sem);
    if (err != CIO_OK)
        return err;
    uint32_t now = atomic_fetch_add(c->active, 1) + 1, max = atomic_load(c->max_active);
    while (now > max && !atomic_compare_exchange_weak(c->max_active, &max, now)) {
    }
    (void)cio_sleep(c->io, cio_timeout_ms(2));
    atomic_fetch_sub(c->active, 1);
    cio_semaphore_post(c->io, c->sem);
    return CIO_OK;
}

static cio_err sem_wait_task(void *ctx)
{
    sem_ctx *c = (sem_ctx *)ctx;
    return cio_semaphore_wait(c->io, c->sem);
}

static void test_semaphore(void **state)
{
    cio_io io = cio_test_io(state);
    cio_semaphore sem = CIO_SEMAPHORE_INIT(2);
    assert_int_equal(cio_semaphore_wait(io, &sem), CIO_OK);
    cio_semaphore_wait_uncancelable(io, &sem);
    assert_int_equal(cio_semaphore_wait_timeout(io, &sem, cio_timeout_ms(1)), CIO_E_TIMEOUT);
    cio_semaphore_post(io, &sem);
    assert_int_equal(cio_semaphore_wait_timeout(io, &sem, cio_timeout_ms(1)), CIO_OK);
    cio_semaphore_post(io, &sem);
    cio_semaphore_post(io, &sem);

    /* At most two of six tasks inside at once. */
    _Atomic(uint32_t) active = 0, max_active = 0;
    sem_ctx c = {io, &sem, &active, &max_active};
    cio_future f[6];
    for (int i = 0; i < 6; i++)
        f[i] = start(io, sem_worker, &c, sizeof c);
    for (int i = 0; i < 6; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    assert_true(atomic_load(&max_active) >= 1 && atomic_load(&max_active) <= 2);
    assert_int_equal(sem.permits, 2);

    /* A post wakes a blocked waiter. */
    cio_semaphore zero = CIO_SEMAPHORE_INIT(0);
    sem_ctx z = {io, &zero, NULL, NULL};
    cio_future w = start(io, sem_wait_task, &z, sizeof z);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(5)), CIO_OK);
    cio_semaphore_post(io, &zero);
    assert_int_equal(cio_await(io, &w), CIO_OK);
    assert_int_equal(zero.permits, 0);

    /* A canceled waiter consumes nothing. */
    w = start(io, sem_wait_task, &z, sizeof z);
    assert_int_equal(cancel_promptly(io, &w), CIO_E_CANCELED);
    cio_semaphore_post(io, &zero);
    assert_int_equal(cio_semaphore_wait_timeout(io, &zero, cio_timeout_ms(0)), CIO_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_mutex_contention),
        CIO_TESTS(test_mutex_try_lock),
        CIO_TESTS(test_mutex_cancel),
        CIO_TESTS(test_mutex_cancel_passes_wake_on),
        CIO_TESTS(test_rwlock),
        CIO_TESTS(test_rwlock_try_lock),
        CIO_TESTS(test_rwlock_cancel_writer),
        CIO_TESTS(test_semaphore),
    };
    return cmocka_run_group_tests_name("sync_locks", tests, NULL, NULL);
}
