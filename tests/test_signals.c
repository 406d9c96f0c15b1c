/*
 * Signals typed by cio_sig: names and numbers of this target, cio_sigset, handlers that receive the
 * cio_sig, raise/kill/mask. Runs on every target with the same expectations, adjusted only where the
 * target's numbers or abilities differ (Windows has the CRT subset and no kill or masks; WASI has
 * raise and handlers through wasi-libc's emulation, no kill and no masks: those tests skip).
 */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cio.h"

#if defined(CIO_OS_WINDOWS)
#include <windows.h>
#define OWN_PID ((long)GetCurrentProcessId())
#define TEST_SIG CIO_SIG_INT
#elif defined(CIO_OS_WASI)
#define OWN_PID 1L /* no processes to signal: cio_sig_kill is OperationUnsupported */
#define TEST_SIG CIO_SIG_USR1
#else
#include <time.h>
#include <unistd.h>
#define OWN_PID ((long)getpid())
#define TEST_SIG CIO_SIG_USR1
#endif

static volatile sig_atomic_t received;
static volatile sig_atomic_t calls;

static void on_signal(cio_sig sig)
{
    received = (sig_atomic_t)sig;
    calls++;
}

static void install(cio_sig sig)
{
    struct cio_sigaction act;
    memset(&act, 0, sizeof act);
    act.handler = on_signal;
    cio_sigset_empty(&act.mask);
    assert_int_equal(cio_sigaction(sig, &act, NULL), CIO_OK);
    received = 0;
    calls = 0;
}

static void restore_default(cio_sig sig)
{
    struct cio_sigaction act;
    memset(&act, 0, sizeof act);
    act.handler = CIO_SIG_HANDLER_DEFAULT;
    assert_int_equal(cio_sigaction(sig, &act, NULL), CIO_OK);
}

static void test_numbers_of_this_target(void **state)
{
    (void)state;
    assert_int_equal(CIO_SIG_INT, 2);
#if defined(CIO__FLAVOUR_LINUX_MIPS)
    assert_int_equal(CIO_SIG_USR1, 16);
    assert_int_equal(CIO_SIG_BLOCK, 1);
#elif defined(CIO__FLAVOUR_LINUX)
    assert_int_equal(CIO_SIG_USR1, 10);
    assert_int_equal(CIO_SIG_BLOCK, 0);
#elif defined(CIO__FLAVOUR_WASI)
    assert_int_equal(CIO_SIG_USR1, 10);
#elif defined(CIO_OS_WINDOWS)
    assert_int_equal(CIO_SIG_ABRT, 22);
    assert_int_equal(CIO_SIG_ABRT_COMPAT, 6);
    assert_int_equal(CIO_SIG_BREAK, 21);
#endif
    assert_string_equal(cio_sig_name(CIO_SIG_INT), "INT");
    assert_string_equal(cio_sig_name(CIO_SIG_TERM), "TERM");
}

static void test_from_number_never_ub(void **state)
{
    (void)state;
    const int probes[] = {INT_MIN, -1, 0, 1, 2, 31, 32, 64, 65, 127, 128, 129, 255, 256, 1000, INT_MAX};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        cio_sig out = (cio_sig)0;
        cio_err err = cio_sig_from_number(probes[i], &out);
        if (err == CIO_OK) {
            assert_int_equal(cio_sig_number(out), probes[i]);
            assert_non_null(cio_sig_name(out));
        } else {
            assert_int_equal(err, CIO_E_INVALID_SIGNAL);
            assert_int_equal(out, 0);
        }
    }
    int valid = 0;
    for (int n = -5; n < 300; n++) {
        cio_sig out;
        if (cio_sig_from_number(n, &out) == CIO_OK) {
            valid++;
            assert_non_null(cio_sig_name(out));
        } else {
            assert_null(cio_sig_name((cio_sig)n));
        }
    }
    assert_int_equal(valid, CIO_SIG_COUNT);
    cio_sig s;
    assert_int_equal(cio_sig_from_number(2, &s), CIO_OK);
    assert_int_equal(s, CIO_SIG_INT);
}

