/*
 * Tasks, futures, groups and cancellation through cio_io: Zig's Io/test.zig and
 * Io/Threaded/test.zig scenarios with their expected values, plus stress tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "backends.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

typedef struct count_ctx {
    uint64_t *out;
    uint64_t from;
    uint64_t to;
} count_ctx;

static cio_err count_task(void *context)
{
    count_ctx *c = (count_ctx *)context;
    uint64_t sum = 0;
    for (uint64_t i = c->from; i < c->to; i++)
        sum += i;
    *c->out = sum;
    return CIO_OK;
}

typedef struct io_ctx {
    cio_io io;
    _Atomic(int) *flag;
    _Atomic(int) *result;
} io_ctx;

/* Sleeps "forever" until canceled; sets *result = 1 on the way out, returns the sleep's error. */
static cio_err sleep_forever_task(void *context)
{
    io_ctx *c = (io_ctx *)context;
    cio_err e = cio_sleep(c->io, cio_timeout_ms(100000000));
    if (c->result != NULL)
        atomic_store(c->result, 1);
    return e;
}

/* ---- Group (Zig test 7, 9): sums 45 and 245 ------------------------------------------------------ */

static void test_group_async(void **state)
{
    cio_io io = cio_test_io(state);
    uint64_t results[2] = {0, 0};
    cio_group group = CIO_GROUP_INIT;
    count_ctx a = {&results[0], 1, 10}, b = {&results[1], 20, 30};
    cio_group_async(io, &group, count_task, &a, sizeof a);
    cio_group_async(io, &group, count_task, &b, sizeof b);
    assert_int_equal(cio_group_await(io, &group), CIO_OK);
    assert_int_equal(results[0], 45);
    assert_int_equal(results[1], 245);
    assert_int_equal(atomic_load(&group.token), 0);
    assert_int_equal(cio_group_await(io, &group), CIO_OK); /* idempotent */
}

static void test_group_concurrent(void **state)
{
    cio_io io = cio_test_io(state);
    uint64_t results[2] = {0, 0};
    cio_group group = CIO_GROUP_INIT;
    count_ctx a = {&results[0], 1, 10}, b = {&results[1], 20, 30};
    CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, count_task, &a, sizeof a));
    CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, count_task, &b, sizeof b));
    assert_int_equal(cio_group_await(io, &group), CIO_OK);
    assert_int_equal(results[0], 45);
    assert_int_equal(results[1], 245);
}

/* ---- Group.cancel (Zig test 8): five members, all results 1 -------------------------------------- */

typedef struct member_ctx {
    cio_io io;
    int *result;
    int kind; /* 0 propagate, 1 recancel, 2 protected */
} member_ctx;

static cio_err member_task(void *context)
{
    member_ctx *c = (member_ctx *)context;
    if (c->kind == 0) {
        cio_err e = cio_sleep(c->io, cio_timeout_ms(100000000));
        *c->result = 1;
        return e;
    }
    if (c->kind == 1) {
        cio_err e = cio_sleep(c->io, cio_timeout_ms(100000000));
        if (e == CIO_E_CANCELED)
            cio_recancel(c->io);
        *c->result = 1;
        return CIO_OK;
    }
    cio_cancel_protection old = cio_swap_cancel_protection(c->io, CIO_CANCEL_BLOCKED);
    cio_err e = cio_sleep(c->io, cio_timeout_ms(50));
    cio_swap_cancel_protection(c->io, old);
    *c->result = e == CIO_OK ? 1 : 2; /* a protected sleep must not see the cancel */
    return CIO_OK;
}

static void test_group_cancel(void **state)
{
    cio_io io = cio_test_io(state);
    int results[5] = {0, 0, 0, 0, 0};
    member_ctx ctx[5] = {
        {io, &results[0], 0}, {io, &results[1], 0}, {io, &results[2], 1}, {io, &results[3], 2}, {io, &results[4], 2}};
    cio_group group = CIO_GROUP_INIT;
    for (int i = 0; i < 4; i++)
        CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, member_task, &ctx[i], sizeof ctx[i]));
    cio_group_async(io, &group, member_task, &ctx[4], sizeof ctx[4]);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(10)), CIO_OK);
    cio_group_cancel(io, &group);
    for (int i = 0; i < 5; i++)
        assert_int_equal(results[i], 1);
}

