/*
 * Fault injection through the OS call table, Linux tasks half (the rest is tests/test_faults.c,
 * whose top comment explains the method, and tests/test_faults_os.c for sockets): futexes, the
 * worker pool (no memory for a task, no thread, no group record, a failing clock or signal mask in
 * a worker, a cancel signal that cannot be sent), cio_threaded_create's own calls, the stack
 * overflow handler's calls, and the cio_sig_* calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "death.h"

#if !defined(CIO_OS_WINDOWS) /* POSIX sites only; Windows': tests/test_faults_windows.c */
/* ---- futexes ----------------------------------------------------------------------------------------- */

static void test_futex(void **state)
{
    cio_io io = cio_test_io(state);
    if (fx_backend_of(state) != FX_THREADED)
        CIO_SKIP("the OS futex sites: on Evented the test's thread is a fiber of the instance and waits on "
                 "the loop's futex table, no system call (test_sync covers those waits)");
    cio__fault_reset();
    _Atomic(uint32_t) word = 0;
    /* a timed wait interrupted 20 times still times out at its deadline */
    assert_true(cio__fault_errno("futex@futex_wait", EINTR, 0, 20) == 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_futex_wait(io, &word, 0, cio_timeout_ms(30)), CIO_E_TIMEOUT);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
    cio__sys_reset();
    assert_true(ms >= 29 && ms < 5000);
    covered("futex@futex_wait", "EINTR");
    /* EAGAIN: the value already differed: a (spurious) wake-up, never an error */
    assert_true(cio__fault_errno("futex@futex_wait", EAGAIN, 0, 1) == 1);
    if (fx_backend_of(state) == FX_THREADED) {
        assert_ok(cio_futex_wait(io, &word, 0, CIO_TIMEOUT_NONE));
    } else {
        /* Evented parks a foreign thread on its own wait record: the spurious OS wake-up is absorbed
         * there (the caller may or may not see it); the deadline still holds */
        cio_err err = cio_futex_wait(io, &word, 0, cio_timeout_ms(50));
        if (err != CIO_OK && err != CIO_E_TIMEOUT)
            fail_msg("futex wait after EAGAIN: got %s, want Ok or Timeout", cio_err_name(err));
    }
    cio__sys_reset();
    covered("futex@futex_wait", "EAGAIN");
    /* a failing wake is ignored (there is nothing a waker could do); Evented makes the OS wake only
     * for a parked foreign thread (none here) */
    if (fx_backend_of(state) != FX_THREADED)
        return;
    assert_true(cio__fault_errno("futex@futex_wake", EFAULT, 0, 1) == 1);
    cio_futex_wake(io, &word, 1);
    cio__sys_reset();
    covered("futex@futex_wake", "EFAULT");
}

/* ---- tasks: ENOMEM and no threads ---------------------------------------------------------------- */

/* With `site` failing every time: async still runs the task (inline) with the right result,
 * concurrent is CIO_E_CONCURRENCY_UNAVAILABLE, group_async runs inline, group_concurrent is
 * unavailable. No thread or descriptor is left behind. */
static void tasks_degrade(void **state, const char *site, int err, const char *fault)
{
    if (fx_backend_of(state) != FX_THREADED) { /* Evented: the fiber's block, its stack */
        if (strcmp(site, "posix_memalign@task_alloc") == 0)
            site = "posix_memalign@fiber_alloc";
        else if (strstr(site, "@enqueue") != NULL) {
            (void)cio_test_io(state);
            CIO_SKIP("Evented starts no thread per task (its loop threads: test_evented_create_faults)");
        }
    }
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    cio_threaded *t = cio_test_threaded(state);
    int fds = fd_count(), threads = thread_count();
    if (fx_backend_of(state) != FX_THREADED && strcmp(site, "posix_memalign@fiber_alloc") == 0)
        assert_true(cio__fault_errno("mmap@block_region", ENOMEM, 0, -1) == 1); /* no region for blocks either */
    assert_true(cio__fault_errno(site, err, 0, -1) >= 1);
    tasks_run_inline(io);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (injected == 0)
        fail_msg("%s: never reached", site);
    (void)t;
    assert_int_equal(fd_count(), fds);
    /* none left behind; fewer is a thread of an earlier test ending meanwhile (seen under qemu) */
    int now = thread_count();
    if (now > threads)
        fail_msg("%s: %d threads after, %d before", site, now, threads);
    covered(site, fault);
}

static void test_task_allocation_fails(void **state)
{
    tasks_degrade(state, "posix_memalign@task_alloc", ENOMEM, "ENOMEM");
}

static void test_thread_creation_fails(void **state)
{
    tasks_degrade(state, "pthread_create@enqueue", EAGAIN, "EAGAIN");
}

static void test_thread_attr_fails(void **state)
{
    tasks_degrade(state, "pthread_attr_init@enqueue", ENOMEM, "ENOMEM");
}

static void test_group_record_fails(void **state)
{
    group_record_fails(state); /* faults.h: shared with test_faults_windows_os.c */
}

