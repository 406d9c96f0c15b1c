/*
 * The Evented backend on Windows (issue 24): fibers over a completion port per loop
 * (src/evented/poll_iocp.c, flavour_windows.c), the loop's own cases (every CIO_TESTS suite runs on
 * evented/iocp as well). Run under Wine by the suites.
 *
 * What each test shows:
 * - create_destroy: the auto flavour and CIO_EVENTED_IOCP are the port; the Linux and BSD flavours
 *   are OperationUnsupported, an unknown one InvalidArgument; destroy gives back every handle and
 *   thread (several instances, one to eight loops).
 * - tasks: a thousand async tasks and a hundred concurrent ones on two loops, groups, nested spawns,
 *   each result right; a task's cancel request is seen.
 * - sleep: a fiber's sleep lasts at least its duration and ends within slack; many sleeping fibers
 *   with mixed deadlines wake in deadline order (the loop's timer heap and the port's timed wait).
 * - futex: a fiber waiting on a futex is woken by a plain thread (the wake-up packet posted to its
 *   loop's port); a plain thread's sleep and futex wait on the instance (adopted as a fiber of a loop
 *   of its own) work too; a timed futex wait times out.
 * - cancel: a sleeping fiber canceled from another fiber and from the thread ends with Canceled.
 * - faults: every call site of the iocp flavour and of the Evented core as built on Windows
 *   (spec/oscalls.yaml), each failing: the exact error or the documented recovery, and no handle or
 *   thread left over.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cio.h"
#include "cio/evented.h"
#include "internal/cio_oscalls_test.h"

#include "iocp_helpers.h"


static cio_evented *make(unsigned threads)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    cio_evented *e = NULL;
    assert_ok(cio_evented_create(&o, &e));
    assert_non_null(e);
    return e;
}

/* One create and destroy first: Winsock, the CRT and winpthreads make some objects once per process. */
static void warm(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    assert_ok(cio_sleep(io, cio_timeout_ms(1)));
    cio_evented_destroy(e);
}

/* ---- create / destroy ------------------------------------------------------------------------------ */

static void body_create_destroy(void)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    cio_evented *e = NULL;
    o.flavour = (cio_evented_flavour)(CIO_EVENTED_IOCP + 1);
    assert_err(cio_evented_create(&o, &e), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_evented_create(&o, NULL), CIO_E_INVALID_ARGUMENT);
    const cio_evented_flavour other[] = {CIO_EVENTED_IO_URING, CIO_EVENTED_EPOLL, CIO_EVENTED_KQUEUE};
    for (size_t i = 0; i < 3; i++) {
        o.flavour = other[i];
        assert_err(cio_evented_create(&o, &e), CIO_E_OPERATION_UNSUPPORTED);
    }
    const cio_evented_flavour ours[] = {CIO_EVENTED_AUTO, CIO_EVENTED_IOCP};
    for (size_t i = 0; i < 2; i++) {
        o.flavour = ours[i];
        assert_ok(cio_evented_create(&o, &e));
        assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_IOCP);
        cio_evented_destroy(e);
    }
    const unsigned loops[] = {1, 2, 8};
    for (size_t i = 0; i < 3; i++) {
        e = make(loops[i]);
        assert_ok(cio_sleep(cio_evented_io(e), cio_timeout_ms(1)));
        cio_evented_destroy(e);
    }
    cio_evented_destroy(NULL);
}

static void test_iocp_create_destroy(void **state)
{
    (void)state;
    warm();
    run_counted(body_create_destroy, "create/destroy");
}

/* ---- tasks ------------------------------------------------------------------------------------------ */

static cio_err square(void *ctx)
{
    int *v = (int *)ctx;
    *v = *v * *v; /* the copy's: the result travels back through the error value */
    return *v == 49 ? CIO_OK : CIO_E_UNEXPECTED;
}

struct sum_ctx {
    cio_io io;
    _Atomic(int) *sum;
    int n;
};

static cio_err add_n(void *ctx)
{
    struct sum_ctx *c = (struct sum_ctx *)ctx;
    atomic_fetch_add(c->sum, c->n);
    return CIO_OK;
}

