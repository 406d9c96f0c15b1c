/*
 * Shared by the Windows fault suites (tests/test_faults_windows.c: the files; tests/test_faults_windows_os.c:
 * sockets, clocks, the pool): checking that a case left no handle behind (finding a case by name and
 * running it with one fault armed are faults.h's case_named and run_with_fault).
 */
#ifndef CIO_TESTS_FAULTS_WINDOWS_H
#define CIO_TESTS_FAULTS_WINDOWS_H
#include "faults.h"

/* Handles back at `before` once settled; or, where some stay, the same work once more (`again`)
 * adds none: an object Wine makes once per process on first use (seen under load: one handle
 * that stayed after a case's first run), not one per run, which a leak would be. */
static inline void assert_handles_or_once(int before, void (*again)(void *), void *arg)
{
    if (settled_at_most(fd_count, before))
        return;
    int after = fd_count();
    again(arg);
    if (!settled_at_most(fd_count, after))
        fail_msg("handles: %d open, %d before the first run and %d after it (a handle leaked per run)", fd_count(),
                 before, after);
    print_message("      handles: %d, %d before the first run; a second run added none (made once)\n", after, before);
}

/* The end of a case: as many handles open as `handles` (once the pool settled), the site covered, the
 * fixture removed. */
static inline void case_done(fx *f, int handles, const char *site, const char *what, const char *fault)
{
    if (!settled_at_most(fd_count, handles))
        fail_msg("%s (%s) with %s: %d handles open, %d before", site, what, fault, fd_count(), handles);
    covered(site, fault);
    fx_close(f);
}

#endif
