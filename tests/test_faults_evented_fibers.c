/*
 * Fault injection at the Evented backend's own call sites (spec/oscalls.yaml, src/evented/), part two:
 * the fibers' stacks and blocks (async then runs inline, concurrent is unavailable), a thread's
 * adoption failing (it then works as a foreign thread), the stack pool's page size, trim and last
 * slab, the once-per-process set-ups (the guard-region probe, the adoption key: each case in a fresh
 * process, the program runs itself with ONCE_ARG), the loops' timer heap and their monotonic clock.
 * Part one (creating an instance, the ring, the pollers, wake-ups, sockets) is
 * tests/test_faults_evented.c.
 *
 * Every case checks the exact error, the data, and that the process has as many descriptors and
 * threads afterwards as before (heap blocks: LeakSanitizer and valgrind).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults_evented.h"

#include <sys/wait.h>

#include "fiber.h"

/* ---- fibers: no stack, no block ------------------------------------------------------------------------------ */

/* With `site` failing: async runs inline, concurrent is unavailable, groups likewise; nothing leaks. */
static void no_fibers(cio_io io, const char *site, int err, const char *fault)
{
    snapshot before = settled();
    assert_true(cio__fault_errno(site, err, 0, -1) == 1);
    tasks_run_inline(io);
    unsigned injected = cio__fault_injected(site);
    cio__fault_reset();
    if (injected == 0)
        fail_msg("%s: never reached", site);
    same_fds(before, site);
    print_message("fault-covered: %s %s\n", site, fault);
}

static void test_fiber_stack_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    /* a fresh instance has no stack cached: every fiber maps one */
    no_fibers(io, "mmap@fiber_stack", ENOMEM, "ENOMEM");
    /* no guard region (a kernel before 6.13 refuses the advice: EINVAL), then no PROT_NONE page */
    assert_true(cio__fault_errno("madvise@stack_guard", EINVAL, 0, -1) == 1);
    no_fibers(io, "mprotect@stack_guard", ENOMEM, "ENOMEM");
    print_message("fault-covered: madvise@stack_guard EINVAL\n");
    /* the rest of a slab whose guard failed is unmapped; that munmap failing is ignored */
    assert_true(cio__fault_errno("madvise@stack_guard", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("mprotect@stack_guard", ENOMEM, 0, 1) == 1);
    assert_true(cio__fault_errno("munmap@stack_undo", EINVAL, 0, 1) == 1);
    assert_err(concurrent_sum(io), CIO_E_CONCURRENCY_UNAVAILABLE);
    assert_int_equal(cio__fault_injected("munmap@stack_undo"), 1u);
    cio__fault_reset();
    print_message("fault-covered: munmap@stack_undo EINVAL\n");
    /* and then fibers work again */
    assert_ok(concurrent_sum(io));
}

/* No block at all (a fresh instance: nothing cached, no region to carve from, malloc failing): no
 * fibers. */
static void test_fiber_block_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 2, &before);
    assert_true(cio__fault_errno("mmap@block_region", ENOMEM, 0, -1) == 1);
    no_fibers(cio_evented_io(e), "posix_memalign@fiber_alloc", ENOMEM, "ENOMEM");
    cio_evented_destroy(e);
    same_as(before, "posix_memalign@fiber_alloc");
}

/* Stacks are unmapped when the instance goes (the pool's cache); a failing munmap is ignored. */
static void test_stack_free_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 2, &before);
    workload(cio_evented_io(e));
    destroy_with_fault(e, before, "munmap@stack_free", EINVAL, "EINVAL", 1);
}

/* ---- adopted threads: adoption fails, the thread works as a foreign thread ----------------------------------- */

/* A thread of the test's own (not a loop thread): its first wait through the instance would make it
 * a fiber of the instance (adopt.c adopt). With adoption failing it takes the foreign-thread path
 * (its operations run as fibers on a loop thread): a sleep and a pipe round trip still work. No
 * cmocka assertion runs on that thread: it records what it saw and the test thread checks. */
typedef struct foreign_ctx {
    cio_io io;
    cio_err sleep_err, write_err, read_err;
    unsigned char buf[32];
    size_t n;
} foreign_ctx;