/* Spawns n children that add 1..n, and awaits them (a fiber spawning fibers). */
static cio_err spawner(void *ctx)
{
    struct sum_ctx *c = (struct sum_ctx *)ctx;
    cio_future f[16];
    for (int i = 0; i < 16; i++) {
        struct sum_ctx k = {c->io, c->sum, i + 1};
        f[i] = cio_async(c->io, add_n, &k, sizeof k);
    }
    cio_err err = CIO_OK;
    for (int i = 0; i < 16; i++) {
        cio_err r = cio_await(c->io, &f[i]);
        if (r != CIO_OK)
            err = r;
    }
    return err;
}

static cio_err wait_for_cancel(void *ctx)
{
    cio_io io = *(cio_io *)ctx;
    return cio_sleep(io, cio_timeout_ms(60000));
}

#define NTASKS 1000

static void body_tasks(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    int seven = 7;
    cio_future one = cio_async(io, square, &seven, sizeof seven);
    assert_ok(cio_await(io, &one));
    static cio_future fs[NTASKS];
    _Atomic(int) sum = 0;
    for (int i = 0; i < NTASKS; i++) {
        struct sum_ctx c = {io, &sum, i};
        fs[i] = cio_async(io, add_n, &c, sizeof c);
    }
    for (int i = 0; i < NTASKS; i++)
        assert_ok(cio_await(io, &fs[i]));
    assert_int_equal(atomic_load(&sum), NTASKS * (NTASKS - 1) / 2);
    atomic_store(&sum, 0);
    for (int i = 0; i < 100; i++) {
        struct sum_ctx c = {io, &sum, 0};
        assert_ok(cio_concurrent(io, spawner, &c, sizeof c, &fs[i]));
    }
    for (int i = 0; i < 100; i++)
        assert_ok(cio_await(io, &fs[i]));
    assert_int_equal(atomic_load(&sum), 100 * (16 * 17 / 2));
    cio_group g = CIO_GROUP_INIT;
    atomic_store(&sum, 0);
    for (int i = 0; i < 50; i++) {
        struct sum_ctx c = {io, &sum, 2};
        cio_group_async(io, &g, add_n, &c, sizeof c);
    }
    assert_ok(cio_group_await(io, &g));
    assert_int_equal(atomic_load(&sum), 100);
    cio_future sleeper;
    assert_ok(cio_concurrent(io, wait_for_cancel, &io, sizeof io, &sleeper));
    Sleep(20);
    assert_err(cio_cancel(io, &sleeper), CIO_E_CANCELED);
    cio_evented_destroy(e);
}

static void test_iocp_tasks(void **state)
{
    (void)state;
    warm();
    run_counted(body_tasks, "tasks");
}

/* ---- sleep and timers ------------------------------------------------------------------------------ */

static int64_t now_ms(void)
{
    return (int64_t)GetTickCount64();
}

struct order_ctx {
    cio_io io;
    int ms;
    _Atomic(int) *next;
    int *slot;
};

static cio_err sleep_then_record(void *ctx)
{
    struct order_ctx *c = (struct order_ctx *)ctx;
    cio_err err = cio_sleep(c->io, cio_timeout_ms(c->ms));
    *c->slot = atomic_fetch_add(c->next, 1);
    return err;
}

static cio_err timed_sleep(void *ctx)
{
    cio_io io = *(cio_io *)ctx;
    int64_t t0 = now_ms();
    cio_err err = cio_sleep(io, cio_timeout_ms(50));
    int64_t took = now_ms() - t0;
    if (err != CIO_OK)
        return err;
    /* GetTickCount64 ticks in 10-16 ms steps: 50 ms may read as 47 */
    return took >= 40 && took < 2000 ? CIO_OK : CIO_E_UNEXPECTED;
}

static void body_sleep(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    cio_future f;
    assert_ok(cio_concurrent(io, timed_sleep, &io, sizeof io, &f));
    assert_ok(cio_await(io, &f));
    /* 40 fibers with deadlines 20 ms apart, spawned in scrambled order, on one loop: they wake in
     * deadline order */
    cio_evented *one = make(1);
    cio_io io1 = cio_evented_io(one);
    enum { N = 40 };
    cio_future fs[N];
    int order[N];
    _Atomic(int) next = 0;
    for (int i = 0; i < N; i++) {
        int k = (i * 17) % N;
        struct order_ctx c = {io1, 10 + 20 * k, &next, &order[k]};
        assert_ok(cio_concurrent(io1, sleep_then_record, &c, sizeof c, &fs[i]));
    }
    for (int i = 0; i < N; i++)
        assert_ok(cio_await(io1, &fs[i]));
    for (int k = 0; k < N; k++)
        assert_int_equal(order[k], k);
    cio_evented_destroy(one);
    cio_evented_destroy(e);
}

