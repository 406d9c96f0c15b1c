/*
 * Scale tests of the Evented backend (issue 6): 100,000 fibers sleeping at once, and a cancel storm
 * over 10,000 fibers blocked in reads. Registered per backend like every suite; on Threaded they skip
 * (one OS thread per task is not what that backend is for: Zig's needs 20 s for 10,000 such tasks).
 * Timing is reported, not asserted beyond a generous bound (performance lives in bench/: B12).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "asserts.h"
#include "evented.h" /* cio__e_self: which fiber a task ran as */

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
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    print_message("      %ld fibers sleeping 1 s, spawned by %s: all spawned after %.2f s, done after %.2f s, "
                  "peak RSS %ld MiB\n",
                  n, from_fiber ? "a fiber" : "a foreign thread", s.spawned, wall, ru.ru_maxrss / 1024);
    assert_int_equal(atomic_load(&woke), (uint32_t)n);
    assert_true(wall >= 1.0);
    assert_true(wall < 20.0);                      /* a generous sanity bound; B12 measures it */
    if (CHECK_RSS && !cio_test_under_valgrind())   /* valgrind's own memory is in RSS too */
        assert_true(ru.ru_maxrss < 1024L * 1024L); /* KiB: under 1 GiB */
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


/* ---- the calling thread becomes a fiber ------------------------------------------------------------ */

static int count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
}

static cio_evented *test_evented(void **state)
{
    if (cio_test_threaded(state) != NULL)
        return NULL;
    cio_test_backend *b = (cio_test_backend *)*state;
    return (cio_evented *)b->instance;
}

/* A new instance of e's flavour with `threads` loop threads. */
static cio_evented *evented_with(cio_evented *e, unsigned threads)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.flavour = cio_evented_flavour_of(e);
    o.threads = threads;
    cio_evented *n = NULL;
    assert_int_equal(cio_evented_create(&o, &n), CIO_OK);
    return n;
}

static cio_evented *evented_like(cio_evented *e)
{
    return evented_with(e, 1);
}

/* A fresh instance like the test's Evented one with `threads` loops; skips (why) on Threaded. */
static cio_evented *own_instance(void **state, unsigned threads, const char *why)
{
    cio_evented *like = test_evented(state);
    if (like == NULL)
        CIO_SKIP(why);
    return evented_with(like, threads);
}

/* A pipe read through io: data written first, so it must come back whatever path the read takes. */
static void pipe_round_trip(cio_io io)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "xy", 2), 2);
    char b[4] = {0};
    size_t n = 0;
    assert_int_equal(cio_file_read_streaming(io, (cio_file){p[0]}, b, sizeof b, &n), CIO_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(b, "xy", 2);
    close(p[0]);
    close(p[1]);
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
    assert_true(c.during > c.before);    /* its own poller */
    assert_int_equal(count_fds(), base); /* given back at thread exit */
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
    assert_int_equal(count_fds(), base);
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.mu);
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
    if (saved[0] != 0)
        setenv("CIO_EVENTED_BACKEND", saved, 1);
}


/* ---- descriptors reused and canceled waits (the readiness pollers keep registrations) ------------- */

typedef struct {
    cio_io io;
    int fd;
    char got;
    size_t n;
} read1_ctx;

static cio_err read1(void *ctx)
{
    read1_ctx *c = *(read1_ctx **)ctx;
    return cio_file_read_streaming(c->io, (cio_file){c->fd}, &c->got, 1, &c->n);
}

/* A blocked read on fd, then a byte written: the read returns it. */
static void blocked_read_gets(cio_io io, int rfd, int wfd, char byte)
{
    read1_ctx c = {io, rfd, 0, 0};
    read1_ctx *cp = &c;
    cio_future f;
    assert_int_equal(cio_concurrent(io, read1, &cp, sizeof cp, &f), CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK); /* let it block */
    assert_int_equal(write(wfd, &byte, 1), 1);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.got, byte);
}

/* A descriptor number closed and handed out again still gets its readiness (a poller that keeps a
 * registration per number must notice the old one is gone), and a canceled wait consumes nothing. */
