/*
 * Shared by the Evented suites (test_evented.c, test_evented_sched.c, test_evented_fds.c): the clock,
 * descriptor counts, the test's Evented instance and fresh instances of its flavour.
 */
#ifndef CIO_TESTS_EVENTED_HELPERS_H
#define CIO_TESTS_EVENTED_HELPERS_H

#include <fcntl.h>
#include <string.h>
#include <time.h>

#include "backends.h"

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
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