static void test_iocp_sleep(void **state)
{
    (void)state;
    warm();
    run_counted(body_sleep, "sleep");
}

/* ---- futex: wake-ups from other threads ----------------------------------------------------------- */

struct futex_ctx {
    cio_io io;
    _Atomic(uint32_t) word;
    _Atomic(int) waiting;
    cio_err err;
};

static cio_err futex_waiter(void *ctx)
{
    struct futex_ctx *c = *(struct futex_ctx **)ctx;
    atomic_store(&c->waiting, 1);
    while (atomic_load(&c->word) == 0) {
        cio_err err = cio_futex_wait(c->io, &c->word, 0, cio_timeout_ms(10000));
        if (err != CIO_OK)
            return err;
    }
    return CIO_OK;
}

static void *foreign_waker(void *arg)
{
    struct futex_ctx *c = (struct futex_ctx *)arg;
    while (!atomic_load(&c->waiting))
        Sleep(1);
    Sleep(50); /* the fiber is parked and its loop asleep in its port */
    atomic_store(&c->word, 1);
    cio_futex_wake(c->io, &c->word, 1);
    return NULL;
}

/* A plain thread using the instance: its sleep and a timed futex wait (it is adopted as a fiber). */
static void *foreign_user(void *arg)
{
    struct futex_ctx *c = (struct futex_ctx *)arg;
    int64_t t0 = now_ms();
    c->err = cio_sleep(c->io, cio_timeout_ms(30));
    if (c->err == CIO_OK && now_ms() - t0 < 20)
        c->err = CIO_E_UNEXPECTED;
    if (c->err == CIO_OK) {
        _Atomic(uint32_t) w = 5;
        cio_err r = cio_futex_wait(c->io, &w, 5, cio_timeout_ms(30));
        c->err = r == CIO_E_TIMEOUT ? CIO_OK : CIO_E_UNEXPECTED;
    }
    return NULL;
}

static void body_futex(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    for (int round = 0; round < 5; round++) {
        struct futex_ctx c;
        memset(&c, 0, sizeof c);
        c.io = io;
        struct futex_ctx *cp = &c;
        cio_future f;
        assert_ok(cio_concurrent(io, futex_waiter, &cp, sizeof cp, &f));
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, foreign_waker, &c), 0);
        int64_t t0 = now_ms();
        assert_ok(cio_await(io, &f));
        assert_true(now_ms() - t0 < 5000);
        assert_int_equal(pthread_join(t, NULL), 0);
    }
    struct futex_ctx u;
    memset(&u, 0, sizeof u);
    u.io = io;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, foreign_user, &u), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_ok(u.err);
    cio_evented_destroy(e);
}

static void test_iocp_futex(void **state)
{
    (void)state;
    warm();
    run_counted(body_futex, "futex");
}

/* ---- cancel ------------------------------------------------------------------------------------------- */

static cio_err cancel_other(void *ctx)
{
    cio_io io = *(cio_io *)ctx;
    cio_future f;
    cio_err err = cio_concurrent(io, wait_for_cancel, &io, sizeof io, &f);
    if (err != CIO_OK)
        return err;
    (void)cio_sleep(io, cio_timeout_ms(10));
    return cio_cancel(io, &f) == CIO_E_CANCELED ? CIO_OK : CIO_E_UNEXPECTED;
}

static void body_cancel(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    cio_future f;
    assert_ok(cio_concurrent(io, cancel_other, &io, sizeof io, &f));
    assert_ok(cio_await(io, &f));
    for (int i = 0; i < 20; i++) {
        assert_ok(cio_concurrent(io, wait_for_cancel, &io, sizeof io, &f));
        if (i % 2)
            Sleep(5);
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    }
    cio_evented_destroy(e);
}

static void test_iocp_cancel(void **state)
{
    (void)state;
    warm();
    run_counted(body_cancel, "cancel");
}

/* ---- faults ------------------------------------------------------------------------------------------- */

