/*
 * A wrapper io for the sync suites (test_sync.c, test_sync_locks.c) that makes a chosen waiter's
 * futex waits on one word report CIO_E_CANCELED even when they were woken: what a backend does when
 * a wake and a cancel race, made deterministic. Include after cio.h.
 */
#ifndef CIO_TESTS_SWALLOW_IO_H
#define CIO_TESTS_SWALLOW_IO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cio.h"

/* The Aug-2026 Zig fix, made deterministic: a wrapper vtable makes waiter A report CIO_E_CANCELED
 * from every futex wait on the condition, even when it was woken by the signal's futex wake (what
 * a backend does when a wake and a cancel race). The one signal must still reach waiter B. */
static const struct cio_vtable *real_vtable;
static const _Atomic(uint32_t) *swallow_word;
static struct cio_vtable swallow_vtable;

/* Each task gets its own io whose userdata says whether it swallows wakes (a thread-local flag would
 * be shared by tasks that are fibers of one thread). Only the slots the sync primitives use are
 * wrapped. */
typedef struct swallow_ud {
    void *real;
    bool swallow;
} swallow_ud;

static inline cio_err swallowing_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout t)
{
    swallow_ud *s = (swallow_ud *)ud;
    cio_err err = real_vtable->futex_wait(s->real, ptr, expected, t);
    return err == CIO_OK && s->swallow && ptr == swallow_word ? CIO_E_CANCELED : err;
}

static inline void swallow_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    real_vtable->futex_wait_uncancelable(((swallow_ud *)ud)->real, ptr, expected);
}

static inline void swallow_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    real_vtable->futex_wake(((swallow_ud *)ud)->real, ptr, max_waiters);
}

static inline cio_timestamp swallow_now(void *ud, cio_clock clock)
{
    return real_vtable->now(((swallow_ud *)ud)->real, clock);
}

static inline cio_io swallow_io(cio_io real, swallow_ud *s)
{
    real_vtable = real.vtable;
    swallow_vtable = *real.vtable;
    swallow_vtable.futex_wait = swallowing_futex_wait;
    swallow_vtable.futex_wait_uncancelable = swallow_wait_uncancelable;
    swallow_vtable.futex_wake = swallow_wake;
    swallow_vtable.now = swallow_now;
    s->real = real.userdata;
    return (cio_io){s, &swallow_vtable};
}

#endif
