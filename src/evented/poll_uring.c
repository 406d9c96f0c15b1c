/*
 * The io_uring poller: one ring per loop, set up through raw system calls (numbers from the generated
 * platform/cio/sysnum.h; no liburing). Readiness waits are POLL_ADD requests; reads, writes and
 * fsync run as native ring operations; a wait is canceled with ASYNC_CANCEL and its completion
 * (-ECANCELED, or the result if it finished first) still ends it. Another thread wakes the loop
 * through an eventfd that a POLL_ADD on the ring watches.
 *
 * Invariants: the submission queue is filled and submitted, and the completion queue reaped, only by
 * the loop thread (fibers running on it included); a request's user_data is its wait record, which
 * lives on the waiting fiber's stack until that completion arrives (the fiber cannot resume before).
 * Two tags are not records: TAG_WAKE (the eventfd poll) and TAG_CANCEL (ASYNC_CANCEL's own result).
 * create probes: io_uring_setup (ENOSYS under qemu-user and old kernels, EPERM under seccomp or
 * kernel.io_uring_disabled), IORING_FEAT_EXT_ARG (5.11: timed waits) and the opcodes used; any
 * failure makes the flavour unavailable (the auto flavour then falls back to epoll).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cio/sysnum.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define TAG_WAKE 1u
#define TAG_CANCEL 2u

struct ring {
    int fd;
    unsigned sq_entries, sq_mask, cq_mask;
    _Atomic(unsigned) *sq_head, *sq_tail, *cq_head, *cq_tail;
    unsigned *sq_array;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    void *sq_map, *cq_map;
    size_t sq_map_len, cq_map_len, sqes_len;
    unsigned local_tail; /* next free SQE (not yet published) */
    unsigned pending;    /* published to the kernel's tail but not yet submitted */
    uint64_t wake_value;
};

static int sys_setup(unsigned entries, struct io_uring_params *p)
{
    return CIO__SYS(io_uring_setup, ring_setup)(entries, p);
}

static int sys_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags, const void *arg, size_t argsz)
{
    return CIO__SYS(io_uring_enter, ring_enter)(fd, to_submit, min_complete, flags, arg, argsz);
}

static int sys_register(int fd, unsigned op, void *arg, unsigned n)
{
    return CIO__SYS(io_uring_register, ring_probe)(fd, op, arg, n);
}