static void test_reused_descriptor_and_canceled_wait(void **state)
{
    cio_io io = cio_test_io(state);
    int p[2], q[2];
    assert_int_equal(pipe(p), 0);
    blocked_read_gets(io, p[0], p[1], 'a');
    int old = p[0];
    close(p[0]);
    close(p[1]);
    assert_int_equal(pipe(q), 0);
    if (q[0] != old && q[1] != old)
        print_message("      note: the new pipe did not reuse descriptor %d\n", old);
    blocked_read_gets(io, q[0], q[1], 'b');
    /* a read canceled while it waits; then the next byte goes to the next read */
    read1_ctx c = {io, q[0], 0, 0};
    read1_ctx *cp = &c;
    cio_future f;
    assert_int_equal(cio_concurrent(io, read1, &cp, sizeof cp, &f), CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_int_equal(c.n, 0);
    blocked_read_gets(io, q[0], q[1], 'c');
    /* two readers of one pipe at once (one direction waited for twice): both get a byte */
    read1_ctx c1 = {io, q[0], 0, 0}, c2 = {io, q[0], 0, 0};
    read1_ctx *c1p = &c1, *c2p = &c2;
    cio_future f1, f2;
    assert_int_equal(cio_concurrent(io, read1, &c1p, sizeof c1p, &f1), CIO_OK);
    assert_int_equal(cio_concurrent(io, read1, &c2p, sizeof c2p, &f2), CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(write(q[1], "de", 2), 2);
    assert_int_equal(cio_await(io, &f1), CIO_OK);
    assert_int_equal(cio_await(io, &f2), CIO_OK);
    assert_int_equal(c1.n + c2.n, 2);
    assert_true((c1.got == 'd' && c2.got == 'e') || (c1.got == 'e' && c2.got == 'd'));
    close(q[0]);
    close(q[1]);
}

/* ---- the scheduler's direct switches and spawn rings ------------------------------------------------- */

#define PP_DONE UINT32_MAX

typedef struct {
    cio_io io;
    _Atomic(uint32_t) word; /* even: side 0 moves it, odd: side 1; PP_DONE: over */
    _Atomic(int) stop;      /* set by the sleeper */
    double t0, slept;
    _Atomic(long) hops;
    int stopped_by_sleeper;
} pingpong;

typedef struct {
    pingpong *pp;
    uint32_t me;
} side_ctx;

static cio_err pp_side(void *ctx)
{
    side_ctx *c = (side_ctx *)ctx;
    pingpong *pp = c->pp;
    for (;;) {
        uint32_t v = atomic_load(&pp->word);
        if (v == PP_DONE)
            return CIO_OK;
        if (v % 2 != c->me) {
            cio_futex_wait_uncancelable(pp->io, &pp->word, v);
            continue;
        }
        if (atomic_load(&pp->stop) || now_s() - pp->t0 > 3.0) {
            pp->stopped_by_sleeper = atomic_load(&pp->stop);
            atomic_store(&pp->word, PP_DONE);
            cio_futex_wake(pp->io, &pp->word, UINT32_MAX);
            return CIO_OK;
        }
        atomic_fetch_add(&pp->hops, 1);
        atomic_store(&pp->word, v + 1);
        cio_futex_wake(pp->io, &pp->word, 1);
    }
}

static cio_err pp_sleeper(void *ctx)
{
    pingpong *pp = *(pingpong **)ctx;
    cio_err err = cio_sleep(pp->io, cio_timeout_ms(10));
    pp->slept = now_s() - pp->t0;
    atomic_store(&pp->stop, 1);
    return err;
}

/* Starts the two sides of pp (their contexts in sides[], which must outlive them). */
static void pair_start(pingpong *pp, side_ctx sides[2], cio_future f[2])
{
    for (uint32_t i = 0; i < 2; i++) {
        sides[i].pp = pp;
        sides[i].me = i;
        assert_ok(cio_concurrent(pp->io, pp_side, &sides[i], sizeof sides[i], &f[i]));
    }
}

static void pair_join(pingpong *pp, cio_future f[2])
{
    assert_ok(cio_await(pp->io, &f[0]));
    assert_ok(cio_await(pp->io, &f[1]));
}

/* Runs fn (its context: the pointer p) as a task of e, waits for it, destroys e. */
static void run_then_destroy(cio_evented *e, cio_task_fn fn, void *p)
{
    cio_io io = cio_evented_io(e);
    cio_future f;
    assert_ok(cio_concurrent(io, fn, &p, sizeof p, &f));
    assert_ok(cio_await(io, &f));
    cio_evented_destroy(e);
}

static cio_err pp_main(void *ctx)
{
    pingpong *pp = *(pingpong **)ctx;
    side_ctx sides[2];
    cio_future f[2], fs;
    assert_ok(cio_concurrent(pp->io, pp_sleeper, &pp, sizeof pp, &fs));
    pair_start(pp, sides, f);
    pair_join(pp, f);
    return cio_await(pp->io, &fs);
}

/* Two fibers of one loop that wake each other forever switch straight from one to the other: the
 * scheduler still gets its turn (timers, inbox, I/O), so a third fiber's 10 ms sleep ends on time
 * and stops them. */
static void test_direct_switches_leave_room_for_timers(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no loop to starve");
    pingpong pp;
    memset(&pp, 0, sizeof pp);
    pp.io = cio_evented_io(e);
    pp.t0 = now_s();
    run_then_destroy(e, pp_main, &pp);
    print_message("      %ld hops; the sleeper woke after %.3f s\n", atomic_load(&pp.hops), pp.slept);
    assert_true(atomic_load(&pp.hops) > 0);
    assert_true(pp.stopped_by_sleeper);
    assert_true(pp.slept < 2.0);
}

typedef struct {
    pingpong *pp;
    _Atomic(int) *ran;
} mark_ctx;

static cio_err mark_ran(void *ctx)
{
    mark_ctx *m = (mark_ctx *)ctx;
    atomic_store(m->ran, 1);
    return CIO_OK;
}

typedef struct {
    pingpong pp;
    _Atomic(int) ran1, ran2;
    double waited; /* until the task that was not started had run */
} starve_probe;

static cio_err starve_main(void *ctx)
{
    starve_probe *s = *(starve_probe **)ctx;
    pingpong *pp = &s->pp;
    side_ctx sides[2];
    cio_future f[2];
    pair_start(pp, sides, f);
    assert_ok(cio_sleep(pp->io, cio_timeout_ms(5))); /* the pair is going */
    mark_ctx m1 = {pp, &s->ran1}, m2 = {pp, &s->ran2};
    double t0 = now_s();
    cio_future f1 = cio_async(pp->io, mark_ran, &m1, sizeof m1); /* to the spawn ring */
    cio_future f2 = cio_async(pp->io, mark_ran, &m2, sizeof m2); /* the LIFO slot */
    assert_ok(cio_await(pp->io, &f1));
    s->waited = now_s() - t0;
    atomic_store(&pp->stop, 1);
    assert_ok(cio_await(pp->io, &f2));
    pair_join(pp, f);
    return CIO_OK;
}

/* A task waiting in the spawn ring starts although two fibers of its loop keep each other ready
 * (the scheduler lets one fiber not started yet join the run queue each round). */
static void test_ready_fibers_do_not_starve_spawned_ones(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no spawn rings");
    starve_probe s;
    memset(&s, 0, sizeof s);
    s.pp.io = cio_evented_io(e);
    s.pp.t0 = now_s();
    run_then_destroy(e, starve_main, &s);
    print_message("      the spawned task ran after %.4f s (%ld hops)\n", s.waited, atomic_load(&s.pp.hops));
    assert_int_equal(atomic_load(&s.ran1), 1);
    assert_int_equal(atomic_load(&s.ran2), 1);
    assert_true(s.pp.stopped_by_sleeper); /* stopped by the flag, not the pair's 3 s limit */
    assert_true(s.waited < 1.0);
}

#define BURST 5000

typedef struct {
    pthread_t spawner;
    _Atomic(long) ran, elsewhere;
} burst;

static cio_err burst_task(void *ctx)
{
    burst *b = *(burst **)ctx;
    double t0 = now_s();
    while (now_s() - t0 < 2e-6) {
    }
    atomic_fetch_add(&b->ran, 1);
    if (!pthread_equal(pthread_self(), b->spawner))
        atomic_fetch_add(&b->elsewhere, 1);
    return CIO_OK;
}

typedef struct {
    cio_io io;
    burst *b;
} burst_ctx;

static cio_err burst_spawner(void *ctx)
{
    burst_ctx *c = *(burst_ctx **)ctx;
    c->b->spawner = pthread_self();
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < BURST; i++)
        cio_group_async(c->io, &g, burst_task, &c->b, sizeof c->b);
    return cio_group_await(c->io, &g);
}

/* A fiber spawning far more than its loop's spawn ring holds: every task runs once, and the other
 * loop takes a share (from the ring, or the spawn queue it overflowed into). */
static void test_spawn_burst_is_shared(void **state)
{
    cio_evented *e = own_instance(state, 2, "Threaded has no spawn rings");
    burst b;
    memset(&b, 0, sizeof b);
    burst_ctx c = {cio_evented_io(e), &b};
    run_then_destroy(e, burst_spawner, &c);
    print_message("      %d tasks: %ld ran on the other loop\n", BURST, atomic_load(&b.elsewhere));
    assert_int_equal(atomic_load(&b.ran), BURST);
    assert_true(atomic_load(&b.elsewhere) > 0);
}

/* ---- await of a future not started yet ---------------------------------------------------------------- */

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *self; /* the fiber the task ran as */
    cio_err err;
} who_ctx;

