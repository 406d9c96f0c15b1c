/*
 * The Evented backend's scheduler: loop threads, run queues, spawning and stealing, suspending and
 * waking fibers (switching straight from fiber to fiber), running tasks inline on an awaiting fiber,
 * and the loops' pollers. (The loops' timers are in timers.c, adopted threads' loops in adopt.c,
 * creating and destroying an instance in io.c.)
 *
 * Invariants (see evented.h for the model):
 * - The scheduler names nothing above it: what tasks.c does when a fiber starts or finishes it calls
 *   through e->fiber_started / e->fiber_finished (set by create), and a cancel request it delivers
 *   goes through the wait record's interrupt (cio__e_deliver_cancel).
 * - A loop's run queue (run_head), timer heap and poller registrations are touched only by the loop
 *   thread (including fibers running on it). Other threads reach a loop through its inbox
 *   (in_head, cancels; inbox_mu) and its spawn queue (sp_head; spawn_mu), then wake it.
 * - A fiber runs only on its home loop once started; only fibers that never ran are stolen.
 * - Lost wake-ups: a loop publishes `sleeping` (seq_cst) before it re-checks its inbox and every
 *   spawn queue, and producers publish their item before they read `sleeping` (seq_cst), so either
 *   the loop sees the item or the producer sees the loop asleep and wakes it. `woken` only spares
 *   duplicate eventfd writes: whoever drains the eventfd clears it afterwards (cio__e_wake_drained),
 *   so it is never left set with nothing to wake the loop.
 * - `live` counts fibers created and not finished (a group's members count once, from its first
 *   spawn until its member count is back at 0); destroy waits for it to reach 0 before it stops the
 *   loops, so no fiber is ever abandoned.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "evented.h"
#include "overflow.h"
#include "internal.h"
#include "list.h"
#include "internal/cio_oscalls.h"

_Thread_local struct cio__e_loop *cio__e_tls_loop;

static void fiber_exit_after(void *arg);
static struct cio_any_future *next_direct(struct cio__e_loop *l);

/* In a context just switched to (a fiber, or the scheduler): runs what the context that switched
 * out left to do once it is saved. */
static void run_after(struct cio__e_loop *l)
{
    void (*after)(void *) = l->after;
    if (after != NULL) {
        l->after = NULL;
        after(l->after_arg);
    }
}

static void fiber_entry(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    struct cio__e_loop *l = atomic_load_explicit(&f->home, memory_order_relaxed); /* set by whoever started f */
    run_after(l);
    cio__e_count(&l->n_fibers);
    cio__e_live_link(l, f); /* destroy cancels what it finds there */
    if (f->group != NULL)
        f->owner->fiber_started(f); /* here, not in start_here: the switching fiber's `after` may hold a futex bucket */
    cio__os_error_clear();          /* a task starts with no OS error of its own (cio_last_os_error) */
    f->result = f->fn(f->ctxbuf);
    l->after = fiber_exit_after;
    l->after_arg = f;
    /* An awaiter parked on this loop is the one to run next: switch straight to it (it cannot be
     * woken by anything else while parked, so nothing else will make it ready). */
    struct cio_any_future *next = NULL;
    if (atomic_load_explicit(&f->done, memory_order_acquire) == CIO__E_DONE_AWAITED && l->budget > 0 &&
        atomic_load_explicit(&f->awaiter->home, memory_order_relaxed) == l) {
        next = f->awaiter;
        f->handed_off = true;
        l->budget--;
    } else {
        next = next_direct(l);
    }
    if (next != NULL) {
        l->current = next;
        cio__fiber_exit(&f->ctx, &next->ctx);
    }
    cio__fiber_exit(&f->ctx, &l->sched);
}

/* Loop l's thread, about to switch to f: a fiber that never ran gets its home and its context. */
static void start_here(struct cio__e_loop *l, struct cio_any_future *f)
{
    if (atomic_load_explicit(&f->home, memory_order_relaxed) == NULL) {
        cio__fiber_ctx_init(&f->ctx, f->stack.lo, f->stack.size, fiber_entry, f);
        atomic_store_explicit(&f->home, l, memory_order_seq_cst);
    }
}

