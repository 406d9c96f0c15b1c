/*
 * Scale tests of the Evented backend (issue 6): 100,000 fibers sleeping at once, and a cancel storm
 * over 10,000 fibers blocked in reads (on pipes; on Windows on sockets, each read an overlapped
 * WSARecv that the cancel stops with CancelIoEx). Registered per backend like every suite; on Threaded
 * they skip (one OS thread per task is not what that backend is for: Zig's needs 20 s for 10,000 such
 * tasks). Timing is reported, not asserted beyond a generous bound (performance lives in bench/:
 * B12). Also: a thread that becomes a fiber, an adopted thread that outlives its instance, timers
 * armed out of order, and which flavours each OS offers.
 */
#define _GNU_SOURCE
#include "cio/target.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(CIO_OS_WINDOWS)
#define PSAPI_VERSION 2 /* GetProcessMemoryInfo is kernel32's K32GetProcessMemoryInfo */
#include <windows.h>
#include <psapi.h>
#else
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "backends.h"
#include "asserts.h"
#include "evented.h" /* cio__e_self: which fiber a task ran as */
#include "evented_helpers.h"
#include "stream_helpers.h"

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
        print_message("      note: under ThreadSanitizer (at most 8128 fibers): %ld instead of %ld\n", TSAN_FIBER_CAP,
                      n);
        return TSAN_FIBER_CAP;
    }
#endif
    return n;
}


/* The process's peak resident memory in KiB (Windows: the peak working set). */
static long peak_rss_kib(void)
{
#if defined(CIO_OS_WINDOWS)
    PROCESS_MEMORY_COUNTERS pmc;
    memset(&pmc, 0, sizeof pmc);
    pmc.cb = sizeof pmc;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc))
        return -1;
    return (long)(pmc.PeakWorkingSetSize / 1024);
#else
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
#endif
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

typedef struct {
    cio_io io;
    long n;
    _Atomic(uint32_t) *woke;
    double spawned; /* seconds after t0 when the last one was spawned */
    double t0;
} spawner_ctx;

/* Spawns n sleepers in a group and awaits them: the test body, run by the test's own thread or by
 * a fiber (spawns from a fiber go to its loop's queues without waking anyone, the model of a
 * program whose code runs in fibers). */
static cio_err spawn_sleepers(spawner_ctx *s)
{
    sleeper_ctx c = {s->io, s->woke};
    cio_group g = CIO_GROUP_INIT;
    for (long i = 0; i < s->n; i++) {
        cio_err e = cio_group_concurrent(s->io, &g, sleeper, &c, sizeof c);
        if (e != CIO_OK) {
            cio_group_cancel(s->io, &g);
            return e;
        }
    }
    s->spawned = now_s() - s->t0;
    return cio_group_await(s->io, &g);
}

static cio_err spawn_sleepers_task(void *ctx)
{
    return spawn_sleepers(*(spawner_ctx **)ctx);
}

static void many_sleeping_fibers(void **state, bool from_fiber)
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
    /* at most two mappings per stack (where the kernel has no guard regions: the stack and its
     * PROT_NONE guard page) */
    if (maps > 0 && maps / 2 - 2000 < n) {
        print_message(
            "      note: vm.max_map_count is %ld: %ld fibers instead of %ld (build.py test raises it as root)\n", maps,
            maps / 2 - 2000, n);
        n = maps / 2 - 2000;
    }
    _Atomic(uint32_t) woke = 0;
    spawner_ctx s;
    memset(&s, 0, sizeof s);
    s.io = io;
    s.n = n;
    s.woke = &woke;
    s.t0 = now_s();
    if (from_fiber) {
        cio_future f;
        spawner_ctx *sp = &s;
        assert_int_equal(cio_concurrent(io, spawn_sleepers_task, &sp, sizeof sp, &f), CIO_OK);
        assert_int_equal(cio_await(io, &f), CIO_OK);
    } else {
        assert_int_equal(spawn_sleepers(&s), CIO_OK);
    }
    double wall = now_s() - s.t0;
    long rss = peak_rss_kib();
    print_message("      %ld fibers sleeping 1 s, spawned by %s: all spawned after %.2f s, done after %.2f s, "
                  "peak RSS %ld MiB\n",
                  n, from_fiber ? "a fiber" : "a foreign thread", s.spawned, wall, rss / 1024);
    assert_int_equal(atomic_load(&woke), (uint32_t)n);
    assert_true(wall >= 1.0);
    assert_true(wall < 20.0);                    /* a generous sanity bound; B12 measures it */
    if (CHECK_RSS && !cio_test_under_valgrind()) /* valgrind's own memory is in RSS too */
        assert_true(rss < 1024L * 1024L);        /* KiB: under 1 GiB */
}