static cio_err record_self(void *ctx)
{
    who_ctx *c = *(who_ctx **)ctx;
    c->self = cio__e_self(c->e);
    return CIO_OK;
}

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *parent, *lifo_child, *older_child, *newer_child;
} inline_probe;

static cio_err inline_parent(void *ctx)
{
    inline_probe *p = *(inline_probe **)ctx;
    p->parent = cio__e_self(p->e);
    /* awaited at once: still in this loop's LIFO slot, so it runs right here */
    who_ctx a = {p->io, p->e, NULL, CIO_OK}, b = a, c = a;
    who_ctx *ap = &a, *bp = &b, *cp = &c;
    cio_future fa = cio_async(p->io, record_self, &ap, sizeof ap);
    assert_ok(cio_await(p->io, &fa));
    p->lifo_child = a.self;
    /* two, the older awaited first: it is not in the LIFO slot, both run as fibers of their own */
    cio_future fb = cio_async(p->io, record_self, &bp, sizeof bp);
    cio_future fc = cio_async(p->io, record_self, &cp, sizeof cp);
    assert_ok(cio_await(p->io, &fb));
    assert_ok(cio_await(p->io, &fc));
    p->older_child = b.self;
    p->newer_child = c.self;
    return CIO_OK;
}

/* cio_async + cio_await with nothing in between runs the task on the awaiting fiber (the order is
 * the same: a suspending fiber runs its LIFO slot first); a task that is not in the LIFO slot gets
 * a fiber of its own. */