static void *foreign_thread(void *p)
{
    foreign_ctx *c = (foreign_ctx *)p;
    c->sleep_err = cio_sleep(c->io, cio_timeout_ms(2));
    int fds[2];
    if (pipe(fds) != 0) {
        c->write_err = CIO_E_UNEXPECTED;
        return NULL;
    }
    c->write_err = cio_file_write_all(c->io, (cio_file){fds[1]}, "foreign", 7);
    c->read_err = cio_file_read_streaming(c->io, (cio_file){fds[0]}, c->buf, sizeof c->buf, &c->n);
    close(fds[0]);
    close(fds[1]);
    return NULL;
}

static void run_foreign(cio_io io)
{
    foreign_ctx c;
    memset(&c, 0, sizeof c);
    c.io = io;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, foreign_thread, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_ok(c.sleep_err);
    assert_ok(c.write_err);
    assert_ok(c.read_err);
    assert_int_equal(c.n, 7);
    assert_memory_equal(c.buf, "foreign", 7);
}

/* The flavours to make fresh instances of (io_uring where this process may start one). */
static void test_adopt_fails(void **state)
{
    (void)state;
    static const char *const sites[] = {"calloc@adopt_loop", "calloc@adopt_fiber"};
    cio_evented_flavour fl[2];
    size_t nfl = fresh_flavours(fl);
    for (size_t k = 0; k < nfl; k++)
        for (size_t i = 0; i < 2; i++) {
            snapshot before;
            cio_evented *e = fresh(fl[k], 2, &before);
            assert_true(cio__fault_errno(sites[i], ENOMEM, 0, -1) == 1);
            run_foreign(cio_evented_io(e));
            covered(sites[i], "ENOMEM");
            cio__fault_reset();
            /* and a thread that can be adopted works too */
            run_foreign(cio_evented_io(e));
            cio_evented_destroy(e);
            same_as(before, sites[i]);
        }
}

/* The adopted thread's scheduler stack cannot get its guard (no guard region, no PROT_NONE page):
 * the stack is unmapped again (stack_alloc_undo; that munmap failing is ignored) and the thread
 * works as a foreign thread. */
static void test_adopt_stack_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 2, &before);
    assert_true(cio__fault_errno("madvise@stack_guard", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("mprotect@stack_guard", ENOMEM, 0, 1) == 1);
    assert_true(cio__fault_errno("munmap@stack_alloc_undo", EINVAL, 0, 1) == 1);
    run_foreign(cio_evented_io(e));
    unsigned undo = cio__fault_injected("munmap@stack_alloc_undo");
    unsigned guard = cio__fault_injected("mprotect@stack_guard");
    cio__fault_reset();
    assert_int_equal(guard, 1u);
    assert_int_equal(undo, 1u);
    print_message("fault-covered: munmap@stack_alloc_undo EINVAL\n");
    cio_evented_destroy(e);
    same_as(before, "munmap@stack_alloc_undo");
}

/* ---- the stack pool: trimming its cache, the last slab's rest ------------------------------------------------- */

#define TRIM_FIBERS 3400 /* past 2 x 1024 cached in the pool, plus the loop's own 1024 */

/* Every fiber waits at a gate until all of them run, then sleeps 1 ms: all stacks are in use at once
 * and go back to the pool together. */
static void many_fibers(cio_io io, int n)
{
    static _Atomic(uint32_t) gate;
    atomic_store(&gate, 0);
    gate_ctx c = {io, &gate};
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < n; i++)
        assert_ok(cio_group_concurrent(io, &g, gated_sleep, &c, sizeof c));
    atomic_store(&gate, 1);
    cio_futex_wake(io, &gate, UINT32_MAX);
    assert_ok(cio_group_await(io, &g));
}

/* Fiber blocks are carved from regions (mmap; committed ahead by the pool's keeper, madvise): no
 * region (ENOMEM) means malloc'd blocks, and fibers work; a commit refused (EINVAL: a kernel before
 * 5.14) leaves the pages to be faulted in; a region's munmap failing at destroy is ignored. */
