/*
 * cio/sync.h: Event and Condition — the scenarios of Zig's lib/std/Io/test.zig (14-16, 24-26, 30,
 * 31) plus cancellation and lost-wakeup tests. Mutex, RwLock and Semaphore are in
 * test_sync_locks.c; Queue and Select are in test_queue.c.
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

/* The Aug-2026 Zig fix, made deterministic (tests/swallow_io.h): waiter A reports CIO_E_CANCELED
 * from every futex wait on the condition, even when it was woken by the signal's futex wake. The one
 * signal must still reach waiter B. */

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
    };
    return cmocka_run_group_tests_name("sync", tests, NULL, NULL);
}