static void test_await_runs_lifo_future_inline(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no LIFO slot");
    inline_probe p;
    memset(&p, 0, sizeof p);
    p.io = cio_evented_io(e);
    p.e = e;
    run_then_destroy(e, inline_parent, &p);
    assert_non_null(p.parent);
    assert_ptr_equal(p.lifo_child, p.parent);
    assert_non_null(p.older_child);
    assert_non_null(p.newer_child);
    assert_ptr_not_equal(p.older_child, p.parent);
    assert_ptr_not_equal(p.newer_child, p.parent);
    assert_ptr_not_equal(p.older_child, p.newer_child);
}

static cio_err sleepy_member(void *ctx)
{
    who_ctx *m = *(who_ctx **)ctx;
    m->self = cio__e_self(m->e);
    m->err = cio_sleep(m->io, cio_timeout_ms(10000));
    return m->err;
}

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *self;
    who_ctx a, b;
    cio_err awaited;
    cio_event started;
} group_parent;

static cio_err group_parent_task(void *ctx)
{
    group_parent *p = *(group_parent **)ctx;
    p->self = cio__e_self(p->e);
    who_ctx *ap = &p->a, *bp = &p->b;
    cio_group g = CIO_GROUP_INIT;
    cio_group_async(p->io, &g, sleepy_member, &ap, sizeof ap);
    cio_group_async(p->io, &g, sleepy_member, &bp, sizeof bp);
    cio_event_set(p->io, &p->started);
    p->awaited = cio_group_await(p->io, &g);
    return p->awaited;
}

