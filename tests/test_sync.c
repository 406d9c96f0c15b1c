/*
 * cio/sync.h: Mutex, Condition, Event, Semaphore, RwLock — the scenarios of Zig's lib/std/Io/test.zig
 * (14-16, 24-26, 30, 31) plus contention, cancellation and lost-wakeup tests. Queue and Select are
 * in test_queue.c.
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

/* ==== Event (Zig 14, 15, 16, 24, 25, 26) ========================================================= */

typedef struct {
    cio_io io;
    cio_event *ev;
    const uint32_t *value;
    uint32_t *out;
} event_ctx;

static cio_err event_reader(void *ctx)
{
    event_ctx *c = (event_ctx *)ctx;
    cio_err err = cio_event_wait(c->io, c->ev);
    if (err != CIO_OK)
        return err;
    *c->out = *c->value;
    return CIO_OK;
}

static void test_event(void **state)
{
    cio_io io = cio_test_io(state);
    cio_event ev = CIO_EVENT_INIT;
    uint32_t value = 0, out = 0;
    event_ctx c = {io, &ev, &value, &out};
    cio_future f = start(io, event_reader, &c, sizeof c);
    value = 123;
    cio_event_set(io, &ev);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(out, 123);

    cio_event_reset(&ev);
    f = start(io, event_reader, &c, sizeof c);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
}

static cio_err recancel_task(void *ctx)
{
    event_ctx *c = (event_ctx *)ctx;
    if (cio_event_wait(c->io, c->ev) != CIO_E_CANCELED)
        return CIO_OK; /* the test fails on success */
    cio_recancel(c->io);
    return cio_event_wait(c->io, c->ev);
}

static void test_recancel(void **state)
{
    cio_io io = cio_test_io(state);
    cio_event ev = CIO_EVENT_INIT;
    event_ctx c = {io, &ev, NULL, NULL};
    cio_future f = start(io, recancel_task, &c, sizeof c);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
}

static cio_err protected_waiter(void *ctx)
{
    event_ctx *c = (event_ctx *)ctx;
    cio_cancel_protection old = cio_swap_cancel_protection(c->io, CIO_CANCEL_BLOCKED);
    if (cio_event_wait(c->io, c->ev) != CIO_OK)
        return CIO_E_UNEXPECTED; /* must not see the cancel while blocked */
    cio_event_reset(c->ev);
    cio_swap_cancel_protection(c->io, old);
    return cio_event_wait(c->io, c->ev); /* the pending request is delivered here */
}

static cio_err late_setter(void *ctx)
{
    event_ctx *c = (event_ctx *)ctx;
    cio_err err = cio_sleep(c->io, cio_timeout_ms(200));
    if (err != CIO_OK)
        return err;
    cio_event_set(c->io, c->ev);
    return CIO_OK;
}

static void test_swap_cancel_protection(void **state)
{
    cio_io io = cio_test_io(state);
    cio_event ev = CIO_EVENT_INIT;
    event_ctx c = {io, &ev, NULL, NULL};
    cio_future a = start(io, protected_waiter, &c, sizeof c);
    cio_future b = start(io, late_setter, &c, sizeof c);
    assert_int_equal(cio_cancel(io, &a), CIO_E_CANCELED);
    assert_int_equal(cio_cancel(io, &b), CIO_OK);
}

static void test_event_smoke(void **state)
{
    cio_io io = cio_test_io(state);
    cio_event ev = CIO_EVENT_INIT;
    assert_false(cio_event_is_set(&ev));
    cio_event_set(io, &ev);
    assert_true(cio_event_is_set(&ev));
    cio_event_reset(&ev);
    assert_false(cio_event_is_set(&ev));

    assert_int_equal(cio_event_wait_timeout(io, &ev, cio_timeout_ms(0)), CIO_E_TIMEOUT);
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(cio_event_wait_timeout(io, &ev, cio_timeout_ms(1)), CIO_E_TIMEOUT);
    assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns >= MS(1));
    cio_timestamp past = {t0.ns - MS(5)};
    assert_int_equal(cio_event_wait_timeout(io, &ev, cio_timeout_deadline(CIO_CLOCK_AWAKE, past)), CIO_E_TIMEOUT);

    cio_event_set(io, &ev);
    assert_int_equal(cio_event_wait(io, &ev), CIO_OK);
    assert_int_equal(cio_event_wait_timeout(io, &ev, cio_timeout_ms(1)), CIO_OK);
    cio_event_wait_uncancelable(io, &ev);
}

typedef struct {
    cio_io io;
    cio_event *ping, *pong;
    uint32_t *value;
} pingpong_ctx;

