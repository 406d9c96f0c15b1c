/*
 * cio_signal_wait (issue 25) on every backend: a real kill(getpid(), ...) wakes a waiter; a waiter
 * is canceled promptly (measured); each delivery wakes exactly one waiter of its signal; waiters of
 * different signals each get theirs; a delivery with no waiter is kept for the next wait. Windows:
 * a console control event from GenerateConsoleCtrlEvent (skipped, saying why, when the console
 * cannot deliver one). WASI: OperationUnsupported.
 *
 * The handler cio installs stays for the whole process, so the tests share it: each one leaves no
 * delivery pending behind it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>

#include "asserts.h"
#include "backends.h"
#if defined(CIO_OS_WINDOWS)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <unistd.h>
#endif

struct waiter {
    cio_io io;
    cio_sigset set;
    _Atomic(int) *count; /* incremented when the wait returned a signal */
    _Atomic(int) *got;   /* the signal it returned */
};

static cio_err wait_task(void *p)
{
    struct waiter *w = (struct waiter *)p;
    cio_sig sig;
    cio_err err = cio_signal_wait(w->io, &w->set, &sig);
    if (err == CIO_OK) {
        atomic_store(w->got, (int)sig);
        atomic_fetch_add(w->count, 1);
    }
    return err;
}

static cio_sigset set_of(cio_sig a, cio_sig b)
{
    cio_sigset s;
    cio_sigset_empty(&s);
    assert_ok(cio_sigset_add(&s, a));
    assert_ok(cio_sigset_add(&s, b));
    return s;
}

static int64_t ms_since(cio_io io, cio_timestamp t0)
{
    return (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
}

/* Waits (up to 10 s) until *count reaches n; returns how long it took in ms. */
static int64_t wait_count(cio_io io, _Atomic(int) *count, int n)
{
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    while (atomic_load(count) < n && ms_since(io, t0) < 10000)
        assert_ok(cio_sleep(io, cio_timeout_ms(2)));
    assert_int_equal(atomic_load(count), n);
    return ms_since(io, t0);
}

static void test_errors(void **state)
{
    cio_io io = cio_test_io(state);
    cio_sigset empty;
    cio_sigset_empty(&empty);
    cio_sig sig;
    assert_err(cio_signal_wait(io, NULL, &sig), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_signal_wait(io, &empty, NULL), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_signal_wait(io, &empty, &sig), CIO_E_INVALID_ARGUMENT);
#if defined(CIO_OS_WASI)
    cio_sigset s = set_of(CIO_SIG_INT, CIO_SIG_TERM);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_OPERATION_UNSUPPORTED);
#elif defined(CIO_OS_WINDOWS)
    cio_sigset s = set_of(CIO_SIG_INT, CIO_SIG_SEGV); /* SEGV: no console event is one */
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_INVALID_SIGNAL);
#else
    cio_sigset s = set_of(CIO_SIG_TERM, CIO_SIG_KILL);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_INVALID_SIGNAL);
    s = set_of(CIO_SIG_STOP, CIO_SIG_STOP);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_INVALID_SIGNAL);
#endif
    cio_io failing = cio_failing_io();
    s = set_of(CIO_SIG_INT, CIO_SIG_INT);
    assert_err(cio_signal_wait(failing, &s, &sig), CIO_E_OPERATION_UNSUPPORTED);
}

#if defined(CIO_OS_WASI) || defined(CIO_OS_WINDOWS)
#define NEED_KILL() CIO_SKIP("no kill(2) here: signals to the process come from console events (Windows) or not at all (WASI)")
#else
#define NEED_KILL() (void)0
/* Waits until cio's handler is installed for sig (its disposition is no longer the default one), so
 * that a kill cannot take the default action while the waiter task is still starting. */