/* ---- Group swallows Canceled (test 10); a member learns of the cancel unknowingly (test 11) ---- */

static cio_err return_canceled_task(void *context)
{
    (void)context;
    return CIO_E_CANCELED;
}

static void test_group_materializes_canceled(void **state)
{
    cio_io io = cio_test_io(state);
    cio_group group = CIO_GROUP_INIT;
    cio_group_async(io, &group, return_canceled_task, NULL, 0);
    CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, return_canceled_task, NULL, 0));
    assert_int_equal(cio_group_await(io, &group), CIO_OK);
}

typedef struct store_ctx {
    cio_io io;
    cio_err *stored;
} store_ctx;

static cio_err store_sleep_task(void *context)
{
    store_ctx *c = (store_ctx *)context;
    *c->stored = cio_sleep(c->io, cio_timeout_ms(300000));
    return CIO_OK;
}

static void test_group_task_receives_cancel_unknowingly(void **state)
{
    cio_io io = cio_test_io(state);
    cio_err stored = CIO_OK;
    store_ctx c = {io, &stored};
    cio_group group = CIO_GROUP_INIT;
    CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, store_sleep_task, &c, sizeof c));
    cio_group_cancel(io, &group);
    assert_int_equal(stored, CIO_E_CANCELED);
}

/* ---- cancel futex wait (17), cancel sleep (18) --------------------------------------------------- */

typedef struct futex_ctx {
    cio_io io;
    _Atomic(uint32_t) *word;
} futex_ctx;

static cio_err futex_loop_task(void *context)
{
    futex_ctx *c = (futex_ctx *)context;
    for (;;) {
        cio_err e = cio_futex_wait(c->io, c->word, 0, CIO_TIMEOUT_NONE);
        if (e != CIO_OK)
            return e;
    }
}

static void test_cancel_futex_wait(void **state)
{
    cio_io io = cio_test_io(state);
    _Atomic(uint32_t) word = 0;
    futex_ctx c = {io, &word};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, futex_loop_task, &c, sizeof c, &f));
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED); /* idempotent */
    assert_int_equal(cio_await(io, &f), CIO_E_CANCELED);
}

static void test_cancel_sleep(void **state)
{
    cio_io io = cio_test_io(state);
    io_ctx c = {io, NULL, NULL};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, sleep_forever_task, &c, sizeof c, &f));
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    cio_timestamp before = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    int64_t took = cio_now(io, CIO_CLOCK_AWAKE).ns - before.ns;
    assert_true(took < 2000000000LL); /* promptly, not after the sleep */
}

/* cio_threaded_get_stats: a cancel that finds its task blocked in a call kicks its thread (once, or
 * more if the backoff has to kick again); a task that is awaited, not canceled, is never kicked. */
static void test_cancel_counts_kicks(void **state)
{
    cio_threaded *t = cio_test_threaded(state);
    if (t == NULL)
        CIO_SKIP("cio_threaded_get_stats is the Threaded backend's");
    cio_io io = cio_test_io(state);
    cio_threaded_stats s0, s1, s2;
    cio_threaded_get_stats(t, &s0);
    cio_threaded_get_stats(t, NULL); /* ignored */
    cio_threaded_get_stats(NULL, &s1);
    assert_true(s1.kicks == 0);
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, cio_test_nop_task, NULL, 0, &f));
    assert_int_equal(cio_await(io, &f), CIO_OK);
    cio_threaded_get_stats(t, &s1);
    assert_true(s1.kicks == s0.kicks);
    io_ctx c = {io, NULL, NULL};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, sleep_forever_task, &c, sizeof c, &f));
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK); /* into its sleep */
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    cio_threaded_get_stats(t, &s2);
    assert_true(s2.kicks - s1.kicks >= 1);
}

/* A task canceled before it started still runs, with the request pending. */
typedef struct ran_ctx {
    cio_io io;
    int *ran;
} ran_ctx;

/* The request stays pending through a protected sleep and is delivered at the first unprotected
 * cancellation point. */