/* Gives a stack back: to loop l's cache (l is the calling thread's loop), else the pool. */
static void stack_back(struct cio_evented *e, struct cio__e_loop *l, cio__stack *stack)
{
    if (l != NULL && l->stk_count < CIO__E_LOCAL_STACKS) {
        l->stk_cache[l->stk_count++] = *stack;
        memset(stack, 0, sizeof *stack);
    } else {
        cio__stack_pool_put(&e->stacks, stack);
    }
}

/* Home loop thread, the fiber has switched out for good. */
static void fiber_exit_after(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    struct cio_evented *e = f->owner;
    struct cio__e_loop *l = f->home;
    /* No more cancel posts: a canceler sets REQ before it posts (under inbox_mu, where it reads
     * `exited`); both sides are seq_cst, so either it sees `exited` and does not post, or this sees
     * the request and takes f off the cancel list if it was posted. */
    if (f->handed_off) {
        /* Only its owner may cancel a future, and the owner is the awaiter, parked on this very
         * thread until now: no canceler can run concurrently. */
        atomic_store_explicit(&f->exited, true, memory_order_relaxed);
    } else {
        atomic_store_explicit(&f->exited, true, memory_order_seq_cst);
    }
    if (atomic_load_explicit(&f->cancel, memory_order_seq_cst) != 0) {
        cio__mu_lock(&l->inbox_mu);
        if (f->cancel_posted) {
            struct cio_any_future **pp = &l->cancels;
            while (*pp != NULL && *pp != f)
                pp = &(*pp)->cnext;
            if (*pp == f)
                *pp = f->cnext;
            f->cancel_posted = false;
        }
        cio__mu_unlock(&l->inbox_mu);
    }
    cio__e_live_unlink(l, f);
    cio__fiber_ctx_release(&f->ctx);
    stack_back(e, l, &f->stack); /* l: f's home, this thread's loop */
    e->fiber_finished(f);        /* cio__e_finish: f may be freed from here on */
}

/* ---- queues ------------------------------------------------------------------------------------------- */

static void push_local(struct cio__e_loop *l, struct cio_any_future *f)
{
    CIO__FIFO_PUSH(l->run_head, l->run_tail, f, next);
}

static struct cio_any_future *pop_local(struct cio__e_loop *l)
{
    struct cio_any_future *f = l->run_head;
    if (f != NULL) {
        l->run_head = f->next;
        if (l->run_head == NULL)
            l->run_tail = NULL;
    }
    return f;
}

void cio__e_wake_loop(struct cio__e_loop *l)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&l->sleeping, memory_order_seq_cst) &&
        atomic_exchange_explicit(&l->woken, 1, memory_order_acq_rel) == 0)
        l->ev->poller->wake(l);
}

void cio__e_wake_drained(struct cio__e_loop *l)
{
    atomic_store_explicit(&l->woken, 0, memory_order_seq_cst);
}

void cio__e_make_ready(struct cio_any_future *f)
{
    struct cio__e_loop *home = f->home;
    if (cio__e_tls_loop == home) {
        push_local(home, f);
        return;
    }
    cio__mu_lock(&home->inbox_mu);
    CIO__FIFO_PUSH(home->in_head, home->in_tail, f, next);
    atomic_store_explicit(&home->inbox_flag, 1, memory_order_relaxed);
    cio__mu_unlock(&home->inbox_mu);
    cio__e_wake_loop(home);
}

void cio__e_post_cancel(struct cio_any_future *f)
{
    struct cio__e_loop *home = f->home;
    cio__mu_lock(&home->inbox_mu);
    bool posted = false;
    if (!atomic_load_explicit(&f->exited, memory_order_seq_cst) && !f->cancel_posted) {
        f->cancel_posted = true;
        f->cnext = home->cancels;
        home->cancels = f;
        atomic_store_explicit(&home->inbox_flag, 1, memory_order_relaxed);
        posted = true;
    }
    cio__mu_unlock(&home->inbox_mu);
    if (posted && cio__e_tls_loop != home)
        cio__e_wake_loop(home);
}