static cio_err pingpong_peer(void *ctx)
{
    pingpong_ctx *c = (pingpong_ctx *)ctx;
    for (uint32_t round = 0; round < 2; round++) {
        cio_err err = cio_event_wait(c->io, c->ping);
        if (err != CIO_OK)
            return err;
        cio_event_reset(c->ping);
        if (*c->value != 2 * round + 1)
            return CIO_E_UNEXPECTED;
        *c->value += 1;
        cio_event_set(c->io, c->pong);
    }
    return CIO_OK;
}

static void test_event_signaling(void **state)
{
    cio_io io = cio_test_io(state);
    cio_event ping = CIO_EVENT_INIT, pong = CIO_EVENT_INIT;
    uint32_t value = 0;
    pingpong_ctx c = {io, &ping, &pong, &value};
    cio_future f = start(io, pingpong_peer, &c, sizeof c);
    for (uint32_t round = 0; round < 2; round++) {
        assert_int_equal(value, 2 * round);
        value += 1;
        cio_event_set(io, &ping);
        assert_int_equal(cio_event_wait(io, &pong), CIO_OK);
        cio_event_reset(&pong);
    }
    assert_int_equal(value, 4);
    assert_int_equal(cio_await(io, &f), CIO_OK);
}

#define BROADCAST_N 10

typedef struct {
    _Atomic(uint32_t) count;
    cio_event ev;
} barrier;

static cio_err barrier_arrive(cio_io io, barrier *b)
{
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1 == BROADCAST_N) {
        cio_event_set(io, &b->ev);
        return CIO_OK;
    }
    return cio_event_wait(io, &b->ev);
}

typedef struct {
    cio_io io;
    barrier *start, *finish;
} barrier_ctx;

static cio_err broadcast_participant(void *ctx)
{
    barrier_ctx *c = (barrier_ctx *)ctx;
    cio_err err = barrier_arrive(c->io, c->start);
    if (err != CIO_OK)
        return err;
    return barrier_arrive(c->io, c->finish);
}

