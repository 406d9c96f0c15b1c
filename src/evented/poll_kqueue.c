/*
 * The readiness poller on kqueue: the Evented backend's flavour on FreeBSD, NetBSD and OpenBSD, the
 * same contract as poll_epoll.c (struct cio__e_poller_ops in evented.h) under the same readiness
 * core (sched.c cio__e_wait_fd, net.c, fs.c).
 *
 * The mapping:
 * - arm_fd: one EV_ONESHOT registration per wait and direction (POLLIN → EVFILT_READ, POLLOUT →
 *   EVFILT_WRITE) with the wait record as udata. kqueue keys a registration by (descriptor,
 *   filter), and EV_ADD on an existing one silently replaces its udata, so the loop keeps a table
 *   of the (fd, filter) pairs its waits hold; a second wait of this loop on a pair that is taken
 *   registers a duplicate descriptor instead (as poll_epoll.c does after EEXIST), kept in w->htask
 *   (descriptor + 1) and closed when the wait ends.
 * - wait: kevent() with the timeout (none when < 0); each returned event completes its wait with
 *   a readiness mask (POLLIN / POLLOUT, plus POLLHUP on EV_EOF and POLLERR on EV_ERROR). A wait for
 *   both directions deletes the registration that did not fire. A NULL udata is the wake-up
 *   (poll_kqueue_user.c or poll_kqueue_pipe.c), reported through cio__e_wake_drained.
 * - cancel (cancel request or timeout): EV_DELETE of the wait's registrations, then the completion
 *   (-ECANCELED) at once, like epoll. A one-shot event that fired but was not yet returned is
 *   deleted with its registration, so no event for a finished wait is ever delivered.
 *
 * Invariants: everything here runs on the loop thread that owns the kqueue, except wake() (any
 * thread; kevent() on one kqueue from several threads is safe). A wait record is referenced by the
 * kernel only between arm_fd and its completion or cancel, and both happen on this thread before the
 * fiber runs again. A kqueue is not inherited across fork on these systems, so it needs no
 * close-on-exec flag.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/event.h>
#include <time.h>
#include <unistd.h>

#include "evented.h"
#include "internal.h"
#include "poll_kqueue.h"

#define BATCH 64
#define KQ_R 1u
#define KQ_W 2u

static struct cio__e_kq *state(const struct cio__e_loop *l)
{
    return (struct cio__e_kq *)l->ring;
}

static cio_err kq_init(struct cio__e_loop *l)
{
    struct cio__e_kq *kq = (struct cio__e_kq *)calloc(1, sizeof *kq);
    if (kq == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    kq->wake_w = -1;
    l->epfd = kqueue();
    if (l->epfd < 0) {
        free(kq);
        return CIO_E_SYSTEM_RESOURCES;
    }
    cio_err err = cio__e_kq_wake_init(l, kq);
    if (err != CIO_OK) {
        close(l->epfd);
        l->epfd = -1;
        free(kq);
        return err;
    }
    l->ring = kq;
    return CIO_OK;
}

static void kq_deinit(struct cio__e_loop *l)
{
    struct cio__e_kq *kq = state(l);
    if (kq != NULL) {
        cio__e_kq_wake_deinit(l, kq);
        free(kq->regs);
        free(kq);
    }
    if (l->epfd >= 0)
        close(l->epfd);
    l->epfd = l->wakefd = -1;
    l->ring = NULL;
}

static void kq_wake(struct cio__e_loop *l)
{
    cio__e_kq_wake(l, state(l));
}

/* One change for one descriptor: add a one-shot read or write registration, or delete it. */
static void change(struct kevent *k, int fd, bool write, bool add, void *udata)
{
    memset(k, 0, sizeof *k);
    k->ident = (uintptr_t)fd;
    if (write)
        k->filter = EVFILT_WRITE;
    else
        k->filter = EVFILT_READ;
    if (add)
        k->flags = EV_ADD | EV_ONESHOT;
    else
        k->flags = EV_DELETE;
    k->udata = udata;
}

static int apply(struct cio__e_loop *l, int fd, bool write, bool add, void *udata)
{
    struct kevent k;
    change(&k, fd, write, add, udata);
    int r;
    do
        r = kevent(l->epfd, &k, 1, NULL, 0, NULL);
    while (r < 0 && errno == EINTR);
    return r < 0 ? errno : 0;
}

static unsigned filters_of(const struct cio__e_wait *w)
{
    return ((w->events & POLLIN) ? KQ_R : 0u) | ((w->events & POLLOUT) ? KQ_W : 0u);
}

/* The descriptor a wait registered (its own duplicate when the pair was taken). */
static int reg_fd(const struct cio__e_wait *w)
{
    return w->htask != NULL ? (int)(intptr_t)w->htask - 1 : w->fd;
}