/* create with `site` failing (err as the site reports it, skip calls first): `want`, nothing left. */
static void create_fails(const char *site, int err, const char *fault, int skip, unsigned threads, cio_err want)
{
    int before = handle_count();
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    cio_evented *e = NULL;
    assert_int_equal(cio__fault_errno(site, err, skip, 1), 1);
    assert_err(cio_evented_create(&o, &e), want);
    unsigned injected = cio__fault_injected(site);
    cio__fault_reset();
    assert_int_equal(injected, 1u);
    assert_handles(before, site);
    covered(site, fault);
}

static cio_err sleep_some(void *ctx)
{
    cio_io io = *(cio_io *)ctx;
    return cio_sleep(io, cio_timeout_ms(5));
}

/* The fibers' sites: with no block (no region, no aligned heap block), async runs inline and
 * concurrent is unavailable; the timer heap without memory fires a sleep at once (never lost). */
static void body_faults_tasks(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    assert_int_equal(cio__fault_errno("VirtualAlloc@block_region", ERROR_NOT_ENOUGH_MEMORY, 0, -1), 1);
    assert_int_equal(cio__fault_errno("_aligned_malloc@fiber_alloc", ENOMEM, 0, -1), 1);
    cio_future f;
    assert_err(cio_concurrent(io, sleep_some, &io, sizeof io, &f), CIO_E_CONCURRENCY_UNAVAILABLE);
    f = cio_async(io, sleep_some, &io, sizeof io); /* inline, on this thread */
    assert_ok(cio_await(io, &f));
    unsigned injected = cio__fault_injected("_aligned_malloc@fiber_alloc");
    cio__fault_reset();
    assert_true(injected >= 1);
    covered("_aligned_malloc@fiber_alloc", "ENOMEM");
    assert_ok(cio_concurrent(io, sleep_some, &io, sizeof io, &f));
    assert_ok(cio_await(io, &f));
    /* a group with no memory for its record: its tasks run inline */
    assert_int_equal(cio__fault_errno("calloc@evented_group", ENOMEM, 0, -1), 1);
    cio_group g = CIO_GROUP_INIT;
    _Atomic(int) sum = 0;
    for (int i = 0; i < 4; i++) {
        struct sum_ctx c = {io, &sum, 1};
        cio_group_async(io, &g, add_n, &c, sizeof c);
    }
    assert_ok(cio_group_await(io, &g));
    injected = cio__fault_injected("calloc@evented_group");
    cio__fault_reset();
    assert_int_equal(atomic_load(&sum), 4);
    assert_true(injected >= 1);
    covered("calloc@evented_group", "ENOMEM");
    /* the timer heap cannot grow: many sleepers at once (past its first capacity), each ends */
    assert_int_equal(cio__fault_errno("realloc@timer_heap", ENOMEM, 0, -1), 1);
    enum { N = 200 };
    static cio_future fs[N];
    int64_t t0 = now_ms();
    for (int i = 0; i < N; i++) {
        struct order_ctx c;
        static int slots[N];
        static _Atomic(int) next;
        c.io = io;
        c.ms = 200 + (N - i) * 10; /* decreasing: the heap, not the in-order FIFO */
        c.next = &next;
        c.slot = &slots[i];
        assert_ok(cio_concurrent(io, sleep_then_record, &c, sizeof c, &fs[i]));
    }
    for (int i = 0; i < N; i++)
        assert_ok(cio_await(io, &fs[i]));
    int64_t took = now_ms() - t0;
    injected = cio__fault_injected("realloc@timer_heap");
    cio__fault_reset();
    if (injected == 0)
        fail_msg("realloc@timer_heap: never reached");
    if (took > 2200 + 1000)
        fail_msg("realloc@timer_heap: the sleepers took %lld ms: lost, not fired", (long long)took);
    covered("realloc@timer_heap", "ENOMEM");
    /* the loops' clock failing: the Threaded clock answers instead */
    assert_int_equal(cio__fault_errno("clock_gettime@evented_now", EINVAL, 0, 50), 1);
    assert_ok(cio_concurrent(io, timed_sleep, &io, sizeof io, &f));
    assert_ok(cio_await(io, &f));
    injected = cio__fault_injected("clock_gettime@evented_now");
    cio__fault_reset();
    assert_true(injected >= 1);
    covered("clock_gettime@evented_now", "EINVAL");
    cio_evented_destroy(e);
}