static void test_many_sleeping_fibers(void **state)
{
    many_sleeping_fibers(state, true);
}

static void test_many_sleeping_fibers_foreign_spawner(void **state)
{
    many_sleeping_fibers(state, false);
}

typedef struct {
    cio_io io;
    cio_file pipe;      /* a pipe's read end, or */
    cio_stream *stream; /* a socket (Windows) */
    _Atomic(uint32_t) *canceled;
} reader_ctx;

static cio_err reader(void *ctx)
{
    reader_ctx *c = (reader_ctx *)ctx;
    char b;
    size_t n = 0;
    cio_err e = c->stream != NULL ? cio_stream_read(c->io, c->stream, &b, 1, &n)
                                  : cio_file_read_streaming(c->io, c->pipe, &b, 1, &n);
    if (e == CIO_E_CANCELED)
        atomic_fetch_add(c->canceled, 1);
    return e;
}

enum { SOURCES = 64 };
#if defined(CIO_OS_WINDOWS)
#define SOURCE_KIND "sockets"
#else
#define SOURCE_KIND "pipes"
#endif

/* The readers' sources: SOURCES pipes, or on Windows socket pairs (a pipe there is a helper thread's
 * blocking read; a socket's is an overlapped WSARecv on the loop's port, which is what scales). */
typedef struct {
    cio_file r[SOURCES], w[SOURCES];
    cio_stream a[SOURCES], b[SOURCES];
} sources;

static void sources_open(cio_io io, sources *src, long *n)
{
#if defined(CIO_OS_WINDOWS)
    (void)n;
    socket_pairs(io, src->a, src->b, SOURCES);
#else
    (void)io;
    /* The epoll flavour registers a duplicate descriptor for each extra waiter on one fd. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur - 512 < *n) {
        print_message("      note: RLIMIT_NOFILE is %ld: %ld readers\n", (long)rl.rlim_cur, (long)rl.rlim_cur - 512);
        *n = (long)rl.rlim_cur - 512;
    }
    for (int i = 0; i < SOURCES; i++)
        assert_true(make_pipe(&src->r[i], &src->w[i]));
#endif
}

static reader_ctx reader_on(cio_io io, sources *src, long i, _Atomic(uint32_t) *canceled)
{
#if defined(CIO_OS_WINDOWS)
    return (reader_ctx){io, {0}, &src->b[i % SOURCES], canceled};
#else
    return (reader_ctx){io, src->r[i % SOURCES], NULL, canceled};
#endif
}

static void sources_close(cio_io io, sources *src)
{
#if defined(CIO_OS_WINDOWS)
    close_pairs(io, src->a, src->b, SOURCES);
#else
    (void)io;
    for (int i = 0; i < SOURCES; i++) {
        pipe_close_raw(src->r[i]);
        pipe_close_raw(src->w[i]);
    }
#endif
}

static void test_cancel_storm_blocked_reads(void **state)
{
    cio_io io = cio_test_io(state);
    if (cio_test_threaded(state) != NULL)
        CIO_SKIP("an Evented scale test: Threaded gives every task an OS thread");
    long n = cap_for_tsan(10000);
    static sources src;
    sources_open(io, &src, &n);
    _Atomic(uint32_t) canceled = 0;
    cio_group g = CIO_GROUP_INIT;
    for (long i = 0; i < n; i++) {
        reader_ctx c = reader_on(io, &src, i, &canceled);
        assert_int_equal(cio_group_concurrent(io, &g, reader, &c, sizeof c), CIO_OK);
    }
    assert_int_equal(cio_sleep(io, cio_timeout_ms(300)), CIO_OK); /* let them block */
    double t0 = now_s();
    cio_group_cancel(io, &g);
    double took = now_s() - t0;
    print_message("      %ld readers blocked on %d %s: group cancel took %.3f s\n", n, SOURCES, SOURCE_KIND, took);
    assert_int_equal(atomic_load(&canceled), (uint32_t)n);
    assert_true(took < 20.0);
    sources_close(io, &src);
}