#define REGION_FIBERS 1000 /* ~0.6 MB of blocks: regions past the first, so the keeper prepares some */
static void test_block_region_fails(void **state)
{
    (void)state;
#ifdef CIO__FIBER_ASAN
    CIO_SKIP("under ASan fiber blocks are malloc'd (so it checks them), not carved from regions");
#endif
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 2, &before);
    cio_io io = cio_evented_io(e);
    assert_true(cio__fault_errno("mmap@block_region", ENOMEM, 0, -1) == 1);
    assert_ok(concurrent_sum(io));
    many_fibers(io, 100);
    unsigned injected = cio__fault_injected("mmap@block_region");
    cio__fault_reset();
    if (injected == 0)
        fail_msg("mmap@block_region: never reached");
    print_message("fault-covered: mmap@block_region ENOMEM\n");
    assert_true(cio__fault_errno("madvise@block_region", EINVAL, 0, -1) == 1);
    for (int i = 0; i < 20 && (injected = cio__fault_injected("madvise@block_region")) == 0; i++)
        many_fibers(io, REGION_FIBERS);
    cio__fault_reset();
    if (injected == 0)
        fail_msg("madvise@block_region: %d fibers at once, 20 times, had the keeper prepare no region", REGION_FIBERS);
    print_message("fault-covered: madvise@block_region EINVAL\n");
    many_fibers(io, REGION_FIBERS); /* and with the commit back */
    destroy_with_fault(e, before, "munmap@block_region", EINVAL, "EINVAL", 1);
}

static void test_stack_trim_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 1, &before);
    cio_io io = cio_evented_io(e);
    assert_true(cio__fault_errno("munmap@stack_trim", EINVAL, 0, -1) == 1);
    many_fibers(io, TRIM_FIBERS);
    /* the pool's keeper thread unmaps trimmed stacks: give it a moment */
    unsigned injected = 0;
    for (int i = 0; i < 500 && (injected = cio__fault_injected("munmap@stack_trim")) == 0; i++)
        pause_ms(10);
    cio__fault_reset();
    if (injected == 0)
        fail_msg("munmap@stack_trim: %d fibers at once did not make the pool trim its cache", TRIM_FIBERS);
    print_message("fault-covered: munmap@stack_trim EINVAL\n");
    /* the stacks were unmapped all the same (after: true); fibers still work */
    many_fibers(io, 50);
    /* no memory to sort the trimmed stacks by address: each is unmapped on its own */
    assert_true(cio__fault_errno("malloc@stack_trim_sort", ENOMEM, 0, -1) == 1);
    assert_true(cio__fault_watch("munmap@stack_free") == 1);
    many_fibers(io, TRIM_FIBERS);
    unsigned one_by_one = 0;
    for (int i = 0; i < 500 && (one_by_one = cio__fault_hits("munmap@stack_free")) == 0; i++)
        pause_ms(10);
    covered("malloc@stack_trim_sort", "ENOMEM");
    cio__fault_reset();
    if (one_by_one == 0)
        fail_msg("malloc@stack_trim_sort: the trimmed stacks were not unmapped one by one");
    workload(io);
    cio_evented_destroy(e);
    same_as(before, "munmap@stack_trim");
}

static void test_slab_left_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 1, &before);
    /* one fiber at a time: the first slab (4 stacks) keeps an unused rest */
    for (int i = 0; i < 3; i++)
        assert_ok(concurrent_sum(cio_evented_io(e)));
    destroy_with_fault(e, before, "munmap@slab_left", EINVAL, "EINVAL", 1);
}

/* ---- the stack pool's keeper: its thread, its vectored madvise ------------------------------------------------ */

#define KEEPER_STACKS 400 /* past the slabs of 4 .. 64 a pool maps itself (124 stacks): the keeper starts */

/* Whether the guard page right below s holds: the kernel cannot write into it. (Not asked under
 * valgrind, where memcheck would report the write into a PROT_NONE page as an error of its own.) */
static bool guarded(const cio__stack *s)
{
    if (cio_test_under_valgrind())
        return true;
    return syscall(SYS_getrandom, s->map, 1, 1 /* GRND_NONBLOCK */) == -1 && errno == EFAULT;
}

/* Takes n stacks from p (all distinct, each guarded, its top writable), then gives them back. */
static void pool_round(cio__stack_pool *p, size_t n)
{
    cio__stack *v = (cio__stack *)calloc(n, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        assert_ok(cio__stack_pool_get(p, &v[i]));
        if (!guarded(&v[i]))
            fail_msg("stack %zu of %zu: no guard below it", i, n);
        ((volatile char *)v[i].lo)[v[i].size - 1] = 1;
        if (i > 0 && v[i].map == v[i - 1].map)
            fail_msg("stack %zu handed out twice", i);
    }
    for (size_t i = 0; i < n; i++)
        cio__stack_pool_put(p, &v[i]);
    free(v);
}

