/*
 * The kqueue poller's wake-up through a pipe, where kqueue has no EVFILT_USER (OpenBSD before 7.8,
 * spec/libc.yaml): the read end is registered level-triggered (EVFILT_READ, no EV_CLEAR), a waker
 * writes one byte to the write end, and kq_wait (poll_kqueue.c) reads the pipe empty (both ends are
 * non-blocking: a full pipe means the loop is woken already) before cio__e_wake_drained clears `woken`.
 */
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/event.h>
#include <unistd.h>

#include "poll_kqueue.h"

cio_err cio__e_kq_wake_init(struct cio__e_loop *l, struct cio__e_kq *kq)
{
    int fds[2];
    kq->wake_w = -1;
    l->wakefd = -1;
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return CIO_E_SYSTEM_RESOURCES;
    struct kevent ev;
    memset(&ev, 0, sizeof ev);
    ev.ident = (uintptr_t)fds[0];
    ev.filter = EVFILT_READ;
    ev.flags = EV_ADD;
    ev.udata = NULL;
    if (kevent(l->epfd, &ev, 1, NULL, 0, NULL) != 0) {
        close(fds[0]);
        close(fds[1]);
        return CIO_E_SYSTEM_RESOURCES;
    }
    l->wakefd = fds[0];
    kq->wake_w = fds[1];
    return CIO_OK;
}

void cio__e_kq_wake_deinit(struct cio__e_loop *l, struct cio__e_kq *kq)
{
    if (l->wakefd >= 0)
        close(l->wakefd); /* closing it also drops its registration */
    if (kq->wake_w >= 0)
        close(kq->wake_w);
    l->wakefd = kq->wake_w = -1;
}

void cio__e_kq_wake(struct cio__e_loop *l, struct cio__e_kq *kq)
{
    (void)l;
    char one = 1;
    ssize_t r = write(kq->wake_w, &one, 1);
    (void)r; /* EAGAIN: the pipe is full, so the loop is woken already */
}