/* The spawn ring (a bounded single-producer, multi-consumer queue as in Go's per-P run queue): only
 * the loop's own thread pushes (at rq_tail); anyone takes from rq_head by CAS. A taker reads the slot
 * before its CAS: the slot can only have been reused once rq_head moved past it, and then the CAS
 * fails. The release store of rq_tail publishes the slot and the fiber behind it. */
static inline bool ring_push(struct cio__e_loop *l, struct cio_any_future *f)
{
    uint32_t h = atomic_load_explicit(&l->rq_head, memory_order_acquire);
    uint32_t t = atomic_load_explicit(&l->rq_tail, memory_order_relaxed);
    if (t - h >= CIO__E_RING)
        return false;
    atomic_store_explicit(&l->rq[t % CIO__E_RING], f, memory_order_relaxed);
    atomic_store_explicit(&l->rq_tail, t + 1, memory_order_release);
    return true;
}

static inline struct cio_any_future *ring_take(struct cio__e_loop *l)
{
    uint32_t h = atomic_load_explicit(&l->rq_head, memory_order_acquire);
    for (;;) {
        uint32_t t = atomic_load_explicit(&l->rq_tail, memory_order_acquire);
        if (t == h)
            return NULL;
        struct cio_any_future *f = atomic_load_explicit(&l->rq[h % CIO__E_RING], memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&l->rq_head, &h, h + 1, memory_order_acq_rel, memory_order_acquire))
            return f;
    }
}

/* Loop `mine`'s thread, its own ring empty (only its thread pushes there, so it stays so): takes
 * half of another loop's ring (rounded up) with one CAS, as Go's runqgrab does. The slots are copied
 * into mine's ring beyond its tail before the CAS (unpublished: no taker reads past a tail), and the
 * CAS fails if the victim's head moved meanwhile (only then could those slots have been reused).
 * Returns the oldest to run now; the rest are published on mine's ring. */