static void ring_free(struct ring *r)
{
    if (r->sqes != NULL && r->sqes != MAP_FAILED)
        munmap(r->sqes, r->sqes_len);
    if (r->cq_map != NULL && r->cq_map != MAP_FAILED && r->cq_map != r->sq_map)
        munmap(r->cq_map, r->cq_map_len);
    if (r->sq_map != NULL && r->sq_map != MAP_FAILED)
        munmap(r->sq_map, r->sq_map_len);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

static bool probe_ops(int fd)
{
    size_t len = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
    struct io_uring_probe *pr = (struct io_uring_probe *)CIO__SYS(calloc, ring_probe)(1, len);
    if (pr == NULL)
        return false;
    bool ok = sys_register(fd, IORING_REGISTER_PROBE, pr, 256) == 0;
    static const unsigned need[] = {IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_POLL_ADD,
                                    IORING_OP_ASYNC_CANCEL};
    for (size_t i = 0; ok && i < sizeof need / sizeof need[0]; i++)
        ok = need[i] <= pr->last_op && (pr->ops[need[i]].flags & IO_URING_OP_SUPPORTED);
    free(pr);
    return ok;
}

/* The next SQE, zeroed; submits what is queued when the ring is full. */
static struct io_uring_sqe *get_sqe(struct ring *r)
{
    for (;;) {
        unsigned head = atomic_load_explicit(r->sq_head, memory_order_acquire);
        if (r->local_tail - head < r->sq_entries) {
            unsigned idx = r->local_tail & r->sq_mask;
            struct io_uring_sqe *sqe = &r->sqes[idx];
            memset(sqe, 0, sizeof *sqe);
            r->sq_array[idx] = idx;
            r->local_tail++;
            atomic_store_explicit(r->sq_tail, r->local_tail, memory_order_release);
            r->pending++;
            return sqe;
        }
        int rc = sys_enter(r->fd, r->pending, 0, 0, NULL, 0);
        if (rc > 0)
            r->pending -= (unsigned)rc;
        else if (rc < 0 && errno != EINTR && errno != EAGAIN && errno != EBUSY)
            return NULL;
    }
}

static void arm_wake(struct cio__e_loop *l, struct ring *r)
{
    struct io_uring_sqe *sqe = get_sqe(r);
    if (sqe == NULL)
        return;
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = l->wakefd;
    sqe->poll32_events = POLLIN;
    sqe->user_data = TAG_WAKE;
}

static cio_err ur_init(struct cio__e_loop *l)
{
    struct ring *r = (struct ring *)CIO__SYS(calloc, ring)(1, sizeof *r);
    if (r == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    r->fd = -1;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CLAMP;
    r->fd = sys_setup(l->ev->ring_entries, &p);
    if (r->fd < 0) {
        int err = errno;
        free(r);
        return err == ENOMEM ? CIO_E_SYSTEM_RESOURCES : CIO_E_OPERATION_UNSUPPORTED;
    }
    if (!(p.features & IORING_FEAT_EXT_ARG) || !(p.features & IORING_FEAT_NODROP) ||
        !(p.features & IORING_FEAT_RW_CUR_POS) || !probe_ops(r->fd)) {
        ring_free(r);
        return CIO_E_OPERATION_UNSUPPORTED;
    }
    r->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (p.features & IORING_FEAT_SINGLE_MMAP) {
        if (r->cq_map_len > r->sq_map_len)
            r->sq_map_len = r->cq_map_len;
        r->cq_map_len = r->sq_map_len;
    }
    r->sq_map = CIO__SYS(mmap, ring_sq)(NULL, r->sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    if (r->sq_map == MAP_FAILED) {
        ring_free(r);
        return CIO_E_SYSTEM_RESOURCES;
    }
    if (p.features & IORING_FEAT_SINGLE_MMAP)
        r->cq_map = r->sq_map;
    else
        r->cq_map = CIO__SYS(mmap, ring_cq)(NULL, r->cq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                         IORING_OFF_CQ_RING);
    r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    r->sqes = (struct io_uring_sqe *)CIO__SYS(mmap, ring_sqes)(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                                          IORING_OFF_SQES);
    if (r->cq_map == MAP_FAILED || r->sqes == MAP_FAILED) {
        ring_free(r);
        return CIO_E_SYSTEM_RESOURCES;
    }
    char *sq = (char *)r->sq_map, *cq = (char *)r->cq_map;
    r->sq_head = (_Atomic(unsigned) *)(void *)(sq + p.sq_off.head);
    r->sq_tail = (_Atomic(unsigned) *)(void *)(sq + p.sq_off.tail);
    r->sq_mask = *(unsigned *)(void *)(sq + p.sq_off.ring_mask);
    r->sq_entries = *(unsigned *)(void *)(sq + p.sq_off.ring_entries);
    r->sq_array = (unsigned *)(void *)(sq + p.sq_off.array);
    r->cq_head = (_Atomic(unsigned) *)(void *)(cq + p.cq_off.head);
    r->cq_tail = (_Atomic(unsigned) *)(void *)(cq + p.cq_off.tail);
    r->cq_mask = *(unsigned *)(void *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(void *)(cq + p.cq_off.cqes);
    r->local_tail = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
    l->wakefd = CIO__SYS(eventfd, uring_init)(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->wakefd < 0) {
        int err = errno;
        ring_free(r);
        return cio__e_fd_error(err);
    }
    l->ring = r;
    arm_wake(l, r);
    return CIO_OK;
}

static void ur_deinit(struct cio__e_loop *l)
{
    if (l->ring != NULL)
        ring_free((struct ring *)l->ring);
    l->ring = NULL;
    if (l->wakefd >= 0)
        close(l->wakefd);
    l->wakefd = -1;
}

/* Reaps every completion; true if there was any (a wake-up included). */
static bool reap(struct cio__e_loop *l, struct ring *r)
{
    unsigned head = atomic_load_explicit(r->cq_head, memory_order_relaxed);
    unsigned tail = atomic_load_explicit(r->cq_tail, memory_order_acquire);
    bool rearm = false;
    unsigned n = 0;
    while (head != tail) {
        n++;
        struct io_uring_cqe *cqe = &r->cqes[head & r->cq_mask];
        uint64_t ud = cqe->user_data;
        int32_t res = cqe->res;
        head++;
        if (ud == TAG_WAKE) {
            cio__e_wake_drained(l);
            rearm = true;
        } else if (ud != TAG_CANCEL && ud != 0) {
            atomic_store_explicit(r->cq_head, head, memory_order_release);
            cio__e_poller_complete((struct cio__e_wait *)(uintptr_t)ud, res);
        }
        if (head == tail)
            tail = atomic_load_explicit(r->cq_tail, memory_order_acquire);
    }
    atomic_store_explicit(r->cq_head, head, memory_order_release);
    if (rearm)
        arm_wake(l, r);
    return n > 0;
}

static void ur_wait(struct cio__e_loop *l, int64_t timeout_ns)
{
    struct ring *r = (struct ring *)l->ring;
    /* Anything reaped here — a wake-up above all, whose eventfd count is now drained — must send the
     * loop back to look at its queues before it blocks. */
    bool have = reap(l, r);
    have = have || atomic_load_explicit(r->cq_head, memory_order_relaxed) !=
                       atomic_load_explicit(r->cq_tail, memory_order_acquire);
    if (timeout_ns == 0 || have || l->run_head != NULL) {
        if (r->pending > 0) {
            int rc = sys_enter(r->fd, r->pending, 0, 0, NULL, 0);
            if (rc > 0)
                r->pending -= (unsigned)rc;
        }
    } else {
        struct __kernel_timespec ts;
        struct io_uring_getevents_arg arg;
        memset(&arg, 0, sizeof arg);
        if (timeout_ns > 0) {
            ts.tv_sec = timeout_ns / 1000000000;
            ts.tv_nsec = timeout_ns % 1000000000;
            arg.ts = (uint64_t)(uintptr_t)&ts;
        }
        int rc = sys_enter(r->fd, r->pending, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
        if (rc > 0)
            r->pending -= (unsigned)rc;
    }
    reap(l, r);
}

static void ur_wake(struct cio__e_loop *l)
{
    uint64_t one = 1;
    ssize_t n = CIO__SYS(write, uring_wake)(l->wakefd, &one, sizeof one);
    (void)n;
}

static cio_err ur_arm(struct cio__e_loop *l, struct cio__e_wait *w)
{
    struct io_uring_sqe *sqe = get_sqe((struct ring *)l->ring);
    if (sqe == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = w->fd;
    sqe->poll32_events = w->events;
    sqe->user_data = (uint64_t)(uintptr_t)w;
    return CIO_OK;
}

static void ur_cancel(struct cio__e_loop *l, struct cio__e_wait *w)
{
    struct io_uring_sqe *sqe = get_sqe((struct ring *)l->ring);
    if (sqe == NULL)
        return; /* the operation completes by itself (a wait with no timeout: at destroy) */
    sqe->opcode = IORING_OP_ASYNC_CANCEL;
    sqe->fd = -1;
    sqe->addr = (uint64_t)(uintptr_t)w;
    sqe->user_data = TAG_CANCEL;
}

const struct cio__e_poller_ops cio__e_uring_ops = {
    .name = "io_uring",
    .init = ur_init,
    .deinit = ur_deinit,
    .wait = ur_wait,
    .wake = ur_wake,
    .arm_fd = ur_arm,
    .cancel = ur_cancel,
};

int32_t cio__e_uring_rw(struct cio_evented *e, enum cio__e_uring_op op, int fd, const void *iov, unsigned iovcnt,
                        uint64_t offset, bool cancelable, bool *canceled)
{
    struct cio_any_future *f = cio__e_self(e);
    struct cio__e_loop *l = f->home;
    *canceled = false;
    if (cancelable && cio__e_check_cancel(e) != CIO_OK) {
        *canceled = true;
        return -ECANCELED;
    }
    struct io_uring_sqe *sqe = get_sqe((struct ring *)l->ring);
    if (sqe == NULL)
        return -ENOMEM;
    struct cio__e_wait w;
    memset(&w, 0, sizeof w);
    w.fiber = f;
    w.kind = CIO__E_W_POLLER;
    w.cancelable = cancelable;
    w.fd = fd;
    w.timer.index = SIZE_MAX;
    w.resignal.index = SIZE_MAX;
    sqe->fd = fd;
    sqe->user_data = (uint64_t)(uintptr_t)&w;
    switch (op) {
    case CIO__E_U_READV:
        sqe->opcode = IORING_OP_READV;
        break;
    case CIO__E_U_WRITEV:
        sqe->opcode = IORING_OP_WRITEV;
        break;
    case CIO__E_U_FSYNC:
        sqe->opcode = IORING_OP_FSYNC;
        break;
    }
    if (op != CIO__E_U_FSYNC) {
        sqe->addr = (uint64_t)(uintptr_t)iov;
        sqe->len = iovcnt;
        sqe->off = offset;
    }
    w.in_flight = true;
    l->armed++;
    f->wait = &w;
    cio__e_suspend(NULL, NULL);
    f->wait = NULL;
    if ((w.res == -ECANCELED || w.res == -EINTR) && w.reason == CIO__E_R_CANCEL) {
        cio__e_ack_cancel(f);
        *canceled = true;
        return -ECANCELED;
    }
    return w.res;
}
