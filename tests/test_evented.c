/*
 * Scale tests of the Evented backend (issue 6): 100,000 fibers sleeping at once, and a cancel storm
 * over 10,000 fibers blocked in reads. Registered per backend like every suite; on Threaded they skip
 * (one OS thread per task is not what that backend is for: Zig's needs 20 s for 10,000 such tasks).
 * Timing is reported, not asserted beyond a generous bound (performance lives in bench/: B12).
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"

/* ThreadSanitizer counts every fiber as a thread and dies past 8128 of them. */
#if defined(__SANITIZE_THREAD__)
#define TSAN_FIBER_CAP 4000L
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_FIBER_CAP 4000L
#endif
#endif

/* Sanitizers' shadow memory makes RSS meaningless. */
#if defined(__SANITIZE_ADDRESS__) || defined(TSAN_FIBER_CAP)
#define CHECK_RSS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECK_RSS 0
#endif
#endif
#ifndef CHECK_RSS
#define CHECK_RSS 1
#endif

/* Valgrind runs every thread (fiber switches included) on one lock, 20-50x slower: a few thousand
 * fibers still sleep, wake and get canceled for real. */
#define VALGRIND_FIBER_CAP 10000L

static long cap_for_tsan(long n)
{
    if (cio_test_under_valgrind() && n > VALGRIND_FIBER_CAP) {
        print_message("      note: capped under valgrind: %ld fibers instead of %ld\n", VALGRIND_FIBER_CAP, n);
        return VALGRIND_FIBER_CAP;
    }
#ifdef TSAN_FIBER_CAP
    if (n > TSAN_FIBER_CAP) {
        print_message("      note: under ThreadSanitizer (at most 8128 fibers): %ld instead of %ld\n", TSAN_FIBER_CAP, n);
        return TSAN_FIBER_CAP;
    }
#endif
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long max_map_count(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long v = -1;
    if (f != NULL) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

typedef struct {
    cio_io io;
    _Atomic(uint32_t) *woke;
} sleeper_ctx;

static cio_err sleeper(void *ctx)
{
    sleeper_ctx *c = (sleeper_ctx *)ctx;
    cio_err e = cio_sleep(c->io, cio_timeout_ms(1000));
    if (e == CIO_OK)
        atomic_fetch_add(c->woke, 1);
    return e;
}

static void test_many_sleeping_fibers(void **state)
{
    cio_io io = cio_test_io(state);
    if (cio_test_threaded(state) != NULL)
        CIO_SKIP("an Evented scale test: Threaded gives every task an OS thread");
#if defined(CIO_ARCH_X86_64)
    long n = 100000; /* natively; under qemu-user (other arches) a tenth */
#else
    long n = 10000;
#endif
    n = cap_for_tsan(n);
    long maps = max_map_count();
    /* every stack is two mappings (the stack and its guard page) */
    if (maps > 0 && maps / 2 - 2000 < n) {
        print_message("      note: vm.max_map_count is %ld: %ld fibers instead of %ld (build.py test raises it as root)\n",
                      maps, maps / 2 - 2000, n);
        n = maps / 2 - 2000;
    }
    _Atomic(uint32_t) woke = 0;
    sleeper_ctx c = {io, &woke};
    cio_group g = CIO_GROUP_INIT;
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        assert_int_equal(cio_group_concurrent(io, &g, sleeper, &c, sizeof c), CIO_OK);
    double spawned = now_s() - t0;
    assert_int_equal(cio_group_await(io, &g), CIO_OK);
    double wall = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    print_message("      %ld fibers sleeping 1 s: all spawned after %.2f s, done after %.2f s, peak RSS %ld MiB\n", n,
                  spawned, wall, ru.ru_maxrss / 1024);
    assert_int_equal(atomic_load(&woke), (uint32_t)n);
    assert_true(wall >= 1.0);
    assert_true(wall < 20.0);               /* a generous sanity bound; B12 measures it */
    if (CHECK_RSS && !cio_test_under_valgrind()) /* valgrind's own memory is in RSS too */
        assert_true(ru.ru_maxrss < 1024L * 1024L); /* KiB: under 1 GiB */
}

typedef struct {
    cio_io io;
    int fd;
    _Atomic(uint32_t) *canceled;
} reader_ctx;

static cio_err reader(void *ctx)
{
    reader_ctx *c = (reader_ctx *)ctx;
    char b;
    size_t n = 0;
    cio_err e = cio_file_read_streaming(c->io, (cio_file){c->fd}, &b, 1, &n);
    if (e == CIO_E_CANCELED)
        atomic_fetch_add(c->canceled, 1);
    return e;
}

static void test_cancel_storm_blocked_reads(void **state)
{
    cio_io io = cio_test_io(state);
    if (cio_test_threaded(state) != NULL)
        CIO_SKIP("an Evented scale test: Threaded gives every task an OS thread");
    long n = cap_for_tsan(10000);
    /* The epoll flavour registers a duplicate descriptor for each extra waiter on one fd. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur - 512 < n) {
        print_message("      note: RLIMIT_NOFILE is %ld: %ld readers\n", (long)rl.rlim_cur, (long)rl.rlim_cur - 512);
        n = (long)rl.rlim_cur - 512;
    }
    enum { PIPES = 64 };
    int p[PIPES][2];
    for (int i = 0; i < PIPES; i++)
        assert_int_equal(pipe(p[i]), 0);
    _Atomic(uint32_t) canceled = 0;
    cio_group g = CIO_GROUP_INIT;
    for (long i = 0; i < n; i++) {
        reader_ctx c = {io, p[i % PIPES][0], &canceled};
        assert_int_equal(cio_group_concurrent(io, &g, reader, &c, sizeof c), CIO_OK);
    }
    assert_int_equal(cio_sleep(io, cio_timeout_ms(300)), CIO_OK); /* let them block */
    double t0 = now_s();
    cio_group_cancel(io, &g);
    double took = now_s() - t0;
    print_message("      %ld readers blocked on %d pipes: group cancel took %.3f s\n", n, PIPES, took);
    assert_int_equal(atomic_load(&canceled), (uint32_t)n);
    assert_true(took < 20.0);
    for (int i = 0; i < PIPES; i++) {
        close(p[i][0]);
        close(p[i][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_many_sleeping_fibers),
        CIO_TESTS(test_cancel_storm_blocked_reads),
    };
    return cmocka_run_group_tests_name("evented", tests, NULL, NULL);
}
