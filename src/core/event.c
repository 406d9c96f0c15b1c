/*
 * cio_event: a reset event (Zig's Io.Event) over the futex slots of a cio_io.
 *
 * State encoding (event->state, the futex word):
 *     0  unset, nobody waiting
 *     1  unset, some task may be waiting on the futex
 *     2  set
 * Transitions: a waiter moves 0 -> 1 and sleeps while the word is 1; set swaps in 2 and wakes every
 * waiter if the old value was 1; reset stores 0 and must not race with waiters (it may race with
 * is_set and set). A waiter that gives up (timeout, cancel) leaves the word at 1: other waiters may
 * still be sleeping, and the only cost is one redundant wake at the next set.
 *
 * Who does what: set is the only waker and wakes all, so a waiter that leaves early cannot swallow
 * a wake someone else needed. A wait returns CIO_OK only once it has seen 2 (acquire), which pairs
 * with the release swap in set: writes before set are visible after wait.
 * wait_timeout turns a duration into a deadline once and keeps waiting across spurious wake-ups
 * until the event is set or the deadline passes (then CIO_E_TIMEOUT).
 */
#include <assert.h>
#include <stdatomic.h>

#include "cio/sync.h"
#include "internal.h"

enum { UNSET = 0, WAITING = 1, IS_SET = 2 };

bool cio_event_is_set(const cio_event *event)
{
    return atomic_load_explicit(&event->state, memory_order_acquire) == IS_SET;
}

void cio_event_set(cio_io io, cio_event *event)
{
    if (atomic_exchange_explicit(&event->state, IS_SET, memory_order_release) == WAITING)
        CIO__VT(io)->futex_wake(io.userdata, &event->state, UINT32_MAX);
}

void cio_event_reset(cio_event *event)
{
    atomic_store_explicit(&event->state, UNSET, memory_order_relaxed);
}

/* Announces a waiter. Returns true if the event is already set. */
static bool announce(cio_event *event)
{
    uint32_t expected = UNSET;
    if (atomic_compare_exchange_strong_explicit(&event->state, &expected, WAITING, memory_order_acquire,
                                                memory_order_acquire))
        return false;
    return expected == IS_SET; /* else WAITING: join the other waiters */
}

static cio_err wait_common(cio_io io, cio_event *event, cio_timeout timeout)
{
    if (announce(event))
        return CIO_OK;
    for (;;) {
        cio_err err = CIO__VT(io)->futex_wait(io.userdata, &event->state, WAITING, timeout);
        uint32_t state = atomic_load_explicit(&event->state, memory_order_acquire);
        assert(state != UNSET && "cio_event_reset raced with a waiter");
        if (err == CIO_E_CANCELED)
            return err;
        if (state == IS_SET)
            return CIO_OK;
        if (err == CIO_E_TIMEOUT)
            return err;
    }
}

cio_err cio_event_wait(cio_io io, cio_event *event)
{
    cio_err err = wait_common(io, event, CIO_TIMEOUT_NONE);
    return CIO__IN_SET(cancelable, err);
}

cio_err cio_event_wait_timeout(cio_io io, cio_event *event, cio_timeout timeout)
{
    if (cio_event_is_set(event))
        return CIO_OK;
    cio_err err = wait_common(io, event, cio__timeout_to_deadline(io, timeout));
    return CIO__IN_SET(event_wait_timeout, err);
}

void cio_event_wait_uncancelable(cio_io io, cio_event *event)
{
    if (announce(event))
        return;
    while (atomic_load_explicit(&event->state, memory_order_acquire) != IS_SET)
        CIO__VT(io)->futex_wait_uncancelable(io.userdata, &event->state, WAITING);
}
