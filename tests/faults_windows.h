/*
 * Shared by the Windows fault suites (tests/test_faults_windows.c: the files; tests/test_faults_windows_os.c:
 * sockets, clocks, the pool): finding a case by name, and running one case's operation with one fault
 * armed at one site, then checking that the case left no handle behind.
 */
#ifndef CIO_TESTS_FAULTS_WINDOWS_H
#define CIO_TESTS_FAULTS_WINDOWS_H
#include "faults.h"

/* The entry called `name` in a table of `count` cases of `size` bytes whose first member is the case's
 * name (const char *); fails the test if there is none. */
static inline const void *case_named(const void *table, size_t count, size_t size, const char *name)
{
    const char *entry = (const char *)table;
    for (size_t i = 0; i < count; i++, entry += size)
        if (strcmp(*(const char *const *)(const void *)entry, name) == 0)
            return entry;
    fail_msg("no case %s", name);
    return NULL;
}

/* Runs run(f) with one fault armed at `site` ('e': the error `code`, `count` times or -1 for ever; 's':
 * transfers of at most `max` bytes) and resets the table after; the result must be `want` (`what` names
 * the case, `fault` the fault, in a failure). Returns how many faults were injected. */
static inline unsigned run_with_fault(fx *f, cio_err (*run)(fx *f), const char *site, const char *what, char mode,
                                      int code, int count, size_t max, cio_err want, const char *fault)
{
    if (mode == 'e')
        assert_int_equal(cio__fault_errno(site, code, 0, count), 1);
    else
        assert_int_equal(cio__fault_short(site, max, 0, count), 1);
    cio_err got = run(f);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (got != want)
        fail_msg("%s (%s) with %s: got %s, want %s", site, what, fault, cio_err_name(got), cio_err_name(want));
    return injected;
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
