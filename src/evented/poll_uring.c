/*
 * The io_uring poller: one ring per loop, set up through raw system calls (numbers from the generated
 * platform/internal/cio/sysnum.h; no liburing). Readiness waits are POLL_ADD requests; reads, writes and
 * fsync run as native ring operations; a wait is canceled with ASYNC_CANCEL and its completion
 * (-ECANCELED, or the result if it finished first) still ends it — unless the request has not been
 * submitted yet (fibers queue, the loop submits when it next enters the kernel): then it becomes a
 * NOP and the wait ends at once, with no system call. Another thread wakes the loop
 * through an eventfd that a POLL_ADD on the ring watches.
 *
 * Invariants: the submission queue is filled and submitted, and the completion queue reaped, only by
 * the loop thread (fibers running on it included); a request's user_data is its wait record, which
 * lives on the waiting fiber's stack until that completion arrives (the fiber cannot resume before).
 * Some tags are not records: TAG_WAKE (the eventfd poll), TAG_CANCEL (ASYNC_CANCEL's own result),
 * TAG_MSG_WAKE
 * (a wake-up another loop posted with MSG_RING) and TAG_MSG_SENT + i (the sender's own result of
 * that message to loop i). No record is at an address that small (the first page is never mapped).
 * Wake-ups: a loop thread of the same instance wakes another loop by a MSG_RING from its own ring,
 * submitted at once (the target's blocked io_uring_enter returns with that completion: no eventfd
 * write, read or re-arm); a message the kernel refuses falls back to the eventfd, which is also what
 * every other thread (not a loop of this instance) writes.
 * create probes: io_uring_setup (ENOSYS under qemu-user and old kernels, EPERM under seccomp or
 * kernel.io_uring_disabled), IORING_FEAT_EXT_ARG (5.11: timed waits) and the opcodes the flavour
 * needs; any failure makes the flavour unavailable (the auto flavour then falls back to epoll). The
 * other opcodes (openat, statx, accept, ...) are optional: the probe's answer is kept per ring
 * (every ring of a process sees the same kernel) and the overrides (fs_uring.c, net_uring.c,
 * installed by cio_evented_create) put a native slot in the instance's vtable only for those the
 * kernel has; the rest keep the helper pool / readiness paths.
 * A ring operation's deadline is a timer of the loop (timers.c, the wait record's own), not a linked
 * IORING_OP_LINK_TIMEOUT: arming it costs no SQE, no CQE and no kernel timer (deadlines armed in
 * order are a FIFO append); only when it fires is the operation canceled (ASYNC_CANCEL, or a NOP if
 * it was never submitted), and its completion ends the wait as a cancel's does.
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
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cio/sysnum.h"
#include "evented.h"
#include "internal.h"
#include "uring.h"
#include "internal/cio_oscalls.h"

#define TAG_WAKE 1u
#define TAG_CANCEL 2u
#define TAG_MSG_WAKE 4u
#define TAG_MSG_SENT 16u
#define MSG_LOOPS 4096u /* loops reachable by MSG_RING (their index < this); others: the eventfd */
#define PROBE_OPS 256u
#define COUNTED_OPS 64u
#define RW_MAX 0x7ffff000u /* MAX_RW_COUNT: INT_MAX rounded down to a page */

struct ring {
    int fd;
    unsigned sq_entries, sq_mask, cq_mask;
    _Atomic(unsigned) *sq_head, *sq_tail, *cq_head, *cq_tail;
    _Atomic(unsigned) *sq_flags; /* IORING_SQ_TASKRUN: completions wait for this thread to enter */
    unsigned *sq_array;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    void *sq_map, *cq_map;
    size_t sq_map_len, cq_map_len, sqes_len;
    unsigned local_tail; /* next free SQE (not yet published) */
    unsigned pending;    /* published to the kernel's tail but not yet submitted */
    uint64_t wake_value;
    bool has[PROBE_OPS];                  /* opcodes the kernel has (probe) */
    _Atomic(uint64_t) count[COUNTED_OPS]; /* submissions for fibers per opcode (bump: this loop's
                                             thread only): ring operations, readiness polls */
    _Atomic(uint64_t) enters;             /* io_uring_enter calls that submitted SQEs (bump) */
};

/* One more in a ring's counter: only the ring's own thread writes them (it alone fills and submits
 * its queue), so a relaxed load and store, not a locked add; any thread may read them. */
