/*
 * Internal interface of the Evented backend (names cio__e_*), shared by its files:
 *   blocks.c      fiber blocks (the task records) and new fibers: loop caches, free list, regions
 *   sched.c       loop threads, run queues, inboxes, spawning and stealing, suspend/ready, running
 *                 tasks inline
 *   adopt.c       adopted threads (a thread that is no loop thread, made a fiber with a loop of its own)
 *   timers.c      each loop's timers (a FIFO for deadlines armed in order, a heap for the rest), and
 *                 their clock
 *   tasks.c       async/concurrent/await/cancel, groups, cancel state, the futex table, sleep
 *   fdwait.c      a fiber's wait for descriptor readiness through its loop's poller
 *   poll_epoll.c  the readiness poller on epoll (Linux)
 *   poll_kqueue.c the same contract on kqueue (the BSDs), woken through poll_kqueue_user.c
 *                 (EVFILT_USER) or poll_kqueue_pipe.c (a pipe, where EVFILT_USER is missing)
 *   poll_iocp.c   the completion-port poller (Windows): wake-ups and waits on a port per loop, and
 *                 overlapped operations (iocp.h), which net_iocp.c and fs_rw_iocp.c start
 *   fs_helper.c   the file slots every flavour runs alike (helper pool; close and seek in place);
 *                 fs.c (POSIX) and fs_rw_iocp.c (Windows: overlapped) the opens, reads, writes, sync
 *   process_wait_fd.c, process_wait_iocp.c   child waits and signal_wait (POSIX, Windows)
 *   flavour_linux.c, flavour_kqueue.c, flavour_windows.c   which pollers an OS has and how a flavour
 *                 is chosen
 *   poll_uring.c  the io_uring poller: readiness through POLL_ADD, ring operations (one submission,
 *                 optionally with a deadline on the loop's timers), the opcode probe, cancel
 *   fs_uring.c, net_uring.c   the slots the io_uring flavour runs as ring operations (uring.h)
 *   helper.c      operations with no asynchronous form, on a blocking helper pool; the bridge for
 *                 threads that are not fibers
 *   fs.c, net.c   the file/directory and socket slots;  fds.c  the descriptor table
 *   io.c          the vtable, and creating and destroying an instance (the top: nothing calls into it)
 *   fiber*.c, stack.c   context switch and fiber stacks (fiber.h)
 *
 * The model:
 * - A fiber (struct cio_any_future) is created by async/concurrent (or by the bridge) and queued on a
 *   loop's spawn queue. Any idle loop may take (steal) a fiber that has not started; once a fiber has
 *   run on a loop, that loop is its `home` for life: it only ever runs there, every wait it starts is
 *   registered there, and every wake-up goes to that loop's run queue (local) or inbox (from other
 *   threads). So everything a waiting fiber left in loop state (timers, poller registrations,
 *   in-flight ring operations) is touched by the home loop thread only.
 * - A fiber suspends with cio__e_suspend(); the `after` callback runs once the fiber's context is
 *   saved, so a waker that needs a lock the fiber held (a futex bucket) can only see the fiber once
 *   it is really switched out. A suspending or exiting fiber switches straight to the next fiber of
 *   its loop when one is ready (LIFO slot, run queue, the loop's spawn ring), which then runs the
 *   `after` first thing; else to the loop's scheduler, which runs it. A budget per round bounds the
 *   direct switches, so the scheduler's inbox, timers and I/O polling are never starved.
 * - Awaiting a future parks the awaiter in the future (f->awaiter, done = AWAITED) instead of the
 *   futex table; the finishing fiber wakes it, or switches straight to it when both share a loop.
 * - Waits a fiber can be woken from by another thread (futex, sleep) end by a CAS on wait->state:
 *   exactly one waker (futex wake, timer, cancel) wins and makes the fiber ready. Poller waits (fd
 *   readiness, ring operations, helper jobs) end only when the poller/helper reports the completion;
 *   cancellation and timeouts ask the poller to cancel and then wait for that completion, so
 *   buffers and the wait record (on the fiber's stack) stay valid until the kernel is done.
 * - Cancel: the canceler sets REQ in fiber->cancel and posts the fiber on its home loop's cancel
 *   list; the home loop, between fibers, interrupts the fiber's wait if it is cancelable.
 *
 * Lock order: group mu → futex bucket mu → loop inbox mu;  spawn mu is a leaf; free_mu → the stack
 * pool's lock (blocks carved from its regions).
 *
 * Layers: no file calls a function of a file that calls back into it, directly or round a longer
 * loop (tools/callgraph.py checks, in `build.py test`). Each file calls only files below it: io.c;
 * the slot files (fs, net, their _uring forms) and flavour_<os>.c; poll_uring.c, helper.c,
 * fdwait.c; tasks.c; poll_epoll.c, poll_kqueue*.c; adopt.c; sched.c; timers.c, blocks.c, fds.c,
 * stack.c, fiber*.c. What a lower file must reach above it goes through a pointer set from above:
 * the poller ops (e->poller), a wait's interrupt (the wait record), e->fiber_started and
 * e->fiber_finished (set by create), the Threaded backend's hooks.
 */