/* cio_group_await runs members that have not started on the awaiting fiber (the newest, in the LIFO
 * slot, first); one of them sleeping there takes the awaiter's cancel request, and the await still
 * ends as canceled: the other member is canceled too, and the await returns CANCELED. */
static void test_group_await_inline_member_takes_the_cancel(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded runs members on workers");
    group_parent p;
    memset(&p, 0, sizeof p);
    p.io = cio_evented_io(e);
    p.e = e;
    p.a.io = p.b.io = p.io;
    p.a.e = p.b.e = e;
    group_parent *pp = &p;
    cio_future f;
    double t0 = now_s();
    assert_ok(cio_concurrent(p.io, group_parent_task, &pp, sizeof pp, &f));
    cio_event_wait_uncancelable(p.io, &p.started);
    assert_ok(cio_sleep(p.io, cio_timeout_ms(50))); /* both members asleep */
    assert_err(cio_cancel(p.io, &f), CIO_E_CANCELED);
    double took = now_s() - t0;
    cio_evented_destroy(e);
    assert_err(p.awaited, CIO_E_CANCELED);
    assert_err(p.a.err, CIO_E_CANCELED);
    assert_err(p.b.err, CIO_E_CANCELED);
    assert_true(took < 5.0);
    /* the newest member ran on the parent's fiber, the other as a fiber of its own */
    assert_ptr_equal(p.b.self, p.self);
    assert_ptr_not_equal(p.a.self, p.self);
}

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *parent;
    int members, inline_runs;
    _Atomic(int) stop;
    cio_err awaited;
} busy_group;

static cio_err count_inline_member(void *ctx)
{
    busy_group *b = *(busy_group **)ctx;
    b->members++; /* one loop: members never run at the same time */
    if (cio__e_self(b->e) == b->parent)
        b->inline_runs++;
    return CIO_OK;
}

/* Always ready: yields until told to stop. */
static cio_err busy_yielder(void *ctx)
{
    busy_group *b = *(busy_group **)ctx;
    while (!atomic_load(&b->stop))
        cio__e_yield();
    return CIO_OK;
}

#define BUSY_MEMBERS 400

static cio_err busy_parent(void *ctx)
{
    busy_group *b = *(busy_group **)ctx;
    b->parent = cio__e_self(b->e);
    cio_future y;
    cio_err err = cio_concurrent(b->io, busy_yielder, &b, sizeof b, &y);
    if (err != CIO_OK)
        return err;
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < BUSY_MEMBERS; i++)
        cio_group_async(b->io, &g, count_inline_member, &b, sizeof b);
    b->awaited = cio_group_await(b->io, &g);
    atomic_store(&b->stop, 1);
    return cio_await(b->io, &y);
}

/* cio_group_await goes on running members on the awaiting fiber when another fiber is ready (it
 * yields to it in between) and when the next in line is not a member (that one runs as a fiber of
 * its own first): with a fiber that is always ready, and spawned before the members, nearly all
 * members still run inline (before: only those before the first ready fiber; the rest each got a
 * fiber). */
static void test_group_await_inlines_beside_ready_fibers(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded runs members on workers");
    busy_group b;
    memset(&b, 0, sizeof b);
    b.io = cio_evented_io(e);
    b.e = e;
    run_then_destroy(e, busy_parent, &b);
    assert_ok(b.awaited);
    assert_int_equal(b.members, BUSY_MEMBERS);
    assert_true(b.inline_runs >= BUSY_MEMBERS * 9 / 10);
}

typedef struct {
    cio_io io;
    _Atomic(int) finished;
} sleepy_count;