/* No thread for the keeper: the pool maps and guards its slabs itself, and asks only once. */
static void test_stack_keeper_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = settled();
    cio__stack_pool p;
    cio__stack_pool_init(&p, 64 * 1024, 64);
    assert_true(cio__fault_errno("pthread_create@stack_keeper", EAGAIN, 0, -1) == 1);
    pool_round(&p, KEEPER_STACKS);
    pool_round(&p, KEEPER_STACKS);
    unsigned injected = cio__fault_injected("pthread_create@stack_keeper");
    cio__fault_reset();
    assert_int_equal(injected, 1u);
    assert_int_equal(p.prepared, 0u);
    cio__stack_pool_destroy(&p);
    same_as(before, "pthread_create@stack_keeper");
    print_message("fault-covered: pthread_create@stack_keeper EAGAIN\n");
}

/* The vectored madvise failing (ENOMEM: for that slab only) while the keeper and the pool prepare
 * slabs: guards are installed one stack at a time, and every stack is guarded. Where the vectored call is never made
 * (no guard regions; a kernel or valgrind that refused it once) this is a skip. */
static void test_stack_slab_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = settled();
    cio__stack_pool p;
    cio__stack_pool_init(&p, 64 * 1024, 64);
    assert_true(cio__fault_errno("process_madvise@stack_slab", ENOMEM, 0, -1) == 1);
    pool_round(&p, KEEPER_STACKS);
    for (int i = 0; i < 500; i++) { /* the keeper's slabs */
        pthread_mutex_lock(&p.lock);
        size_t prepared = p.prepared;
        pthread_mutex_unlock(&p.lock);
        if (prepared > 0)
            break;
        pause_ms(10);
    }
    pool_round(&p, KEEPER_STACKS);
    unsigned injected = cio__fault_injected("process_madvise@stack_slab");
    cio__fault_reset();
    pthread_mutex_lock(&p.lock);
    size_t prepared = p.prepared;
    pthread_mutex_unlock(&p.lock);
    pool_round(&p, KEEPER_STACKS); /* and with the vectored call back */
    cio__stack_pool_destroy(&p);
    same_as(before, "process_madvise@stack_slab");
    if (prepared == 0)
        fail_msg("the keeper prepared no slab");
    if (injected == 0)
        CIO_SKIP("no vectored madvise here (no guard regions, or process_madvise refused once: an older "
                 "kernel, valgrind): slabs are guarded stack by stack");
    print_message("fault-covered: process_madvise@stack_slab ENOMEM\n");
}


/* The page size cannot be asked (EINVAL): the stacks assume 4096 bytes, which is this machine's
 * page (elsewhere the guard could not be placed and there would be no fibers: skipped). */
static void test_stack_page_fails(void **state)
{
    (void)state;
    if (sysconf(_SC_PAGESIZE) != 4096)
        CIO_SKIP("the page is not 4096 bytes here: the fallback page size would not fit the stacks' guards");
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 2, &before);
    assert_true(cio__fault_errno("sysconf@stack_page", EINVAL, 0, -1) == 1);
    workload(cio_evented_io(e));
    many_fibers(cio_evented_io(e), 20);
    covered("sysconf@stack_page", "EINVAL");
    cio_evented_destroy(e);
    cio__fault_reset();
    same_as(before, "sysconf@stack_page");
}

/* ---- the loops' timers and clock ------------------------------------------------------------------------------ */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the test's own clock, not the table's */
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A 10 s sleep and a futex wait with a 10 s timeout, in a fiber. */
typedef struct timed_ctx {
    cio_io io;
    cio_err sleep_err, wait_err;
} timed_ctx;

static cio_err timed_waits(void *p)
{
    timed_ctx *c = *(timed_ctx **)p;
    _Atomic(uint32_t) word = 0; /* nobody wakes it */
    c->sleep_err = cio_sleep(c->io, cio_timeout_ms(10000));
    c->wait_err = cio_futex_wait(c->io, &word, 0, cio_timeout_ms(10000));
    return CIO_OK;
}

/* A 20 ms sleep in a fiber lasts 20 ms at least. */
static cio_err sleep_20ms(void *p)
{
    cio_io io = *(cio_io *)p;
    int64_t t0 = mono_ms();
    cio_err err = cio_sleep(io, cio_timeout_ms(20));
    return err == CIO_OK && mono_ms() - t0 < 20 ? CIO_E_UNEXPECTED : err;
}