/* A pool whose worker cannot read the clock for its idle deadline: the worker retires at once
 * instead of waiting; every task still completes. */
static void test_worker_clock_fails(void **state)
{
    FX_THREADED_POOL_ONLY(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    assert_true(cio__fault_errno("clock_gettime@worker_idle", EINVAL, 0, -1) == 1);
    for (int i = 0; i < 5; i++) {
        CIO_REQUIRE_CONCURRENT(concurrent_sum(io));
    }
    /* let the workers reach their idle wait (and fail the clock) */
    for (int i = 0; i < 200 && cio__fault_injected("clock_gettime@worker_idle") == 0; i++)
        (void)cio_sleep(io, cio_timeout_ms(5));
    cio__sys_reset();
    covered("clock_gettime@worker_idle", "EINVAL");
}

/* The clock of the bounded yield (idle workers and awaiters spin briefly before they sleep) fails:
 * nobody yields, everyone sleeps at once; every task still completes and every await returns. */
static void test_yield_clock_fails(void **state)
{
    FX_THREADED_POOL_ONLY(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    assert_true(cio__fault_errno("clock_gettime@yield_clock", EINVAL, 0, -1) == 1);
    for (int i = 0; i < 20; i++) {
        CIO_REQUIRE_CONCURRENT(concurrent_sum(io));
    }
    cio__sys_reset();
    covered("clock_gettime@yield_clock", "EINVAL");
}

/* The cancel signal fails to be sent a few times: the canceler's backoff signals again. */
static cio_err long_sleep_task(void *p)
{
    cio_io io = *(cio_io *)p;
    return cio_sleep(io, cio_timeout_ms(60000));
}

static void test_cancel_signal_fails(void **state)
{
    FX_THREADED_POOL_ONLY(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, long_sleep_task, &io, sizeof io, &f));
    (void)cio_sleep(io, cio_timeout_ms(20)); /* into its clock_nanosleep */
    assert_true(cio__fault_errno("tgkill@kick", ESRCH, 0, 3) == 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_true((cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000 < 5000);
    cio__sys_reset();
    covered("tgkill@kick", "ESRCH");
}

/* The worker's signal mask cannot be changed: the task still runs (its cancel signal may stay
 * blocked; nothing else depends on it). */
static void test_worker_sigmask_fails(void **state)
{
    FX_THREADED_POOL_ONLY(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    assert_true(cio__fault_errno("pthread_sigmask@signals_unblock", EINVAL, 0, -1) == 1);
    CIO_REQUIRE_CONCURRENT(concurrent_sum(io));
    cio__sys_reset();
    covered("pthread_sigmask@signals_unblock", "EINVAL");
}

/* cio_threaded_create on its own (no other instance alive, so the signal handlers are installed
 * here): no memory, no signal handler, no sysconf answers. */
static void test_threaded_create_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    int fds = fd_count();
    threaded_create_without_memory();
    cio_threaded *t = NULL;
    cio__fault_reset();
    assert_true(cio__fault_errno("sigaction@signals_acquire", EINVAL, 0, 1) == 1);
    assert_err(cio_threaded_create(NULL, &t), CIO_E_UNEXPECTED);
    covered("sigaction@signals_acquire", "EINVAL");
    cio__fault_reset();
    /* no affinity mask and sysconf without answers: one CPU assumed, a 4096-byte page; the pool works */
    assert_true(cio__fault_errno("sched_getaffinity", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("sysconf@cpu_count", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("sysconf@page_size", EINVAL, 0, -1) == 1);
    assert_ok(cio_threaded_create(NULL, &t));
    cio__sys_reset();
    cio_io io = cio_threaded_io(t);
    assert_ok(concurrent_sum(io));
    covered("sched_getaffinity@cpu_count", "EINVAL");
    covered("sysconf@cpu_count", "EINVAL");
    covered("sysconf@page_size", "EINVAL");
    /* restoring the handlers fails: ignored, destroy completes */
    assert_true(cio__fault_errno("sigaction@signals_release", EINVAL, 0, -1) == 1);
    cio_threaded_destroy(t);
    cio__sys_reset();
    covered("sigaction@signals_release", "EINVAL");
    cio__fault_reset();
    assert_int_equal(fd_count(), fds);
}

/* The stack-overflow handler (src/core/overflow_posix.c). Its installation refused: the instance is
 * made and works (an overflow would stay a bare SIGSEGV). A worker's alternate signal stack that
 * cannot be had (no answer to the query, no memory, refused) or removed: tasks run all the same. */
static void threaded_round(void)
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    assert_ok(concurrent_sum(cio_threaded_io(t)));
    cio_threaded_destroy(t); /* its workers leave: cio__overflow_thread_end */
}

static void test_overflow_handler_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    assert_true(cio__fault_errno("sigaction@overflow_query", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("sigaction@overflow_install", EINVAL, 0, -1) == 1);
    threaded_round();
    covered("sigaction@overflow_query", "EINVAL");
    covered("sigaction@overflow_install", "EINVAL");
    cio__fault_reset();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    print_message("      note: a sanitizer gives every thread an alternate signal stack of its own: "
                  "the altstack sites are not reached here\n");
#else
    static const char *const sites[] = {"sigaltstack@overflow_query", "mmap@overflow_altstack",
                                        "sigaltstack@overflow_altstack", "munmap@overflow_altstack"};
    for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++) {
        assert_true(cio__fault_errno(sites[i], i == 1 ? ENOMEM : EINVAL, 0, i == 3 ? 1 : -1) == 1);
        threaded_round(); /* munmap refused (once): that stack stays mapped */
        covered(sites[i], i == 1 ? "ENOMEM" : "EINVAL");
        cio__fault_reset();
    }
    assert_true(cio__fault_errno("sigaltstack@overflow_altstack_off", EPERM, 0, 1) == 1);
    threaded_round(); /* the stack is kept (stranded), not freed under the kernel's feet */
    covered("sigaltstack@overflow_altstack_off", "EPERM");
    cio__fault_reset();
#endif
}

/* A fault outside every task's stack with the default action before cio's handler: the handler puts
 * the default back and the fault ends the process as it would have; when putting it back fails, it
 * aborts saying so instead of faulting for ever (in a child process). */
static void die_pass_on_refused(cio_io io, void *s)
{
    (void)io;
    (void)s;
    signal(SIGSEGV, SIG_DFL); /* cmocka's handler out: the default is what cio's passes on to */
    cio_threaded *t = NULL;
    if (cio_threaded_create(NULL, &t) != CIO_OK)
        _exit(2);
    cio__fault_reset();
    (void)cio__fault_errno("sigaction@overflow_pass_on", EINVAL, 0, -1);
    raise(SIGSEGV);
}

static void test_overflow_pass_on_fault(void **state)
{
    (void)state;
    static const cio_death_case c = {"overflow_pass_on", NULL, die_pass_on_refused};
    cio_death_run(cio_failing_io(), &c, "its default action could not be restored");
    print_message("fault-covered: %s %s\n", "sigaction@overflow_pass_on", "EINVAL"); /* injected in the child */
}

/* cio_sig_*: the OS refusing is the mapped error */
static void test_signal_calls_fail(void **state)
{
    (void)state;
    cio__fault_reset();
    struct cio_sigaction act;
    memset(&act, 0, sizeof act);
    act.handler = CIO_SIG_HANDLER_IGNORE;
    assert_true(cio__fault_errno("sigaction@sig_action", EINVAL, 0, 1) == 1);
    assert_err(cio_sigaction(CIO_SIG_USR2, &act, NULL), CIO_E_INVALID_SIGNAL);
    covered("sigaction@sig_action", "EINVAL");
    assert_true(cio__fault_errno("raise@sig_raise", EINVAL, 0, 1) == 1);
    assert_err(cio_sig_raise(CIO_SIG_USR2), CIO_E_UNEXPECTED);
    covered("raise@sig_raise", "EINVAL");
    assert_true(cio__fault_errno("kill@sig_kill", EPERM, 0, 1) == 1);
    assert_err(cio_sig_kill((long)getpid(), CIO_SIG_USR2), CIO_E_PERMISSION_DENIED);
    covered("kill@sig_kill", "EPERM");
    assert_true(cio__fault_errno("pthread_sigmask@sig_mask", EINVAL, 0, 1) == 1);
    cio_sigset set;
    cio_sigset_empty(&set);
    assert_err(cio_sig_mask(CIO_SIG_BLOCK, &set, NULL), CIO_E_UNEXPECTED);
    covered("pthread_sigmask@sig_mask", "EINVAL");
    cio__fault_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_futex),
        CIO_TESTS(test_task_allocation_fails),
        CIO_TESTS(test_thread_creation_fails),
        CIO_TESTS(test_thread_attr_fails),
        CIO_TESTS(test_group_record_fails),
        CIO_TESTS(test_worker_clock_fails),
        CIO_TESTS(test_yield_clock_fails),
        CIO_TESTS(test_cancel_signal_fails),
        CIO_TESTS(test_worker_sigmask_fails),
        cmocka_unit_test(test_signal_calls_fail),
        cmocka_unit_test(test_threaded_create_faults),
        cmocka_unit_test(test_overflow_handler_faults),
        cmocka_unit_test(test_overflow_pass_on_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_POSIX_ONLY(test_futex),
        CIO_POSIX_ONLY(test_task_allocation_fails),
        CIO_POSIX_ONLY(test_thread_creation_fails),
        CIO_POSIX_ONLY(test_thread_attr_fails),
        CIO_POSIX_ONLY(test_group_record_fails),
        CIO_POSIX_ONLY(test_worker_clock_fails),
        CIO_POSIX_ONLY(test_yield_clock_fails),
        CIO_POSIX_ONLY(test_cancel_signal_fails),
        CIO_POSIX_ONLY(test_worker_sigmask_fails),
        CIO_POSIX_ONLY(test_signal_calls_fail),
        CIO_POSIX_ONLY(test_threaded_create_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