static void test_iocp_faults_tasks(void **state)
{
    (void)state;
    warm();
    run_counted(body_faults_tasks, "fault tasks");
}

static void *adopted_sleep(void *arg)
{
    struct futex_ctx *c = (struct futex_ctx *)arg;
    c->err = cio_sleep(c->io, cio_timeout_ms(5));
    return NULL;
}

static void run_foreign(cio_io io)
{
    struct futex_ctx c;
    memset(&c, 0, sizeof c);
    c.io = io;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, adopted_sleep, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_ok(c.err);
}

static void body_faults_adopt(void)
{
    static const char *const sites[] = {"calloc@adopt_loop", "calloc@adopt_fiber"};
    for (size_t i = 0; i < 2; i++) {
        cio_evented *e = make(2);
        assert_int_equal(cio__fault_errno(sites[i], ENOMEM, 0, -1), 1);
        run_foreign(cio_evented_io(e)); /* not adopted: a foreign thread, its sleep still works */
        unsigned injected = cio__fault_injected(sites[i]);
        cio__fault_reset();
        assert_true(injected >= 1);
        covered(sites[i], "ENOMEM");
        run_foreign(cio_evented_io(e));
        cio_evented_destroy(e);
    }
    /* an adopted thread's port cannot be made: it too works as a foreign thread */
    cio_evented *e = make(1);
    assert_int_equal(cio__fault_errno("CreateIoCompletionPort@iocp_init", ERROR_NOT_ENOUGH_MEMORY, 0, -1), 1);
    run_foreign(cio_evented_io(e));
    unsigned injected = cio__fault_injected("CreateIoCompletionPort@iocp_init");
    cio__fault_reset();
    assert_true(injected >= 1);
    cio_evented_destroy(e);
}

static void test_iocp_faults_adopt(void **state)
{
    (void)state;
    warm();
    run_counted(body_faults_adopt, "fault adopt");
}

static void test_iocp_faults_create(void **state)
{
    (void)state;
    warm();
    create_fails("calloc@evented_create", ENOMEM, "ENOMEM", 0, 2, CIO_E_SYSTEM_RESOURCES);
    create_fails("calloc@evented_loops", ENOMEM, "ENOMEM", 0, 2, CIO_E_SYSTEM_RESOURCES);
    create_fails("pthread_create@loop_start", EAGAIN, "EAGAIN", 0, 3, CIO_E_SYSTEM_RESOURCES);
    create_fails("pthread_create@loop_start", EAGAIN, "EAGAIN-third-loop", 2, 3, CIO_E_SYSTEM_RESOURCES);
    /* the first port, then the third of four: the ports made are closed again */
    create_fails("CreateIoCompletionPort@iocp_init", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", 0, 4,
                 CIO_E_SYSTEM_RESOURCES);
    create_fails("CreateIoCompletionPort@iocp_init", ERROR_NO_SYSTEM_RESOURCES, "ERROR_NO_SYSTEM_RESOURCES", 2, 4,
                 CIO_E_SYSTEM_RESOURCES);
    /* closing a port fails (the injector closes it first: spec `after`): ignored, nothing left */
    int before = handle_count();
    cio_evented *e = make(2);
    assert_int_equal(cio__fault_errno("CloseHandle@iocp_deinit", ERROR_INVALID_HANDLE, 0, -1), 1);
    cio_evented_destroy(e);
    unsigned injected = cio__fault_injected("CloseHandle@iocp_deinit");
    cio__fault_reset();
    assert_int_equal(injected, 2u);
    assert_handles(before, "CloseHandle@iocp_deinit");
    covered("CloseHandle@iocp_deinit", "ERROR_INVALID_HANDLE");
}

/* The wait and the wake-up failing: a failed wait is a round with nothing (the loop goes on, timers
 * fire); a failed post is retried, so the sleeping loop still wakes. */