static struct cio_any_future *ring_steal(struct cio__e_loop *l, struct cio__e_loop *mine)
{
    uint32_t mt = atomic_load_explicit(&mine->rq_tail, memory_order_relaxed);
    for (;;) {
        uint32_t h = atomic_load_explicit(&l->rq_head, memory_order_acquire);
        uint32_t t = atomic_load_explicit(&l->rq_tail, memory_order_acquire);
        uint32_t n = t - h;
        if (n == 0)
            return NULL;
        if (n > CIO__E_RING)
            continue; /* read head, then the owner pushed and others took: inconsistent, again */
        n -= n / 2;
        struct cio_any_future *first = atomic_load_explicit(&l->rq[h % CIO__E_RING], memory_order_relaxed);
        for (uint32_t i = 1; i < n; i++)
            atomic_store_explicit(&mine->rq[(mt + i - 1) % CIO__E_RING],
                                  atomic_load_explicit(&l->rq[(h + i) % CIO__E_RING], memory_order_relaxed),
                                  memory_order_relaxed);
        if (atomic_compare_exchange_strong_explicit(&l->rq_head, &h, h + n, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            if (n > 1)
                atomic_store_explicit(&mine->rq_tail, mt + n - 1, memory_order_release);
            return first;
        }
    }
}

static bool ring_empty(const struct cio__e_loop *l)
{
    return atomic_load_explicit(&l->rq_tail, memory_order_seq_cst) ==
           atomic_load_explicit(&l->rq_head, memory_order_seq_cst);
}

/* Appends the chain first..last (n fibers, linked through next) to l's spawn queue. */
static void queue_chain(struct cio__e_loop *l, struct cio_any_future *first, struct cio_any_future *last, size_t n)
{
    last->next = NULL;
    cio__mu_lock(&l->spawn_mu);
    if (l->sp_tail != NULL)
        l->sp_tail->next = first;
    else
        l->sp_head = first;
    l->sp_tail = last;
    atomic_fetch_add_explicit(&l->sp_count, n, memory_order_seq_cst);
    cio__mu_unlock(&l->spawn_mu);
}

/* l's own thread, its ring full: moves the older half of the ring and f to the spawn queue, in one
 * lock (so a burst of spawns costs a lock per half ring, not per fiber). Once rq_head has moved past
 * them, only this thread could overwrite those slots (by pushing), so they are read after the CAS. */
static void ring_overflow(struct cio__e_loop *l, struct cio_any_future *f)
{
    for (;;) {
        uint32_t h = atomic_load_explicit(&l->rq_head, memory_order_acquire);
        uint32_t t = atomic_load_explicit(&l->rq_tail, memory_order_relaxed);
        uint32_t n = (t - h) / 2;
        if (n == 0 || !atomic_compare_exchange_strong_explicit(&l->rq_head, &h, h + n, memory_order_acq_rel,
                                                               memory_order_acquire)) {
            if (ring_push(l, f)) /* emptied by takers meanwhile */
                return;
            continue;
        }
        struct cio_any_future *first = atomic_load_explicit(&l->rq[h % CIO__E_RING], memory_order_relaxed);
        struct cio_any_future *last = first;
        for (uint32_t i = 1; i < n; i++) {
            struct cio_any_future *next = atomic_load_explicit(&l->rq[(h + i) % CIO__E_RING], memory_order_relaxed);
            last->next = next;
            last = next;
        }
        last->next = f;
        queue_chain(l, first, f, (size_t)n + 1);
        return;
    }
}

void cio__e_spawn(struct cio_evented *e, struct cio_any_future *f)
{
    struct cio__e_loop *l = cio__e_local_loop(e);
    bool queued = false;
    if (l != NULL && !l->adopted) {
        /* Spawned by this loop: f takes the LIFO slot and runs as soon as the spawner suspends (the
         * spawn-then-await pattern costs no wake-up); the fiber it displaces goes to this loop's
         * spawn ring, where an idle loop can steal it. */
        struct cio_any_future *older = l->lifo;
        l->lifo = f;
        if (older == NULL)
            return;
        f = older;
        if (!ring_push(l, f))
            ring_overflow(l, f);
        queued = true;
        if (e->nloops == 1)
            return; /* no other loop to tell */
    } else {
        /* A foreign or adopted thread: adopted loops run only their own thread's fiber. */
        uint32_t i = atomic_fetch_add_explicit(&e->next_loop, 1, memory_order_relaxed);
        l = &e->loops[i % e->nloops];
    }
    if (!queued)
        queue_chain(l, f, f, 1);
    atomic_thread_fence(memory_order_seq_cst);
    /* The queue's own loop if it sleeps; else one sleeping loop, which will steal it. */
    if (cio__e_tls_loop != l && atomic_load_explicit(&l->sleeping, memory_order_seq_cst)) {
        cio__e_wake_loop(l);
        return;
    }
    for (unsigned k = 1; k < e->nloops; k++) {
        struct cio__e_loop *o = &e->loops[(l->index + k) % e->nloops];
        if (atomic_load_explicit(&o->sleeping, memory_order_seq_cst)) {
            cio__e_wake_loop(o);
            return;
        }
    }
}

/* Run by loop `mine`'s thread, its ring empty: a fiber not started yet from l (mine or another
 * loop), or NULL. From l's spawn queue it takes a batch in one lock (all of it up to half a ring
 * from its own queue; half of another's) and pushes all but the first on mine's ring. */
static struct cio_any_future *take_spawn(struct cio__e_loop *l, struct cio__e_loop *mine)
{
    struct cio_any_future *r = l == mine ? ring_take(l) : ring_steal(l, mine);
    if (r != NULL)
        return r;
    size_t count = atomic_load_explicit(&l->sp_count, memory_order_acquire);
    if (count == 0)
        return NULL;
    size_t want = l == mine ? count : (count + 1) / 2;
    if (want > CIO__E_RING / 2)
        want = CIO__E_RING / 2;
    cio__mu_lock(&l->spawn_mu);
    struct cio_any_future *f = l->sp_head, *last = f;
    size_t n = 0;
    if (f != NULL) {
        n = 1;
        while (n < want && last->next != NULL) {
            last = last->next;
            n++;
        }
        l->sp_head = last->next;
        if (l->sp_head == NULL)
            l->sp_tail = NULL;
        atomic_fetch_sub_explicit(&l->sp_count, n, memory_order_acq_rel);
    }
    cio__mu_unlock(&l->spawn_mu);
    if (f == NULL)
        return NULL;
    struct cio_any_future *rest = f->next;
    for (size_t i = 1; i < n; i++) {
        struct cio_any_future *next = rest->next;
        if (!ring_push(mine, rest)) /* cannot happen (mine's ring was empty); stay correct anyway */
            queue_chain(mine, rest, rest, 1);
        rest = next;
    }
    return f;
}

static struct cio_any_future *steal(struct cio__e_loop *l)
{
    struct cio_evented *e = l->ev;
    for (unsigned k = 1; k < e->nloops; k++) {
        struct cio_any_future *f = take_spawn(&e->loops[(l->index + k) % e->nloops], l);
        if (f != NULL)
            return f;
    }
    return NULL;
}

static bool any_spawned(const struct cio__e_loop *l)
{
    const struct cio_evented *e = l->ev;
    for (unsigned k = 0; k < e->nloops; k++)
        if (atomic_load_explicit(&e->loops[k].sp_count, memory_order_seq_cst) != 0 || !ring_empty(&e->loops[k]))
            return true;
    return false;
}

/* ---- suspending ----------------------------------------------------------------------------------------------- */

#define DIRECT_BUDGET 64u

/* The fiber a suspending or exiting fiber of l switches to directly, or NULL (then it switches to
 * the scheduler): the LIFO slot, the run queue, then the loop's own spawn ring (the scheduler's
 * order), while the round's budget lasts. A fiber taken from the ring gets its home here. */
static struct cio_any_future *next_direct(struct cio__e_loop *l)
{
    if (l->budget == 0)
        return NULL;
    struct cio_any_future *f = l->lifo;
    if (f != NULL)
        l->lifo = NULL;
    else if ((f = pop_local(l)) == NULL && (f = ring_take(l)) == NULL)
        return NULL;
    l->budget--;
    start_here(l, f);
    return f;
}

/* ---- running tasks inline on the awaiting fiber -------------------------------------------------------
 *
 * A fiber that awaits work which has not started yet and would run next on its loop anyway may run
 * that work's function itself, on its own stack: no context, no switch. The order is the one the
 * scheduler would follow (a suspending fiber switches to the LIFO slot first, then the run queue,
 * then the spawn ring), so nothing is delayed and a task that blocks inline blocks the awaiter,
 * which was waiting anyway, while the loop runs the rest. Only while the awaiter has no cancel
 * request or acknowledgement and protection is off (the task then sees the awaiter's cancel state
 * where it would have had its own, forwarded), and half its stack is free (nesting stays bounded). */

/* Loop l (the caller's, or NULL) is a loop thread whose current fiber has half its stack free. */
static bool inline_depth(const struct cio__e_loop *l)
{
    if (l == NULL || l->adopted)
        return false;
    const struct cio_any_future *self = l->current;
    if (self == NULL || self->stack.lo == NULL)
        return false;
    char here;
    return (size_t)((uintptr_t)&here - (uintptr_t)self->stack.lo) >= self->stack.size / 2;
}

/* The current fiber of l has no cancel request or acknowledgement and protection off. */
static bool inline_state(const struct cio__e_loop *l)
{
    const struct cio_any_future *self = l->current;
    return self->protection == CIO_CANCEL_UNBLOCKED && atomic_load_explicit(&self->cancel, memory_order_relaxed) == 0;
}

/* Loop l (the caller's, or NULL) and its current fiber may run a task inline now. */
static bool inline_room(const struct cio__e_loop *l)
{
    return inline_depth(l) && inline_state(l);
}

/* After f's function ran inline: its stack back, finished (cio__e_finish: f may be freed), one fewer live. */
static void inline_exit(struct cio_evented *e, struct cio_any_future *f)
{
    /* fn may have suspended meanwhile; a fiber only ever runs on its home loop, so this is the same
     * loop as before it */
    stack_back(e, cio__e_local_loop(e), &f->stack);
    atomic_store_explicit(&f->exited, true, memory_order_relaxed);
    e->fiber_finished(f); /* cio__e_finish: f may be freed from here on */
}

bool cio__e_await_inline(struct cio_evented *e, struct cio_any_future *f)
{
    struct cio__e_loop *l = cio__e_local_loop(e);
    if (l == NULL || l->lifo != f || !inline_room(l))
        return false;
    l->lifo = NULL;
    cio__e_count(&l->n_inline);
    f->result = f->fn(f->ctxbuf);
    inline_exit(e, f);
    return true;
}

int cio__e_group_inline(struct cio_evented *e, const struct cio__e_group *gr)
{
    struct cio__e_loop *l = cio__e_local_loop(e);
    if (!inline_depth(l)) /* the depth stays the same in this loop; the cancel state may not */
        return 0;
    struct cio_any_future *self = l->current; /* a fiber runs on its home loop only: l stays valid */
    bool yielded = false;                     /* just yielded: one member now, whatever is ready (else two fibers that
                                                 each wait for the other to be not ready would take turns for ever) */
    for (;;) {
        if (self->protection != CIO_CANCEL_UNBLOCKED || atomic_load_explicit(&self->cancel, memory_order_acquire) != 0)
            return 0;
        if (!yielded && (l->run_head != NULL || l->budget == 0)) {
            /* Ready fibers come first, and a spent budget means the scheduler's turn (inbox,
             * timers, I/O): yield to them, then go on (waiting instead would leave every later
             * member to start as a fiber of its own). */
            cio__e_yield();
            yielded = true;
            continue;
        }
        yielded = false;
        struct cio_any_future *f = l->lifo;
        bool from_lifo = f != NULL;
        if (from_lifo)
            l->lifo = NULL;
        else if ((f = ring_take(l)) == NULL && (f = take_spawn(l, l)) == NULL)
            return 0;
        if (f->group != gr || !f->inline_ok || atomic_load_explicit(&f->cancel, memory_order_relaxed) != 0) {
            /* not one to run here (another's, a concurrent member, or one to be canceled): it runs
             * next, as the fiber it is (it was next in line), then this one goes on */
            if (from_lifo)
                l->lifo = f;
            else
                push_local(l, f);
            cio__e_yield();
            yielded = true;
            continue;
        }
        if (l->budget > 0)
            l->budget--;
        cio__e_count(&l->n_inline);
        f->result = f->fn(f->ctxbuf);
        stack_back(e, l, &f->stack);
        atomic_store_explicit(&f->exited, true, memory_order_relaxed);
        e->fiber_finished(f); /* cio__e_finish: f may be freed from here on */
        uint32_t c = atomic_load_explicit(&self->cancel, memory_order_acquire);
        if (c != 0) /* the member saw the awaiter's request: acknowledged (-1), or still pending */
            return (c & CIO__E_REQ) ? 0 : -1;
    }
}

void cio__e_suspend(void (*after)(void *), void *arg)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    struct cio_any_future *f = l->current;
    cio_os_error os = cio__os_last; /* this task's record: other fibers of the loop write theirs meanwhile */
    l->after = after;
    l->after_arg = arg;
    struct cio_any_future *next = next_direct(l);
    if (next != NULL) {
        l->current = next;
        cio__fiber_switch(&f->ctx, &next->ctx);
    } else {
        cio__fiber_switch(&f->ctx, &l->sched);
    }
    /* Resumed on l (a fiber only ever runs on its home loop) by the scheduler or by a fiber that
     * switched straight here: the latter left its `after`. */
    run_after(l);
    cio__os_last = os;
}