static void test_event_broadcast(void **state)
{
    cio_io io = cio_test_io(state);
    barrier b1 = {0, CIO_EVENT_INIT}, b2 = {0, CIO_EVENT_INIT};
    barrier_ctx c = {io, &b1, &b2};
    cio_future f[BROADCAST_N - 1];
    for (int i = 0; i < BROADCAST_N - 1; i++)
        f[i] = start(io, broadcast_participant, &c, sizeof c);
    assert_int_equal(broadcast_participant(&c), CIO_OK);
    for (int i = 0; i < BROADCAST_N - 1; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    assert_int_equal(atomic_load(&b1.count), BROADCAST_N);
    assert_int_equal(atomic_load(&b2.count), BROADCAST_N);
}

/* ==== Condition (Zig 30, 31) ===================================================================== */

typedef struct {
    cio_io io;
    cio_mutex *mutex;
    cio_condition *cond;
    cio_event *ready;
    uint32_t *value;
} cond_ctx;

static cio_err wait_timeout_worker(void *ctx)
{
    cond_ctx *c = (cond_ctx *)ctx;
    cio_mutex_lock_uncancelable(c->io, c->mutex);
    cio_err err = cio_condition_wait_timeout(c->io, c->cond, c->mutex, cio_timeout_ms(1));
    if (err != CIO_E_TIMEOUT || *c->value != 0 || cio_mutex_try_lock(c->mutex)) {
        cio_mutex_unlock(c->io, c->mutex);
        return CIO_E_UNEXPECTED;
    }
    cio_event_set(c->io, c->ready);
    while (*c->value == 0) {
        err = cio_condition_wait(c->io, c->cond, c->mutex);
        if (err != CIO_OK)
            break;
    }
    cio_mutex_unlock(c->io, c->mutex);
    return err;
}

/* Starts `worker`, waits until it is ready (holding or waiting on the condition), then sets the value
 * to 1 under the mutex, signals once and expects the worker to finish with CIO_OK. */
static void check_condition_handoff(void **state, cio_task_fn worker)
{
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_condition cond = CIO_CONDITION_INIT;
    cio_event ready = CIO_EVENT_INIT;
    uint32_t value = 0;
    cond_ctx c = {io, &mutex, &cond, &ready, &value};
    cio_future f = start(io, worker, &c, sizeof c);
    assert_int_equal(cio_event_wait(io, &ready), CIO_OK);
    assert_int_equal(cio_mutex_lock(io, &mutex), CIO_OK);
    value = 1;
    cio_mutex_unlock(io, &mutex);
    cio_condition_signal(io, &cond);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(value, 1);
}

static void test_condition_wait_timeout(void **state)
{
    check_condition_handoff(state, wait_timeout_worker);
}

static cio_err wait_uncancelable_worker(void *ctx)
{
    cond_ctx *c = (cond_ctx *)ctx;
    cio_err err = CIO_OK;
    cio_mutex_lock_uncancelable(c->io, c->mutex);
    cio_event_set(c->io, c->ready);
    cio_condition_wait_uncancelable(c->io, c->cond, c->mutex);
    while (*c->value == 0 && err == CIO_OK)
        err = cio_condition_wait(c->io, c->cond, c->mutex);
    cio_mutex_unlock(c->io, c->mutex);
    return err;
}

static void test_condition_wait_uncancelable(void **state)
{
    check_condition_handoff(state, wait_uncancelable_worker);
}

static cio_err cond_wait_task(void *ctx)
{
    cond_ctx *c = (cond_ctx *)ctx;
    cio_err err = CIO_OK;
    cio_mutex_lock_uncancelable(c->io, c->mutex);
    while (*c->value == 0 && err == CIO_OK)
        err = cio_condition_wait(c->io, c->cond, c->mutex);
    bool held = !cio_mutex_try_lock(c->mutex); /* the mutex is re-acquired even on error */
    cio_mutex_unlock(c->io, c->mutex);
    if (c->ready != NULL)
        cio_event_set(c->io, c->ready);
    return held ? err : CIO_E_UNEXPECTED;
}

static void test_condition_cancel(void **state)
{
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_condition cond = CIO_CONDITION_INIT;
    uint32_t value = 0;
    cond_ctx c = {io, &mutex, &cond, NULL, &value};
    cio_future f = start(io, cond_wait_task, &c, sizeof c);
    assert_int_equal(cancel_promptly(io, &f), CIO_E_CANCELED);
    assert_true(cio_mutex_try_lock(&mutex));
    cio_mutex_unlock(io, &mutex);
    assert_int_equal(atomic_load(&cond.state), 0); /* no stale waiter or signal */
}

/* Two waiters, one signal, and a cancel racing with it: when the canceled waiter reports
 * CIO_E_CANCELED, the signal must still reach the other waiter (no second signal is sent). */
static void test_condition_signal_races_cancel(void **state)
{
    cio_io io = cio_test_io(state);
    for (int iter = 0; iter < 60; iter++) {
        cio_mutex mutex = CIO_MUTEX_INIT;
        cio_condition cond = CIO_CONDITION_INIT;
        cio_event b_done = CIO_EVENT_INIT;
        uint32_t value = 0;
        cond_ctx ca = {io, &mutex, &cond, NULL, &value};
        cond_ctx cb = {io, &mutex, &cond, &b_done, &value};
        cio_future a = start(io, cond_wait_task, &ca, sizeof ca);
        cio_future b = start(io, cond_wait_task, &cb, sizeof cb);
        /* Wait until both are registered. */
        for (int spin = 0; spin < 2000 && (atomic_load(&cond.state) & 0xffffu) < 2; spin++)
            assert_int_equal(cio_sleep(io, cio_timeout_ns(100000)), CIO_OK);
        assert_int_equal(atomic_load(&cond.state) & 0xffffu, 2);
        cio_mutex_lock_uncancelable(io, &mutex);
        value = 1;
        cio_mutex_unlock(io, &mutex);
        cio_condition_signal(io, &cond);
        cio_err ea = cio_cancel(io, &a);
        if (ea == CIO_E_CANCELED) {
            assert_int_equal(cio_event_wait_timeout(io, &b_done, cio_timeout_ms(2000)), CIO_OK);
        } else {
            assert_int_equal(ea, CIO_OK); /* a took the signal: b needs its own */
            cio_condition_signal(io, &cond);
        }
        assert_int_equal(cio_await(io, &b), CIO_OK);
        assert_int_equal(atomic_load(&cond.state), 0);
    }
}

/* The Aug-2026 Zig fix, made deterministic: a wrapper vtable makes waiter A report CIO_E_CANCELED
 * from every futex wait on the condition, even when it was woken by the signal's futex wake (what
 * a backend does when a wake and a cancel race). The one signal must still reach waiter B. */
static const struct cio_vtable *real_vtable;
static const _Atomic(uint32_t) *swallow_word;
static struct cio_vtable swallow_vtable;

/* Each task gets its own io whose userdata says whether it swallows wakes (a thread-local flag would
 * be shared by tasks that are fibers of one thread). Only the slots the sync primitives use are
 * wrapped. */
typedef struct swallow_ud {
    void *real;
    bool swallow;
} swallow_ud;

static cio_err swallowing_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout t)
{
    swallow_ud *s = (swallow_ud *)ud;
    cio_err err = real_vtable->futex_wait(s->real, ptr, expected, t);
    return err == CIO_OK && s->swallow && ptr == swallow_word ? CIO_E_CANCELED : err;
}