static inline void bump(_Atomic(uint64_t) *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static int sys_setup(unsigned entries, struct io_uring_params *p)
{
    return CIO__SYS(io_uring_setup, ring_setup)(entries, p);
}

/* Every io_uring_enter of a ring; those that hand it SQEs are counted (cio__e_uring_enters). */
static int sys_enter(struct ring *r, unsigned to_submit, unsigned min_complete, unsigned flags, const void *arg,
                     size_t argsz)
{
    if (to_submit > 0)
        bump(&r->enters);
    return CIO__SYS(io_uring_enter, ring_enter)(r->fd, to_submit, min_complete, flags, arg, argsz);
}

static int sys_register(int fd, unsigned op, void *arg, unsigned n)
{
    return CIO__SYS(io_uring_register, ring_probe)(fd, op, arg, n);
}

static void ring_free(struct ring *r)
{
    if (r->sqes != NULL && r->sqes != MAP_FAILED)
        CIO__SYS(munmap, ring_free)(r->sqes, r->sqes_len);
    if (r->cq_map != NULL && r->cq_map != MAP_FAILED && r->cq_map != r->sq_map)
        CIO__SYS(munmap, ring_free)(r->cq_map, r->cq_map_len);
    if (r->sq_map != NULL && r->sq_map != MAP_FAILED)
        CIO__SYS(munmap, ring_free)(r->sq_map, r->sq_map_len);
    if (r->fd >= 0)
        CIO__SYS(close, ring_free)(r->fd);
    free(r);
}

/* Fills r->has; false when an opcode the flavour cannot do without is missing. */
static bool probe_ops(struct ring *r)
{
    size_t len = sizeof(struct io_uring_probe) + PROBE_OPS * sizeof(struct io_uring_probe_op);
    struct io_uring_probe *pr = (struct io_uring_probe *)CIO__SYS(calloc, ring_probe)(1, len);
    if (pr == NULL)
        return false;
    bool ok = sys_register(r->fd, IORING_REGISTER_PROBE, pr, PROBE_OPS) == 0;
    for (unsigned op = 0; ok && op < PROBE_OPS && op <= pr->last_op && op < pr->ops_len; op++)
        r->has[op] = (pr->ops[op].flags & IO_URING_OP_SUPPORTED) != 0;
    free(pr);
    static const unsigned need[] = {IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_POLL_ADD,
                                    IORING_OP_ASYNC_CANCEL};
    for (size_t i = 0; ok && i < sizeof need / sizeof need[0]; i++)
        ok = r->has[need[i]];
    /* The test knob: only what the flavour needs, so the fallback paths run on this kernel too. */
    const char *native = getenv("CIO_EVENTED_URING_NATIVE");
    if (ok && native != NULL && strcmp(native, "0") == 0) {
        memset(r->has, 0, sizeof r->has);
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            r->has[need[i]] = true;
    }
    return ok;
}

/* The next n SQEs (n <= 2), zeroed, in out[]; submits what is queued when the ring is too full for
 * all n, so they always go to the kernel in the same submission. false: the ring cannot submit. */
static bool get_sqes(struct ring *r, unsigned n, struct io_uring_sqe **out)
{
    if (n > r->sq_entries)
        return false;
    for (;;) {
        unsigned head = atomic_load_explicit(r->sq_head, memory_order_acquire);
        if (r->local_tail - head + n <= r->sq_entries) {
            for (unsigned i = 0; i < n; i++) {
                unsigned idx = r->local_tail & r->sq_mask;
                out[i] = &r->sqes[idx];
                memset(out[i], 0, sizeof *out[i]);
                r->sq_array[idx] = idx;
                r->local_tail++;
            }
            atomic_store_explicit(r->sq_tail, r->local_tail, memory_order_release);
            r->pending += n;
            return true;
        }
        int rc = sys_enter(r, r->pending, 0, 0, NULL, 0);
        if (rc > 0)
            r->pending -= (unsigned)rc;
        else if (rc < 0 && errno != EINTR && errno != EAGAIN && errno != EBUSY)
            return false;
    }
}

/* The next SQE, zeroed (get_sqes); NULL when the ring cannot submit. */
static struct io_uring_sqe *get_sqe(struct ring *r)
{
    struct io_uring_sqe *sqe;
    return get_sqes(r, 1, &sqe) ? sqe : NULL;
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
    /* Completions run as task work when this thread next enters the kernel, with no interrupt
     * (IPI) of the loop thread while it runs fibers; TASKRUN_FLAG says when some wait (5.19+). */
    p.flags = IORING_SETUP_CLAMP | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    r->fd = sys_setup(l->ev->ring_entries, &p);
    if (r->fd < 0 && errno == EINVAL) { /* an older kernel: interrupted for each completion */
        memset(&p, 0, sizeof p);
        p.flags = IORING_SETUP_CLAMP;
        r->fd = sys_setup(l->ev->ring_entries, &p);
    }
    if (r->fd < 0) {
        int err = errno;
        free(r);
        return err == ENOMEM ? CIO_E_SYSTEM_RESOURCES : CIO_E_OPERATION_UNSUPPORTED;
    }
    if (!(p.features & IORING_FEAT_EXT_ARG) || !(p.features & IORING_FEAT_NODROP) ||
        !(p.features & IORING_FEAT_RW_CUR_POS) || !probe_ops(r)) {
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
    r->sq_map = CIO__SYS(mmap, ring_sq)(NULL, r->sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                                        IORING_OFF_SQ_RING);
    if (r->sq_map == MAP_FAILED) {
        ring_free(r);
        return CIO_E_SYSTEM_RESOURCES;
    }
    if (p.features & IORING_FEAT_SINGLE_MMAP)
        r->cq_map = r->sq_map;
    else
        r->cq_map = CIO__SYS(mmap, ring_cq)(NULL, r->cq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                                            r->fd, IORING_OFF_CQ_RING);
    r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    r->sqes = (struct io_uring_sqe *)CIO__SYS(mmap, ring_sqes)(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
                                                               MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    if (r->cq_map == MAP_FAILED || r->sqes == MAP_FAILED) {
        ring_free(r);
        return CIO_E_SYSTEM_RESOURCES;
    }
    char *sq = (char *)r->sq_map, *cq = (char *)r->cq_map;
    r->sq_head = (_Atomic(unsigned) *)(void *)(sq + p.sq_off.head);
    r->sq_tail = (_Atomic(unsigned) *)(void *)(sq + p.sq_off.tail);
    r->sq_flags = (_Atomic(unsigned) *)(void *)(sq + p.sq_off.flags);
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
        CIO__SYS(close, uring_deinit)(l->wakefd);
    l->wakefd = -1;
}

static void wake_eventfd(struct cio__e_loop *l)
{
    uint64_t one = 1;
    ssize_t n = CIO__SYS(write, uring_wake)(l->wakefd, &one, sizeof one);
    (void)n;
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
            cio__e_eventfd_drain(l);
            cio__e_wake_drained(l);
            rearm = true;
        } else if (ud == TAG_MSG_WAKE) {
            /* The message is the wake-up, and reaping it drains it (cio__e_wake_drained's rule). */
            atomic_store_explicit(&l->woken, 0, memory_order_seq_cst);
        } else if (ud >= TAG_MSG_SENT && ud < TAG_MSG_SENT + MSG_LOOPS) {
            if (res < 0) /* not delivered (the target's ring is full or going): the eventfd then */
                wake_eventfd(&l->ev->loops[ud - TAG_MSG_SENT]);
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
        bool taskrun = (atomic_load_explicit(r->sq_flags, memory_order_relaxed) & IORING_SQ_TASKRUN) != 0;
        if (r->pending > 0 || taskrun) {
            int rc = sys_enter(r, r->pending, 0, taskrun ? IORING_ENTER_GETEVENTS : 0u, NULL, 0);
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
        int rc = sys_enter(r, r->pending, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
        if (rc > 0)
            r->pending -= (unsigned)rc;
    }
    reap(l, r);
}

static void ur_wake(struct cio__e_loop *l)
{
    struct cio__e_loop *self = cio__e_tls_loop;
    if (self != NULL && self != l && self->ev == l->ev && l->index < MSG_LOOPS &&
        cio__e_uring_has(l->ev, IORING_OP_MSG_RING)) {
        struct ring *mine = (struct ring *)self->ring;
        struct io_uring_sqe *sqe = get_sqe(mine);
        if (sqe != NULL) {
            sqe->opcode = IORING_OP_MSG_RING;
            sqe->fd = ((struct ring *)l->ring)->fd;
            sqe->off = TAG_MSG_WAKE; /* the target's user_data; its res is sqe->len, 0 */
            sqe->user_data = TAG_MSG_SENT + l->index;
            bump(&mine->count[IORING_OP_MSG_RING]);
            /* At once: the target may be asleep in io_uring_enter. */
            int rc = sys_enter(mine, mine->pending, 0, 0, NULL, 0);
            if (rc > 0)
                mine->pending -= (unsigned)rc;
            if (rc >= 0 && mine->pending == 0)
                return;
            /* Not submitted yet (EINTR, EBUSY): it will be, with this loop's next submission; the
             * eventfd wakes the target now (a second wake-up is harmless). */
        }
    }
    wake_eventfd(l);
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
    bump(&((struct ring *)l->ring)->count[IORING_OP_POLL_ADD]);
    return CIO_OK;
}

/* If w's request is still in the submission queue (queued by the fiber, not yet submitted: the
 * loop submits when it next enters the kernel), turns it into a NOP whose completion is ignored;
 * true if it did. Without SQPOLL the kernel reads SQEs only in io_uring_enter, which only this
 * thread calls, so the last `pending` entries are still ours. */
static bool withdraw_unsubmitted(struct ring *r, struct cio__e_wait *w)
{
    for (unsigned i = 1; i <= r->pending; i++) {
        struct io_uring_sqe *sqe = &r->sqes[r->sq_array[(r->local_tail - i) & r->sq_mask]];
        if (sqe->user_data != (uint64_t)(uintptr_t)w)
            continue;
        memset(sqe, 0, sizeof *sqe);
        sqe->opcode = IORING_OP_NOP;
        sqe->user_data = TAG_CANCEL;
        return true;
    }
    return false;
}

static void ur_cancel(struct cio__e_loop *l, struct cio__e_wait *w)
{
    struct ring *r = (struct ring *)l->ring;
    if (withdraw_unsubmitted(r, w)) {
        /* Never reached the kernel: nothing to wait for, no buffer in use. */
        bump(&r->count[IORING_OP_NOP]);
        cio__e_poller_complete(w, -ECANCELED);
        return;
    }
    bump(&r->count[IORING_OP_ASYNC_CANCEL]);
    struct io_uring_sqe *sqe = get_sqe(r);
    if (sqe == NULL)
        return; /* the operation completes by itself (a wait with no timeout: at destroy) */
    sqe->opcode = IORING_OP_ASYNC_CANCEL;
    sqe->fd = -1;
    sqe->addr = (uint64_t)(uintptr_t)w;
    sqe->user_data = TAG_CANCEL;
}

const struct cio__e_poller_ops cio__e_uring_ops = {CIO__E_POLLER_OPS(ur, "io_uring")};

/* ---- ring operations ---------------------------------------------------------------------------------------- */

bool cio__e_uring_has(const struct cio_evented *e, unsigned opcode)
{
    const struct ring *r = e->nloops > 0 ? (const struct ring *)e->loops[0].ring : NULL;
    return r != NULL && opcode < PROBE_OPS && r->has[opcode];
}

struct count_arg {
    unsigned opcode;
    uint64_t n;
};

static void count_loop(const struct cio__e_loop *l, void *arg)
{
    struct count_arg *c = (struct count_arg *)arg;
    const struct ring *r = (const struct ring *)l->ring;
    if (r != NULL)
        c->n += atomic_load_explicit(&r->count[c->opcode], memory_order_relaxed);
}

uint64_t cio__e_uring_count(const struct cio_evented *e, unsigned opcode)
{
    struct count_arg c = {opcode, 0};
    if (opcode < COUNTED_OPS)
        cio__e_for_each_loop(e, count_loop, &c); /* loop threads and adopted threads */
    return c.n;
}

static void enters_loop(const struct cio__e_loop *l, void *arg)
{
    const struct ring *r = (const struct ring *)l->ring;
    if (r != NULL)
        *(uint64_t *)arg += atomic_load_explicit(&r->enters, memory_order_relaxed);
}

uint64_t cio__e_uring_enters(const struct cio_evented *e)
{
    uint64_t n = 0;
    cio__e_for_each_loop(e, enters_loop, &n);
    return n;
}

int32_t cio__e_uring_op(struct cio_evented *e, const struct io_uring_sqe *op, int64_t deadline_ns, bool cancelable,
                        enum cio__e_uring_end *end)
{
    struct cio_any_future *f = cio__e_self(e);
    struct cio__e_loop *l = f->home;
    struct ring *r = (struct ring *)l->ring;
    *end = CIO__E_U_DONE;
    if (cancelable && cio__e_cancel_point(e) != CIO_OK) {
        *end = CIO__E_U_CANCELED;
        return -ECANCELED;
    }
    struct io_uring_sqe *sqe = get_sqe(r);
    if (sqe == NULL)
        return -ENOMEM;
    struct cio__e_wait w;
    cio__e_wait_init(&w, f, CIO__E_W_POLLER, cancelable, cio__e_poller_interrupt);
    w.fd = op->fd;
    *sqe = *op;
    sqe->user_data = (uint64_t)(uintptr_t)&w;
    if (op->opcode < COUNTED_OPS)
        bump(&r->count[op->opcode]);
    w.in_flight = true;
    l->armed++;
    if (deadline_ns >= 0)
        cio__e_wait_deadline(l, &w, deadline_ns); /* fires: the operation is canceled, reason TIMEOUT */
    f->wait = &w;
    cio__e_suspend(NULL, NULL);
    f->wait = NULL;
    cio__e_timer_remove(l, &w.timer);
    if (w.res == -ECANCELED || w.res == -EINTR) {
        if (w.reason == CIO__E_R_CANCEL) {
            cio__e_ack_cancel(f);
            *end = CIO__E_U_CANCELED;
            return -ECANCELED;
        }
        if (w.reason == CIO__E_R_TIMEOUT)
            *end = CIO__E_U_TIMED_OUT;
    }
    return w.res;
}

cio_err cio__e_uring_call(struct cio_evented *e, const struct io_uring_sqe *sqe, int64_t deadline_ns, bool cancelable,
                          cio__mapped (*map)(int), int32_t *res)
{
    for (;;) {
        enum cio__e_uring_end end;
        int32_t rc = cio__e_uring_op(e, sqe, deadline_ns, cancelable, &end);
        if (end == CIO__E_U_CANCELED)
            return CIO_E_CANCELED;
        if (end == CIO__E_U_TIMED_OUT)
            return CIO_E_TIMEOUT;
        *res = rc;
        if (rc >= 0)
            return CIO_OK;
        cio__mapped m = map(-rc);
        if (m.action == CIO__MAP_RETRY)
            continue;
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG("ring operation: an errno that means a bug");
        return m.action == CIO__MAP_OK ? (cio_err)CIO_OK : m.err;
    }
}

int32_t cio__e_uring_rw(struct cio_evented *e, enum cio__e_uring_op op, int fd, const void *iov, unsigned iovcnt,
                        uint64_t offset, bool cancelable, bool *canceled)
{
    struct io_uring_sqe sqe;
    memset(&sqe, 0, sizeof sqe);
    sqe.fd = fd;
    switch (op) {
    case CIO__E_U_READV: sqe.opcode = IORING_OP_READV; break;
    case CIO__E_U_WRITEV: sqe.opcode = IORING_OP_WRITEV; break;
    case CIO__E_U_FSYNC: sqe.opcode = IORING_OP_FSYNC; break;
    }
    if (op != CIO__E_U_FSYNC) {
        sqe.addr = (uint64_t)(uintptr_t)iov;
        sqe.len = iovcnt;
        sqe.off = offset;
    }
    if (op != CIO__E_U_FSYNC && iovcnt == 1 &&
        cio__e_uring_has(e, op == CIO__E_U_READV ? IORING_OP_READ : IORING_OP_WRITE)) {
        /* One buffer: READ / WRITE (5.6) take it directly, sparing the kernel the iovec's copy and
         * import (a tenth of a cached 4 KiB pread's kernel time). Same result, offset rules (-1:
         * the current position, IORING_FEAT_RW_CUR_POS) and cancellation; the length is clamped to
         * what one read(2) transfers at most (MAX_RW_COUNT), as readv clamps it: a short count. */
        const struct iovec *v = (const struct iovec *)iov;
        sqe.opcode = op == CIO__E_U_READV ? IORING_OP_READ : IORING_OP_WRITE;
        sqe.addr = (uint64_t)(uintptr_t)v->iov_base;
        sqe.len = v->iov_len > RW_MAX ? RW_MAX : (uint32_t)v->iov_len;
    }
    enum cio__e_uring_end end;
    int32_t res = cio__e_uring_op(e, &sqe, -1, cancelable, &end);
    *canceled = end == CIO__E_U_CANCELED;
    return res;
}