static void yield_after(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    push_local(f->home, f);
}

void cio__e_yield(void)
{
    cio__e_suspend(yield_after, cio__e_tls_loop->current);
}

void cio__e_poller_complete(struct cio__e_wait *w, int32_t res)
{
    w->res = res;
    w->in_flight = false;
    struct cio__e_loop *l = w->fiber->home;
    l->armed--;
    push_local(l, w->fiber);
}

/* ---- loops
 * ------------------------------------------------------------------------------------------------------------ */

void cio__e_switched_out(struct cio__e_loop *l)
{
    l->current = NULL;
    run_after(l);
}

/* Runs f, and whatever it switches to directly, until a fiber switches back to the scheduler. */
static void run_fiber(struct cio__e_loop *l, struct cio_any_future *f)
{
    start_here(l, f);
    l->current = f;
    if (l->budget > 0)
        l->budget--;
    cio__fiber_switch(&l->sched, &f->ctx);
    cio__e_switched_out(l);
}

/* Moves the inbox to the run queue and delivers cancel requests; true if anything was there. */
static bool drain_inbox(struct cio__e_loop *l)
{
    cio__mu_lock(&l->inbox_mu);
    struct cio_any_future *ready = l->in_head;
    struct cio_any_future *cancels = l->cancels;
    l->in_head = l->in_tail = NULL;
    atomic_store_explicit(&l->inbox_flag, 0, memory_order_relaxed);
    l->cancels = NULL;
    cio__mu_unlock(&l->inbox_mu);
    bool any = ready != NULL || cancels != NULL;
    while (ready != NULL) {
        struct cio_any_future *n = ready->next;
        push_local(l, ready);
        ready = n;
    }
    /* A fiber on this list has not exited: exiting takes it off under inbox_mu, and it can only exit
     * by running here, which does not happen during this loop. Each stays marked as posted (so no
     * canceler relinks it through cnext) until its link has been read. */
    while (cancels != NULL) {
        cio__mu_lock(&l->inbox_mu);
        struct cio_any_future *n = cancels->cnext;
        cancels->cancel_posted = false;
        cio__mu_unlock(&l->inbox_mu);
        cio__e_deliver_cancel(l, cancels);
        cancels = n;
    }
    return any;
}