static void test_sigset(void **state)
{
    (void)state;
    cio_sigset set;
    cio_sigset_empty(&set);
    assert_false(cio_sigset_has(&set, CIO_SIG_INT));
    assert_int_equal(cio_sigset_add(&set, CIO_SIG_INT), CIO_OK);
    assert_int_equal(cio_sigset_add(&set, CIO_SIG_TERM), CIO_OK);
    assert_true(cio_sigset_has(&set, CIO_SIG_INT));
    assert_true(cio_sigset_has(&set, CIO_SIG_TERM));
    assert_false(cio_sigset_has(&set, CIO_SIG_SEGV));
    assert_int_equal(cio_sigset_del(&set, CIO_SIG_INT), CIO_OK);
    assert_false(cio_sigset_has(&set, CIO_SIG_INT));
    assert_int_equal(cio_sigset_add(&set, (cio_sig)0), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sigset_add(&set, (cio_sig)4096), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sigset_del(&set, (cio_sig)-3), CIO_E_INVALID_SIGNAL);
    assert_false(cio_sigset_has(&set, (cio_sig)4096));
    cio_sigset_fill(&set);
    int n = 0;
    for (int i = 1; i <= 128; i++)
        n += cio_sigset_has(&set, (cio_sig)i);
    assert_int_equal(n, CIO_SIG_COUNT);
}

static void test_raise_reaches_handler_as_cio_sig(void **state)
{
    (void)state;
    install(TEST_SIG);
    assert_int_equal(cio_sig_raise(TEST_SIG), CIO_OK);
    assert_int_equal(calls, 1);
    assert_int_equal(received, TEST_SIG);
#if defined(CIO__FLAVOUR_LINUX_MIPS)
    assert_int_equal(received, 16);
#elif defined(CIO__FLAVOUR_LINUX)
    assert_int_equal(received, 10);
#endif
    /* Still installed for a second delivery (the CRT resets handlers; cio reinstalls). */
    assert_int_equal(cio_sig_raise(TEST_SIG), CIO_OK);
    assert_int_equal(calls, 2);
    restore_default(TEST_SIG);
}

static void test_sigaction_reports_previous(void **state)
{
    (void)state;
    install(TEST_SIG);
    struct cio_sigaction act, old;
    memset(&act, 0, sizeof act);
    act.handler = CIO_SIG_HANDLER_IGNORE;
    assert_int_equal(cio_sigaction(TEST_SIG, &act, &old), CIO_OK);
    assert_true(old.handler == on_signal);
    assert_int_equal(cio_sig_raise(TEST_SIG), CIO_OK);
    assert_int_equal(calls, 0);
    assert_int_equal(cio_sigaction(TEST_SIG, NULL, &old), CIO_OK);
    assert_true(old.handler == CIO_SIG_HANDLER_IGNORE);
    restore_default(TEST_SIG);
    assert_int_equal(cio_sigaction((cio_sig)0, &act, NULL), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sigaction((cio_sig)999, &act, NULL), CIO_E_INVALID_SIGNAL);
#if !defined(CIO_OS_WINDOWS)
    act.handler = on_signal;
    assert_int_equal(cio_sigaction(CIO_SIG_KILL, &act, NULL), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sigaction(CIO_SIG_STOP, &act, NULL), CIO_E_INVALID_SIGNAL);
#endif
}

static void test_invalid_signals_rejected(void **state)
{
    (void)state;
    assert_int_equal(cio_sig_raise((cio_sig)0), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sig_raise((cio_sig)-1), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sig_raise((cio_sig)100000), CIO_E_INVALID_SIGNAL);
    assert_int_equal(cio_sig_kill(OWN_PID, (cio_sig)0), CIO_E_INVALID_SIGNAL);
}