/* ---- the calling thread becomes a fiber ------------------------------------------------------------ */


/* A pipe read through io: data written first, so it must come back whatever path the read takes. */
static void pipe_round_trip(cio_io io)
{
    cio_file r = {0}, w = {0};
    assert_true(make_pipe(&r, &w));
    assert_true(pipe_write_raw(w, "xy", 2));
    char b[4] = {0};
    size_t n = 0;
    assert_int_equal(cio_file_read_streaming(io, r, b, sizeof b, &n), CIO_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(b, "xy", 2);
    pipe_close_raw(r);
    pipe_close_raw(w);
}

typedef struct {
    cio_io io;
    int before, during;
    double slept;
} adopt_ctx;

static void *adopt_thread(void *arg)
{
    adopt_ctx *c = (adopt_ctx *)arg;
    c->before = count_fds();
    double t0 = now_s();
    if (cio_sleep(c->io, cio_timeout_ms(20)) != CIO_OK)
        return NULL;
    c->slept = now_s() - t0;
    c->during = count_fds();
    pipe_round_trip(c->io);
    return c;
}

/* A thread's first wait makes it a fiber with a loop (poller descriptors) of its own; its exit gives
 * them back while the instance lives on. */
static void test_thread_becomes_fiber(void **state)
{
    cio_io io = cio_test_io(state);
    if (test_evented(state) == NULL)
        CIO_SKIP("Threaded threads do not become fibers");
    int base = count_fds();
    adopt_ctx c;
    memset(&c, 0, sizeof c);
    c.io = io;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, adopt_thread, &c), 0);
    void *r = NULL;
    assert_int_equal(pthread_join(t, &r), 0);
    assert_ptr_equal(r, &c);
    assert_true(c.slept >= 0.019);
    assert_true(c.during > c.before); /* its own poller */
    assert_fds_back(base);            /* given back at thread exit */
}

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int step;
    cio_evented *first, *second;
    int ok;
} outlive_ctx;

static void wait_step(outlive_ctx *c, int step)
{
    pthread_mutex_lock(&c->mu);
    while (c->step < step)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

static void set_step(outlive_ctx *c, int step)
{
    pthread_mutex_lock(&c->mu);
    c->step = step;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void *outlive_thread(void *arg)
{
    outlive_ctx *c = (outlive_ctx *)arg;
    if (cio_sleep(cio_evented_io(c->first), cio_timeout_ms(1)) == CIO_OK)
        c->ok++; /* now a fiber of `first` */
    pipe_round_trip(cio_evented_io(c->first));
    set_step(c, 1);
    wait_step(c, 2); /* `first` destroyed, `second` created */
    if (cio_sleep(cio_evented_io(c->second), cio_timeout_ms(1)) == CIO_OK)
        c->ok++; /* the orphaned loop is dropped, and the thread becomes a fiber of `second` */
    pipe_round_trip(cio_evented_io(c->second));
    return NULL;
}

/* An instance destroyed while a thread it adopted lives on: the thread can go on with another one.
 * A thread that is one instance's fiber uses a second instance as a foreign thread. */
static void test_adopted_thread_outlives_instance(void **state)
{
    cio_io io = cio_test_io(state);
    cio_evented *mine = test_evented(state);
    if (mine == NULL)
        CIO_SKIP("Threaded threads do not become fibers");
    (void)io;
    int base = count_fds();
    outlive_ctx c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);
    c.first = evented_like(mine);
    /* this thread is a fiber of `mine`: `first` sees it as a foreign thread */
    assert_int_equal(cio_sleep(cio_evented_io(c.first), cio_timeout_ms(1)), CIO_OK);
    pipe_round_trip(cio_evented_io(c.first));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, outlive_thread, &c), 0);
    wait_step(&c, 1);
    cio_evented_destroy(c.first);
    c.second = evented_like(mine);
    set_step(&c, 2);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(c.ok, 2);
    cio_evented_destroy(c.second);
    pthread_cond_destroy(&c.cv); /* winpthreads' are handles (semaphores, an event): gone before the count */
    pthread_mutex_destroy(&c.mu);
    assert_fds_back(base);
}