static cio_err sleep_60s(void *p)
{
    return cio_sleep(*(cio_io *)p, cio_timeout_ms(60000));
}

/* A fresh loop's timer heap cannot grow (ENOMEM): a timer it cannot keep fires at once (an early
 * timeout rather than a lost one): the sleep ends with Ok, the futex wait with Timeout, long before
 * their 10 s. Once the heap can grow, a sleep lasts its time. (Deadlines armed in order go to the
 * loop's timer queue, not the heap: a 60 s sleeper armed first makes the 10 s ones go to the heap.) */
static void test_timer_heap_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 1, &before);
    cio_io io = cio_evented_io(e);
    timed_ctx c = {io, CIO_E_UNEXPECTED, CIO_E_UNEXPECTED};
    timed_ctx *cp = &c;
    cio_future far, f;
    assert_ok(cio_concurrent(io, sleep_60s, &io, sizeof io, &far)); /* one loop: it runs first */
    assert_true(cio__fault_errno("realloc@timer_heap", ENOMEM, 0, -1) == 1);
    int64_t t0 = mono_ms();
    assert_ok(cio_concurrent(io, timed_waits, &cp, sizeof cp, &f));
    assert_ok(cio_await(io, &f));
    int64_t took = mono_ms() - t0;
    covered("realloc@timer_heap", "ENOMEM");
    cio__fault_reset();
    assert_ok(c.sleep_err);
    assert_err(c.wait_err, CIO_E_TIMEOUT);
    if (took >= 5000)
        fail_msg("realloc@timer_heap: the timers waited %lld ms: lost, not fired at once", (long long)took);
    assert_ok(cio_concurrent(io, sleep_20ms, &io, sizeof io, &f));
    assert_ok(cio_await(io, &f));
    assert_err(cio_cancel(io, &far), CIO_E_CANCELED);
    cio_evented_destroy(e);
    same_as(before, "realloc@timer_heap");
}

/* The loops' monotonic clock fails (EINVAL) 30 times: each reading is asked again through the
 * Threaded clock, and sleeps last their time. Both clocks failing 30 times: the last good reading
 * stands, and every sleep still ends. */
static void test_clock_fails(void **state)
{
    cio_io io = cio_test_io(state);
    static const char *const sites[] = {"clock_gettime@evented_now", "clock_gettime@now"};
    for (size_t both = 0; both < 2; both++) {
        cio__fault_reset();
        for (size_t i = 0; i <= both; i++)
            assert_true(cio__fault_errno(sites[i], EINVAL, 0, 30) == 1);
        /* until the 30 faults are spent: a pass reads the clock once or twice (a loaded machine's
         * rounds can read it less often: 16 of 30 were seen after 200), at most 2000 rounds */
        for (int round = 0; round < 2000 && cio__fault_injected(sites[both]) < 30; round++) {
            cio_future f;
            assert_ok(cio_concurrent(io, sleep_20ms, &io, sizeof io, &f));
            cio_err err = cio_await(io, &f);
            if (both == 0)
                assert_ok(err);
            else if (err != CIO_OK && err != CIO_E_UNEXPECTED) /* Unexpected: it ended early */
                fail_msg("a sleep with both clocks failing: %s", cio_err_name(err));
        }
        unsigned injected = cio__fault_injected(sites[both]);
        cio__fault_reset();
        if (injected < 30)
            fail_msg("%s: %u of 30 faults injected", sites[both], injected);
    }
    print_message("fault-covered: clock_gettime@evented_now EINVAL\n");
    assert_ok(cio_sleep(io, cio_timeout_ms(1)));
}

/* ---- once per process: the guard-region probe, the adoption key (each case in a fresh process) -------------- */

typedef struct probe_case {
    const char *site;
    int err;
    const char *name;
} probe_case;

/* The guard-region probe's calls, and the key that ends an adopted thread's loop with the thread
 * (no key: the test thread is not adopted and works as a foreign thread). */