static cio_err sleep_then_count(void *ctx)
{
    sleepy_count *c = *(sleepy_count **)ctx;
    (void)cio_sleep(c->io, cio_timeout_ms(50));
    atomic_fetch_add(&c->finished, 1);
    return CIO_OK;
}

/* A group's members count for cio_evented_destroy as long as the group has any (the group counts
 * once, not each member): destroy with members still asleep and the group never awaited returns
 * only after all of them finished, on one loop and on two. */
static void test_destroy_waits_for_group_members(void **state)
{
    for (unsigned threads = 1; threads <= 2; threads++) {
        cio_evented *e = own_instance(state, threads, "Threaded has no fibers");
        sleepy_count c;
        c.io = cio_evented_io(e);
        atomic_init(&c.finished, 0);
        sleepy_count *cp = &c;
        cio_group g = CIO_GROUP_INIT;
        for (int i = 0; i < 8; i++)
            assert_ok(cio_group_concurrent(c.io, &g, sleep_then_count, &cp, sizeof cp));
        cio_evented_destroy(e);
        assert_int_equal(atomic_load(&c.finished), 8);
        free((void *)atomic_load(&g.token)); /* the record an await would have freed */
    }
}

#define DEEP 3000

typedef struct {
    cio_io io;
    int depth;
} deep_ctx;

/* Each level keeps 512 bytes live across its await: 3,000 levels inline on one fiber's 64 KiB stack
 * would overflow it many times over. */
static cio_err deep(void *ctx)
{
    deep_ctx *c = (deep_ctx *)ctx;
    volatile unsigned char pad[512];
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] = (unsigned char)(c->depth + (int)i);
    cio_err err = CIO_OK;
    if (c->depth < DEEP) {
        deep_ctx child = {c->io, c->depth + 1};
        cio_future f = cio_async(c->io, deep, &child, sizeof child);
        err = cio_await(c->io, &f);
    }
    for (size_t i = 0; i < sizeof pad; i++)
        if (pad[i] != (unsigned char)(c->depth + (int)i))
            return CIO_E_UNEXPECTED;
    return err;
}

/* Inline awaits nest only while half the fiber's stack is free; deeper ones get fibers: a recursion
 * 3,000 async+await levels deep completes. */
static void test_inline_awaits_stay_within_the_stack(void **state)
{
    cio_evented *t = test_evented(state);
    if (t == NULL)
        CIO_SKIP("Threaded has no fiber stacks");
    cio_io io = cio_test_io(state);
    deep_ctx c = {io, 0};
    cio_future f;
    assert_ok(cio_concurrent(io, deep, &c, sizeof c, &f));
    assert_ok(cio_await(io, &f));
}

/* ---- sockets cio made (the epoll flavour keeps their registrations without a system call) -------- */

typedef struct {
    cio_io io;
    cio_stream s;
    char buf[64];
    size_t n;
    cio_err err;
    _Atomic(int) done;
    /* short_then_eof: */
    size_t n2;
    cio_err err2;
    double second; /* seconds the read after the short one took */
} sread_ctx;

/* Starts fn (sread or alike) as a task reading s, with r as its context. */
static void sread_start(cio_io io, cio_stream s, sread_ctx *r, cio_task_fn fn, cio_future *f)
{
    memset(r, 0, sizeof *r);
    r->io = io;
    r->s = s;
    assert_int_equal(cio_concurrent(io, fn, &r, sizeof r, f), CIO_OK);
}

static cio_err sread(void *ctx)
{
    sread_ctx *c = *(sread_ctx **)ctx;
    c->err = cio_stream_read(c->io, &c->s, c->buf, sizeof c->buf, &c->n);
    atomic_store(&c->done, 1);
    return CIO_OK;
}

/* A connected pair made through io: *client by connect, *server by accept. */
static void tcp_pair(cio_io io, cio_stream *client, cio_stream *server)
{
    cio_ip_address a;
    assert_int_equal(cio_ip_parse("127.0.0.1", 0, &a), CIO_OK);
    cio_server srv;
    assert_int_equal(cio_net_listen(io, &a, NULL, &srv), CIO_OK);
    assert_int_equal(cio_net_connect(io, &srv.address, NULL, client), CIO_OK);
    assert_int_equal(cio_server_accept(io, &srv, server), CIO_OK);
    cio_server_close(io, &srv);
}

