/*
 * The readiness poller on epoll: the Evented backend's "epoll" flavour, and the pattern a kqueue
 * poller follows on the BSDs (one registration per wait, one-shot, a wake-up descriptor).
 *
 * Invariants: everything here runs on the loop thread that owns the epoll instance, except wake()
 * (any thread: it writes the eventfd). A wait is registered one-shot with its record as the event's
 * data, and deregistered as soon as it completes or is canceled, so no event for a finished wait is
 * ever delivered: a canceled wait is removed from the epoll set before cancel() reports it. When a
 * second fiber of this loop waits on an fd that is already registered (EEXIST), it registers a
 * duplicate of the fd instead (epoll keys registrations by file *and* descriptor).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define BATCH 64

cio_err cio__e_fd_error(int err)
{
    cio__mapped m = cio__errno_evented_fd(err);
    return m.action == CIO__MAP_BUG ? CIO__BUG("a poller descriptor: an errno that means a bug") : m.err;
}

static cio_err ep_init(struct cio__e_loop *l)
{
    l->epfd = CIO__SYS(epoll_create1, epoll_init)(EPOLL_CLOEXEC);
    if (l->epfd < 0)
        return cio__e_fd_error(errno);
    l->wakefd = CIO__SYS(eventfd, epoll_init)(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->wakefd < 0) {
        int err = errno;
        close(l->epfd);
        l->epfd = -1;
        return cio__e_fd_error(err);
    }
    struct epoll_event ev = {.events = EPOLLIN, .data = {.ptr = NULL}};
    if (CIO__SYS(epoll_ctl, epoll_init)(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev) != 0) {
        int err = errno;
        close(l->wakefd);
        close(l->epfd);
        l->epfd = l->wakefd = -1;
        return cio__e_fd_error(err);
    }
    return CIO_OK;
}

static void ep_deinit(struct cio__e_loop *l)
{
    if (l->wakefd >= 0)
        close(l->wakefd);
    if (l->epfd >= 0)
        close(l->epfd);
    l->wakefd = l->epfd = -1;
}

/* The descriptor a wait registered (its own duplicate after EEXIST). */
static int reg_fd(const struct cio__e_wait *w)
{
    return w->htask != NULL ? (int)(intptr_t)w->htask - 1 : w->fd;
}

static void deregister(struct cio__e_loop *l, struct cio__e_wait *w)
{
    int fd = reg_fd(w);
    (void)CIO__SYS(epoll_ctl, epoll_deregister)(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    if (w->htask != NULL) {
        close(fd);
        w->htask = NULL;
    }
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
    struct epoll_event evs[BATCH];
    int n = CIO__SYS(epoll_wait, epoll_wait)(l->epfd, evs, BATCH, ms);
    for (int i = 0; i < n; i++) {
        struct cio__e_wait *w = (struct cio__e_wait *)evs[i].data.ptr;
        if (w == NULL) {
            cio__e_wake_drained(l);
            continue;
        }
        deregister(l, w);
        uint32_t re = evs[i].events & (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLPRI | EPOLLRDHUP);
        cio__e_poller_complete(w, (int32_t)(re != 0 ? re : EPOLLERR));
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
    struct epoll_event ev;
    ev.events = w->events | EPOLLONESHOT;
    ev.data.ptr = w;
    w->htask = NULL;
    if (CIO__SYS(epoll_ctl, epoll_arm)(l->epfd, EPOLL_CTL_ADD, w->fd, &ev) == 0)
        return CIO_OK;
    int err = errno;
    if (err == EEXIST) {
        int dup_fd = fcntl(w->fd, F_DUPFD_CLOEXEC, 0);
        if (dup_fd < 0)
            return errno == EMFILE ? CIO_E_PROCESS_FD_QUOTA_EXCEEDED : CIO_E_SYSTEM_RESOURCES;
        if (CIO__SYS(epoll_ctl, epoll_arm_dup)(l->epfd, EPOLL_CTL_ADD, dup_fd, &ev) == 0) {
            w->htask = (void *)(intptr_t)(dup_fd + 1);
            return CIO_OK;
        }
        err = errno;
        close(dup_fd);
    }
    if (err == EPERM)
        return CIO_E_OPERATION_UNSUPPORTED; /* a regular file or directory: the caller uses the helper pool */
    if (err == ENOMEM || err == ENOSPC)
        return CIO_E_SYSTEM_RESOURCES;
    return CIO__BUG("epoll_ctl(ADD) failed");
}

static void ep_cancel(struct cio__e_loop *l, struct cio__e_wait *w)
{
    deregister(l, w);
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
