/*
 * The Evented backend's poller waits (split from sched.c): a fiber waits for readiness of a
 * descriptor through its home loop's poller, with an optional deadline and cancel.
 *
 * Invariants: the wait record lives on the fiber's stack and is registered with the home loop's
 * poller, so only that loop's thread touches it until the poller reports the completion
 * (cio__e_poller_complete), which alone resumes the fiber. A cancel (cio__e_poller_interrupt, through
 * the wait record) or the deadline's timer only asks the poller to stop the wait, once: the wait
 * still ends with that completion, so nothing the kernel may touch goes away before it is done.
 * The io_uring flavour's ring operations (poll_uring.c) are poller waits too and share the interrupt.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stddef.h>

#include "evented.h"
#include "internal.h"

/* Asks the poller to stop w early (once); the completion follows. */
static void stop(struct cio__e_loop *l, struct cio__e_wait *w, uint8_t reason)
{
    if (w->in_flight && !w->cancel_sent) {
        w->reason = reason;
        w->cancel_sent = true;
        l->ev->poller->cancel(l, w);
    }
}

void cio__e_poller_interrupt(struct cio__e_loop *l, struct cio__e_wait *w)
{
    stop(l, w, CIO__E_R_CANCEL);
}

static void poller_timeout_fire(struct cio__e_loop *l, struct cio__e_timer *t)
{
    stop(l, (struct cio__e_wait *)(void *)((char *)t - offsetof(struct cio__e_wait, timer)), CIO__E_R_TIMEOUT);
}

void cio__e_wait_deadline(struct cio__e_loop *l, struct cio__e_wait *w, int64_t deadline_ns)
{
    w->timer.deadline = deadline_ns;
    w->timer.fire = poller_timeout_fire;
    cio__e_timer_add(l, &w->timer);
}

cio_err cio__e_wait_fd(struct cio_evented *e, int fd, uint32_t events, int64_t deadline_ns, bool cancelable,
                       uint32_t *revents)
{
    struct cio_any_future *f = cio__e_self(e);
    struct cio__e_loop *l = f->home;
    if (cancelable) {
        cio_err c = cio__e_cancel_point(e);
        if (c != CIO_OK)
            return c;
    }
    struct cio__e_wait w;
    cio__e_wait_init(&w, f, CIO__E_W_POLLER, cancelable, cio__e_poller_interrupt);
    w.fd = fd;
    w.events = events;
    w.in_flight = true;
    l->armed++;
    cio_err err = e->poller->arm_fd(l, &w);
    if (err != CIO_OK) {
        l->armed--;
        return err;
    }
    cio__e_park(l, f, &w, deadline_ns, poller_timeout_fire, NULL, NULL);
    if (w.res > 0) {
        *revents = (uint32_t)w.res;
        return CIO_OK;
    }
    if (w.res < 0 && w.res != -ECANCELED && w.res != -EINTR)
        return CIO__BUG("poller: an fd wait failed");
    if (w.reason == CIO__E_R_CANCEL) {
        cio__e_ack_cancel(f);
        return CIO_E_CANCELED;
    }
    return CIO_E_TIMEOUT;
}
