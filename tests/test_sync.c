/*
 * cio/sync.h: Mutex, Condition, Event, Semaphore, RwLock, Queue, Select — the scenarios of Zig's
 * lib/std/Io/test.zig (12-16, 24-31) plus contention, stress, cancellation and misuse tests.
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
#include "backends.h"

#define MS(n) ((int64_t)(n) * 1000000)

static int64_t elapsed_ms(cio_io io, cio_timestamp since)
{
    return (cio_now(io, CIO_CLOCK_AWAKE).ns - since.ns) / MS(1);
}

static cio_future start(cio_io io, cio_task_fn fn, const void *ctx, size_t size)
{
    cio_future f;
    cio_err err = cio_concurrent(io, fn, ctx, size, &f); /* the macro evaluates its argument twice */
    CIO_REQUIRE_CONCURRENT(err);
    return f;
}

/* Cancels a task that should be blocked and checks that it noticed promptly. */
static cio_err cancel_promptly(cio_io io, cio_future *f)
{
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    cio_err err = cio_cancel(io, f);
    assert_true(elapsed_ms(io, t0) < 1000);
    return err;
}

/* ==== Queue (Zig 12, 13) ======================================================================== */

static void test_queue_fifo(void **state)
{
    cio_io io = cio_test_io(state);
    for (size_t cap = 1; cap <= 5; cap++) {
        int buf[5];
        cio_queue q;
        cio_queue_init(&q, buf, sizeof(int), cap);
        assert_int_equal(cio_queue_capacity(&q), cap);
        for (size_t n = 1; n <= cap; n++) {
            for (int i = 0; i < (int)n; i++)
                assert_int_equal(cio_queue_put_one(io, &q, &i), CIO_OK);
            for (int i = 0; i < (int)n; i++) {
                int v = -1;
                assert_int_equal(cio_queue_get_one(io, &q, &v), CIO_OK);
                assert_int_equal(v, i);
            }
            int in[5] = {10, 11, 12, 13, 14}, out[5] = {0};
            size_t count = 0;
            assert_int_equal(cio_queue_put(io, &q, in, n, n, &count), CIO_OK);
            assert_int_equal(count, n);
            assert_int_equal(cio_queue_get(io, &q, out, n, n, &count), CIO_OK);
            assert_int_equal(count, n);
            assert_memory_equal(in, out, n * sizeof(int));
        }
    }
}

static void test_queue_close_single_threaded(void **state)
{
    cio_io io = cio_test_io(state);
    uint8_t buf[10], out[4];
    cio_queue q;
    size_t count = 0;
    cio_queue_init(&q, buf, 1, 10);

    const uint8_t first[] = {0, 1, 2, 3, 4, 5, 6};
    assert_int_equal(cio_queue_put(io, &q, first, 7, 7, &count), CIO_OK);
    assert_int_equal(count, 7);
    const uint8_t more[] = {7, 8, 9, 10};
    assert_int_equal(cio_queue_put(io, &q, more, 4, 0, &count), CIO_OK);
    assert_int_equal(count, 3);

    assert_int_equal(cio_queue_get(io, &q, out, 4, 0, &count), CIO_OK);
    assert_int_equal(count, 4);
    assert_memory_equal(out, ((uint8_t[]){0, 1, 2, 3}), 4);
    uint8_t one = 0;
    assert_int_equal(cio_queue_get_one(io, &q, &one), CIO_OK);
    assert_int_equal(one, 4);

    const uint8_t last[] = {20, 21};
    assert_int_equal(cio_queue_put(io, &q, last, 2, 2, &count), CIO_OK);
    assert_int_equal(count, 2);

    cio_queue_close(io, &q);
    cio_queue_close(io, &q); /* idempotent */

    assert_int_equal(cio_queue_get(io, &q, out, 4, 0, &count), CIO_OK);
    assert_int_equal(count, 4);
    assert_memory_equal(out, ((uint8_t[]){5, 6, 7, 8}), 4);
    assert_int_equal(cio_queue_get_one(io, &q, &one), CIO_OK);
    assert_int_equal(one, 9);

    uint8_t x = 100;
    assert_int_equal(cio_queue_put_one(io, &q, &x), CIO_E_CLOSED);
    assert_int_equal(cio_queue_put(io, &q, last, 2, 2, &count), CIO_E_CLOSED);
    assert_int_equal(count, 0);
    assert_int_equal(cio_queue_put_uncancelable(io, &q, last, 2, 0, &count), CIO_E_CLOSED);

    /* Fewer than min, because closed. */
    assert_int_equal(cio_queue_get(io, &q, out, 4, 4, &count), CIO_OK);
    assert_int_equal(count, 2);
    assert_memory_equal(out, last, 2);

    assert_int_equal(cio_queue_get_one(io, &q, &one), CIO_E_CLOSED);
    assert_int_equal(cio_queue_get(io, &q, out, 4, 0, &count), CIO_E_CLOSED);
    assert_int_equal(count, 0);
    assert_int_equal(cio_queue_get_uncancelable(io, &q, out, 4, 1, &count), CIO_E_CLOSED);
    assert_int_equal(cio_queue_put_uncancelable(io, &q, last, 2, 2, &count), CIO_E_CLOSED);
    assert_int_equal(cio_queue_put_one_uncancelable(io, &q, &x), CIO_E_CLOSED);
}