static const probe_case probe_cases[] = {
    {"mmap@guard_probe", ENOMEM, "ENOMEM"},      {"madvise@guard_probe", EINVAL, "EINVAL"},
    {"getrandom@guard_probe", EAGAIN, "EAGAIN"}, /* not EFAULT: the probe decides there is no guard */
    {"munmap@guard_probe", EINVAL, "EINVAL"},    {"pthread_key_create@adopt_key", EAGAIN, "EAGAIN"},
};

#define PROBE_ARG "--once-per-process-case"
#define PROBE_NOT_REACHED 3

/* In the child (a fresh process image, so nothing was set up yet): the fault armed, an instance, a
 * fiber and its data, the covered line. Exit 0: covered; PROBE_NOT_REACHED: that call was never
 * made here (no guard regions: getrandom is not reached); anything else: a failure (said why). */
static int probe_child(const char *which)
{
    const probe_case *c = NULL;
    for (size_t i = 0; i < sizeof probe_cases / sizeof probe_cases[0]; i++)
        if (strcmp(probe_cases[i].site, which) == 0)
            c = &probe_cases[i];
    if (c == NULL) {
        fprintf(stderr, "once-per-process child: no case %s\n", which);
        return 1;
    }
    if (cio__fault_errno(c->site, c->err, 0, -1) != 1) {
        fprintf(stderr, "once-per-process child: %s is not a site\n", c->site);
        return 1;
    }
    cio_evented *e;
    cio_err err = make(CIO_EVENTED_EPOLL, 1, &e);
    if (err != CIO_OK) {
        fprintf(stderr, "once-per-process child: create: %s\n", cio_err_name(err));
        return 1;
    }
    cio_io io = cio_evented_io(e);
    int out = 0;
    sum_ctx s = {.a = 2, .b = 3, .out = &out};
    cio_future f;
    err = cio_concurrent(io, sum_task, &s, sizeof s, &f);
    if (err == CIO_OK)
        err = cio_await(io, &f);
    if (err == CIO_OK)
        err = cio_sleep(io, cio_timeout_ms(1));
    unsigned injected = cio__fault_injected(c->site);
    cio__fault_reset();
    cio_evented_destroy(e);
    if (err != CIO_OK || out != 5) {
        fprintf(stderr, "once-per-process child: %s %s: a fiber failed: %s (out %d)\n", c->site, c->name,
                cio_err_name(err), out);
        return 1;
    }
    if (injected == 0) {
        printf("      not here: %s (the probe never made that call in this process)\n", c->site);
        fflush(stdout);
        return PROBE_NOT_REACHED;
    }
    printf("fault-covered: %s %s\n", c->site, c->name);
    fflush(stdout);
    return 0;
}

static void test_guard_probe_fails(void **state)
{
    (void)state;
    /* the program's path (under valgrind readlink names the program, not the tool: the child then
     * runs natively) */
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0 || (size_t)len >= sizeof self - 1)
        CIO_SKIP("the test program's own path is unknown (/proc/self/exe): no fresh process for the case");
    self[len] = '\0';
    for (size_t i = 0; i < sizeof probe_cases / sizeof probe_cases[0]; i++) {
        const probe_case *c = &probe_cases[i];
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl(self, self, PROBE_ARG, c->site, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status))
            fail_msg("%s: the child died (status %#x)", c->site, (unsigned)status);
        int code = WEXITSTATUS(status);
        if (code == 127)
            CIO_SKIP("the test program cannot run itself again: no fresh process for the case");
        if (code == PROBE_NOT_REACHED)
            continue;
        if (code != 0)
            fail_msg("%s %s: the child exited with %d", c->site, c->name, code);
    }
}


int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], PROBE_ARG) == 0)
        return probe_child(argv[2]);
    evented_faults_warm_up();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adopt_fails),
        cmocka_unit_test(test_adopt_stack_fails),
        cmocka_unit_test(test_stack_trim_fails),
        cmocka_unit_test(test_slab_left_fails),
        cmocka_unit_test(test_stack_keeper_fails),
        cmocka_unit_test(test_block_region_fails),
        cmocka_unit_test(test_stack_slab_fails),
        cmocka_unit_test(test_stack_page_fails),
        cmocka_unit_test(test_timer_heap_fails),
        cmocka_unit_test(test_guard_probe_fails),
        cmocka_unit_test(test_stack_free_fails) CIO_TESTS_EVENTED(test_fiber_stack_fails)
            CIO_TESTS_EVENTED(test_fiber_block_fails) CIO_TESTS_EVENTED(test_clock_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