#ifndef CIO_EVENTED_INTERNAL_H
#define CIO_EVENTED_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cio/evented.h"
#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"
#include "cio/process.h"
#include "cio/threaded.h"
#include "fiber.h"
#include "list.h"

#define CIO__E_REQ 1u
#define CIO__E_LOCAL_STACKS 1024u
#define CIO__E_ACK 2u
#define CIO__E_RING 1024u

struct cio__e_loop;
struct cio__e_group;
struct cio__e_wait;

/* ---- timers (per loop, touched by the loop thread only): a FIFO of deadlines armed in order, and
 * a binary min-heap for the rest (timers.c) ------------------------------------------------------------- */
#define CIO__E_TIMER_QUEUED (SIZE_MAX - 1)
struct cio__e_timer {
    int64_t deadline; /* CIO_CLOCK_AWAKE ns */
    size_t index;     /* position in the heap, CIO__E_TIMER_QUEUED in the FIFO, SIZE_MAX when not armed */
    struct cio__e_timer *qprev, *qnext; /* FIFO links */
    void (*fire)(struct cio__e_loop *loop, struct cio__e_timer *timer);
};

/* ---- a fiber --------------------------------------------------------------------------------------- */
struct cio_any_future {
    _Atomic(uint32_t) gen;        /* first: the future's generation (src/core/io.c), 0 once awaited */
    struct cio_any_future *next;  /* run queue / spawn queue / free list */
    struct cio_any_future *cnext; /* home loop's cancel list */
    struct cio_any_future *gnext, *gprev;
    struct cio_any_future *lnext, *lprev; /* its home loop's list of started fibers (live_lock) */
    struct cio_evented *owner;
    struct cio__e_group *group;         /* NULL for futures */
    _Atomic(struct cio__e_loop *) home; /* set when it first runs */
    cio_task_fn fn;
    const char *site; /* where it was spawned ("file:line"), or NULL (overflow.h) */
    cio_err result;
    cio_cancel_protection protection;
    _Atomic(uint32_t) cancel;       /* CIO__E_REQ / CIO__E_ACK */
    _Atomic(uint32_t) done;         /* CIO__E_DONE_*: running / finished (result valid) / awaited */
    struct cio_any_future *awaiter; /* the fiber parked in an await of this future (DONE_AWAITED) */
    bool handed_off;                /* exiting: switched straight to its awaiter (home loop only) */
    bool inline_ok;                 /* made by async or group_async: may run inline in an await
                                       (cio__e_await_inline, cio__e_group_inline); a concurrent
                                       task always starts as a fiber of its own */
    bool cancel_posted;             /* on home's cancel list (home inbox mu) */
    bool glinked;                   /* in its group's member list (runs as a fiber; group mu) */
    _Atomic(bool) exited;           /* finished; no more cancel posts (read under home inbox mu) */
    struct cio__e_wait *wait;       /* the wait it is suspended in (home loop reads it) */
    cio__fiber_ctx ctx;
    cio__stack stack;
    size_t capacity;
    void *region; /* the block's region (blocks.c block_alloc), or NULL: malloc'd */
    size_t ctx_size;
    unsigned char *ctxbuf; /* CIO_CONTEXT_ALIGN-aligned */
};

/* f->done: a future's state word. Only the owner awaits (or cancels) a future, so at most one waiter:
 * a fiber parks itself in f->awaiter (RUNNING → AWAITED, in its suspend's `after`, once it is
 * switched out); a thread that is no fiber sleeps on the futex table (RUNNING → TABLE). The fiber
 * that finishes swaps in DONE and wakes whichever it finds. */
#define CIO__E_DONE_RUNNING 0u
#define CIO__E_DONE 1u
#define CIO__E_DONE_AWAITED 2u
#define CIO__E_DONE_TABLE 3u

/* ---- a wait ------------------------------------------------------------------------------------------ */
enum cio__e_wait_kind { CIO__E_W_FUTEX = 1, CIO__E_W_SLEEP, CIO__E_W_POLLER, CIO__E_W_HELPER, CIO__E_W_AWAIT };
enum cio__e_reason { CIO__E_R_NONE = 0, CIO__E_R_EVENT, CIO__E_R_TIMEOUT, CIO__E_R_CANCEL };