static cio_err check_then_mark_task(void *context)
{
    ran_ctx *c = (ran_ctx *)context;
    cio_cancel_protection old = cio_swap_cancel_protection(c->io, CIO_CANCEL_BLOCKED);
    cio_err slept = cio_sleep(c->io, cio_timeout_ms(30));
    cio_swap_cancel_protection(c->io, old);
    *c->ran = slept == CIO_OK ? 1 : 2;
    return cio_check_cancel(c->io);
}

static void test_canceled_task_still_runs(void **state)
{
    cio_io io = cio_test_io(state);
    int ran = 0;
    ran_ctx c = {io, &ran};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, check_then_mark_task, &c, sizeof c, &f));
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_int_equal(ran, 1);
}

/* ---- tasks spawned in a group after Group.cancel are canceled (19) -------------------------------- */

typedef struct spawner_ctx {
    cio_io io;
    cio_group *group;
} spawner_ctx;

static cio_err blocker_task(void *context)
{
    io_ctx *c = (io_ctx *)context;
    for (;;) {
        cio_err e = cio_sleep(c->io, cio_timeout_ms(100000));
        if (e == CIO_E_CANCELED)
            return e;
    }
}

static cio_err spawner_task(void *context)
{
    spawner_ctx *c = (spawner_ctx *)context;
    io_ctx b = {c->io, NULL, NULL};
    cio_cancel_protection old = cio_swap_cancel_protection(c->io, CIO_CANCEL_BLOCKED);
    (void)cio_group_concurrent(c->io, c->group, blocker_task, &b, sizeof b);
    (void)cio_sleep(c->io, cio_timeout_ms(10));
    (void)cio_group_concurrent(c->io, c->group, blocker_task, &b, sizeof b);
    cio_swap_cancel_protection(c->io, old);
    /* May run inline (async limit) on this task, which has a pending request by now. */
    cio_group_async(c->io, c->group, blocker_task, &b, sizeof b);
    return CIO_OK;
}

static void test_group_cancel_cancels_late_members(void **state)
{
    cio_io io = cio_test_io(state);
    cio_group group = CIO_GROUP_INIT;
    io_ctx b = {io, NULL, NULL};
    CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, blocker_task, &b, sizeof b));
    assert_int_equal(cio_sleep(io, cio_timeout_ms(10)), CIO_OK);
    spawner_ctx s = {io, &group};
    CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, spawner_task, &s, sizeof s));
    cio_group_cancel(io, &group);
    assert_int_equal(atomic_load(&group.token), 0);
}

/* ---- group await propagates the awaiter's cancel, then returns Canceled ---------------------------- */

static cio_err group_awaiter_task(void *context)
{
    io_ctx *c = (io_ctx *)context;
    cio_group group = CIO_GROUP_INIT;
    io_ctx b = {c->io, NULL, c->result};
    (void)cio_group_concurrent(c->io, &group, sleep_forever_task, &b, sizeof b);
    (void)cio_group_concurrent(c->io, &group, sleep_forever_task, &b, sizeof b);
    return cio_group_await(c->io, &group);
}

/* Starts `outer` (which waits on sleepers of its own), cancels it after 20 ms, and checks that the
 * cancel reached the inner sleepers (they set the result to 1) and came back as Canceled. */
static void check_cancel_propagates(void **state, cio_task_fn outer)
{
    cio_io io = cio_test_io(state);
    _Atomic(int) result = 0;
    io_ctx c = {io, NULL, &result};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, outer, &c, sizeof c, &f));
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_int_equal(atomic_load(&result), 1);
}

static void test_group_await_propagates_cancel(void **state)
{
    check_cancel_propagates(state, group_awaiter_task);
}

/* ---- await forwards the awaiter's cancel to the awaited task ------------------------------------- */

static cio_err awaiter_task(void *context)
{
    io_ctx *c = (io_ctx *)context;
    io_ctx inner = {c->io, NULL, c->result};
    cio_future f;
    cio_err e = cio_concurrent(c->io, sleep_forever_task, &inner, sizeof inner, &f);
    if (e != CIO_OK)
        return e;
    return cio_await(c->io, &f);
}

