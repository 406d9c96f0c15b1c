/*
 * The readiness poller on epoll: the Evented backend's "epoll" flavour (poll_kqueue.c is the same
 * contract on kqueue).
 *
 * Invariants: everything here runs on the loop thread that owns the epoll instance, except wake()
 * (any thread: it writes the eventfd).
 * Registrations: a descriptor is registered once per loop and then re-armed, not added and deleted
 * per wait. The loop keeps a slot per descriptor number (`slots`, this thread only) holding the
 * waits of its fibers on it, one reader and one writer; the registration's data is the descriptor
 * number (tagged), never a wait record, so an event that arrives for a wait that is gone (it was
 * canceled, or the fd was closed and its number reused) finds an empty slot or another wait and is
 * harmless: every caller retries its operation after a wake-up and waits again on EAGAIN.
 * - arm: the wait goes into the slot; the registration is re-armed EPOLLONESHOT with the union of the
 *   slot's directions by one epoll_ctl: MOD, or ADD when the descriptor is not (or no longer: closed
 *   and reused) in the set. So a wait costs one system call, and a completion none.
 * - an event completes the waits it satisfies and re-arms for a direction still waited for.
 * - cancel: the wait leaves its slot and completes at once, with no system call; the registration
 *   may stay armed, and its event then finds the slot without that wait.
 * - a second wait for the same direction on one descriptor (two readers of a socket) registers a
 *   duplicate of the fd with the wait record as data, one-shot, deleted when it completes or is
 *   canceled (epoll keys registrations by file *and* descriptor), as every wait did before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define BATCH 64
#define TAG_FD ((uint64_t)1 << 63)  /* data.u64 of a slot registration: TAG_FD | fd */
#define WAKE_DATA ((uint64_t)0)     /* the eventfd's */
#define READ_EVENTS (EPOLLIN | EPOLLPRI | EPOLLRDHUP | EPOLLERR | EPOLLHUP)
#define WRITE_EVENTS (EPOLLOUT | EPOLLERR | EPOLLHUP)

struct slot {
    struct cio__e_wait *rd, *wr; /* the waits of this loop's fibers on the descriptor */
    bool registered;             /* added to this loop's epoll set (as far as we know) */
};

struct ep {
    struct slot *slots;
    size_t nslots;
};

static struct ep *ep_of(struct cio__e_loop *l)
{
    return (struct ep *)l->ring; /* the poller's own state (poll_uring.c keeps its ring there) */
}

cio_err cio__e_fd_error(int err)
{
    cio__mapped m = cio__errno_evented_fd(err);
    return m.action == CIO__MAP_BUG ? CIO__BUG("a poller descriptor: an errno that means a bug") : m.err;
}