struct cio__e_wait {
    struct cio_any_future *fiber; /* NULL: a foreign thread (futex waits only) */
    uint8_t kind;
    bool cancelable;
    uint8_t reason; /* why it ended (for poller waits: why it was canceled) */
    /* Interrupts the wait for a cancel request (home loop thread, the fiber switched out): set by
     * whoever starts a cancelable wait of a fiber (NULL: none), called by cio__e_deliver_cancel. */
    void (*interrupt)(struct cio__e_loop *loop, struct cio__e_wait *w);
    _Atomic(uint32_t) state; /* futex/sleep: 0 waiting, 1 woken; foreign: OS futex word */
    /* futex */
    const _Atomic(uint32_t) *addr;
    struct cio__e_wait *fnext, *fprev;
    bool linked;
    /* timeouts */
    struct cio__e_timer timer;
    /* poller */
    int fd;
    uint32_t events;
    int32_t res;    /* completion result (readiness mask or -errno / count) */
    bool in_flight; /* ring: submitted, completion not yet seen */
    bool cancel_sent;
    /* await: the future awaited (a cancel is forwarded to it; the wait ends only when it finishes) */
    struct cio_any_future *awaited;
    /* helper */
    void *htask;
    struct cio__e_timer resignal;
    int64_t backoff;
};

/* A wait of `kind` by fiber f (NULL: a foreign thread), interrupted by `interrupt` for a cancel
 * request (NULL: none); everything else zero, no timer or resignal armed. */
static inline void cio__e_wait_init(struct cio__e_wait *w, struct cio_any_future *f, uint8_t kind, bool cancelable,
                                    void (*interrupt)(struct cio__e_loop *loop, struct cio__e_wait *w))
{
    memset(w, 0, sizeof *w);
    w->fiber = f;
    w->kind = kind;
    w->cancelable = cancelable;
    w->interrupt = interrupt;
    w->timer.index = SIZE_MAX;
    w->resignal.index = SIZE_MAX;
}

/* ---- pollers: epoll (and kqueue) readiness, or io_uring ---------------------------------------------- */
struct cio__e_poller_ops {
    const char *name;
    cio_err (*init)(struct cio__e_loop *loop);
    void (*deinit)(struct cio__e_loop *loop);
    /* Blocks up to timeout_ns (< 0: forever; 0: poll) for completions and wake-ups; reports each
     * through cio__e_poller_complete. Submits pending work first. */
    void (*wait)(struct cio__e_loop *loop, int64_t timeout_ns);
    /* Any thread: makes a blocked wait() return. */
    void (*wake)(struct cio__e_loop *loop);
    /* Home loop, fiber running: start waiting for `events` (POLLIN/POLLOUT bits) on w->fd. */
    cio_err (*arm_fd)(struct cio__e_loop *loop, struct cio__e_wait *w);
    /* Home loop thread, fiber suspended: stop w early (cancel or timeout); the completion follows
     * (now for epoll and kqueue, and for an io_uring request still in the submission queue; from
     * the kernel for one it has). */
    void (*cancel)(struct cio__e_loop *loop, struct cio__e_wait *w);
    /* Optional (NULL: none), home loop, fiber running, around a stream read of fd (net.c):
     * read_first says whether the read should wait for readiness before its attempt (the poller
     * knows nothing has arrived since this loop's last read came back short), and takes any edge
     * it kept for fd's reading direction (the attempt about to be made sees that data);
     * read_done reports how the attempt went (drained: short, so nothing was left). */
    bool (*read_first)(struct cio__e_loop *loop, int fd);
    void (*read_done)(struct cio__e_loop *loop, int fd, bool drained);
};
/* A poller's table from its name and the prefix p of its functions p_init, p_deinit, p_wait, p_wake,
 * p_arm and p_cancel (the optional hooks follow it in the initialiser). */
#define CIO__E_POLLER_OPS(p, label)                                                                               \
    .name = label, .init = p##_init, .deinit = p##_deinit, .wait = p##_wait, .wake = p##_wake, .arm_fd = p##_arm, \
    .cancel = p##_cancel

/* Reads a loop's wake-up eventfd empty (poll_epoll.c; the epoll and io_uring pollers, before
 * cio__e_wake_drained). */
void cio__e_eventfd_drain(struct cio__e_loop *loop);
/* A poller descriptor that could not be made at init (epoll_create1, eventfd, ...): its mapped error. */
cio_err cio__e_fd_error(int err);
extern const struct cio__e_poller_ops cio__e_epoll_ops;
extern const struct cio__e_poller_ops cio__e_uring_ops;
extern const struct cio__e_poller_ops cio__e_kqueue_ops;
extern const struct cio__e_poller_ops cio__e_iocp_ops;