static void test_await_forwards_cancel(void **state)
{
    check_cancel_propagates(state, awaiter_task);
}

/* ---- context alignment (Threaded test 3, 4) and inline async -------------------------------------- */

typedef struct aligned_ctx {
    _Alignas(64) unsigned char a[32];
    _Alignas(32) unsigned char b[32];
    unsigned char *out;
} aligned_ctx;

static cio_err aligned_task(void *context)
{
    aligned_ctx *c = (aligned_ctx *)context;
    if (((uintptr_t)context % 64) != 0)
        return CIO_E_UNEXPECTED;
    memcpy(c->out, c->a, 32);
    memcpy(c->out + 32, c->b, 32);
    return CIO_OK;
}

static void check_aligned(cio_io io, int how)
{
    _Alignas(64) unsigned char out[64];
    aligned_ctx c;
    memset(&c, 0, sizeof c);
    memset(c.a, 2, sizeof c.a);
    memset(c.b, 3, sizeof c.b);
    c.out = out;
    memset(out, 0, sizeof out);
    if (how == 0) {
        cio_future f = cio_async(io, aligned_task, &c, sizeof c);
        assert_int_equal(cio_await(io, &f), CIO_OK);
    } else if (how == 1) {
        cio_future f;
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, aligned_task, &c, sizeof c, &f));
        assert_int_equal(cio_await(io, &f), CIO_OK);
    } else {
        cio_group g = CIO_GROUP_INIT;
        cio_group_async(io, &g, aligned_task, &c, sizeof c);
        assert_int_equal(cio_group_await(io, &g), CIO_OK);
    }
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], i < 32 ? 2 : 3);
}

static void test_context_alignment(void **state)
{
    cio_io io = cio_test_io(state);
    check_aligned(io, 0);
    check_aligned(io, 1);
    check_aligned(io, 2);
    cio_threaded *t = cio_test_threaded(state);
    if (t != NULL) {
        cio_threaded_set_async_limit(t, 0); /* inline: the copy must be aligned too */
        check_aligned(io, 0);
        check_aligned(io, 2);
    }
}

/* The test's Threaded backend; a skip on another backend (the limits are Threaded options). */
static cio_threaded *threaded_only(void **state)
{
    cio_threaded *t = cio_test_threaded(state);
    if (t == NULL)
        CIO_SKIP("a Threaded backend option (limits), not in this backend");
    return t;
}

static void test_async_limit_zero_runs_inline(void **state)
{
    cio_threaded *t = threaded_only(state);
    cio_io io = cio_test_io(state);
    cio_threaded_set_async_limit(t, 0);
    uint64_t out = 0;
    count_ctx c = {&out, 1, 10};
    cio_future f = cio_async(io, count_task, &c, sizeof c);
    assert_null(f.any);
    assert_int_equal(out, 45);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(cio_cancel(io, &f), CIO_OK);
}

/* Awaiting a future twice is idempotent: the second await returns the cached result without
 * touching the (freed) task, for a task that ran on a thread and for one that ran inline; a cancel
 * after the await returns the same result too. */
static void test_await_twice(void **state)
{
    cio_io io = cio_test_io(state);
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, return_canceled_task, NULL, 0, &f));
    assert_int_equal(cio_await(io, &f), CIO_E_CANCELED);
    assert_null(f.any);
    assert_int_equal(cio_await(io, &f), CIO_E_CANCELED);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    uint64_t out = 0;
    count_ctx c = {&out, 1, 10};
    cio_future g = cio_async(io, count_task, &c, sizeof c);
    assert_int_equal(cio_await(io, &g), CIO_OK);
    assert_int_equal(cio_await(io, &g), CIO_OK);
    assert_int_equal(out, 45);
}

