/*
 * Shared by the Evented-on-Windows suites (test_iocp.c, test_iocp_net.c): assertions on cio_err,
 * handle counts (probed: GetProcessHandleCount answers 0 under Wine 8), the leak check that allows
 * an object Wine makes once per process, and the coverage line a passing fault case prints.
 */
#ifndef CIO_TESTS_IOCP_HELPERS_H
#define CIO_TESTS_IOCP_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>

#include "os_helpers.h"

#define assert_ok(x) assert_int_equal((int)(x), (int)CIO_OK)
#define assert_err(x, e) assert_int_equal((int)(x), (int)(e))

/* ---- handles and threads ------------------------------------------------------------------------- */

/* The process's open handles, of any kind (os_helpers.h's probe). */
static inline int handle_count(void)
{
    return cio_test_count_all_handles();
}

/* Whether the count is back at `before` within 3 s (a loop thread's handle closes as it ends). */
static inline bool handles_settled(int before)
{
    for (int i = 0; i < 300; i++) {
        if (handle_count() <= before)
            return true;
        Sleep(10);
    }
    return false;
}

static inline void assert_handles(int before, const char *what)
{
    if (!handles_settled(before)) {
        cio_test_print_new_handles(before);
        fail_msg("%s: %d handles open, %d before (a handle leaked)", what, handle_count(), before);
    }
}

/* Runs body and checks that it left no handle open; where one stays (Wine makes some objects once
 * per process, on first use by some thread), the same body once more must add none: a leak grows
 * with every run. */
static inline void run_counted(void (*body)(void), const char *what)
{
    int before = handle_count();
    body();
    if (handles_settled(before))
        return;
    int after = handle_count();
    body();
    if (!handles_settled(after))
        fail_msg("%s: %d handles open, %d before the first run and %d after it (a handle leaked per run)", what,
                 handle_count(), before, after);
    print_message("      handles: %d, %d before the first run; a second run added none (made once)\n", after, before);
}

static inline void covered(const char *site, const char *fault)
{
    print_message("fault-covered: %s %s\n", site, fault);
}

#endif