/* ---- a loop ------------------------------------------------------------------------------------------ */
struct cio__e_loop {
    struct cio_evented *ev;
    unsigned index;
    pthread_t thread;
    cio__fiber_ctx sched;           /* the loop thread's own context */
    struct cio_any_future *current; /* the fiber running, or NULL */
    void (*after)(void *);          /* run by the loop once `current` has switched out */
    void *after_arg;
    struct cio_any_future *run_head, *run_tail; /* ready, this thread only */
    cio__mutex inbox_mu;
    struct cio_any_future *in_head, *in_tail; /* made ready by other threads */
    struct cio_any_future *cancels;           /* cancel requests to deliver */
    _Atomic(uint32_t) inbox_flag;             /* set with in_head/cancels, cleared on drain */
    /* Not started yet, anyone may take them: the ring (pushed by this loop's thread only, taken by
     * any loop with a CAS on rq_head), and behind it the spawn queue (spawns from other threads,
     * and the ring's overflow). */
    _Atomic(uint32_t) rq_head, rq_tail; /* rq[] itself: at the end */
    cio__mutex spawn_mu;
    struct cio_any_future *sp_head, *sp_tail;
    _Atomic(size_t) sp_count;
    struct cio__e_timer **heap;
    size_t heap_len, heap_cap;
    struct cio__e_timer *tq_head, *tq_tail; /* the timer FIFO, deadlines in order */
    _Atomic(uint32_t) sleeping;             /* inside poller wait() (or about to be) */
    _Atomic(uint32_t) woken;                /* a wake() is pending */
    size_t armed;                           /* poller waits in flight */
    /* Fibers started here and not finished (linked by this thread as they start, unlinked as they
     * exit; read by destroy, which cancels them): live_lock (a spinlock, cio__e_live_lock) guards
     * the list. Loop threads only. */
    _Atomic(uint32_t) live_lock;
    struct cio_any_future *live_head;
    /* this thread only: */
    struct cio_any_future *lifo;      /* spawned by this loop's fibers, runs next; never stolen */
    unsigned budget;                  /* direct fiber-to-fiber switches left before the scheduler
                                         must run (refilled by it each round; 0 on adopted loops) */
    struct cio_any_future *blk_cache; /* free fiber blocks (BLOCK_CTX capacity) */
    unsigned blk_count;
    unsigned stk_count; /* in stk_cache[], at the end */
    /* an adopted thread's loop (a thread that is not a loop thread, made a fiber when it first
     * used the instance; see adopt.c): */
    bool adopted;
    struct cio__e_loop *anext;         /* the instance's list of them (adopt_mu) */
    struct cio_any_future *main_fiber; /* the thread itself */
    cio__stack sched_stack;            /* where its scheduler context runs */
    /* poller state */
    int epfd;   /* epoll or kqueue descriptor */
    int wakefd; /* eventfd or pipe read end; -1 when the wake-up has none */
    void *ring; /* poll_uring.c's ring, or poll_kqueue.c's registrations */
    /* cio_evented_get_stats: written by this loop's thread only (a relaxed load and store, no
     * locked add), read by any */
    _Atomic(size_t) n_fibers; /* fibers that started running on their own stack here */
    _Atomic(size_t) n_inline; /* tasks whose function ran inline on a fiber of this loop */
    /* The two big arrays last (8 KiB and 32 KiB): the fields above, which every operation touches,
     * then share a page or two instead of lying on either side of them (each page is a TLB entry,
     * and a system call may flush them all). */
    _Atomic(struct cio_any_future *) rq[CIO__E_RING]; /* the spawn ring (rq_head, rq_tail) */
    cio__stack stk_cache[CIO__E_LOCAL_STACKS];        /* free stacks (stk_count) */
};

/* ---- an instance -------------------------------------------------------------------------------------- */
struct cio_evented {
    cio_evented_flavour flavour;
    const struct cio__e_poller_ops *poller;
    unsigned nloops;
    struct cio__e_loop *loops;
    cio__stack_pool stacks;
    size_t stack_size;
    unsigned ring_entries;
    cio_threaded *helper;        /* the blocking helper pool */
    struct cio_vtable vtable;    /* cio__e_vtable, with the io_uring flavour's ring operations (io.c) */
    _Atomic(size_t) live;        /* fibers created and not finished (a group with members: one) */
    _Atomic(uint32_t) live_seq;  /* futex word bumped when live drops to 0 */
    _Atomic(uint32_t) next_loop; /* round robin for spawns from foreign threads */
    _Atomic(uint32_t) shutdown;
    cio__mutex free_mu;
    struct cio_any_future *free_list;
    size_t free_count;
    void *rgn; /* the region blocks are carved from (free_mu), rgn_left bytes left */
    unsigned char *rgn_next;
    size_t rgn_left;
    struct cio__e_loop *adopted; /* loops of adopted threads (adopt.c adopt_mu) */
    /* cio_evented_get_stats: counts of adopted loops that are gone, and tasks run inline on a thread
     * with no loop (no fiber could be had) */
    _Atomic(size_t) n_fibers_gone, n_inline_gone;
    /* tasks.c's part of a fiber's start and finish, which sched.c calls back (set by create, io.c):
     * cio__e_group_started (a group member starts running), cio__e_finish (a fiber finished). */
    void (*fiber_started)(struct cio_any_future *f);
    void (*fiber_finished)(struct cio_any_future *f);
    uint32_t id; /* this instance's number, never reused in the process (1, 2, ...: io.c); the iocp
                  * flavour records it as the owner of each handle it attaches (poll_iocp.c) */
};