static void test_concurrent_limit(void **state)
{
    cio_threaded *t = threaded_only(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio_threaded_set_concurrent_limit(t, 1);
    io_ctx c = {io, NULL, NULL};
    cio_future a, b;
    assert_int_equal(cio_concurrent(io, sleep_forever_task, &c, sizeof c, &a), CIO_OK);
    assert_int_equal(cio_concurrent(io, sleep_forever_task, &c, sizeof c, &b), CIO_E_CONCURRENCY_UNAVAILABLE);
    assert_null(b.any);
    assert_int_equal(cio_cancel(io, &a), CIO_E_CANCELED);
    cio_threaded_set_concurrent_limit(t, SIZE_MAX);
}

/* ---- oversubscription prevents deadlock (Threaded tests 1, 2): async_limit 0, rendezvous queue ---- */

typedef struct rendezvous_ctx {
    cio_io io;
    cio_queue *queue;
    _Atomic(int) *got;
} rendezvous_ctx;

static cio_err putter_task(void *context)
{
    rendezvous_ctx *c = (rendezvous_ctx *)context;
    unsigned char v = 42;
    return cio_queue_put_one_uncancelable(c->io, c->queue, &v);
}

static cio_err getter_task(void *context)
{
    rendezvous_ctx *c = (rendezvous_ctx *)context;
    unsigned char v = 0;
    cio_err e = cio_queue_get_one_uncancelable(c->io, c->queue, &v);
    atomic_store(c->got, v);
    return e;
}

/* Both oversubscription tests: threads, async_limit 0 (cio_async would run inline) and a queue of
 * one slot, *q, for the rendezvous. */
static rendezvous_ctx oversubscribed(void **state, cio_queue *q, _Atomic(int) *got)
{
    cio_threaded *t = threaded_only(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio_threaded_set_async_limit(t, 0);
    cio_queue_init(q, NULL, 1, 0);
    atomic_init(got, 0);
    rendezvous_ctx c = {io, q, got};
    return c;
}

static void test_concurrent_vs_main_oversubscription(void **state)
{
    cio_queue q;
    _Atomic(int) got;
    rendezvous_ctx c = oversubscribed(state, &q, &got);
    cio_io io = c.io;
    cio_future f;
    assert_int_equal(cio_concurrent(io, putter_task, &c, sizeof c, &f), CIO_OK);
    unsigned char v = 0;
    assert_int_equal(cio_queue_get_one_uncancelable(io, &q, &v), CIO_OK);
    assert_int_equal(v, 42);
    assert_int_equal(cio_await(io, &f), CIO_OK);
}

static void test_concurrent_vs_concurrent_oversubscription(void **state)
{
    cio_queue q;
    _Atomic(int) got;
    rendezvous_ctx c = oversubscribed(state, &q, &got);
    cio_io io = c.io;
    cio_future p, g;
    assert_int_equal(cio_concurrent(io, putter_task, &c, sizeof c, &p), CIO_OK);
    assert_int_equal(cio_concurrent(io, getter_task, &c, sizeof c, &g), CIO_OK);
    assert_int_equal(cio_await(io, &p), CIO_OK);
    assert_int_equal(cio_await(io, &g), CIO_OK);
    assert_int_equal(atomic_load(&got), 42);
}

/* ---- idle workers retire ------------------------------------------------------------------------ */

#if defined(CIO_OS_LINUX)
#include <dirent.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* Stores the thread's /proc path ("<pid>/task/<tid>") in arg. */
static void *noop_thread(void *arg)
{
    char *path = (char *)arg;
    ssize_t n = readlink("/proc/thread-self", path + 6, 58);
    path[n > 0 ? 6 + n : 0] = '\0';
    return NULL;
}

/* Some runtimes start a helper thread of their own at the first pthread_create (ThreadSanitizer
 * does): one throwaway thread first, so that the baseline count already includes it. A joined
 * thread can linger in /proc for a moment (under QEMU, for a while): wait until it is gone. */
static void settle_runtime_threads(void)
{
    char path[64] = "/proc/";
    pthread_t th;
    if (pthread_create(&th, NULL, noop_thread, path) != 0)
        return;
    pthread_join(th, NULL);
    for (int i = 0; i < 2000 && (path[0] == '\0' || access(path, F_OK) == 0); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (path[0] == '\0' && i >= 100) /* no /proc/thread-self: 100 ms will do */
            break;
    }
}

static int thread_count(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
#elif defined(CIO_OS_WINDOWS)
#include "os_helpers.h"

static void settle_runtime_threads(void)
{
}

/* A Toolhelp snapshot of the process's threads (Wine's own service threads included, alike
 * before and after). */
static int thread_count(void)
{
    return cio_test_count_threads();
}
#else
static void settle_runtime_threads(void)
{
}

static int thread_count(void)
{
    return -1;
}
#endif

static cio_err short_sleep_task(void *context)
{
    cio_io io = *(cio_io *)context;
    return cio_sleep(io, cio_timeout_ms(20));
}

static void test_idle_workers_retire(void **state)
{
    (void)state;
    settle_runtime_threads();
    int before = thread_count();
    if (before < 0)
        CIO_SKIP("no way to count this process's threads here");
    cio_threaded_options opts = {0, 0, 0, 50};
    cio_threaded *t = NULL;
    assert_int_equal(cio_threaded_create(&opts, &t), CIO_OK);
    cio_io io = cio_threaded_io(t);
    cio_future f[3];
    for (int i = 0; i < 3; i++)
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, short_sleep_task, &io, sizeof io, &f[i]));
    assert_true(thread_count() >= before + 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    int64_t deadline = cio_now(io, CIO_CLOCK_AWAKE).ns + 2000000000LL;
    while (thread_count() > before && cio_now(io, CIO_CLOCK_AWAKE).ns < deadline)
        (void)cio_sleep(io, cio_timeout_ms(10));
    assert_int_equal(thread_count(), before);
    cio_threaded_destroy(t);
}

/* ---- random (20, 21) -------------------------------------------------------------------------------- */

static void test_random(void **state)
{
    cio_io io = cio_test_io(state);
    uint64_t a = 0, b = 0, c = 0;
    cio_random(io, &a, sizeof a);
    cio_random(io, &b, sizeof b);
    cio_random(io, &c, sizeof c);
    assert_true((a ^ b ^ c) != 0);
    unsigned char big[5000];
    memset(big, 0, sizeof big);
    cio_random(io, big, sizeof big);
    int zeros = 0;
    for (size_t i = 0; i < sizeof big; i++)
        zeros += big[i] == 0;
    assert_true(zeros < 100); /* ~20 expected */
}

static void test_random_secure(void **state)
{
    cio_io io = cio_test_io(state);
    unsigned char x[50], y[50];
    assert_int_equal(cio_random_secure(io, x, sizeof x), CIO_OK);
    assert_int_equal(cio_random_secure(io, y, sizeof y), CIO_OK);
    assert_memory_not_equal(x, y, sizeof x);
}

/* ---- time ------------------------------------------------------------------------------------------- */

static void test_sleep_and_clocks(void **state)
{
    cio_io io = cio_test_io(state);
    cio_timestamp a = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    cio_timestamp b = cio_now(io, CIO_CLOCK_AWAKE);
    assert_true(b.ns - a.ns >= 20000000);
    cio_timestamp deadline = {cio_now(io, CIO_CLOCK_AWAKE).ns + 10000000};
    assert_int_equal(cio_sleep(io, cio_timeout_deadline(CIO_CLOCK_AWAKE, deadline)), CIO_OK);
    assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns >= deadline.ns);
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns > 1600000000LL * 1000000000LL);
    assert_true(cio_now(io, CIO_CLOCK_BOOT).ns > 0);
    assert_true(cio_now(io, CIO_CLOCK_CPU_PROCESS).ns > 0);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(-5)), CIO_OK); /* already expired */
    _Atomic(uint32_t) word = 0;
    assert_int_equal(cio_futex_wait(io, &word, 0, cio_timeout_ms(5)), CIO_E_TIMEOUT);
    assert_int_equal(cio_futex_wait(io, &word, 1, cio_timeout_ms(5)), CIO_OK); /* value differs */
}