/* ---- timers armed out of deadline order, and one removed from the middle ------------------------- */

typedef struct {
    cio_io io;
    cio_timestamp deadline;
    atomic_int *seq;
    int rank;     /* the order it woke in */
    int64_t late; /* ns it woke after its deadline (negative: before it) */
} order_ctx;

static cio_err sleep_until(void *ctx)
{
    order_ctx *c = *(order_ctx **)ctx;
    cio_err e = cio_sleep(c->io, cio_timeout_deadline(CIO_CLOCK_AWAKE, c->deadline));
    if (e == CIO_OK) {
        c->rank = atomic_fetch_add(c->seq, 1);
        c->late = cio_now(c->io, CIO_CLOCK_AWAKE).ns - c->deadline.ns;
    }
    return e;
}

/* One loop, sleepers armed in an order that is not their deadlines' (some go on the loop's timer
 * FIFO, the rest on its heap) and one canceled while it sits between others on the FIFO: each wakes
 * at or after its deadline, and they wake in deadline order. */
static void test_timers_out_of_order(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no loop timers");
    cio_io io = cio_evented_io(e);
    /* ms after the base, in the order they are armed; 130 is the one canceled */
    static const int offsets[] = {100, 60, 120, 130, 140, 80, 140, 40, 160, 90};
    enum { N = sizeof offsets / sizeof offsets[0], CANCELED = 3 };
    atomic_int seq = 0;
    order_ctx c[N];
    cio_future f[N];
    int64_t base = cio_now(io, CIO_CLOCK_AWAKE).ns + 300 * 1000000LL;
    for (int i = 0; i < N; i++) {
        c[i] = (order_ctx){io, {base + offsets[i] * 1000000LL}, &seq, -1, 0};
        order_ctx *cp = &c[i];
        assert_int_equal(cio_concurrent(io, sleep_until, &cp, sizeof cp, &f[i]), CIO_OK);
    }
    assert_int_equal(cio_sleep(io, cio_timeout_ms(50)), CIO_OK); /* every sleeper has armed its timer */
    bool early = cio_now(io, CIO_CLOCK_AWAKE).ns < c[CANCELED].deadline.ns;
    cio_err ce = cio_cancel(io, &f[CANCELED]);
    if (early)
        assert_int_equal(ce, CIO_E_CANCELED);
    else
        print_message("      note: too slow to cancel before the deadline (%s)\n", cio_err_name(ce));
    for (int i = 0; i < N; i++)
        if (i != CANCELED)
            assert_int_equal(cio_await(io, &f[i]), CIO_OK);
    bool gone = c[CANCELED].rank < 0; /* canceled before it woke */
    assert_true(gone || !early);
    for (int i = 0; i < N; i++) {
        if (i == CANCELED && gone)
            continue;
        assert_true(c[i].late >= 0);
        /* its rank is the number of sleepers (canceled aside) due strictly before it; equal
         * deadlines may wake in either order */
        int before = 0, same = 0;
        for (int j = 0; j < N; j++) {
            if (j == i || (j == CANCELED && gone))
                continue;
            before += offsets[j] < offsets[i];
            same += offsets[j] == offsets[i];
        }
        assert_true(c[i].rank >= before && c[i].rank <= before + same);
    }
    cio_evented_destroy(e);
}