/* One more in a per-loop counter (struct cio__e_loop n_fibers / n_inline), by the loop's own thread. */
static inline void cio__e_count(_Atomic(size_t) *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* One more live unit (a fiber, or a group that has members): destroy waits until none is left. */
static inline void cio__e_live_add(struct cio_evented *e)
{
    atomic_fetch_add_explicit(&e->live, 1, memory_order_acq_rel);
}

/* ---- overflow.c: whether a fault lies just below the stack of the fiber this thread runs (a
 * cio__overflow_resolver, src/core/overflow.h) ---- */
struct cio__overflow_info;
bool cio__e_overflow(const void *addr, struct cio__overflow_info *out);

/* A zeroed loop's fields before its poller's init (io.c; adopt.c with index UINT32_MAX): no
 * descriptors yet, its locks ready. */
static inline void cio__e_loop_init(struct cio__e_loop *l, struct cio_evented *e, unsigned idx)
{
    l->ev = e;
    l->index = idx;
    l->epfd = -1;
    l->wakefd = -1;
    cio__mu_init(&l->inbox_mu);
    cio__mu_init(&l->spawn_mu);
}

/* The live list's lock (live_lock): a spinlock, since its loop takes it twice per fiber (start and
 * exit) and destroy, the only other taker, holds it briefly: one exchange and one store instead of a
 * mutex's two atomic operations. Yields now and then: the holder may be a preempted thread. */
static inline void cio__e_live_lock(struct cio__e_loop *l)
{
    unsigned spins = 0;
    while (atomic_exchange_explicit(&l->live_lock, 1, memory_order_acquire) != 0) {
        while (atomic_load_explicit(&l->live_lock, memory_order_relaxed) != 0)
            if (++spins % 64 == 0)
                sched_yield();
    }
}

static inline void cio__e_live_unlock(struct cio__e_loop *l)
{
    atomic_store_explicit(&l->live_lock, 0, memory_order_release);
}

/* Home loop thread: f starts running (fiber_entry) / has exited for good (fiber_exit_after). */
static inline void cio__e_live_link(struct cio__e_loop *l, struct cio_any_future *f)
{
    cio__e_live_lock(l);
    CIO__LIST_PUSH(l->live_head, f, lprev, lnext);
    cio__e_live_unlock(l);
}

static inline void cio__e_live_unlink(struct cio__e_loop *l, struct cio_any_future *f)
{
    cio__e_live_lock(l);
    CIO__LIST_UNLINK(l->live_head, f, lprev, lnext);
    f->lnext = f->lprev = NULL;
    cio__e_live_unlock(l);
}

/* ---- io.c: the slots every flavour shares ---- */
extern const struct cio_vtable cio__e_vtable;

/* A spin-wait hint to the CPU (lets a sibling hyperthread run; no effect on correctness). */
static inline void cio__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- sched.c -------------------------------------------------------------------------------------------- */
extern _Thread_local struct cio__e_loop *cio__e_tls_loop;

/* The loop of `e` this thread runs, or NULL: its caches need no lock. */
static inline struct cio__e_loop *cio__e_local_loop(const struct cio_evented *e)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    return (l != NULL && l->ev == e) ? l : NULL;
}

/* The fiber of `e` running on this thread, or NULL (a foreign thread, or another instance's fiber). */
static inline struct cio_any_future *cio__e_self(const struct cio_evented *e)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    return (l != NULL && l->ev == e) ? l->current : NULL;
}
/* The scheduler: runs until shutdown (a loop thread) or forever (an adopted thread's scheduler
 * context, which is simply never resumed once its thread leaves for good). An adopted loop runs
 * only its thread's fiber: it takes no spawned fibers, steals nothing and does not spin. */
void cio__e_loop_run(struct cio__e_loop *loop);
/* In the scheduler context, right after the current fiber switched out. */
void cio__e_switched_out(struct cio__e_loop *loop);
/* A loop thread's start routine (pthread_create by create): runs the loop until shutdown. */
void *cio__e_loop_main(void *arg);
/* Wakes loop l if it sleeps in its poller (any thread, after publishing what it is to see). */
void cio__e_wake_loop(struct cio__e_loop *loop);

/* A new fiber running fn on a copy of ctx; NULL when memory or a stack cannot be had. live: it
 * counts in e->live by itself (group members do not: their group counts once while it has any). */