/* ---- stress ------------------------------------------------------------------------------------------ */

static cio_err add_task(void *context)
{
    _Atomic(uint64_t) *sum = *(_Atomic(uint64_t) **)context;
    atomic_fetch_add(sum, 1);
    return CIO_OK;
}

static void test_stress_thousands_of_tasks(void **state)
{
    cio_io io = cio_test_io(state);
    _Atomic(uint64_t) sum = 0;
    _Atomic(uint64_t) *p = &sum;
    enum { N = 4000 };
    for (int round = 0; round < 2; round++) {
        static cio_future futures[N / 4];
        for (int i = 0; i < N / 4; i++)
            futures[i] = cio_async(io, add_task, &p, sizeof p);
        for (int i = 0; i < N / 4; i++)
            assert_int_equal(cio_await(io, &futures[i]), CIO_OK);
        cio_group g = CIO_GROUP_INIT;
        for (int i = 0; i < N / 4; i++)
            cio_group_async(io, &g, add_task, &p, sizeof p);
        assert_int_equal(cio_group_await(io, &g), CIO_OK);
    }
    assert_int_equal(atomic_load(&sum), N);
}

static void test_stress_cancel_storm(void **state)
{
    cio_io io = cio_test_io(state);
    enum { N = 64 };
    cio_future f[N];
    io_ctx c = {io, NULL, NULL};
    for (int i = 0; i < N; i++)
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, sleep_forever_task, &c, sizeof c, &f[i]));
    for (int i = 0; i < N; i++)
        assert_int_equal(cio_cancel(io, &f[i]), CIO_E_CANCELED);
    /* and in a group, canceled while its members are still starting */
    for (int round = 0; round < 5; round++) {
        cio_group g = CIO_GROUP_INIT;
        for (int i = 0; i < 16; i++)
            CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &g, blocker_task, &c, sizeof c));
        cio_group_cancel(io, &g);
    }
}

