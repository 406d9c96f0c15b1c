/*
 * Helpers shared by the sync suites (test_sync.c, test_queue.c): timing, starting a concurrent task
 * (skipping where concurrency is unavailable) and canceling a blocked task with a promptness check.
 */
#ifndef CIO_TESTS_SYNC_HELPERS_H
#define CIO_TESTS_SYNC_HELPERS_H

#include "backends.h"

#define MS(n) ((int64_t)(n)*1000000)

static inline int64_t elapsed_ms(cio_io io, cio_timestamp since)
{
    return (cio_now(io, CIO_CLOCK_AWAKE).ns - since.ns) / MS(1);
}

static inline cio_future start(cio_io io, cio_task_fn fn, const void *ctx, size_t size)
{
    cio_future f;
    cio_err err = cio_concurrent(io, fn, ctx, size, &f); /* the macro evaluates its argument twice */
    CIO_REQUIRE_CONCURRENT(err);
    return f;
}

/* Cancels a task that should be blocked and checks that it noticed promptly. */
static inline cio_err cancel_promptly(cio_io io, cio_future *f)
{
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    cio_err err = cio_cancel(io, f);
    assert_true(elapsed_ms(io, t0) < 1000);
    return err;
}

#endif