struct cio_any_future *cio__e_fiber_new(struct cio_evented *e, cio_task_fn fn, const void *ctx, size_t ctx_size,
                                        bool live);
/* Queues a new fiber to be started by some loop. */
void cio__e_spawn(struct cio_evented *e, struct cio_any_future *f);
/* cio_await of an `async` future f that sits, not started, in the caller's LIFO slot (the caller is
 * a fiber of e on a loop thread, with no cancel request or acknowledgement and protection off, and
 * half its stack free): runs f's function right here instead of switching to f, and returns true
 * (f's result is set, f is done). False: nothing was done. */
bool cio__e_await_inline(struct cio_evented *e, struct cio_any_future *f);
/* cio_group_await's counterpart (sched.c "running tasks inline"): runs members of gr that have not
 * started and would run next on this loop anyway on the calling fiber, one after the other, yielding
 * to ready fibers and to the scheduler's turn in between; returns 0 when none can run here now, -1
 * when a member acknowledged the caller's cancel request (the await is canceled). */
int cio__e_group_inline(struct cio_evented *e, const struct cio__e_group *gr);
/* Gives a block's memory back for good (its region's, or the heap's): blocks.c. */
void cio__e_block_release(struct cio_any_future *f);
/* Destroy, the loops stopped: every block the loops' caches and the free list hold goes for good,
 * and the region being carved is let go (blocks still out keep theirs mapped). */
void cio__e_blocks_free(struct cio_evented *e);
/* blocks_mem_<os>.c: a block's memory off the regions (CIO_CONTEXT_ALIGN-aligned; NULL: none), and
 * its release. */
void *cio__e_block_mem(size_t size);
void cio__e_block_mem_free(void *mem);
/* Frees a finished future's block (after `done`). */
void cio__e_fiber_free(struct cio_evented *e, struct cio_any_future *f);
/* Switches the current fiber out; `after(arg)` runs on the loop once it is (in the scheduler, or
 * first thing in the fiber switched to directly). Returns when woken. */
void cio__e_suspend(void (*after)(void *), void *arg);
/* cio__e_suspend for the current fiber f of loop l waiting on w (tasks.c): f->wait is w meanwhile
 * and, with deadline >= 0, a timer of w calls `fire` at it; the timer is off the loop on return. */
void cio__e_park(struct cio__e_loop *l, struct cio_any_future *f, struct cio__e_wait *w, int64_t deadline,
                 void (*fire)(struct cio__e_loop *loop, struct cio__e_timer *timer), void (*after)(void *), void *arg);
/* Puts the current fiber at the back of its loop's run queue and switches out. */
void cio__e_yield(void);
/* Makes a suspended fiber runnable on its home loop (any thread). */
void cio__e_make_ready(struct cio_any_future *f);
/* Home loop thread only. */
void cio__e_timer_add(struct cio__e_loop *loop, struct cio__e_timer *t);
void cio__e_timer_remove(struct cio__e_loop *loop, struct cio__e_timer *t);
/* The earliest armed deadline, or -1 when no timer is armed. */
int64_t cio__e_timer_next(const struct cio__e_loop *loop);
/* Fires every timer that is due (timers.c; the loop, between fibers). True when it read the clock
 * (some timer was armed): cio__e_now_last is then that reading or a later one. */
bool cio__e_fire_timers(struct cio__e_loop *loop);
/* The clock of loop timers (timers.c; any thread): CLOCK_MONOTONIC in ns. */
int64_t cio__e_now_ns(void);
/* Whether deadline_ns (>= 0) has passed: this thread's last reading of cio__e_now_ns answers when
 * it settles it (the deadline at or before it, or more than a millisecond after it); the clock is
 * read only in between. A deadline just computed by cio__e_mono_deadline costs no second reading. */
bool cio__e_deadline_passed(int64_t deadline_ns);
/* This thread's last reading of cio__e_now_ns (0 before the first). */
int64_t cio__e_now_last(void);
/* A timeout as a CLOCK_MONOTONIC deadline in ns (-1: none), the clock of loop timers. */
int64_t cio__e_mono_deadline(cio_timeout timeout);
/* Called by a poller on the loop thread when its wake-up fired, after the poller drained its
 * descriptor (eventfd, pipe; kqueue's EVFILT_USER and the completion port's packet have none):
 * clears `woken` so the next waker writes again. (A drained descriptor with `woken` still set would
 * make every later waker skip its write: a lost wake-up.) */