static void test_kill_self(void **state)
{
    (void)state;
#if defined(CIO_OS_WASI)
    assert_int_equal(cio_sig_kill(OWN_PID, TEST_SIG), CIO_E_OPERATION_UNSUPPORTED);
    print_message("      skip: WASI has no kill(2)\n");
    skip();
#endif
    install(TEST_SIG);
    assert_int_equal(cio_sig_kill(OWN_PID, TEST_SIG), CIO_OK);
#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
    /* kill(2) to our own process: delivered before kill returns when it is unblocked in this
     * thread, but allow the kernel a moment under emulation. */
    for (int i = 0; i < 1000 && calls == 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
#endif
    assert_int_equal(calls, 1);
    assert_int_equal(received, TEST_SIG);
    restore_default(TEST_SIG);
}

static void test_kill_errors(void **state)
{
    (void)state;
#if defined(CIO_OS_WINDOWS)
    assert_int_equal(cio_sig_kill(OWN_PID + 4, CIO_SIG_INT), CIO_E_OPERATION_UNSUPPORTED);
#elif defined(CIO_OS_WASI)
    assert_int_equal(cio_sig_kill(0x7ffffff0L, CIO_SIG_TERM), CIO_E_OPERATION_UNSUPPORTED);
#else
    /* A process id that cannot exist (above the kernel's pid_max limit of 2^22). */
    assert_int_equal(cio_sig_kill(0x7ffffff0L, CIO_SIG_TERM), CIO_E_PROCESS_NOT_FOUND);
#endif
}

static void test_mask_defers_delivery(void **state)
{
    (void)state;
    cio_sigset set, old;
    cio_sigset_empty(&set);
    assert_int_equal(cio_sigset_add(&set, TEST_SIG), CIO_OK);
    assert_int_equal(cio_sig_mask(12345, &set, NULL), CIO_E_INVALID_ARGUMENT);
#if defined(CIO_OS_WINDOWS)
    assert_int_equal(cio_sig_mask(CIO_SIG_BLOCK, &set, &old), CIO_E_OPERATION_UNSUPPORTED);
#elif defined(CIO_OS_WASI)
    assert_int_equal(cio_sig_mask(CIO_SIG_BLOCK, &set, &old), CIO_E_OPERATION_UNSUPPORTED);
    print_message("      skip: WASI has no signal masks\n");
    skip();
#else
    install(TEST_SIG);
    assert_int_equal(cio_sig_mask(CIO_SIG_BLOCK, &set, &old), CIO_OK);
    assert_false(cio_sigset_has(&old, TEST_SIG));
    assert_int_equal(cio_sig_raise(TEST_SIG), CIO_OK);
    assert_int_equal(calls, 0);
    cio_sigset now;
    assert_int_equal(cio_sig_mask(CIO_SIG_BLOCK, NULL, &now), CIO_OK);
    assert_true(cio_sigset_has(&now, TEST_SIG));
    assert_int_equal(cio_sig_mask(CIO_SIG_SETMASK, &old, NULL), CIO_OK);
    assert_int_equal(calls, 1);
    assert_int_equal(received, TEST_SIG);
    restore_default(TEST_SIG);
#endif
}

#if defined(CIO_OS_WINDOWS)
/* Every signal of the CRT's enum reaches a cio handler through raise, as its own cio_sig (the CRT
 * calls the handler synchronously, so even SEGV and FPE are safe to raise); ABRT_COMPAT shares
 * ABRT's disposition. */
static void test_windows_crt_signals(void **state)
{
    (void)state;
    static const cio_sig all[] = {CIO_SIG_INT,  CIO_SIG_ILL,   CIO_SIG_FPE,  CIO_SIG_SEGV,
                                  CIO_SIG_TERM, CIO_SIG_BREAK, CIO_SIG_ABRT, CIO_SIG_ABRT_COMPAT};
    static const char *const names[] = {"INT", "ILL", "FPE", "SEGV", "TERM", "BREAK", "ABRT", "ABRT_COMPAT"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_string_equal(cio_sig_name(all[i]), names[i]);
        install(all[i]);
        assert_int_equal(cio_sig_raise(all[i]), CIO_OK);
        /* ABRT_COMPAT is ABRT under another number: the handler sees CIO_SIG_ABRT. */
        cio_sig want = all[i] == CIO_SIG_ABRT_COMPAT ? CIO_SIG_ABRT : all[i];
        if (calls != 1 || received != (sig_atomic_t)want)
            fail_msg("raise(%s): %d calls, received %d", names[i], (int)calls, (int)received);
        restore_default(all[i]);
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_of_this_target),
        cmocka_unit_test(test_from_number_never_ub),
        cmocka_unit_test(test_sigset),
        cmocka_unit_test(test_raise_reaches_handler_as_cio_sig),
        cmocka_unit_test(test_sigaction_reports_previous),
        cmocka_unit_test(test_invalid_signals_rejected),
        cmocka_unit_test(test_kill_self),
        cmocka_unit_test(test_kill_errors),
        cmocka_unit_test(test_mask_defers_delivery),
#if defined(CIO_OS_WINDOWS)
        cmocka_unit_test(test_windows_crt_signals),
#endif
    };
    return cmocka_run_group_tests_name("signals", tests, NULL, NULL);
}