/* Without the lock: the flag is set with every item, cleared only by drain_inbox. The loop stores
 * `sleeping`, fences, reads it; a producer stores it, fences, reads `sleeping`: one sees the other. */
static bool inbox_empty(struct cio__e_loop *l)
{
    return atomic_load_explicit(&l->inbox_flag, memory_order_seq_cst) == 0;
}

/* A loop that just ran fibers, with no I/O in flight, looks for more for a short while before it
 * sleeps: a burst of spawns from a fiber on another loop (one every few microseconds) is then taken
 * without an eventfd write and a sleep/wake per fiber. Only spawn queues and the inbox flag are
 * watched (no syscall). There is nothing to spin for with one loop, or one CPU (the loop count
 * follows the affinity mask). */
#define SPIN_NS 30000
static bool spin_for_work(struct cio__e_loop *l)
{
    if (l->ev->nloops < 2)
        return false;
    int64_t end = cio__e_now_ns() + SPIN_NS;
    do {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(&l->inbox_flag, memory_order_relaxed) || any_spawned(l))
                return true;
            cio__cpu_relax();
        }
    } while (cio__e_now_ns() < end);
    return false;
}

void cio__e_loop_run(struct cio__e_loop *l)
{
    struct cio_evented *e = l->ev;
    const bool adopted = l->adopted;
    bool busy = false;
    for (;;) {
        unsigned ran = 0;
        struct cio_any_future *f;
        /* Each fiber run, from here or by a direct switch, spends the budget; spent, the inbox,
         * timers and I/O get their turn. */
        l->budget = adopted ? 0 : DIRECT_BUDGET;
        for (;;) {
            f = l->lifo;
            if (f != NULL)
                l->lifo = NULL;
            else if ((f = pop_local(l)) == NULL)
                break;
            run_fiber(l, f);
            ran++;
            if (l->budget == 0 && !adopted)
                break; /* let the inbox, timers and I/O in */
            if (adopted && ran % 64 == 0)
                break;
        }
        if (atomic_load_explicit(&l->inbox_flag, memory_order_acquire)) /* else no lock: nothing posted */
            drain_inbox(l);
        bool read_clock = cio__e_fire_timers(l);
        /* With more to run, reap (and submit: io_uring) without blocking so I/O is not starved;
         * with nothing, the blocking wait below submits and waits in one system call. */
        bool more = l->run_head != NULL || l->lifo != NULL;
        if (l->armed > 0 && ran > 0 && more)
            e->poller->wait(l, 0);
        if (more) {
            /* Fibers that keep each other ready would hold back those not started yet (their turn
             * comes only when nothing is ready): one of them joins the run queue each round. */
            if (!adopted && (f = take_spawn(l, l)) != NULL)
                push_local(l, f);
            continue;
        }
        if (!adopted) {
            f = take_spawn(l, l);
            if (f == NULL)
                f = steal(l);
            if (f != NULL) {
                if (l->armed > 0 && ran > 0)
                    e->poller->wait(l, 0); /* what the fibers that ran submitted goes in first */
                run_fiber(l, f);
                busy = true;
                continue;
            }
            if (ran > 0)
                busy = true;
            if (atomic_load_explicit(&e->shutdown, memory_order_acquire))
                break;
            /* Spin only with no I/O in flight: completions are not watched while spinning, and an
             * io_uring submission would wait for the spin to end. */
            if (busy && l->armed == 0 && spin_for_work(l)) {
                busy = false; /* spin again only after this round found work */
                continue;
            }
            busy = false;
        }
        int64_t timeout = cio__e_timer_next(l);
        if (timeout >= 0) {
            /* No fiber ran since the timers fired: their clock reading (or the spin's, later) is
             * microseconds old, so the wait ends at most that late; an idle-timeout server's loop
             * reads the clock once per pass rather than twice. */
            timeout -= read_clock ? cio__e_now_last() : cio__e_now_ns();
            if (timeout < 0)
                timeout = 0;
        }
        atomic_store_explicit(&l->sleeping, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (!inbox_empty(l) ||
            (!adopted && (any_spawned(l) || atomic_load_explicit(&e->shutdown, memory_order_seq_cst))))
            timeout = 0;
        e->poller->wait(l, timeout);
        atomic_store_explicit(&l->sleeping, 0, memory_order_seq_cst);
        atomic_store_explicit(&l->woken, 0, memory_order_release);
    }
}

void *cio__e_loop_main(void *arg)
{
    struct cio__e_loop *l = (struct cio__e_loop *)arg;
    cio__e_tls_loop = l;
    cio__overflow_thread_begin(); /* a fiber that overflows faults here: the handler needs a stack */
    cio__fiber_ctx_thread(&l->sched);
    cio__e_loop_run(l);
    cio__fiber_ctx_release(&l->sched);
    cio__overflow_thread_end();
    cio__e_tls_loop = NULL;
    return NULL;
}

/* ---- pollers
 * ---------------------------------------------------------------------------------------------------------- */

cio_err cio__e_init_pollers(struct cio_evented *e, const struct cio__e_poller_ops *ops)
{
    e->poller = ops;
    for (unsigned i = 0; i < e->nloops; i++) {
        cio_err err = ops->init(&e->loops[i]);
        if (err != CIO_OK) {
            while (i-- > 0)
                ops->deinit(&e->loops[i]);
            return err;
        }
    }
    return CIO_OK;
}
