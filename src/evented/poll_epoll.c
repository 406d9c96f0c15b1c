/*
 * The readiness poller on epoll: the Evented backend's "epoll" flavour (poll_kqueue.c is the same
 * contract on kqueue).
 *
 * Invariants: everything here runs on the loop thread that owns the epoll instance, except wake()
 * (any thread: it writes the eventfd).
 * Registrations: a descriptor is registered once per loop, edge-triggered for both directions
 * (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET), and stays registered (as libuv and Tokio keep theirs).
 * The loop keeps a slot per descriptor number (`slots`, this thread only) holding the waits of its
 * fibers on it, one reader and one writer, and the edges that arrived while nobody waited
 * (`ready`). The registration's data is the descriptor number (tagged), never a wait record, so an
 * event for a wait that is gone (canceled, or the fd was closed and its number reused) finds an
 * empty slot or another wait and is harmless: every caller retries its operation after a wake-up
 * and waits again on EAGAIN.
 * - Edge-triggered is enough because a wait follows an attempt that said EAGAIN on this thread
 *   (net.c, fs.c), or a read that came back short (below): any readiness after that is a new edge,
 *   reported by a later epoll_wait. An edge kept in `ready` completes the next wait at once; the
 *   caller's retry then succeeds or waits for the next edge.
 * - arm: for a socket cio made (owned in the descriptor table, net.c) whose registration was made
 *   under the table's current generation for that number, the wait just goes into the slot, with
 *   no system call. Otherwise one epoll_ctl (MOD when the slot believes it is registered, ADD when
 *   it is not or MOD says ENOENT: closed and maybe reused) registers it or confirms that the file
 *   now at that number is registered: a user's descriptor costs a call per wait, as before.
 * - Stream reads (net.c read_hinted): when this loop's last read of an owned socket came back short
 *   (`drained`; TCP and Unix streams return short only with the queue empty) and no edge or hang-up
 *   has been seen since, the read waits first instead of attempting a read that would say EAGAIN.
 * - Verification: a socket cio made but the user closed behind its back (close(2)), its number then
 *   reused from outside cio, leaves a slot that looks current but whose registration went with the
 *   old file; and a short read can leave data behind in rare cases (TCP urgent data, a Unix stream's
 *   ancillary-data boundary). So a wait armed without a system call goes on the `pend` list, and
 *   once it has waited VERIFY_NS (passes at most every VERIFY_NS, before epoll_wait, whose timeout
 *   is capped meanwhile) one epoll_ctl MOD (ENOENT: ADD) confirms its registration; the kernel
 *   re-checks readiness then and reports it. Waits shorter than that (the busy case) cost no call;
 *   those cases cost at most 2 * VERIFY_NS of latency, never a hang.
 * - cancel: the wait leaves its slot and completes at once, with no system call; its registration
 *   stays, and a later edge is kept in `ready`.
 * - a second wait for the same direction on one descriptor (two readers of a socket) registers a
 *   duplicate of the fd with the wait record as data, one-shot, deleted when it completes or is
 *   canceled (epoll keys registrations by file *and* descriptor).
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
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define BATCH 64
#define TAG_FD ((uint64_t)1 << 63) /* data.u64 of a slot registration: TAG_FD | fd */
#define WAKE_DATA ((uint64_t)0)    /* the eventfd's */
#define READ_EVENTS (EPOLLIN | EPOLLPRI | EPOLLRDHUP | EPOLLERR | EPOLLHUP)
#define WRITE_EVENTS (EPOLLOUT | EPOLLERR | EPOLLHUP)
#define REG_EVENTS ((uint32_t)(EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET))
#define R_READY 1u
#define W_READY 2u
#define VERIFY_NS ((int64_t)10 * 1000000) /* how long a wait armed on trust goes unverified */

struct slot {
    struct cio__e_wait *rd, *wr; /* the waits of this loop's fibers on the descriptor */
    uint32_t gen;                /* the table generation (net.c) when it was made or verified */
    uint32_t epoch;              /* ep->epoch when its current wait was armed on trust */
    uint8_t ready;               /* R_READY / W_READY: an edge that no wait has taken yet */
    bool drained;                /* the last read of it by this loop's fibers came back short */
    bool hup;                    /* a hang-up or error was reported: reads never wait first */
    bool registered;             /* in this loop's epoll set (as far as we know) */
    bool pending;                /* on ep->pend */
};