static void await_installed(cio_io io, cio_sig sig)
{
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    for (;;) {
        struct cio_sigaction old;
        assert_ok(cio_sigaction(sig, NULL, &old));
        if (old.handler != CIO_SIG_HANDLER_DEFAULT)
            return;
        assert_true(ms_since(io, t0) < 10000);
        assert_ok(cio_sleep(io, cio_timeout_ms(1)));
    }
}
#endif

/* kill(getpid(), SIGTERM) wakes a waiter blocked in the wait. */
static void test_returns_on_sigterm(void **state)
{
    cio_io io = cio_test_io(state);
    NEED_KILL();
#if !defined(CIO_OS_WASI) && !defined(CIO_OS_WINDOWS)
    _Atomic(int) count = 0, got = 0;
    struct waiter w = {io, set_of(CIO_SIG_TERM, CIO_SIG_TERM), &count, &got};
    cio_future f = {NULL, CIO_OK, 0};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w, sizeof w, &f));
    await_installed(io, CIO_SIG_TERM);
    assert_ok(cio_sleep(io, cio_timeout_ms(20))); /* the waiter is asleep in its poll/poller */
    assert_int_equal(atomic_load(&count), 0);
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_TERM));
    assert_ok(cio_await(io, &f));
    print_message("      kill(getpid(), SIGTERM) -> wait returned in %lld ms\n", (long long)ms_since(io, t0));
    assert_int_equal(atomic_load(&got), CIO_SIG_TERM);
#endif
}

/* A waiter nothing signals is canceled promptly, and nothing is left pending. */
static void test_cancel_prompt(void **state)
{
    cio_io io = cio_test_io(state);
#if defined(CIO_OS_WASI)
    CIO_SKIP("WASI: cio_signal_wait is OperationUnsupported (test_errors)");
#else
    _Atomic(int) count = 0, got = 0;
    struct waiter w = {io, set_of(CIO_SIG_INT, CIO_SIG_TERM), &count, &got};
    cio_future f = {NULL, CIO_OK, 0};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w, sizeof w, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    int64_t ms = ms_since(io, t0);
    print_message("      canceled in %lld ms\n", (long long)ms);
    assert_true(ms < 1000);
    assert_int_equal(atomic_load(&count), 0);
#endif
}

/* Three waiters of one signal: each delivery wakes exactly one of them. */
static void test_one_delivery_one_waiter(void **state)
{
    cio_io io = cio_test_io(state);
    NEED_KILL();
#if !defined(CIO_OS_WASI) && !defined(CIO_OS_WINDOWS)
    enum { N = 3 };
    _Atomic(int) count = 0, got = 0;
    struct waiter w = {io, set_of(CIO_SIG_USR1, CIO_SIG_USR1), &count, &got};
    cio_future f[N];
    for (int i = 0; i < N; i++) {
        f[i] = (cio_future){NULL, CIO_OK, 0};
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w, sizeof w, &f[i]));
    }
    await_installed(io, CIO_SIG_USR1);
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
    for (int k = 1; k <= N; k++) {
        assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR1));
        (void)wait_count(io, &count, k);
        assert_ok(cio_sleep(io, cio_timeout_ms(50))); /* no second waiter wakes for it */
        assert_int_equal(atomic_load(&count), k);
        assert_int_equal(atomic_load(&got), CIO_SIG_USR1);
    }
    for (int i = 0; i < N; i++)
        assert_ok(cio_await(io, &f[i]));
#endif
}

