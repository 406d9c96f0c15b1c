/*
 * io_uring instances for the flavour's own suites (tests/test_uring.c, tests/test_uring_links.c):
 * one with the native operations, and one with CIO_EVENTED_URING_NATIVE=0, which keeps only the
 * opcodes the flavour cannot do without, so each call takes its fallback path (the helper pool, a
 * readiness poll). Include after cmocka.h and asserts.h.
 */
#ifndef CIO_TESTS_URING_HELPERS_H
#define CIO_TESTS_URING_HELPERS_H

#include <stdlib.h>

#include "cio.h"

static inline cio_evented *uring_with(unsigned threads)
{
    cio_evented_options o = {0};
    o.flavour = CIO_EVENTED_IO_URING;
    o.threads = threads;
    cio_evented *e = NULL;
    assert_ok(cio_evented_create(&o, &e));
    return e;
}

static inline cio_evented *uring_fallback(unsigned threads)
{
    assert_int_equal(setenv("CIO_EVENTED_URING_NATIVE", "0", 1), 0);
    cio_evented_options o = {0};
    o.flavour = CIO_EVENTED_IO_URING;
    o.threads = threads;
    cio_evented *e = NULL;
    cio_err err = cio_evented_create(&o, &e);
    unsetenv("CIO_EVENTED_URING_NATIVE");
    assert_ok(err);
    return e;
}

#endif