static void test_queue_bad_input(void **state)
{
    cio_io io = cio_test_io(state);
    int buf[4], v[4] = {1, 2, 3, 4};
    size_t count = 99;
    cio_queue q;

    cio_queue_init(&q, buf, 0, 4); /* elem_size 0 */
    assert_int_equal(cio_queue_put(io, &q, v, 1, 1, &count), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(count, 0);
    assert_int_equal(cio_queue_get(io, &q, v, 1, 1, &count), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(cio_queue_put_one(io, &q, v), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(cio_queue_get_one(io, &q, v), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(cio_queue_put_one_uncancelable(io, &q, v), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(cio_queue_get_one_uncancelable(io, &q, v), CIO_E_INVALID_ARGUMENT);

    cio_queue_init(&q, buf, sizeof(int), 4);
    assert_int_equal(cio_queue_put(io, &q, v, 2, 3, &count), CIO_E_INVALID_ARGUMENT); /* min > n */
    assert_int_equal(cio_queue_get(io, &q, v, 2, 3, &count), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(cio_queue_put(io, &q, NULL, 2, 1, &count), CIO_E_INVALID_ARGUMENT);
    assert_int_equal(cio_queue_put(io, &q, v, 0, 0, &count), CIO_OK); /* nothing to do */
    assert_int_equal(count, 0);
    assert_int_equal(cio_queue_get(io, &q, v, 0, 0, &count), CIO_OK);
    assert_int_equal(count, 0);

    cio_queue_init(&q, NULL, sizeof(int), 4); /* capacity without a buffer */
    assert_int_equal(cio_queue_put_one(io, &q, v), CIO_E_INVALID_ARGUMENT);

    cio_queue_init(&q, NULL, sizeof(int), 0); /* rendezvous: nobody waiting, min 0 */
    assert_int_equal(cio_queue_put(io, &q, v, 4, 0, &count), CIO_OK);
    assert_int_equal(count, 0);
    assert_int_equal(cio_queue_get(io, &q, v, 4, 0, &count), CIO_OK);
    assert_int_equal(count, 0);
}

/* ---- rendezvous between two concurrent tasks ---------------------------------------------------- */

#define RENDEZVOUS_N 1000

typedef struct {
    cio_io io;
    cio_queue *q;
} queue_ctx;

static cio_err rendezvous_producer(void *ctx)
{
    queue_ctx *c = (queue_ctx *)ctx;
    for (int i = 0; i < RENDEZVOUS_N; i++) {
        cio_err err = cio_queue_put_one(c->io, c->q, &i);
        if (err != CIO_OK)
            return err;
    }
    cio_queue_close(c->io, c->q);
    return CIO_OK;
}

static cio_err rendezvous_consumer(void *ctx)
{
    queue_ctx *c = (queue_ctx *)ctx;
    int expect = 0, v;
    cio_err err;
    while ((err = cio_queue_get_one(c->io, c->q, &v)) == CIO_OK) {
        if (v != expect++)
            return CIO_E_UNEXPECTED;
    }
    return err == CIO_E_CLOSED && expect == RENDEZVOUS_N ? CIO_OK : CIO_E_UNEXPECTED;
}

static void test_queue_rendezvous(void **state)
{
    cio_io io = cio_test_io(state);
    cio_queue q;
    cio_queue_init(&q, NULL, sizeof(int), 0);
    queue_ctx c = {io, &q};
    cio_future consumer = start(io, rendezvous_consumer, &c, sizeof c);
    cio_future producer = start(io, rendezvous_producer, &c, sizeof c);
    assert_int_equal(cio_await(io, &producer), CIO_OK);
    assert_int_equal(cio_await(io, &consumer), CIO_OK);
}

/* ---- stress: 4 producers x 5000 items, 4 consumers ---------------------------------------------- */

#define STRESS_PRODUCERS 4
#define STRESS_CONSUMERS 4
#define STRESS_ITEMS 5000

typedef struct {
    cio_io io;
    cio_queue *q;
    uint32_t id;
    _Atomic(uint32_t) *seen;
    _Atomic(uint32_t) *received;
} stress_ctx;

static cio_err stress_producer(void *ctx)
{
    stress_ctx *c = (stress_ctx *)ctx;
    uint32_t base = c->id * STRESS_ITEMS, i = 0, batch[7];
    while (i < STRESS_ITEMS) {
        uint32_t n = 1 + (i / 3 + c->id) % 7;
        if (n > STRESS_ITEMS - i)
            n = STRESS_ITEMS - i;
        for (uint32_t k = 0; k < n; k++)
            batch[k] = base + i + k;
        cio_err err;
        if (n == 1) {
            err = cio_queue_put_one(c->io, c->q, batch);
        } else {
            size_t added = 0;
            err = cio_queue_put(c->io, c->q, batch, n, n, &added);
            if (err == CIO_OK && added != n)
                return CIO_E_UNEXPECTED;
        }
        if (err != CIO_OK)
            return err;
        i += n;
    }
    return CIO_OK;
}

static cio_err stress_consumer(void *ctx)
{
    stress_ctx *c = (stress_ctx *)ctx;
    uint32_t buf[16];
    for (uint32_t round = 0;; round++) {
        size_t got = 0, min = 1 + (round + c->id) % 16;
        cio_err err = cio_queue_get(c->io, c->q, buf, 16, min, &got);
        if (err == CIO_E_CLOSED)
            return CIO_OK;
        if (err != CIO_OK || got == 0)
            return CIO_E_UNEXPECTED;
        for (size_t k = 0; k < got; k++) {
            if (buf[k] >= STRESS_PRODUCERS * STRESS_ITEMS)
                return CIO_E_UNEXPECTED;
            atomic_fetch_add_explicit(&c->seen[buf[k]], 1, memory_order_relaxed);
        }
        atomic_fetch_add_explicit(c->received, (uint32_t)got, memory_order_relaxed);
    }
}

static void test_queue_stress(void **state)
{
    cio_io io = cio_test_io(state);
    static _Atomic(uint32_t) seen[STRESS_PRODUCERS * STRESS_ITEMS];
    _Atomic(uint32_t) received = 0;
    for (size_t i = 0; i < STRESS_PRODUCERS * STRESS_ITEMS; i++)
        atomic_init(&seen[i], 0);
    uint32_t buf[8];
    cio_queue q;
    cio_queue_init(&q, buf, sizeof(uint32_t), 8);

    cio_future producers[STRESS_PRODUCERS], consumers[STRESS_CONSUMERS];
    for (uint32_t i = 0; i < STRESS_CONSUMERS; i++) {
        stress_ctx c = {io, &q, i, seen, &received};
        consumers[i] = start(io, stress_consumer, &c, sizeof c);
    }
    for (uint32_t i = 0; i < STRESS_PRODUCERS; i++) {
        stress_ctx c = {io, &q, i, seen, &received};
        producers[i] = start(io, stress_producer, &c, sizeof c);
    }
    for (int i = 0; i < STRESS_PRODUCERS; i++)
        assert_int_equal(cio_await(io, &producers[i]), CIO_OK);
    cio_queue_close(io, &q);
    for (int i = 0; i < STRESS_CONSUMERS; i++)
        assert_int_equal(cio_await(io, &consumers[i]), CIO_OK);
    assert_int_equal(atomic_load(&received), STRESS_PRODUCERS * STRESS_ITEMS);
    for (size_t i = 0; i < STRESS_PRODUCERS * STRESS_ITEMS; i++)
        assert_int_equal(atomic_load(&seen[i]), 1);
}

/* ---- cancellation of a blocked get / a partially done put --------------------------------------- */

static cio_err get_one_task(void *ctx)
{
    queue_ctx *c = (queue_ctx *)ctx;
    int v;
    return cio_queue_get_one(c->io, c->q, &v);
}

static void test_queue_cancel_get(void **state)
{
    cio_io io = cio_test_io(state);
    int buf[2];
    cio_queue q;
    cio_queue_init(&q, buf, sizeof(int), 2);
    queue_ctx c = {io, &q};
    cio_future f = start(io, get_one_task, &c, sizeof c);
    assert_int_equal(cancel_promptly(io, &f), CIO_E_CANCELED);
    /* The canceled getter left the queue: a put now goes to the ring and can be read back. */
    int v = 7, w = 0;
    assert_int_equal(cio_queue_put_one(io, &q, &v), CIO_OK);
    assert_int_equal(cio_queue_get_one(io, &q, &w), CIO_OK);
    assert_int_equal(w, 7);
}

typedef struct {
    cio_io io;
    cio_queue *q;
    size_t *added;
    cio_err *put_err;
} partial_ctx;

static cio_err partial_put_task(void *ctx)
{
    partial_ctx *c = (partial_ctx *)ctx;
    const int v[5] = {1, 2, 3, 4, 5};
    *c->put_err = cio_queue_put(c->io, c->q, v, 5, 5, c->added);
    /* The request must have been re-armed: the next cancellation point reports it. */
    return cio_check_cancel(c->io);
}

static void test_queue_cancel_partial_put(void **state)
{
    cio_io io = cio_test_io(state);
    int buf[2], out[2];
    size_t added = 99, got = 0;
    cio_err put_err = CIO_E_UNEXPECTED;
    cio_queue q;
    cio_queue_init(&q, buf, sizeof(int), 2);
    partial_ctx c = {io, &q, &added, &put_err};
    cio_future f = start(io, partial_put_task, &c, sizeof c);
    assert_int_equal(cancel_promptly(io, &f), CIO_E_CANCELED);
    assert_int_equal(put_err, CIO_OK);
    assert_int_equal(added, 2);
    assert_int_equal(cio_queue_get(io, &q, out, 2, 2, &got), CIO_OK);
    assert_int_equal(got, 2);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
}

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

/* ==== Select (Zig 27, 28, 29) ==================================================================== */

enum { TAG_FOO = 1, TAG_BAR, TAG_BAZ, TAG_SLEEPER };

typedef struct {
    int tag;
    union {
        bool foo;
        cio_err bar;
        struct {
            cio_err err;
            uint8_t value;
        } baz;
        cio_err sleeper;
    } u;
} sel_result;

typedef struct {
    cio_io io;
    int64_t ns;
} sel_ctx;

static cio_err sel_foo(void *ctx, void *result)
{
    (void)ctx;
    sel_result *r = (sel_result *)result;
    r->tag = TAG_FOO;
    r->u.foo = true;
    return CIO_OK;
}

static cio_err sel_bar(void *ctx, void *result)
{
    sel_ctx *c = (sel_ctx *)ctx;
    sel_result *r = (sel_result *)result;
    r->tag = TAG_BAR;
    r->u.bar = cio_sleep(c->io, cio_timeout_ns(c->ns));
    return r->u.bar;
}

static cio_err sel_baz(void *ctx, void *result)
{
    (void)ctx;
    sel_result *r = (sel_result *)result;
    r->tag = TAG_BAZ;
    r->u.baz.err = CIO_OK;
    r->u.baz.value = 42;
    return CIO_OK;
}

static cio_err sel_sleeper(void *ctx, void *result)
{
    sel_ctx *c = (sel_ctx *)ctx;
    sel_result *r = (sel_result *)result;
    r->tag = TAG_SLEEPER;
    r->u.sleeper = cio_sleep(c->io, cio_timeout_ns(c->ns));
    return r->u.sleeper;
}

static void test_select(void **state)
{
    cio_io io = cio_test_io(state);
    sel_result buffer[4], r;
    cio_select sel;
    cio_select_init(&sel, buffer, sizeof(sel_result), 4);
    sel_ctx c = {io, (int64_t)300 * 1000 * MS(1)};

    cio_select_async(io, &sel, sel_foo, NULL, 0);
    cio_err err = cio_select_concurrent(io, &sel, sel_bar, &c, sizeof c);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_select_cancel_discard(io, &sel);
        CIO_SKIP("concurrency unavailable (CIO_E_CONCURRENCY_UNAVAILABLE)");
    }
    assert_int_equal(err, CIO_OK);

    assert_int_equal(cio_select_await(io, &sel, &r), CIO_OK);
    assert_int_equal(r.tag, TAG_FOO);
    assert_true(r.u.foo);

    cio_select_async(io, &sel, sel_foo, NULL, 0);
    cio_select_async(io, &sel, sel_foo, NULL, 0);
    sel_result many[3];
    size_t got = 0;
    assert_int_equal(cio_select_await_many(io, &sel, many, 3, 2, &got), CIO_OK);
    assert_int_equal(got, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(many[i].tag, TAG_FOO);
        assert_true(many[i].u.foo);
    }

    cio_select_async(io, &sel, sel_baz, NULL, 0);
    assert_int_equal(cio_select_await(io, &sel, &r), CIO_OK);
    assert_int_equal(r.tag, TAG_BAZ);
    assert_int_equal(r.u.baz.err, CIO_OK);
    assert_int_equal(r.u.baz.value, 42);

    /* cancel stops the sleeper, which still posts its (canceled) result. */
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    int left = 0;
    while (cio_select_cancel(io, &sel, &r)) {
        assert_int_equal(r.tag, TAG_BAR);
        assert_int_equal(r.u.bar, CIO_E_CANCELED);
        left++;
    }
    assert_int_equal(left, 1);
    assert_true(elapsed_ms(io, t0) < 2000);
    assert_false(cio_select_cancel(io, &sel, &r));
}

static void test_select_empty_buffer(void **state)
{
    cio_io io = cio_test_io(state);
    cio_select sel;
    cio_select_init(&sel, NULL, sizeof(sel_result), 0);
    sel_ctx fast = {io, 1}, slow = {io, (int64_t)600 * 1000 * MS(1)};
    cio_err err = cio_select_concurrent(io, &sel, sel_sleeper, &fast, sizeof fast);
    if (err == CIO_OK)
        err = cio_select_concurrent(io, &sel, sel_sleeper, &slow, sizeof slow);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_select_cancel_discard(io, &sel);
        CIO_SKIP("concurrency unavailable (CIO_E_CONCURRENCY_UNAVAILABLE)");
    }
    assert_int_equal(err, CIO_OK);
    sel_result r;
    assert_int_equal(cio_select_await(io, &sel, &r), CIO_OK);
    assert_int_equal(r.tag, TAG_SLEEPER);
    assert_int_equal(r.u.sleeper, CIO_OK);
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    cio_select_cancel_discard(io, &sel); /* must not deadlock on the canceled sleeper's post */
    assert_true(elapsed_ms(io, t0) < 2000);
}

static void test_select_cancel_no_tasks(void **state)
{
    cio_io io = cio_test_io(state);
    sel_result buffer[2], r;
    cio_select sel;
    cio_select_init(&sel, buffer, sizeof(sel_result), 2);
    assert_false(cio_select_cancel(io, &sel, &r));
    assert_false(cio_select_cancel(io, &sel, &r));
}

/* A result bigger than the inline buffer, and a context bigger than the inline blob. */
typedef struct {
    uint8_t bytes[1000];
} big_result;

typedef struct {
    uint8_t fill;
    uint8_t pad[2000];
} big_ctx;

static cio_err sel_big(void *ctx, void *result)
{
    big_ctx *c = (big_ctx *)ctx;
    if (((uintptr_t)ctx % CIO_CONTEXT_ALIGN) != 0 || c->pad[1999] != 0x5a)
        return CIO_E_UNEXPECTED;
    memset(result, c->fill, sizeof(big_result));
    return CIO_OK;
}

static void test_select_big(void **state)
{
    cio_io io = cio_test_io(state);
    static big_result buffer[2];
    static big_result r;
    static big_ctx c;
    cio_select sel;
    cio_select_init(&sel, buffer, sizeof(big_result), 2);
    memset(&c, 0x5a, sizeof c);
    c.fill = 0xa7;
    cio_select_async(io, &sel, sel_big, &c, sizeof c);
    assert_int_equal(cio_select_await(io, &sel, &r), CIO_OK);
    for (size_t i = 0; i < sizeof r.bytes; i++)
        assert_int_equal(r.bytes[i], 0xa7);
    assert_false(cio_select_cancel(io, &sel, &r));
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

static void test_condition_wait_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_condition cond = CIO_CONDITION_INIT;
    cio_event ready = CIO_EVENT_INIT;
    uint32_t value = 0;
    cond_ctx c = {io, &mutex, &cond, &ready, &value};
    cio_future f = start(io, wait_timeout_worker, &c, sizeof c);
    assert_int_equal(cio_event_wait(io, &ready), CIO_OK);
    assert_int_equal(cio_mutex_lock(io, &mutex), CIO_OK);
    value = 1;
    cio_mutex_unlock(io, &mutex);
    cio_condition_signal(io, &cond);
    assert_int_equal(cio_await(io, &f), CIO_OK);
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
    cio_io io = cio_test_io(state);
    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_condition cond = CIO_CONDITION_INIT;
    cio_event ready = CIO_EVENT_INIT;
    uint32_t value = 0;
    cond_ctx c = {io, &mutex, &cond, &ready, &value};
    cio_future f = start(io, wait_uncancelable_worker, &c, sizeof c);
    assert_int_equal(cio_event_wait(io, &ready), CIO_OK);
    assert_int_equal(cio_mutex_lock(io, &mutex), CIO_OK);
    value = 1;
    cio_mutex_unlock(io, &mutex);
    cio_condition_signal(io, &cond);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(value, 1);
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
static _Thread_local bool swallow_wakes;

static cio_err swallowing_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout t)
{
    cio_err err = real_vtable->futex_wait(ud, ptr, expected, t);
    return err == CIO_OK && swallow_wakes && ptr == swallow_word ? CIO_E_CANCELED : err;
}

typedef struct {
    cond_ctx base;
    bool swallow;
} swallow_ctx;

static cio_err swallow_wait_task(void *ctx)
{
    swallow_ctx *c = (swallow_ctx *)ctx;
    swallow_wakes = c->swallow;
    cio_err err = cond_wait_task(&c->base);
    swallow_wakes = false;
    return err;
}

static void wait_for_waiters(cio_io io, cio_condition *cond, uint32_t n)
{
    for (int i = 0; i < 2000 && (atomic_load(&cond->state) & 0xffffu) < n; i++)
        assert_int_equal(cio_sleep(io, cio_timeout_ns(100000)), CIO_OK);
    assert_int_equal(atomic_load(&cond->state) & 0xffffu, n);
}

static void test_condition_cancel_passes_signal_on(void **state)
{
    cio_io real = cio_test_io(state);
    static struct cio_vtable wrapped;
    real_vtable = real.vtable;
    wrapped = *real.vtable;
    wrapped.futex_wait = swallowing_futex_wait;
    cio_io io = {real.userdata, &wrapped};

    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_condition cond = CIO_CONDITION_INIT;
    cio_event b_done = CIO_EVENT_INIT;
    uint32_t value = 0;
    swallow_word = &cond.epoch;
    swallow_ctx ca = {{io, &mutex, &cond, NULL, &value}, true};
    swallow_ctx cb = {{io, &mutex, &cond, &b_done, &value}, false};
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
    bool swallow;
    cio_event *done;
} swallow_mutex_ctx;

static cio_err swallow_lock_task(void *ctx)
{
    swallow_mutex_ctx *c = (swallow_mutex_ctx *)ctx;
    swallow_wakes = c->swallow;
    cio_err err = lock_unlock_task(&c->base);
    swallow_wakes = false;
    if (c->done != NULL)
        cio_event_set(c->base.io, c->done);
    return err;
}

static void test_mutex_cancel_passes_wake_on(void **state)
{
    cio_io real = cio_test_io(state);
    static struct cio_vtable wrapped;
    real_vtable = real.vtable;
    wrapped = *real.vtable;
    wrapped.futex_wait = swallowing_futex_wait;
    cio_io io = {real.userdata, &wrapped};

    cio_mutex mutex = CIO_MUTEX_INIT;
    cio_event b_done = CIO_EVENT_INIT;
    uint32_t counter = 0;
    swallow_word = &mutex.state;
    swallow_mutex_ctx ca = {{io, &mutex, &counter, false}, true, NULL};
    swallow_mutex_ctx cb = {{io, &mutex, &counter, false}, false, &b_done};
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
        CIO_TESTS(test_queue_fifo),
        CIO_TESTS(test_queue_close_single_threaded),
        CIO_TESTS(test_queue_bad_input),
        CIO_TESTS(test_queue_rendezvous),
        CIO_TESTS(test_queue_stress),
        CIO_TESTS(test_queue_cancel_get),
        CIO_TESTS(test_queue_cancel_partial_put),
        CIO_TESTS(test_event),
        CIO_TESTS(test_recancel),
        CIO_TESTS(test_swap_cancel_protection),
        CIO_TESTS(test_event_smoke),
        CIO_TESTS(test_event_signaling),
        CIO_TESTS(test_event_broadcast),
        CIO_TESTS(test_select),
        CIO_TESTS(test_select_empty_buffer),
        CIO_TESTS(test_select_cancel_no_tasks),
        CIO_TESTS(test_select_big),
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
    return cmocka_run_group_tests(tests, NULL, NULL);
}
