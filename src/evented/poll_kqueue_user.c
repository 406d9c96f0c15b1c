/*
 * The kqueue poller's wake-up through a user event (EVFILT_USER, ident 0, EV_CLEAR): FreeBSD and
 * NetBSD 10. Triggering it (NOTE_TRIGGER) from any thread makes the loop's kevent() return it
 * once; EV_CLEAR resets it as it is returned, so there is no descriptor to drain (l->wakefd stays
 * -1) and cio__e_wake_drained only clears `woken`.
 */
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/event.h>

#include "poll_kqueue.h"

cio_err cio__e_kq_wake_init(struct cio__e_loop *l, struct cio__e_kq *kq)
{
    kq->wake_w = -1;
    l->wakefd = -1;
    struct kevent ev;
    memset(&ev, 0, sizeof ev);
    ev.ident = 0;
    ev.filter = EVFILT_USER;
    ev.flags = EV_ADD | EV_CLEAR;
    ev.udata = NULL;
    return kevent(l->epfd, &ev, 1, NULL, 0, NULL) == 0 ? (cio_err)CIO_OK : CIO_E_SYSTEM_RESOURCES;
}

void cio__e_kq_wake_deinit(struct cio__e_loop *l, struct cio__e_kq *kq)
{
    (void)l; /* the user event goes with the kqueue */
    (void)kq;
}

void cio__e_kq_wake(struct cio__e_loop *l, struct cio__e_kq *kq)
{
    (void)kq;
    struct kevent ev;
    memset(&ev, 0, sizeof ev);
    ev.ident = 0;
    ev.filter = EVFILT_USER;
    ev.fflags = NOTE_TRIGGER;
    ev.udata = NULL;
    (void)kevent(l->epfd, &ev, 1, NULL, 0, NULL); /* only fails if the kqueue is gone */
}
