/*
 * The kqueue poller's state per loop, shared by poll_kqueue.c and its wake-up half: one of
 * poll_kqueue_user.c (EVFILT_USER: FreeBSD, NetBSD 10) or poll_kqueue_pipe.c (a pipe: OpenBSD,
 * which has no EVFILT_USER before 7.8), chosen in CMakeLists.txt from spec/libc.yaml's facts.
 * The wake-up source is registered with a NULL udata; every wait's registration carries its wait
 * record, so a NULL udata in a returned event means "woken".
 */
#ifndef CIO_EVENTED_POLL_KQUEUE_H
#define CIO_EVENTED_POLL_KQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "evented.h"

struct cio__e_kq {
    uint8_t *regs; /* per descriptor: which filters a wait of this loop has on it (KQ_R | KQ_W) */
    size_t nregs;
    int wake_w; /* the pipe's write end (poll_kqueue_pipe.c), else -1 */
};

/* Loop thread, at init: creates and registers the wake-up source on l->epfd (the kqueue) and sets
 * l->wakefd to the descriptor cio__e_wake_drained must drain, or -1 when there is none. */
cio_err cio__e_kq_wake_init(struct cio__e_loop *l, struct cio__e_kq *kq);
void cio__e_kq_wake_deinit(struct cio__e_loop *l, struct cio__e_kq *kq);
/* Any thread: makes the loop's kevent() wait return. */
void cio__e_kq_wake(struct cio__e_loop *l, struct cio__e_kq *kq);

#endif /* CIO_EVENTED_POLL_KQUEUE_H */
