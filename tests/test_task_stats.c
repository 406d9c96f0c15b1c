/*
 * The task counters of cio_threaded_get_stats and cio_evented_get_stats: where a task's function
 * really ran (inline on the caller or the awaiting fiber, or on a unit of concurrency of its own).
 * The benchmarks report them beside each task row, so a row's claim about its path is checked.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>

#include "backends.h"

/* (inline, concurrent) counts of the test's backend. */
typedef struct counts {
    size_t inl;
    size_t conc;
} counts;

static counts counts_of(void **state)
{
    counts c = {0, 0};
    cio_threaded *t = cio_test_threaded(state);
    if (t != NULL) {
        cio_threaded_stats s;
        cio_threaded_get_stats(t, &s);
        c.inl = s.tasks_inline;
        c.conc = s.tasks_on_workers;
        return c;
    }
#if CIO_HAVE_EVENTED
    cio_evented_stats s;
    cio_evented_get_stats((cio_evented *)cio_test_evented(state), &s);
    c.inl = s.tasks_inline;
    c.conc = s.fibers_started;
#endif
    return c;
}

static cio_err sleep_task(void *context)
{
    cio_io io = *(cio_io *)context;
    return cio_sleep(io, cio_timeout_ms(2));
}

/* A concurrent task that sleeps cannot run inline: each one counts once as concurrent. */
static void test_concurrent_tasks_count_as_concurrent(void **state)
{
    cio_io io = cio_test_io(state);
    counts before = counts_of(state);
    enum { N = 8 };
    cio_future f[N];
    for (int i = 0; i < N; i++)
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, sleep_task, &io, sizeof io, &f[i]));
    for (int i = 0; i < N; i++)
        assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    counts after = counts_of(state);
    assert_int_equal(after.conc - before.conc, N);
    assert_int_equal(after.inl - before.inl, 0);
}

/* group_concurrent members never run inline, not even on the fiber that awaits the group at once
 * (Evented runs group_async members there when they have not started). */
static void test_group_concurrent_members_never_inline(void **state)
{
    cio_io io = cio_test_io(state);
    counts before = counts_of(state);
    enum { N = 64 };
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < N; i++)
        CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &g, cio_test_nop_task, NULL, 0));
    assert_int_equal(cio_group_await(io, &g), CIO_OK);
    counts after = counts_of(state);
    assert_int_equal(after.conc - before.conc, N);
    assert_int_equal(after.inl - before.inl, 0);
}

/* Every async task is counted exactly once, inline or concurrent; with the Threaded async limit at
 * 0 all of them run inline on the caller. */
static void test_async_tasks_counted_once(void **state)
{
    cio_io io = cio_test_io(state);
    counts before = counts_of(state);
    enum { N = 50 };
    for (int i = 0; i < N; i++) {
        cio_future f = cio_async(io, cio_test_nop_task, NULL, 0);
        assert_int_equal(cio_await(io, &f), CIO_OK);
    }
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < N; i++)
        cio_group_async(io, &g, cio_test_nop_task, NULL, 0);
    assert_int_equal(cio_group_await(io, &g), CIO_OK);
    counts after = counts_of(state);
    assert_int_equal((after.inl - before.inl) + (after.conc - before.conc), 2 * N);
    cio_threaded *t = cio_test_threaded(state);
    if (t == NULL)
        return;
    cio_threaded_set_async_limit(t, 0);
    before = after;
    for (int i = 0; i < N; i++) {
        cio_future f = cio_async(io, cio_test_nop_task, NULL, 0);
        assert_null(f.any);
    }
    cio_group_async(io, &g, cio_test_nop_task, NULL, 0);
    assert_int_equal(cio_group_await(io, &g), CIO_OK);
    after = counts_of(state);
    assert_int_equal(after.inl - before.inl, N + 1);
    assert_int_equal(after.conc - before.conc, 0);
}

/* NULL instance or output: nothing happens, zeros out. */
static void test_stats_null(void **state)
{
    (void)cio_test_io(state);
    cio_threaded_stats ts;
    memset(&ts, 0xff, sizeof ts);
    cio_threaded_get_stats(NULL, &ts);
    assert_int_equal(ts.tasks_inline, 0);
    assert_int_equal(ts.tasks_on_workers, 0);
    cio_threaded_get_stats(NULL, NULL);
#if CIO_HAVE_EVENTED
    cio_evented_stats es;
    memset(&es, 0xff, sizeof es);
    cio_evented_get_stats(NULL, &es);
    assert_int_equal(es.fibers_started, 0);
    assert_int_equal(es.tasks_inline, 0);
    cio_evented_get_stats(NULL, NULL);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_concurrent_tasks_count_as_concurrent),
        CIO_TESTS(test_group_concurrent_members_never_inline),
        CIO_TESTS(test_async_tasks_counted_once),
        CIO_TESTS(test_stats_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
