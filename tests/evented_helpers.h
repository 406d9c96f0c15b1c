/*
 * Shared by the Evented suites (test_evented.c, test_evented_sched.c, test_evented_fds.c): the clock,
 * descriptor counts, the test's Evented instance and fresh instances of its flavour.
 */
#ifndef CIO_TESTS_EVENTED_HELPERS_H
#define CIO_TESTS_EVENTED_HELPERS_H

#include <string.h>
#include <time.h>

#include "backends.h"

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#if defined(CIO_OS_WINDOWS)
#include "os_helpers.h"

/* The process's handles less its threads (a thread that did synchronous I/O under Wine keeps a
 * cached event until it exits, which counts against the thread). */
static inline int count_fds(void)
{
    int n = cio_test_count_all_handles() - cio_test_count_threads();
    cio_test_snap_keep(CIO_TEST_SNAP_DERIVED + n); /* for a failure's report of the new handles */
    return n;
}

static inline void print_new_fds(int base)
{
    cio_test_print_new_handles(CIO_TEST_SNAP_DERIVED + base);
}
#else
#include <fcntl.h>

static inline int count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
}

static inline void print_new_fds(int base)
{
    (void)base;
}
#endif

/* count_fds() back at `base`, within 8 s (a helper worker started meanwhile retires after 2 s idle;
 * on POSIX the count is exact at once). */
static inline void assert_fds_back(int base)
{
    int now = count_fds();
    for (int i = 0; i < 800 && now > base; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        now = count_fds();
    }
    if (now != base)
        print_new_fds(base);
    assert_int_equal(now, base);
}

static inline cio_evented *test_evented(void **state)
{
    if (cio_test_threaded(state) != NULL)
        return NULL;
    cio_test_backend *b = (cio_test_backend *)*state;
    return (cio_evented *)b->instance;
}

/* A new instance of e's flavour with `threads` loop threads. */
static inline cio_evented *evented_with(cio_evented *e, unsigned threads)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.flavour = cio_evented_flavour_of(e);
    o.threads = threads;
    cio_evented *n = NULL;
    assert_int_equal(cio_evented_create(&o, &n), CIO_OK);
    return n;
}

static inline cio_evented *evented_like(cio_evented *e)
{
    return evented_with(e, 1);
}

/* A fresh instance like the test's Evented one with `threads` loops; skips (why) on Threaded. */
static inline cio_evented *own_instance(void **state, unsigned threads, const char *why)
{
    cio_evented *like = test_evented(state);
    if (like == NULL)
        CIO_SKIP(why);
    return evented_with(like, threads);
}

#endif