/* Makes room in the table for fd; false when memory runs out. */
static bool table_fit(struct cio__e_kq *kq, int fd)
{
    size_t need = (size_t)fd + 1;
    if (need <= kq->nregs)
        return true;
    size_t n = kq->nregs < 64 ? 64 : kq->nregs;
    while (n < need)
        n *= 2;
    uint8_t *t = (uint8_t *)realloc(kq->regs, n);
    if (t == NULL)
        return false;
    memset(t + kq->nregs, 0, n - kq->nregs);
    kq->regs = t;
    kq->nregs = n;
    return true;
}

/* The wait ended: drop what is left of its registrations (all of `left`'s filters) and its claim. */
static void release(struct cio__e_loop *l, struct cio__e_wait *w, unsigned left)
{
    int fd = reg_fd(w);
    if (left & KQ_R)
        (void)apply(l, fd, false, false, NULL); /* ENOENT/EBADF: already gone with the descriptor */
    if (left & KQ_W)
        (void)apply(l, fd, true, false, NULL);
    if (w->htask != NULL) {
        close(fd);
        w->htask = NULL;
    } else {
        struct cio__e_kq *kq = state(l);
        kq->regs[w->fd] = (uint8_t)(kq->regs[w->fd] & ~filters_of(w));
    }
}

static cio_err arm_error(int err)
{
    if (err == ENOMEM)
        return CIO_E_SYSTEM_RESOURCES;
    if (err == EINVAL || err == ENODEV || err == EOPNOTSUPP || err == EPERM)
        return CIO_E_OPERATION_UNSUPPORTED; /* not pollable: the caller uses the helper pool */
    return CIO__BUG("kevent(EV_ADD) failed");
}

static cio_err kq_arm(struct cio__e_loop *l, struct cio__e_wait *w)
{
    struct cio__e_kq *kq = state(l);
    unsigned want = filters_of(w);
    w->htask = NULL;
    if (want == 0 || w->fd < 0)
        return CIO__BUG("kqueue: a wait for no direction or no descriptor");
    if (!table_fit(kq, w->fd))
        return CIO_E_SYSTEM_RESOURCES;
    int fd = w->fd;
    if (kq->regs[fd] & want) {
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (dup_fd < 0)
            return errno == EMFILE  ? CIO_E_PROCESS_FD_QUOTA_EXCEEDED
                   : errno == EBADF ? CIO__BUG("kqueue: waiting on a closed descriptor")
                                    : CIO_E_SYSTEM_RESOURCES;
        w->htask = (void *)(intptr_t)(dup_fd + 1);
        fd = dup_fd;
    }
    int err = 0;
    if (want & KQ_R)
        err = apply(l, fd, false, true, w);
    if (err == 0 && (want & KQ_W)) {
        err = apply(l, fd, true, true, w);
        if (err != 0 && (want & KQ_R))
            (void)apply(l, fd, false, false, NULL);
    }
    if (err != 0) {
        if (w->htask != NULL) {
            close(fd);
            w->htask = NULL;
        }
        return arm_error(err);
    }
    if (w->htask == NULL)
        kq->regs[fd] = (uint8_t)(kq->regs[fd] | want);
    return CIO_OK;
}

static void kq_wait(struct cio__e_loop *l, int64_t timeout_ns)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tsp = &ts;
    }
    struct kevent evs[BATCH];
    int n = kevent(l->epfd, NULL, 0, evs, BATCH, tsp);
    for (int i = 0; i < n; i++) {
        if (evs[i].udata == (void *)&evs[i])
            continue; /* the second direction of a wait completed earlier in this batch */
        struct cio__e_wait *w = (struct cio__e_wait *)evs[i].udata;
        if (w == NULL) {
            unsigned char v[64]; /* the wake pipe (poll_kqueue_pipe.c) read empty; EVFILT_USER has none */
            while (l->wakefd >= 0 && read(l->wakefd, v, sizeof v) > 0) {
            }
            cio__e_wake_drained(l);
            continue;
        }
        bool wrote = evs[i].filter == EVFILT_WRITE;
        uint32_t re = wrote ? (uint32_t)POLLOUT : (uint32_t)POLLIN;
        if (evs[i].flags & EV_EOF)
            re |= (uint32_t)POLLHUP;
        if (evs[i].flags & EV_ERROR)
            re |= (uint32_t)POLLERR;
        /* The one-shot registration that fired is gone; the other direction's (if any) is not, and
         * may have fired in this very batch: that event must not complete w a second time. */
        unsigned other = filters_of(w) & ~(wrote ? KQ_W : KQ_R);
        if (other != 0)
            for (int j = i + 1; j < n; j++)
                if (evs[j].udata == (void *)w)
                    evs[j].udata = (void *)&evs[j]; /* marked: skipped below */
        release(l, w, other);
        cio__e_poller_complete(w, (int32_t)re);
    }
}

static void kq_cancel(struct cio__e_loop *l, struct cio__e_wait *w)
{
    release(l, w, filters_of(w));
    cio__e_poller_complete(w, -ECANCELED);
}

const struct cio__e_poller_ops cio__e_kqueue_ops = {CIO__E_POLLER_OPS(kq, "kqueue")};