struct ep {
    struct slot *slots;
    size_t nslots;
    int *pend; /* numbers whose wait was armed on trust: verify once old enough */
    size_t npend, pend_cap;
    uint32_t epoch;      /* verification passes so far */
    int64_t next_verify; /* CLOCK_MONOTONIC ns of the next pass */
    bool no_pwait2;      /* epoll_pwait2 said ENOSYS: this loop waits with epoll_wait */
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
        free(ep->pend);
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

/* Registers fd (edge-triggered, both directions) or confirms that the file now numbered fd is in the
 * set: MOD when the slot believes it is registered, ADD otherwise, switching on ENOENT / EEXIST. The
 * kernel checks readiness on either, so an edge the slot kept is dropped: it would be reported again. */
static cio_err register_fd(struct cio__e_loop *l, int fd, struct slot *s, bool verifying)
{
    uint32_t gen = 0;
    (void)cio__e_fd_owned(fd, &gen); /* read first: a renew after this shows up next time */
    struct epoll_event ev;
    ev.events = REG_EVENTS;
    ev.data.u64 = TAG_FD | (uint64_t)(uint32_t)fd;
    int op = s->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    for (int tries = 0; tries < 3; tries++) {
        if (CIO__SYS(epoll_ctl, epoll_arm)(l->epfd, op, fd, &ev) == 0) {
            s->registered = true;
            s->gen = gen;
            s->ready = 0;
            s->drained = false;
            s->hup = false;
            return CIO_OK;
        }
        int err = errno;
        if (err == ENOENT)
            op = EPOLL_CTL_ADD; /* closed (and maybe reused) since: not in the set any more */
        else if (op == EPOLL_CTL_ADD && err == EEXIST)
            op = EPOLL_CTL_MOD;
        else {
            s->registered = false;
            /* A number closed (through cio) while one of its fibers waited on it: their retries see
             * EBADF themselves, through their operation's own map. */
            return verifying && err == EBADF ? CIO_E_UNEXPECTED : map_ctl_error(err);
        }
    }
    return CIO__BUG("epoll_ctl: ADD and MOD disagree");
}

/* Whether the slot's registration can be trusted without a system call (see the top comment). */
static bool trusted(const struct slot *s, int fd)
{
    uint32_t gen = 0;
    return cio__e_fd_owned(fd, &gen) && s->registered && gen == s->gen;
}

/* Completes the slot's waits with EPOLLERR (their callers try the operation again). */
static void fail_waits(struct slot *s)
{
    struct cio__e_wait *left[2] = {s->rd, s->wr != s->rd ? s->wr : NULL};
    s->rd = s->wr = NULL;
    for (int k = 0; k < 2; k++)
        if (left[k] != NULL)
            cio__e_poller_complete(left[k], EPOLLERR);
}

/* Verifies the registrations of the waits armed on trust before the previous pass (so they have
 * waited at least VERIFY_NS); the others stay for the next. */
static void verify_pass(struct cio__e_loop *l, int64_t now)
{
    struct ep *ep = ep_of(l);
    size_t keep = 0;
    for (size_t i = 0; i < ep->npend; i++) {
        int fd = ep->pend[i];
        struct slot *s = &ep->slots[fd];
        if (s->rd == NULL && s->wr == NULL) {
            s->pending = false;
        } else if (s->epoch == ep->epoch) {
            ep->pend[keep++] = fd;
        } else {
            s->pending = false;
            if (register_fd(l, fd, s, true) != CIO_OK)
                fail_waits(s);
        }
    }
    ep->npend = keep;
    ep->epoch++;
    ep->next_verify = now + VERIFY_NS;
}

/* One direction of s became ready: its wait (*waiter, taken off s) completes, or with none waiting
 * the edge is kept in s->ready (bit). */
static void deliver(struct slot *s, struct cio__e_wait **waiter, uint8_t bit, uint32_t re)
{
    struct cio__e_wait *w = *waiter;
    if (w == NULL) {
        s->ready |= bit;
        return;
    }
    *waiter = NULL;
    cio__e_poller_complete(w, (int32_t)re);
}

/* Waits for events: with epoll_pwait2 (Linux 5.11+), whose timeout is in nanoseconds, so that a
 * fiber sleeping 100 us wakes after 100 us, not after epoll_wait's rounded-up millisecond. Where the
 * kernel (or qemu-user) has no epoll_pwait2 (ENOSYS), this loop uses epoll_wait from then on. */
static int ep_poll(struct ep *ep, int epfd, struct epoll_event *evs, int64_t timeout_ns)
{
    if (!ep->no_pwait2) {
        struct timespec ts, *tp = NULL;
        if (timeout_ns >= 0) {
            ts.tv_sec = (time_t)(timeout_ns / 1000000000);
            ts.tv_nsec = (long)(timeout_ns % 1000000000);
            tp = &ts;
        }
        int n = CIO__SYS(epoll_pwait2, epoll_wait_ns)(epfd, evs, BATCH, tp, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        ep->no_pwait2 = true;
    }
    int ms;
    if (timeout_ns < 0)
        ms = -1;
    else if (timeout_ns >= (int64_t)INT_MAX * 1000000)
        ms = INT_MAX;
    else
        ms = (int)((timeout_ns + 999999) / 1000000);
    return CIO__SYS(epoll_wait, epoll_wait)(epfd, evs, BATCH, ms);
}

void cio__e_eventfd_drain(struct cio__e_loop *l)
{
    uint64_t v;
    while (CIO__SYS(read, wake_drain)(l->wakefd, &v, sizeof v) > 0) {
    }
}

static void ep_wait(struct cio__e_loop *l, int64_t timeout_ns)
{
    struct ep *ep = ep_of(l);
    if (ep->npend > 0) {
        int64_t now = cio__e_now_ns();
        if (now >= ep->next_verify)
            verify_pass(l, now);
        if (ep->npend > 0 && (timeout_ns < 0 || timeout_ns > ep->next_verify - now))
            timeout_ns = ep->next_verify - now;
    }
    struct epoll_event evs[BATCH];
    int n = ep_poll(ep, l->epfd, evs, timeout_ns);
    for (int i = 0; i < n; i++) {
        uint64_t data = evs[i].data.u64;
        uint32_t re = evs[i].events & (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLPRI | EPOLLRDHUP);
        if (data == WAKE_DATA) {
            cio__e_eventfd_drain(l);
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
        if (re & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            s->hup = true; /* edge-triggered: reported once, and reads after it never block */
        struct cio__e_wait *rd = s->rd, *wr = s->wr;
        if (rd != NULL && rd == wr) { /* one wait for both directions */
            if (re & (READ_EVENTS | WRITE_EVENTS)) {
                s->rd = s->wr = NULL;
                cio__e_poller_complete(rd, (int32_t)re);
            }
            continue;
        }
        if (re & READ_EVENTS)
            deliver(s, &s->rd, R_READY, re);
        if (re & WRITE_EVENTS)
            deliver(s, &s->wr, W_READY, re);
    }
}

static void ep_wake(struct cio__e_loop *l)
{
    uint64_t one = 1;
    ssize_t r = CIO__SYS(write, epoll_wake)(l->wakefd, &one, sizeof one);
    (void)r; /* EAGAIN: the counter is already non-zero, the loop will wake */
}

/* Puts fd on the verification list; false without memory. */
static bool pend_push(struct ep *ep, int fd)
{
    if (ep->npend == ep->pend_cap) {
        size_t cap = ep->pend_cap != 0 ? ep->pend_cap * 2 : 64;
        int *p = (int *)CIO__SYS(realloc, epoll_pend)(ep->pend, cap * sizeof *p);
        if (p == NULL)
            return false;
        ep->pend = p;
        ep->pend_cap = cap;
    }
    ep->pend[ep->npend++] = fd;
    return true;
}

static cio_err ep_arm(struct cio__e_loop *l, struct cio__e_wait *w)
{
    w->htask = NULL;
    if (w->fd < 0)
        return CIO__BUG("epoll: a wait on a negative descriptor");
    struct ep *ep = ep_of(l);
    struct slot *s = slot_of(ep, w->fd);
    if (s == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    bool rd = (w->events & POLLIN) != 0, wr = (w->events & POLLOUT) != 0;
    if ((rd && s->rd != NULL) || (wr && s->wr != NULL))
        return dup_arm(l, w); /* that direction is taken by another fiber of this loop */
    if (!trusted(s, w->fd)) {
        cio_err err = register_fd(l, w->fd, s, false);
        if (err != CIO_OK)
            return err;
    } else {
        uint8_t want = (uint8_t)((rd ? R_READY : 0u) | (wr ? W_READY : 0u));
        uint8_t got = (uint8_t)(s->ready & want);
        if (got != 0) { /* an edge came after the caller's last attempt was made: try again */
            s->ready = (uint8_t)(s->ready & ~got);
            cio__e_poller_complete(w, (int32_t)(((got & R_READY) ? EPOLLIN : 0) | ((got & W_READY) ? EPOLLOUT : 0)));
            return CIO_OK;
        }
        s->epoch = ep->epoch;
        if (!s->pending) {
            if (pend_push(ep, w->fd)) {
                s->pending = true;
            } else {
                cio_err err = register_fd(l, w->fd, s, false); /* verify now instead */
                if (err != CIO_OK)
                    return err;
            }
        }
    }
    if (rd)
        s->rd = w;
    if (wr)
        s->wr = w;
    return CIO_OK;
}

static bool ep_read_first(struct cio__e_loop *l, int fd)
{
    struct ep *ep = ep_of(l);
    if (fd < 0 || (size_t)fd >= ep->nslots)
        return false;
    struct slot *s = &ep->slots[fd];
    if (s->ready & R_READY) {
        s->ready = (uint8_t)(s->ready & ~R_READY); /* the attempt about to be made takes it */
        return false;
    }
    return s->drained && !s->hup && s->rd == NULL && trusted(s, fd);
}

static void ep_read_done(struct cio__e_loop *l, int fd, bool drained)
{
    struct ep *ep = ep_of(l);
    if (fd >= 0 && (size_t)fd < ep->nslots)
        ep->slots[fd].drained = drained;
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

const struct cio__e_poller_ops cio__e_epoll_ops = {CIO__E_POLLER_OPS(ep, "epoll"), .read_first = ep_read_first,
                                                   .read_done = ep_read_done};
