/*
 * cio/sync.h: Queue and Select — the scenarios of Zig's lib/std/Io/test.zig (12, 13, 27-29) plus
 * rendezvous, stress, cancellation and misuse tests.
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
#include "null_arg.h"

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
    assert_null_arg(cio_queue_put(io, &q, NULL, 2, 1, &count));
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

/* ---- one get completes many blocked putters (more than a queue operation defers wakes for) ------ */

#define MANY_PUTTERS 7

typedef struct {
    cio_io io;
    cio_queue *q;
    int value;
    _Atomic(uint32_t) *finished;
} many_put_ctx;

static cio_err many_put_task(void *ctx)
{
    many_put_ctx *c = (many_put_ctx *)ctx;
    cio_err err = cio_queue_put_one(c->io, c->q, &c->value);
    atomic_fetch_add(c->finished, 1);
    return err;
}

static void test_queue_get_completes_many_putters(void **state)
{
    cio_io io = cio_test_io(state);
    cio_queue q;
    cio_queue_init(&q, NULL, sizeof(int), 0);
    _Atomic(uint32_t) finished = 0;
    cio_future f[MANY_PUTTERS];
    for (int i = 0; i < MANY_PUTTERS; i++) {
        many_put_ctx c = {io, &q, i + 1, &finished};
        f[i] = start(io, many_put_task, &c, sizeof c);
    }
    assert_int_equal(cio_sleep(io, cio_timeout_ms(50)), CIO_OK); /* let them queue (if not: still valid) */
    int got[MANY_PUTTERS] = {0};
    size_t n = 0;
    assert_int_equal(cio_queue_get(io, &q, got, MANY_PUTTERS, MANY_PUTTERS, &n), CIO_OK);
    assert_int_equal(n, MANY_PUTTERS);
    /* Every putter was woken: none may hang (checked with a deadline rather than a blocking await). */
    for (int i = 0; i < 2000 && atomic_load(&finished) < MANY_PUTTERS; i++)
        assert_int_equal(cio_sleep(io, cio_timeout_ms(1)), CIO_OK);
    assert_int_equal(atomic_load(&finished), MANY_PUTTERS);
    int sum = 0;
    for (int i = 0; i < MANY_PUTTERS; i++) {
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
        sum += got[i];
    }
    assert_int_equal(sum, MANY_PUTTERS * (MANY_PUTTERS + 1) / 2);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_queue_fifo),
        CIO_TESTS(test_queue_close_single_threaded),
        CIO_TESTS(test_queue_bad_input),
        CIO_TESTS(test_queue_rendezvous),
        CIO_TESTS(test_queue_get_completes_many_putters),
        CIO_TESTS(test_queue_stress),
        CIO_TESTS(test_queue_cancel_get),
        CIO_TESTS(test_queue_cancel_partial_put),
        CIO_TESTS(test_select),
        CIO_TESTS(test_select_empty_buffer),
        CIO_TESTS(test_select_cancel_no_tasks),
        CIO_TESTS(test_select_big),
    };
    return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