/* An instance with one loop thread (so every fiber shares one poller), or the Threaded one. */
static cio_io one_loop(void **state, cio_evented **own)
{
    cio_evented *e = test_evented(state);
    *own = e != NULL ? evented_like(e) : NULL;
    return *own != NULL ? cio_evented_io(*own) : cio_test_io(state);
}

/* A socket made through the Evented backend and closed through the Threaded backend's slot (or a pipe
 * end through its file close): the number no longer counts as a socket cio made, and its generation
 * moved on (any close through either backend's slots renews it, so a reuse of the number is not
 * trusted as that socket). */
static void test_threaded_close_renews_descriptor_table(void **state)
{
    cio_evented *e = test_evented(state);
    if (e == NULL)
        CIO_SKIP("Threaded keeps no descriptor table");
    cio_threaded *t = NULL;
    assert_int_equal(cio_threaded_create(NULL, &t), CIO_OK);
    cio_io eio = cio_evented_io(e), tio = cio_threaded_io(t);
    cio_ip_address a;
    assert_int_equal(cio_ip_parse("127.0.0.1", 0, &a), CIO_OK);
    cio_server srv;
    assert_int_equal(cio_net_listen(eio, &a, NULL, &srv), CIO_OK);
    int fd = (int)srv.handle;
    uint32_t gen = 0, after = 0;
    assert_true(cio__e_fd_owned(fd, &gen));
    cio_server_close(tio, &srv);
    assert_false(cio__e_fd_owned(fd, &after));
    assert_true(after != gen);
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    (void)cio__e_fd_owned(p[0], &gen);
    cio_file_close(tio, (cio_file){p[0]});
    (void)cio__e_fd_owned(p[0], &after);
    assert_true(after != gen);
    close(p[1]);
    cio_threaded_destroy(t);
}

/* A socket cio made, then closed behind its back with close(2): the number, reused by a pipe cio did
 * not make, still gets its readiness (the epoll flavour verifies a registration it trusted once a
 * wait on it has lasted a while), and the read sees the pipe's byte. */
static void test_made_socket_closed_behind_cio(void **state)
{
    if (test_evented(state) == NULL)
        CIO_SKIP("Threaded keeps no registrations (and its reads of a non-blocking pipe say WouldBlock)");
    cio_evented *own;
    cio_io io = one_loop(state, &own);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    sread_ctx r;
    cio_future f;
    sread_start(io, s, &r, sread, &f);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK); /* it waits: s is registered */
    assert_int_equal(cio_stream_write_all(io, &c, "x", 1), CIO_OK);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(r.err, CIO_OK);
    assert_int_equal(r.n, 1);
    int old = s.handle;
    close(s.handle); /* behind cio's back */
    int p[2];
    assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    if (p[0] != old) { /* the pipe's read end takes the socket's number (its ends move up first) */
        int rd = fcntl(p[0], F_DUPFD_CLOEXEC, old + 1), wr = fcntl(p[1], F_DUPFD_CLOEXEC, old + 1);
        assert_true(rd > old && wr > old);
        close(p[0]);
        close(p[1]);
        assert_int_equal(dup3(rd, old, O_CLOEXEC), old);
        close(rd);
        p[0] = old;
        p[1] = wr;
    }
    sread_start(io, (cio_stream){.handle = p[0]}, &r, sread, &f);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(write(p[1], "y", 1), 1);
    double t0 = now_s();
    while (!atomic_load(&r.done) && now_s() - t0 < 5.0)
        assert_int_equal(cio_sleep(io, cio_timeout_ms(1)), CIO_OK);
    bool done = atomic_load(&r.done) != 0;
    if (!done)
        (void)cio_cancel(io, &f);
    else
        assert_int_equal(cio_await(io, &f), CIO_OK);
    print_message("      the read on the reused number took %.1f ms after the write\n", (now_s() - t0) * 1e3);
    if (!done)
        fail_msg("a read on a reused descriptor number got no readiness in 5 s");
    assert_int_equal(r.err, CIO_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.buf[0], 'y');
    cio_file_close(io, (cio_file){p[0]}); /* through cio: the number is no longer taken for its socket */
    close(p[1]);
    cio_stream_close(io, &c);
    if (own != NULL)
        cio_evented_destroy(own);
}