static void swallow_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    real_vtable->futex_wait_uncancelable(((swallow_ud *)ud)->real, ptr, expected);
}

static void swallow_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    real_vtable->futex_wake(((swallow_ud *)ud)->real, ptr, max_waiters);
}

static cio_timestamp swallow_now(void *ud, cio_clock clock)
{
    return real_vtable->now(((swallow_ud *)ud)->real, clock);
}

static cio_io swallow_io(cio_io real, swallow_ud *s)
{
    real_vtable = real.vtable;
    swallow_vtable = *real.vtable;
    swallow_vtable.futex_wait = swallowing_futex_wait;
    swallow_vtable.futex_wait_uncancelable = swallow_wait_uncancelable;
    swallow_vtable.futex_wake = swallow_wake;
    swallow_vtable.now = swallow_now;
    s->real = real.userdata;
    return (cio_io){s, &swallow_vtable};
}

typedef struct {
    cond_ctx base;
} swallow_ctx;

static cio_err swallow_wait_task(void *ctx)
{
    swallow_ctx *c = (swallow_ctx *)ctx;
    return cond_wait_task(&c->base);
}

static void wait_for_waiters(cio_io io, cio_condition *cond, uint32_t n)
{
    for (int i = 0; i < 2000 && (atomic_load(&cond->state) & 0xffffu) < n; i++)
        assert_int_equal(cio_sleep(io, cio_timeout_ns(100000)), CIO_OK);
    assert_int_equal(atomic_load(&cond->state) & 0xffffu, n);
}

static void test_condition_cancel_passes_signal_on(void **state)
{
    cio_io io = cio_test_io(state);
    swallow_ud ua = {NULL, true}, ub = {NULL, false};
    cio_io io_a = swallow_io(io, &ua), io_b = swallow_io(io, &ub);

    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_condition cond = CIO_CONDITION_INIT;
    cio_event b_done = CIO_EVENT_INIT;
    uint32_t value = 0;
    swallow_word = &cond.epoch;
    swallow_ctx ca = {{io_a, &mutex, &cond, NULL, &value}};
    swallow_ctx cb = {{io_b, &mutex, &cond, &b_done, &value}};
    cio_future a = start(io, swallow_wait_task, &ca, sizeof ca);
    wait_for_waiters(io, &cond, 1); /* A first: a FIFO futex wakes A */
    cio_future b = start(io, swallow_wait_task, &cb, sizeof cb);
    wait_for_waiters(io, &cond, 2);

    cio_mutex_lock_uncancelable(io, &mutex);
    value = 1;
    cio_mutex_unlock(io, &mutex);
    cio_condition_signal(io, &cond);
    cio_err b_woke = cio_event_wait_timeout(io, &b_done, cio_timeout_ms(2000));
    if (b_woke != CIO_OK) { /* the signal was lost (still counted as granted): unblock B, then fail */
        atomic_fetch_add(&cond.epoch, 1);
        cio_futex_wake(io, &cond.epoch, UINT32_MAX);
    }
    assert_int_equal(cio_await(io, &b), CIO_OK);
    assert_int_equal(cio_cancel(io, &a), CIO_E_CANCELED);
    assert_int_equal(b_woke, CIO_OK);
    assert_int_equal(atomic_load(&cond.state), 0);
}

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
        CIO_TESTS(test_event),
        CIO_TESTS(test_recancel),
        CIO_TESTS(test_swap_cancel_protection),
        CIO_TESTS(test_event_smoke),
        CIO_TESTS(test_event_signaling),
        CIO_TESTS(test_event_broadcast),
        CIO_TESTS(test_condition_wait_timeout),
        CIO_TESTS(test_condition_wait_uncancelable),
        CIO_TESTS(test_condition_cancel),
        CIO_TESTS(test_condition_signal_races_cancel),
        CIO_TESTS(test_condition_cancel_passes_signal_on),
        CIO_TESTS(test_mutex_contention),
        CIO_TESTS(test_mutex_try_lock),
        CIO_TESTS(test_mutex_cancel),
        CIO_TESTS(test_mutex_cancel_passes_wake_on),
        CIO_TESTS(test_rwlock),
        CIO_TESTS(test_rwlock_try_lock),
        CIO_TESTS(test_rwlock_cancel_writer),
        CIO_TESTS(test_semaphore),
    };
    return cmocka_run_group_tests_name("sync", tests, NULL, NULL);
}