/* ---- the failing Io ------------------------------------------------------------------------------------ */

static void test_failing_io(void **state)
{
    (void)state;
    cio_io io = cio_failing_io();
    uint64_t out = 0;
    count_ctx c = {&out, 1, 10};
    cio_future f = cio_async(io, count_task, &c, sizeof c);
    assert_null(f.any);
    assert_int_equal(out, 45);
    cio_future g;
    assert_int_equal(cio_concurrent(io, count_task, &c, sizeof c, &g), CIO_E_CONCURRENCY_UNAVAILABLE);
    unsigned char buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    cio_random(io, buf, sizeof buf);
    assert_int_equal(buf[0], 0);
    assert_int_equal(cio_random_secure(io, buf, sizeof buf), CIO_E_ENTROPY_UNAVAILABLE);
    cio_file file;
    assert_int_equal(cio_dir_open_file(io, cio_dir_cwd(), "x", NULL, &file), CIO_E_FILE_NOT_FOUND);
    assert_int_equal(cio_dir_create_file(io, cio_dir_cwd(), "x", NULL, &file), CIO_E_NO_SPACE_LEFT);
    assert_int_equal(cio_now(io, CIO_CLOCK_REAL).ns, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_workers_retire), /* first: no other test's workers around */
        CIO_TESTS(test_group_async),
        CIO_TESTS(test_group_concurrent),
        CIO_TESTS(test_group_cancel),
        CIO_TESTS(test_group_materializes_canceled),
        CIO_TESTS(test_group_task_receives_cancel_unknowingly),
        CIO_TESTS(test_cancel_futex_wait),
        CIO_TESTS(test_cancel_sleep),
        CIO_TESTS(test_cancel_counts_kicks),
        CIO_TESTS(test_canceled_task_still_runs),
        CIO_TESTS(test_group_cancel_cancels_late_members),
        CIO_TESTS(test_group_await_propagates_cancel),
        CIO_TESTS(test_await_forwards_cancel),
        CIO_TESTS(test_context_alignment),
        CIO_TESTS(test_async_limit_zero_runs_inline),
        CIO_TESTS(test_await_twice),
        CIO_TESTS(test_concurrent_limit),
        CIO_TESTS(test_concurrent_vs_main_oversubscription),
        CIO_TESTS(test_concurrent_vs_concurrent_oversubscription),
        CIO_TESTS(test_random),
        CIO_TESTS(test_random_secure),
        CIO_TESTS(test_sleep_and_clocks),
        CIO_TESTS(test_stress_thousands_of_tasks),
        CIO_TESTS(test_stress_cancel_storm),
        cmocka_unit_test(test_failing_io),
    };
    return cmocka_run_group_tests_name("tasks", tests, NULL, NULL);
}