typedef struct {
    sread_ctx *r;
    _Atomic(int) spinning;
} spin_ctx;

/* Keeps its loop thread busy for 30 ms (no yield), so that what arrives meanwhile is reported in one
 * epoll_wait. */
static cio_err spin30(void *ctx)
{
    spin_ctx *c = *(spin_ctx **)ctx;
    double t0 = now_s();
    atomic_store(&c->spinning, 1);
    while (now_s() - t0 < 0.030) {
    }
    return CIO_OK;
}

static cio_err short_then_eof(void *ctx)
{
    sread_ctx *c = *(sread_ctx **)ctx;
    c->err = cio_stream_read(c->io, &c->s, c->buf, sizeof c->buf, &c->n);
    double t0 = now_s();
    c->err2 = cio_stream_read(c->io, &c->s, c->buf, sizeof c->buf, &c->n2);
    c->second = now_s() - t0;
    return CIO_OK;
}

/* A read that waits, then the peer's 3 bytes and end of stream reported together (its loop was busy
 * meanwhile): the short read returns the bytes, and the next read returns 0 at once. (An
 * edge-triggered poller reports that hang-up once; a read that waited for another edge after the
 * short read would take until the registration is verified, 10-20 ms.) */
static void test_short_read_then_eof(void **state)
{
    cio_evented *own;
    cio_io io = one_loop(state, &own);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    sread_ctx r;
    spin_ctx sp;
    memset(&sp, 0, sizeof sp);
    spin_ctx *spp = &sp;
    cio_future fr, fs;
    sread_start(io, s, &r, short_then_eof, &fr);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(10)), CIO_OK); /* it waits */
    assert_int_equal(cio_concurrent(io, spin30, &spp, sizeof spp, &fs), CIO_OK);
    while (!atomic_load(&sp.spinning))
        assert_int_equal(cio_sleep(io, cio_timeout_ms(1)), CIO_OK);
    assert_int_equal(write(c.handle, "abc", 3), 3);
    assert_int_equal(shutdown(c.handle, SHUT_WR), 0);
    assert_int_equal(cio_await(io, &fs), CIO_OK);
    assert_int_equal(cio_await(io, &fr), CIO_OK);
    assert_int_equal(r.err, CIO_OK);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.err2, CIO_OK);
    assert_int_equal(r.n2, 0);
    print_message("      the read after the short one took %.3f ms\n", r.second * 1e3);
    if (cio_test_under_valgrind())
        print_message("      note: under valgrind the time is not checked\n");
    else
        assert_true(r.second < 0.008);
    cio_stream_close(io, &c);
    cio_stream_close(io, &s);
    if (own != NULL)
        cio_evented_destroy(own);
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
        CIO_TESTS(test_reused_descriptor_and_canceled_wait),
        CIO_TESTS(test_direct_switches_leave_room_for_timers),
        CIO_TESTS(test_spawn_burst_is_shared),
        CIO_TESTS(test_await_runs_lifo_future_inline),
        CIO_TESTS(test_inline_awaits_stay_within_the_stack),
        CIO_TESTS(test_group_await_inline_member_takes_the_cancel),
        CIO_TESTS(test_group_await_inlines_beside_ready_fibers),
        CIO_TESTS(test_destroy_waits_for_group_members),
        CIO_TESTS(test_ready_fibers_do_not_starve_spawned_ones),
        CIO_TESTS(test_made_socket_closed_behind_cio),
        CIO_TESTS(test_threaded_close_renews_descriptor_table),
        CIO_TESTS(test_short_read_then_eof),
        CIO_TESTS(test_timers_out_of_order),
    };
    return cmocka_run_group_tests_name("evented", tests, NULL, NULL);
}