/* Which flavours create accepts on this OS (include/cio/evented.h): an unknown value is
 * InvalidArgument, a flavour the OS lacks OperationUnsupported, and the auto flavour (with and
 * without CIO_EVENTED_BACKEND) is one the OS has. */
static void test_flavour_choice(void **state)
{
    (void)state;
    cio_evented *e = NULL;
    cio_evented_options o = {0};
    o.threads = 1;
    o.flavour = (cio_evented_flavour)(CIO_EVENTED_IOCP + 1);
    assert_int_equal(cio_evented_create(&o, &e), CIO_E_INVALID_ARGUMENT);
    const char *env = getenv("CIO_EVENTED_BACKEND");
    char saved[64] = {0};
    if (env != NULL)
        snprintf(saved, sizeof saved, "%s", env);
#if defined(CIO_OS_LINUX)
    o.flavour = CIO_EVENTED_KQUEUE;
    assert_int_equal(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    o.flavour = CIO_EVENTED_IOCP;
    assert_int_equal(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    o.flavour = CIO_EVENTED_EPOLL;
    assert_int_equal(cio_evented_create(&o, &e), CIO_OK);
    assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_EPOLL);
    cio_evented_destroy(e);
    o.flavour = CIO_EVENTED_AUTO;
    assert_int_equal(setenv("CIO_EVENTED_BACKEND", "epoll", 1), 0);
    assert_int_equal(cio_evented_create(&o, &e), CIO_OK);
    assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_EPOLL);
    cio_evented_destroy(e);
    assert_int_equal(unsetenv("CIO_EVENTED_BACKEND"), 0);
    assert_int_equal(cio_evented_create(&o, &e), CIO_OK);
    cio_evented_flavour fl = cio_evented_flavour_of(e);
    assert_true(fl == CIO_EVENTED_IO_URING || fl == CIO_EVENTED_EPOLL);
#ifdef RUNNING_ON_VALGRIND
    if (RUNNING_ON_VALGRIND) /* io_uring_enter stops the process there: auto is epoll */
        assert_int_equal(fl, CIO_EVENTED_EPOLL);
#endif
    cio_evented_destroy(e);
#elif defined(CIO_OS_WINDOWS)
    const cio_evented_flavour not_here[] = {CIO_EVENTED_EPOLL, CIO_EVENTED_IO_URING, CIO_EVENTED_KQUEUE};
    for (size_t i = 0; i < 3; i++) {
        o.flavour = not_here[i];
        assert_int_equal(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    }
    const cio_evented_flavour port[] = {CIO_EVENTED_AUTO, CIO_EVENTED_IOCP};
    for (size_t i = 0; i < 2; i++) {
        o.flavour = port[i];
        assert_int_equal(cio_evented_create(&o, &e), CIO_OK);
        assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_IOCP);
        cio_evented_destroy(e);
    }
#else
    o.flavour = CIO_EVENTED_EPOLL;
    assert_int_equal(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    o.flavour = CIO_EVENTED_IO_URING;
    assert_int_equal(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    o.flavour = CIO_EVENTED_IOCP;
    assert_int_equal(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    const cio_evented_flavour kq[] = {CIO_EVENTED_AUTO, CIO_EVENTED_KQUEUE};
    for (size_t i = 0; i < 2; i++) {
        o.flavour = kq[i];
        assert_int_equal(cio_evented_create(&o, &e), CIO_OK);
        assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_KQUEUE);
        cio_evented_destroy(e);
    }
#endif
#if !defined(CIO_OS_WINDOWS) /* (Windows' branch does not change it) */
    if (saved[0] != 0)
        setenv("CIO_EVENTED_BACKEND", saved, 1);
#endif
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flavour_choice),
        CIO_TESTS(test_many_sleeping_fibers),
        CIO_TESTS(test_many_sleeping_fibers_foreign_spawner),
        CIO_TESTS(test_cancel_storm_blocked_reads),
        CIO_TESTS(test_thread_becomes_fiber),
        CIO_TESTS(test_adopted_thread_outlives_instance),
        CIO_TESTS(test_timers_out_of_order),
    };
    return cmocka_run_group_tests_name("evented", tests, NULL, NULL);
}