static void body_faults_wait_wake(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    assert_int_equal(cio__fault_errno("GetQueuedCompletionStatusEx@iocp_wait", ERROR_NOT_ENOUGH_MEMORY, 0, 5), 1);
    cio_future f;
    assert_ok(cio_concurrent(io, timed_sleep, &io, sizeof io, &f));
    assert_ok(cio_await(io, &f));
    for (int i = 0; i < 100 && cio__fault_injected("GetQueuedCompletionStatusEx@iocp_wait") < 5; i++)
        Sleep(5);
    unsigned injected = cio__fault_injected("GetQueuedCompletionStatusEx@iocp_wait");
    cio__fault_reset();
    assert_int_equal(injected, 5u);
    covered("GetQueuedCompletionStatusEx@iocp_wait", "ERROR_NOT_ENOUGH_MEMORY");
    /* the post fails three times: the waker retries and the fiber is woken */
    for (int round = 0; round < 5; round++) {
        struct futex_ctx c;
        memset(&c, 0, sizeof c);
        c.io = io;
        struct futex_ctx *cp = &c;
        assert_ok(cio_concurrent(io, futex_waiter, &cp, sizeof cp, &f));
        while (!atomic_load(&c.waiting))
            Sleep(1);
        Sleep(30); /* the loop sleeps in its port */
        assert_int_equal(cio__fault_errno("PostQueuedCompletionStatus@iocp_wake", ERROR_NO_SYSTEM_RESOURCES, 0, 3), 1);
        atomic_store(&c.word, 1);
        cio_futex_wake(io, &c.word, 1);
        int64_t t0 = now_ms();
        assert_ok(cio_await(io, &f));
        assert_true(now_ms() - t0 < 5000);
        injected = cio__fault_injected("PostQueuedCompletionStatus@iocp_wake");
        cio__fault_reset();
        if (injected == 3)
            break;
        if (round == 4)
            fail_msg("PostQueuedCompletionStatus@iocp_wake: %u of 3 failures injected", injected);
    }
    covered("PostQueuedCompletionStatus@iocp_wake", "ERROR_NO_SYSTEM_RESOURCES");
    cio_evented_destroy(e);
}

static void test_iocp_faults_wait_wake(void **state)
{
    (void)state;
    warm();
    run_counted(body_faults_wait_wake, "fault wait/wake");
}

/* The adoption key: made once per process, so this case runs in a fresh process (the program runs
 * itself with KEY_ARG): with no key, a plain thread is not adopted and works as a foreign thread. */
#define KEY_ARG "--adopt-key-fails"

static int adopt_key_child(void)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    cio_evented *e = NULL;
    if (cio_evented_create(&o, &e) != CIO_OK)
        return 2;
    if (cio__fault_errno("pthread_key_create@adopt_key", EAGAIN, 0, -1) != 1)
        return 3;
    struct futex_ctx c;
    memset(&c, 0, sizeof c);
    c.io = cio_evented_io(e);
    pthread_t t;
    if (pthread_create(&t, NULL, adopted_sleep, &c) != 0 || pthread_join(t, NULL) != 0)
        return 4;
    unsigned injected = cio__fault_injected("pthread_key_create@adopt_key");
    cio__fault_reset();
    cio_evented_destroy(e);
    if (c.err != CIO_OK)
        return 5;
    return injected == 1 ? 0 : 6;
}

static void test_iocp_faults_adopt_key(void **state)
{
    (void)state;
    char self[MAX_PATH];
    DWORD n = GetModuleFileNameA(NULL, self, sizeof self);
    assert_true(n > 0 && n < sizeof self);
    char cmd[MAX_PATH + 64];
    snprintf(cmd, sizeof cmd, "\"%s\" %s", self, KEY_ARG);
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    PROCESS_INFORMATION pi;
    assert_true(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi));
    assert_int_equal(WaitForSingleObject(pi.hProcess, 60000), WAIT_OBJECT_0);
    DWORD code = 99;
    assert_true(GetExitCodeProcess(pi.hProcess, &code));
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    if (code != 0)
        fail_msg("pthread_key_create@adopt_key: the child process said %lu", (unsigned long)code);
    covered("pthread_key_create@adopt_key", "EAGAIN");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], KEY_ARG) == 0)
        return adopt_key_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iocp_create_destroy),
        cmocka_unit_test(test_iocp_tasks),
        cmocka_unit_test(test_iocp_sleep),
        cmocka_unit_test(test_iocp_futex),
        cmocka_unit_test(test_iocp_cancel),
        cmocka_unit_test(test_iocp_faults_create),
        cmocka_unit_test(test_iocp_faults_tasks),
        cmocka_unit_test(test_iocp_faults_adopt),
        cmocka_unit_test(test_iocp_faults_wait_wake),
        cmocka_unit_test(test_iocp_faults_adopt_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