void cio__e_wake_drained(struct cio__e_loop *loop);
/* Initialises ops on every loop (all or none); sets e->poller. */
cio_err cio__e_init_pollers(struct cio_evented *e, const struct cio__e_poller_ops *ops);
/* Called by a poller on the home loop thread when w's operation completed. */
void cio__e_poller_complete(struct cio__e_wait *w, int32_t res);
/* Posts a cancel request for f to its home loop (f has started). */
void cio__e_post_cancel(struct cio_any_future *f);
/* A group member starts running as a fiber (first thing on its stack, no lock held; tasks.c, called
 * by sched.c through e->fiber_started): it joins the group's member list, where a group cancel
 * reaches it, and sees a cancel under way. */
void cio__e_group_started(struct cio_any_future *f);
/* Called when a fiber finishes (tasks.c, called by sched.c through e->fiber_finished, its context
 * switched out or its function run inline): publish the result, wake awaiters / leave the group,
 * and drop e->live when a live unit ended with it (the last wakes destroy). f may be freed. */
void cio__e_finish(struct cio_any_future *f);
/* Waits until future f finished (tasks.c). cancelable: a cancel request of the calling fiber is
 * forwarded to f (the wait still lasts until f finishes); returns whether one was (then acknowledged
 * by the caller's fiber). From a thread that is no fiber of e: waits on the futex table. */
bool cio__e_join(struct cio_evented *e, struct cio_any_future *f, bool cancelable);

/* ---- adopt.c: adopted threads' loops ------------------------------------------------------------------------- */
/* Like cio__e_self, but a thread that is no instance's fiber yet becomes one of e (its own loop,
 * driven by the thread while it waits). NULL when that cannot be had (no memory, no ring) or the
 * thread is another instance's fiber: then the caller takes its foreign-thread path. */
struct cio_any_future *cio__e_self_adopt(struct cio_evented *e);
/* Calls fn(loop, arg) for every loop of e: its loop threads' and its adopted threads' (whose list
 * is locked meanwhile: fn must not adopt or release). For statistics. */
void cio__e_for_each_loop(const struct cio_evented *e, void (*fn)(const struct cio__e_loop *, void *), void *arg);
/* cio_evented_destroy, after the last fiber finished: releases every adopted loop. */
void cio__e_release_adopted(struct cio_evented *e);

/* ---- fds.c: the descriptor table (see fds.c's top comment) ------------------------------------------- */
/* Whether cio made the socket numbered fd (and has not closed it since); *gen: the number's
 * generation, which changes whenever cio makes or closes a descriptor with that number. */
bool cio__e_fd_owned(int fd, uint32_t *gen);
/* Whether fd is known seekable in its current generation (*gen: that generation, for set). */
bool cio__e_fd_seekable(int fd, uint32_t *gen);
/* fstat found fd seekable while its generation was gen: remembered, unless it changed since. */
void cio__e_fd_set_seekable(int fd, uint32_t gen);
/* cio made a socket numbered fd (owned: non-blocking, cio's) or is about to close one (not owned). */
void cio__e_fd_renew(int fd, bool owned);
/* The Threaded close hook (cio__os_set_close_hook, installed by cio_evented_create): any close
 * through either backend's slots renews the number as not owned. */
void cio__e_fd_forget(int fd);

/* ---- tasks.c ------------------------------------------------------------------------------------------ */
/* Posts a cancel request to f (any thread; no-op if one is pending or was delivered): destroy's. */
void cio__e_request_cancel(struct cio_any_future *f);
/* Cancellation point for the current fiber: CIO_E_CANCELED (acknowledged) when a request is pending
 * and protection allows, CIO_OK otherwise (and always for foreign threads). */
cio_err cio__e_cancel_point(struct cio_evented *e);
/* The Threaded bracket's cancellation point off its workers (cio__t_set_outer_cancel): the cancel
 * request of whichever instance's fiber runs on this thread (Threaded slots called inline there). */
cio_err cio__e_outer_cancel(void);
/* The current fiber's wait was ended by a cancel: acknowledge the request. */
void cio__e_ack_cancel(struct cio_any_future *f);
/* Whether a wait of the current fiber may be interrupted by a cancel now. */
bool cio__e_cancelable_now(const struct cio_any_future *f);
/* Home loop, f switched out: deliver a posted cancel request (interrupt f's wait, through its wait
 * record, if the wait is cancelable, protection allows and the request is still pending). */
static inline void cio__e_deliver_cancel(struct cio__e_loop *loop, struct cio_any_future *f)
{
    struct cio__e_wait *w = f->wait;
    if (w == NULL || !w->cancelable || w->interrupt == NULL || f->protection != CIO_CANCEL_UNBLOCKED)
        return;
    if (!(atomic_load_explicit(&f->cancel, memory_order_acquire) & CIO__E_REQ))
        return;
    w->interrupt(loop, w);
}
cio_err cio__e_fiber_futex_wait(struct cio_evented *e, const _Atomic(uint32_t) *ptr, uint32_t expected,
                                cio_timeout timeout, bool cancelable);