static cio_err ep_init(struct cio__e_loop *l)
{
    struct ep *ep = (struct ep *)CIO__SYS(calloc, epoll_init)(1, sizeof *ep);
    if (ep == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    int err = 0;
    l->epfd = CIO__SYS(epoll_create1, epoll_init)(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        err = errno;
        goto fail;
    }
    l->wakefd = CIO__SYS(eventfd, epoll_init)(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->wakefd < 0) {
        err = errno;
        goto fail;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data = {.u64 = WAKE_DATA}};
    if (CIO__SYS(epoll_ctl, epoll_init)(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev) != 0) {
        err = errno;
        goto fail;
    }
    l->ring = ep;
    return CIO_OK;
fail:
    if (l->wakefd >= 0)
        CIO__SYS(close, epoll_init)(l->wakefd);
    if (l->epfd >= 0)
        CIO__SYS(close, epoll_init)(l->epfd);
    l->epfd = l->wakefd = -1;
    free(ep);
    return cio__e_fd_error(err);
}

static void ep_deinit(struct cio__e_loop *l)
{
    if (l->wakefd >= 0)
        CIO__SYS(close, epoll_deinit)(l->wakefd);
    if (l->epfd >= 0)
        CIO__SYS(close, epoll_deinit)(l->epfd);
    l->wakefd = l->epfd = -1;
    struct ep *ep = ep_of(l);
    if (ep != NULL) {
        free(ep->slots);
        free(ep);
        l->ring = NULL;
    }
}

/* The slot of fd, grown into existence; NULL without memory. */
static struct slot *slot_of(struct ep *ep, int fd)
{
    size_t i = (size_t)fd;
    if (i >= ep->nslots) {
        size_t n = ep->nslots != 0 ? ep->nslots : 64;
        while (n <= i)
            n *= 2;
        struct slot *s = (struct slot *)CIO__SYS(realloc, epoll_slots)(ep->slots, n * sizeof *s);
        if (s == NULL)
            return NULL;
        memset(s + ep->nslots, 0, (n - ep->nslots) * sizeof *s);
        ep->slots = s;
        ep->nslots = n;
    }
    return &ep->slots[i];
}

/* ---- duplicate registrations (a second waiter for one direction) ---------------------------------- */

/* A duplicate-registered wait keeps its duplicate descriptor + 1 in htask. */
static void dup_deregister(struct cio__e_loop *l, struct cio__e_wait *w)
{
    int fd = (int)(intptr_t)w->htask - 1;
    (void)CIO__SYS(epoll_ctl, epoll_deregister)(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    CIO__SYS(close, epoll_deregister)(fd);
    w->htask = NULL;
}

static cio_err map_ctl_error(int err)
{
    if (err == EPERM)
        return CIO_E_OPERATION_UNSUPPORTED; /* a regular file or directory: the caller uses the helper pool */
    if (err == ENOMEM || err == ENOSPC)
        return CIO_E_SYSTEM_RESOURCES;
    return CIO__BUG("epoll_ctl failed");
}

static cio_err dup_arm(struct cio__e_loop *l, struct cio__e_wait *w)
{
    int dup_fd = CIO__SYS(fcntl, epoll_arm_dup)(w->fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) /* EMFILE: no descriptor for the duplicate; a read's or write's errors have no
                     * ProcessFdQuotaExceeded, so every wait says SystemResources */
        return CIO_E_SYSTEM_RESOURCES;
    struct epoll_event ev;
    ev.events = w->events | EPOLLONESHOT;
    ev.data.ptr = w;
    if (CIO__SYS(epoll_ctl, epoll_arm_dup)(l->epfd, EPOLL_CTL_ADD, dup_fd, &ev) != 0) {
        int err = errno;
        CIO__SYS(close, epoll_arm_dup)(dup_fd);
        return map_ctl_error(err);
    }
    w->htask = (void *)(intptr_t)(dup_fd + 1);
    return CIO_OK;
}

/* ---- slot registrations -------------------------------------------------------------------------------- */

/* Arms fd's registration for the directions its slot waits for (none: nothing to do). */
static cio_err rearm(struct cio__e_loop *l, int fd, struct slot *s)
{
    uint32_t want = (s->rd != NULL ? (uint32_t)(EPOLLIN | EPOLLRDHUP) : 0u) | (s->wr != NULL ? (uint32_t)EPOLLOUT : 0u);
    if (want == 0)
        return CIO_OK;
    struct epoll_event ev;
    ev.events = want | EPOLLONESHOT;
    ev.data.u64 = TAG_FD | (uint64_t)(uint32_t)fd;
    int op = s->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    for (int tries = 0; tries < 3; tries++) {
        if (CIO__SYS(epoll_ctl, epoll_arm)(l->epfd, op, fd, &ev) == 0) {
            s->registered = true;
            return CIO_OK;
        }
        int err = errno;
        if (err == ENOENT)
            op = EPOLL_CTL_ADD; /* closed (and maybe reused) since: not in the set any more */
        else if (op == EPOLL_CTL_ADD && err == EEXIST)
            op = EPOLL_CTL_MOD;
        else {
            s->registered = false;
            return map_ctl_error(err);
        }
    }
    return CIO__BUG("epoll_ctl: ADD and MOD disagree");
}

static void ep_wait(struct cio__e_loop *l, int64_t timeout_ns)
{
    int ms;
    if (timeout_ns < 0)
        ms = -1;
    else if (timeout_ns >= (int64_t)INT_MAX * 1000000)
        ms = INT_MAX;
    else
        ms = (int)((timeout_ns + 999999) / 1000000);
    struct ep *ep = ep_of(l);
    struct epoll_event evs[BATCH];
    int n = CIO__SYS(epoll_wait, epoll_wait)(l->epfd, evs, BATCH, ms);
    for (int i = 0; i < n; i++) {
        uint64_t data = evs[i].data.u64;
        uint32_t re = evs[i].events & (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLPRI | EPOLLRDHUP);
        if (data == WAKE_DATA) {
            cio__e_wake_drained(l);
            continue;
        }
        if (!(data & TAG_FD)) { /* a duplicate registration: its data is the wait */
            struct cio__e_wait *w = (struct cio__e_wait *)evs[i].data.ptr;
            dup_deregister(l, w);
            cio__e_poller_complete(w, (int32_t)(re != 0 ? re : EPOLLERR));
            continue;
        }
        size_t fd = (size_t)(uint32_t)data;
        if (fd >= ep->nslots)
            continue;
        struct slot *s = &ep->slots[fd];
        struct cio__e_wait *rd = s->rd, *wr = s->wr;
        if (rd != NULL && rd == wr) { /* one wait for both directions */
            if (re & (READ_EVENTS | WRITE_EVENTS)) {
                s->rd = s->wr = NULL;
                cio__e_poller_complete(rd, (int32_t)re);
            }
        } else {
            if (rd != NULL && (re & READ_EVENTS)) {
                s->rd = NULL;
                cio__e_poller_complete(rd, (int32_t)re);
            }
            if (wr != NULL && (re & WRITE_EVENTS)) {
                s->wr = NULL;
                cio__e_poller_complete(wr, (int32_t)re);
            }
        }
        /* The one-shot registration is disarmed now: arm it again for whoever still waits. */
        if ((s->rd != NULL || s->wr != NULL) && rearm(l, (int)fd, s) != CIO_OK) {
            struct cio__e_wait *left[2] = {s->rd, s->wr != s->rd ? s->wr : NULL};
            s->rd = s->wr = NULL;
            for (int k = 0; k < 2; k++)
                if (left[k] != NULL)
                    cio__e_poller_complete(left[k], EPOLLERR); /* its caller retries the operation */
        }
    }
}

static void ep_wake(struct cio__e_loop *l)
{
    uint64_t one = 1;
    ssize_t r = CIO__SYS(write, epoll_wake)(l->wakefd, &one, sizeof one);
    (void)r; /* EAGAIN: the counter is already non-zero, the loop will wake */
}

static cio_err ep_arm(struct cio__e_loop *l, struct cio__e_wait *w)
{
    w->htask = NULL;
    if (w->fd < 0)
        return CIO__BUG("epoll: a wait on a negative descriptor");
    struct slot *s = slot_of(ep_of(l), w->fd);
    if (s == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    bool rd = (w->events & POLLIN) != 0, wr = (w->events & POLLOUT) != 0;
    if ((rd && s->rd != NULL) || (wr && s->wr != NULL))
        return dup_arm(l, w); /* that direction is taken by another fiber of this loop */
    if (rd)
        s->rd = w;
    if (wr)
        s->wr = w;
    cio_err err = rearm(l, w->fd, s);
    if (err != CIO_OK) {
        if (s->rd == w)
            s->rd = NULL;
        if (s->wr == w)
            s->wr = NULL;
    }
    return err;
}

static void ep_cancel(struct cio__e_loop *l, struct cio__e_wait *w)
{
    if (w->htask != NULL) {
        dup_deregister(l, w);
    } else {
        struct ep *ep = ep_of(l);
        if (w->fd >= 0 && (size_t)w->fd < ep->nslots) {
            struct slot *s = &ep->slots[w->fd];
            if (s->rd == w)
                s->rd = NULL;
            if (s->wr == w)
                s->wr = NULL;
        }
    }
    cio__e_poller_complete(w, -ECANCELED);
}

const struct cio__e_poller_ops cio__e_epoll_ops = {
    .name = "epoll",
    .init = ep_init,
    .deinit = ep_deinit,
    .wait = ep_wait,
    .wake = ep_wake,
    .arm_fd = ep_arm,
    .cancel = ep_cancel,
};