/* Waiters of different signals each get theirs; a waiter of both gets the one left. */
static void test_several_signals(void **state)
{
    cio_io io = cio_test_io(state);
    NEED_KILL();
#if !defined(CIO_OS_WASI) && !defined(CIO_OS_WINDOWS)
    _Atomic(int) c1 = 0, g1 = 0, c2 = 0, g2 = 0;
    struct waiter w1 = {io, set_of(CIO_SIG_USR1, CIO_SIG_USR1), &c1, &g1};
    struct waiter w2 = {io, set_of(CIO_SIG_USR2, CIO_SIG_USR2), &c2, &g2};
    cio_future f1 = {NULL, CIO_OK, 0}, f2 = {NULL, CIO_OK, 0};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w1, sizeof w1, &f1));
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w2, sizeof w2, &f2));
    await_installed(io, CIO_SIG_USR1);
    await_installed(io, CIO_SIG_USR2);
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR2));
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR1));
    assert_ok(cio_await(io, &f1));
    assert_ok(cio_await(io, &f2));
    assert_int_equal(atomic_load(&g1), CIO_SIG_USR1);
    assert_int_equal(atomic_load(&g2), CIO_SIG_USR2);
    /* both pending at once, one waiter of both: it gets one, the next wait the other */
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR2));
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR1));
    cio_sigset both = set_of(CIO_SIG_USR1, CIO_SIG_USR2);
    cio_sig a, b;
    assert_ok(cio_signal_wait(io, &both, &a));
    assert_ok(cio_signal_wait(io, &both, &b));
    assert_true((a == CIO_SIG_USR1 && b == CIO_SIG_USR2) || (a == CIO_SIG_USR2 && b == CIO_SIG_USR1));
#endif
}

/* A delivery while nobody waits is kept (coalesced) for the next wait, which returns at once. */
static void test_kept_pending(void **state)
{
    cio_io io = cio_test_io(state);
    NEED_KILL();
#if !defined(CIO_OS_WASI) && !defined(CIO_OS_WINDOWS)
    cio_sigset s = set_of(CIO_SIG_HUP, CIO_SIG_HUP);
    /* install: a first wait, canceled before anything comes */
    _Atomic(int) count = 0, got = 0;
    struct waiter w = {io, s, &count, &got};
    cio_future f = {NULL, CIO_OK, 0};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w, sizeof w, &f));
    await_installed(io, CIO_SIG_HUP);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_HUP));
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_HUP));
    cio_sig sig;
    assert_ok(cio_signal_wait(io, &s, &sig));
    assert_int_equal(sig, CIO_SIG_HUP);
    /* the two coalesced: nothing more is pending (a second wait would block: cancel it) */
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w, sizeof w, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_int_equal(atomic_load(&count), 0);
#endif
}

/* Windows: a console control event (Ctrl-Break) raised with GenerateConsoleCtrlEvent. */
static void test_console_event(void **state)
{
    cio_io io = cio_test_io(state);
#if !defined(CIO_OS_WINDOWS)
    (void)io;
    CIO_SKIP("console control events are Windows' (POSIX: test_returns_on_sigterm)");
#else
    _Atomic(int) count = 0, got = 0;
    struct waiter w = {io, set_of(CIO_SIG_BREAK, CIO_SIG_INT), &count, &got};
    cio_future f = {NULL, CIO_OK, 0};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_task, &w, sizeof w, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(100))); /* the handler is registered */
    if (!GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, 0)) {
        DWORD e = GetLastError();
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
        char why[160];
        snprintf(why, sizeof why, "GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, 0) failed with error %lu "
                 "(no console to raise the event on: Wine without a console)", (unsigned long)e);
        CIO_SKIP(why);
    }
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    while (atomic_load(&count) == 0 && ms_since(io, t0) < 3000)
        assert_ok(cio_sleep(io, cio_timeout_ms(5)));
    if (atomic_load(&count) == 0) {
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
        CIO_SKIP("GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, 0) succeeded but no control handler ran "
                 "within 3 s (the console does not deliver events to this process)");
    }
    assert_ok(cio_await(io, &f));
    assert_int_equal(atomic_load(&got), CIO_SIG_BREAK);
    print_message("      Ctrl-Break -> wait returned in %lld ms\n", (long long)ms_since(io, t0));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_errors),
        CIO_TESTS(test_returns_on_sigterm),
        CIO_TESTS(test_cancel_prompt),
        CIO_TESTS(test_one_delivery_one_waiter),
        CIO_TESTS(test_several_signals),
        CIO_TESTS(test_kept_pending),
        CIO_TESTS(test_console_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