/* A futex wait on the futex table by a thread that is not (and does not become) a fiber. */
cio_err cio__e_futex_wait_foreign(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout);
void cio__e_fiber_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters);
/* Lets cio's diagnostics take the stderr lock as the fiber that makes them (process.c). */
void cio__e_stderr_install(void);

/* ---- fdwait.c: poller waits ---------------------------------------------------------------------------------- */
/* Waits for readiness of fd (POLLIN / POLLOUT) as the current fiber. deadline_ns < 0: none.
 * Returns CIO_OK (ready: *revents), CIO_E_TIMEOUT, CIO_E_CANCELED (acknowledged). */
cio_err cio__e_wait_fd(struct cio_evented *e, int fd, uint32_t events, int64_t deadline_ns, bool cancelable,
                       uint32_t *revents);
/* A poller wait's interrupt (wait->interrupt of fd waits and ring operations): asks the poller to
 * stop it (once), with reason CANCEL; the completion follows. */
void cio__e_poller_interrupt(struct cio__e_loop *loop, struct cio__e_wait *w);
/* Arms w's timer (home loop, w in flight with the poller): at deadline_ns (CLOCK_MONOTONIC ns) the
 * poller is asked to stop w (once) with reason TIMEOUT; the waiter removes the timer when it resumes. */
void cio__e_wait_deadline(struct cio__e_loop *loop, struct cio__e_wait *w, int64_t deadline_ns);

/* ---- flavour_<os>.c ----------------------------------------------------------------------------------------- */
/* Chooses and initialises the poller for `requested` (CIO_EVENTED_BACKEND applies to AUTO) on every
 * loop; sets e->poller and e->flavour. Errors: OperationUnsupported (a flavour this OS lacks, or a
 * forced one the kernel refuses), SystemResources. */
cio_err cio__e_choose_poller(struct cio_evented *e, cio_evented_flavour requested);

/* ---- fs_nowait_<os>.c ----------------------------------------------------------------------------------------- */
/* One non-blocking attempt at a (positional when off >= 0) vectored read or write that must not wait
 * for the disk: the count, or -1 with errno (EAGAIN: would block or not cached; EOPNOTSUPP: this
 * file or this OS cannot say, use the helper pool). */
long cio__e_file_try_rw(int fd, const void *iov, int iovcnt, int64_t off, bool writing);

/* ---- poll_uring.c: native operations (io_uring flavour only) ------------------------------------------------ */
enum cio__e_uring_op { CIO__E_U_READV, CIO__E_U_WRITEV, CIO__E_U_FSYNC };
/* Runs one ring operation as the current fiber; returns the CQE result (>= 0 or -errno), with
 * -ECANCELED when a cancel request interrupted it (then acknowledged: *canceled = true). */
int32_t cio__e_uring_rw(struct cio_evented *e, enum cio__e_uring_op op, int fd, const void *iov, unsigned iovcnt,
                        uint64_t offset, bool cancelable, bool *canceled);
/* The slots fs_uring.c and net_uring.c run on the ring, put into vt for the opcodes e has: installed
 * by cio_evented_create (io.c) for the io_uring flavour (poll_uring_none.c: never called). */
void cio__e_uring_fs_override(struct cio_evented *e, struct cio_vtable *vt);
void cio__e_uring_net_override(struct cio_evented *e, struct cio_vtable *vt);
void cio__e_uring_splice_override(struct cio_evented *e, struct cio_vtable *vt);  /* splice_uring.c */
void cio__e_uring_process_override(struct cio_evented *e, struct cio_vtable *vt); /* process_uring.c */
/* child_wait's arguments, checked (InvalidArgument), then run(&args) as a fiber of e and its result
 * set-checked (process.c; process_uring.c runs it with the ring's waitid). */
struct cio__e_child_wait_args {
    struct cio_evented *e;
    cio_child *child;
    cio_term *term;
};
cio_err cio__e_child_wait_with(void *ud, cio_child *child, cio_term *term, cio_err (*run)(void *));

/* ---- helper.c ------------------------------------------------------------------------------------------------ */
/* Runs fn(arg) on the helper pool while the current fiber waits (cancelable: a cancel request is
 * forwarded as a Threaded cancel, which knocks fn's syscall out). From a foreign thread: fn(arg). */
cio_err cio__e_helper(struct cio_evented *e, cio_err (*fn)(void *), void *arg, bool cancelable);
/* io.c, for cio's own tests: the helper pool of an Evented io, NULL for any other io. */
cio_threaded *cio__e_helper_pool(cio_io io);
/* Runs fn(arg) as a fiber of e and waits for it when the caller is not one of e's fibers; calls it
 * directly otherwise. */
cio_err cio__e_run(struct cio_evented *e, cio_err (*fn)(void *), void *arg);

#endif /* CIO_EVENTED_INTERNAL_H */
