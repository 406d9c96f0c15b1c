/*
 * The Evented backend's tasks: async/concurrent/await/cancel, groups, the cancel state of fibers, the
 * futex table and sleep.
 *
 * Invariants:
 * - Cancel state (fiber->cancel): cancelers only set REQ when neither REQ nor ACK is set, then post
 *   the fiber to its home loop (cio__e_post_cancel) if it has started; a fiber that has not started
 *   sees REQ at its first cancellation point (REQ is stored before `home` is read, `home` before the
 *   fiber reads REQ, both seq_cst). Only the fiber itself turns REQ into ACK (and back: recancel).
 * - The futex table: 256 buckets (spinlock + list of waiters keyed by address), process-wide because
 *   addresses are. A waiter is linked and *ptr compared under the bucket lock; a fiber waiter stays
 *   holding that lock until it has switched out (the loop unlocks in the `after` callback), so a
 *   waker never makes a fiber ready that is still running. A waiter ends with one CAS on its state:
 *   futex wake, timer or cancel — the winner makes it ready, the others do nothing. Foreign threads
 *   wait on their waiter's state word with the OS futex.
 * - Cancel delivery: each wait started here names its interrupt in its wait record (futex waits and
 *   sleeps: one more waker; awaits: forwarded to the awaited future), which the home loop calls for a
 *   request it delivers (cio__e_deliver_cancel, evented.h). A fiber's finish (cio__e_finish, with
 *   the instance's live count) is called by sched.c through e->fiber_finished, a group member's
 *   start through e->fiber_started: the scheduler names nothing of this file.
 * - Groups: lock order group mu → bucket mu → inbox mu; a member is listed (under the group mu) only
 *   while it runs as a fiber; it leaves (unlinks if listed, frees its block, then drops `running`,
 *   its last touch of the record) when it finishes, and the one that drops it to 0 wakes the
 *   awaiter, which then frees the record (the "groups" section).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "evented.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "list.h"
#include "slots.h"
#include "bridge.h" /* the OS futex of the Threaded backend */
#include "os.h"

/* ---- cancel state ------------------------------------------------------------------------------------ */

static _Thread_local cio_cancel_protection foreign_protection;

cio_err cio__e_cancel_point(struct cio_evented *e)
{
    struct cio_any_future *f = cio__e_self(e);
    if (f == NULL || f->protection == CIO_CANCEL_BLOCKED)
        return CIO_OK;
    uint32_t s = atomic_load_explicit(&f->cancel, memory_order_seq_cst);
    while (s & CIO__E_REQ) {
        if (atomic_compare_exchange_weak_explicit(&f->cancel, &s, (s & ~CIO__E_REQ) | CIO__E_ACK, memory_order_acq_rel,
                                                  memory_order_acquire))
            return CIO_E_CANCELED;
    }
    return CIO_OK;
}

cio_err cio__e_outer_cancel(void)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    return l != NULL ? cio__e_cancel_point(l->ev) : (cio_err)CIO_OK;
}

void cio__e_ack_cancel(struct cio_any_future *f)
{
    uint32_t s = atomic_load_explicit(&f->cancel, memory_order_acquire);
    while (s & CIO__E_REQ) {
        if (atomic_compare_exchange_weak_explicit(&f->cancel, &s, (s & ~CIO__E_REQ) | CIO__E_ACK, memory_order_acq_rel,
                                                  memory_order_acquire))
            return;
    }
}

bool cio__e_cancelable_now(const struct cio_any_future *f)
{
    return f->protection == CIO_CANCEL_UNBLOCKED;
}

/* Posts a cancel request (no-op if one is pending or was delivered). */
static void request_cancel(struct cio_any_future *f);

void cio__e_request_cancel(struct cio_any_future *f)
{
    request_cancel(f);
}

static void request_cancel(struct cio_any_future *f)
{
    uint32_t s = atomic_load_explicit(&f->cancel, memory_order_seq_cst);
    for (;;) {
        if (s & (CIO__E_REQ | CIO__E_ACK))
            return;
        if (atomic_compare_exchange_weak_explicit(&f->cancel, &s, s | CIO__E_REQ, memory_order_seq_cst,
                                                  memory_order_seq_cst))
            break;
    }
    struct cio__e_loop *home = atomic_load_explicit(&f->home, memory_order_seq_cst);
    if (home == NULL)
        return; /* not started: its first cancellation point sees the request */
    if (cio__e_tls_loop == home && home->current != f) {
        /* On f's home loop, f switched out: interrupt its wait now instead of posting the request
         * to this very loop (which would deliver it only after the caller suspends). */
        cio__e_deliver_cancel(home, f);
        return;
    }
    cio__e_post_cancel(f);
}

static bool win(struct cio__e_wait *w, uint32_t reason)
{
    uint32_t expected = 0;
    return atomic_compare_exchange_strong_explicit(&w->state, &expected, reason, memory_order_acq_rel,
                                                   memory_order_acquire);
}

/* The interrupt (wait->interrupt) of futex waits and sleeps: the cancel is one of their wakers. */
static void interrupt_woken(struct cio__e_loop *l, struct cio__e_wait *w)
{
    (void)l;
    if (win(w, CIO__E_R_CANCEL))
        cio__e_make_ready(w->fiber);
}

/* The interrupt of an await: not interrupted, the request goes on to the awaited future, and the
 * awaiter stays parked until that finishes (cio__e_join). */
static void interrupt_await(struct cio__e_loop *l, struct cio__e_wait *w)
{
    (void)l;
    if (!w->cancel_sent) {
        w->cancel_sent = true;
        w->reason = CIO__E_R_CANCEL;
        cio__e_ack_cancel(w->fiber);
        request_cancel(w->awaited);
    }
}

/* ---- the futex table ---------------------------------------------------------------------------------- */

#define NBUCKETS 256u

struct bucket {
    _Atomic(uint32_t) lock; /* a spinlock: a fiber holds it across its switch-out (the loop releases
                               it in the `after` callback), which a pthread mutex may not see done
                               from another context (TSan treats each fiber as a thread) */
    struct cio__e_wait *head;
};

static struct bucket buckets[NBUCKETS];

/* A spinlock for short critical sections that never suspend a fiber (or, for buckets, end in the
 * switch-out): one exchange to take, one store to give back. */
static void spin_lock(_Atomic(uint32_t) *lock)
{
    unsigned spins = 0;
    while (atomic_exchange_explicit(lock, 1, memory_order_acquire) != 0) {
        while (atomic_load_explicit(lock, memory_order_relaxed) != 0) {
            if (++spins % 64 == 0)
                sched_yield(); /* the holder may be a preempted thread */
        }
    }
}

static void spin_unlock(_Atomic(uint32_t) *lock)
{
    atomic_store_explicit(lock, 0, memory_order_release);
}

static void bucket_lock(struct bucket *b)
{
    spin_lock(&b->lock);
}

static void bucket_unlock(struct bucket *b)
{
    spin_unlock(&b->lock);
}

static struct bucket *bucket_of(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    a ^= a >> 17;
    a *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return &buckets[(a >> 20) % NBUCKETS];
}

static void link_waiter(struct bucket *b, struct cio__e_wait *w)
{
    w->fprev = NULL;
    w->fnext = b->head;
    if (b->head != NULL)
        b->head->fprev = w;
    b->head = w;
    w->linked = true;
}

static void unlink_waiter(struct bucket *b, struct cio__e_wait *w)
{
    CIO__LIST_UNLINK(b->head, w, fprev, fnext);
    w->linked = false;
}

static void unlock_after(void *arg)
{
    bucket_unlock((struct bucket *)arg);
}

static void futex_timer_fire(struct cio__e_loop *l, struct cio__e_timer *t)
{
    (void)l;
    struct cio__e_wait *w = (struct cio__e_wait *)(void *)((char *)t - offsetof(struct cio__e_wait, timer));
    if (win(w, CIO__E_R_TIMEOUT))
        cio__e_make_ready(w->fiber);
}

cio_err cio__e_futex_wait_foreign(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout)
{
    struct cio__e_wait w;
    memset(&w, 0, sizeof w);
    w.kind = CIO__E_W_FUTEX;
    w.addr = ptr;
    struct bucket *b = bucket_of(ptr);
    bucket_lock(b);
    if (atomic_load_explicit(ptr, memory_order_acquire) != expected) {
        bucket_unlock(b);
        return CIO_OK;
    }
    link_waiter(b, &w);
    bucket_unlock(b);
    cio_timeout dl = timeout;
    if (timeout.kind == CIO_TIMEOUT_KIND_DURATION) {
        cio_timestamp now = cio__os_now(NULL, timeout.clock);
        now.ns = cio__deadline_after(now.ns, timeout.ns);
        dl = cio_timeout_deadline(timeout.clock, now);
    }
    for (;;) {
        if (atomic_load_explicit(&w.state, memory_order_acquire) != 0)
            return CIO_OK;
        cio_err err = cio__t_os_futex_wait(&w.state, 0, dl, false);
        if (err == CIO_E_TIMEOUT && win(&w, CIO__E_R_TIMEOUT)) {
            bucket_lock(b);
            if (w.linked)
                unlink_waiter(b, &w);
            bucket_unlock(b);
            return CIO_E_TIMEOUT;
        }
    }
}

cio_err cio__e_fiber_futex_wait(struct cio_evented *e, const _Atomic(uint32_t) *ptr, uint32_t expected,
                                cio_timeout timeout, bool cancelable)
{
    struct cio_any_future *f = cio__e_self_adopt(e);
    if (f == NULL)
        return cio__e_futex_wait_foreign(ptr, expected, timeout);
    if (cancelable) {
        cio_err c = cio__e_cancel_point(e);
        if (c != CIO_OK)
            return c;
    }
    struct cio__e_loop *l = f->home;
    struct cio__e_wait w;
    cio__e_wait_init(&w, f, CIO__E_W_FUTEX, cancelable, interrupt_woken);
    w.addr = ptr;
    int64_t deadline = cio__e_mono_deadline(timeout);
    struct bucket *b = bucket_of(ptr);
    bucket_lock(b);
    if (atomic_load_explicit(ptr, memory_order_acquire) != expected) {
        bucket_unlock(b);
        return CIO_OK;
    }
    if (deadline >= 0 && deadline <= cio__e_now_ns()) {
        bucket_unlock(b);
        return CIO_E_TIMEOUT;
    }
    link_waiter(b, &w);
    if (deadline >= 0) {
        w.timer.deadline = deadline;
        w.timer.fire = futex_timer_fire;
        cio__e_timer_add(l, &w.timer);
    }
    f->wait = &w;
    cio__e_suspend(unlock_after, b);
    f->wait = NULL;
    cio__e_timer_remove(l, &w.timer);
    uint32_t reason = atomic_load_explicit(&w.state, memory_order_acquire);
    if (reason != CIO__E_R_EVENT) {
        bucket_lock(b);
        if (w.linked)
            unlink_waiter(b, &w);
        bucket_unlock(b);
    }
    if (reason == CIO__E_R_TIMEOUT)
        return CIO_E_TIMEOUT;
    if (reason == CIO__E_R_CANCEL) {
        cio__e_ack_cancel(f);
        return CIO_E_CANCELED;
    }
    return CIO_OK;
}

void cio__e_fiber_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters == 0)
        return;
    struct bucket *b = bucket_of(ptr);
    bucket_lock(b);
    uint32_t n = 0;
    struct cio__e_wait *w = b->head;
    while (w != NULL && n < max_waiters) {
        struct cio__e_wait *next = w->fnext;
        if (w->addr == ptr) {
            unlink_waiter(b, w);
            struct cio_any_future *fiber = w->fiber;
            if (win(w, CIO__E_R_EVENT)) {
                n++;
                if (fiber != NULL)
                    cio__e_make_ready(fiber);
                else
                    cio__t_os_futex_wake(&w->state, 1); /* w may be gone: the OS needs only the address */
            }
        }
        w = next;
    }
    bucket_unlock(b);
}

/* ---- sleep ------------------------------------------------------------------------------------------------ */

cio_err cio__e_sleep(void *ud, cio_timeout timeout)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio_any_future *f = cio__e_self_adopt(e);
    if (f == NULL)
        return cio__os_sleep(NULL, timeout);
    cio_err c = cio__e_cancel_point(e);
    if (c != CIO_OK)
        return CIO__IN_SET(sleep, c);
    struct cio__e_loop *l = f->home;
    struct cio__e_wait w;
    cio__e_wait_init(&w, f, CIO__E_W_SLEEP, true, interrupt_woken);
    /* A positive duration is a deadline still ahead: one clock read, not two. */
    if (timeout.kind == CIO_TIMEOUT_KIND_DURATION && timeout.ns <= 0)
        return CIO_OK;
    int64_t deadline = cio__e_mono_deadline(timeout);
    if (deadline >= 0) {
        if (timeout.kind != CIO_TIMEOUT_KIND_DURATION && deadline <= cio__e_now_ns())
            return CIO_OK;
        w.timer.deadline = deadline;
        w.timer.fire = futex_timer_fire;
        cio__e_timer_add(l, &w.timer);
    }
    f->wait = &w;
    cio__e_suspend(NULL, NULL);
    f->wait = NULL;
    cio__e_timer_remove(l, &w.timer);
    if (atomic_load_explicit(&w.state, memory_order_acquire) == CIO__E_R_CANCEL) {
        cio__e_ack_cancel(f);
        return CIO__IN_SET(sleep, CIO_E_CANCELED);
    }
    return CIO_OK;
}

/* ---- futures ------------------------------------------------------------------------------------------------ */


struct cio_any_future *cio__e_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio_any_future *f = cio__e_fiber_new(e, fn, ctx, ctx_size, true);
    if (f == NULL) {
        atomic_fetch_add_explicit(&e->n_inline_gone, 1, memory_order_relaxed); /* rare: no fiber */
        *inline_result = cio__run_inline(fn, ctx, ctx_size);
        return NULL;
    }
    f->inline_ok = true;
    cio__e_spawn(e, f);
    return f;
}

cio_err cio__e_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio_any_future *f = cio__e_fiber_new(e, fn, ctx, ctx_size, true);
    if (f == NULL)
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    cio__e_spawn(e, f);
    *out = f;
    return CIO_OK;
}

/* The awaiter's home loop, the awaiter switched out: park it in the future, or make it ready at once
 * if the future finished meanwhile. From here on only the finishing fiber makes it ready. */
static void park_after(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    uint32_t expected = CIO__E_DONE_RUNNING;
    if (!atomic_compare_exchange_strong_explicit(&f->done, &expected, CIO__E_DONE_AWAITED, memory_order_acq_rel,
                                                 memory_order_acquire))
        cio__e_make_ready(f->awaiter); /* DONE: its home is this loop, so this only queues it */
}

bool cio__e_join(struct cio_evented *e, struct cio_any_future *f, bool cancelable)
{
    if (atomic_load_explicit(&f->done, memory_order_acquire) == CIO__E_DONE)
        return false;
    struct cio_any_future *self = cio__e_self_adopt(e);
    if (self == NULL) {
        /* No fiber: sleep on the futex table (cancel requests are per fiber; there is none). */
        uint32_t expected = CIO__E_DONE_RUNNING;
        (void)atomic_compare_exchange_strong_explicit(&f->done, &expected, CIO__E_DONE_TABLE, memory_order_acq_rel,
                                                      memory_order_acquire);
        while (atomic_load_explicit(&f->done, memory_order_acquire) != CIO__E_DONE)
            (void)cio__e_futex_wait_foreign(&f->done, CIO__E_DONE_TABLE, CIO_TIMEOUT_NONE);
        return false;
    }
    bool forwarded = false;
    if (cancelable && cio__e_cancel_point(e) == CIO_E_CANCELED) {
        request_cancel(f);
        forwarded = true;
    }
    struct cio__e_wait w;
    w.fiber = self;
    w.kind = CIO__E_W_AWAIT;
    w.cancelable = cancelable && !forwarded;
    w.interrupt = interrupt_await;
    w.reason = CIO__E_R_NONE;
    w.cancel_sent = false;
    w.awaited = f;
    f->awaiter = self;
    self->wait = &w;
    cio__e_suspend(park_after, f);
    self->wait = NULL;
    return forwarded || w.reason == CIO__E_R_CANCEL;
}

static cio_err finish_future(struct cio_evented *e, struct cio_any_future *f)
{
    cio_err r = f->result;
    cio__e_fiber_free(e, f);
    return r;
}

cio_err cio__e_await(void *ud, struct cio_any_future *f)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    if (f->inline_ok && cio__e_await_inline(e, f))
        return finish_future(e, f);
    if (cio__e_join(e, f, true)) {
        /* The awaiter's cancel request went on to f: hand it back unless f acknowledged it. */
        struct cio_any_future *self = cio__e_self(e);
        if (!(atomic_load_explicit(&f->cancel, memory_order_acquire) & CIO__E_ACK) && self != NULL)
            atomic_fetch_xor_explicit(&self->cancel, CIO__E_ACK | CIO__E_REQ, memory_order_acq_rel);
    }
    return finish_future(e, f);
}

cio_err cio__e_cancel(void *ud, struct cio_any_future *f)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    if (atomic_load_explicit(&f->done, memory_order_acquire) != CIO__E_DONE) {
        request_cancel(f);
        (void)cio__e_join(e, f, false);
    }
    return finish_future(e, f);
}

/* ---- groups ----------------------------------------------------------------------------------------------
 *
 * A member counts in `running` from its spawn until it has finished; `running` is also the futex word
 * the awaiter sleeps on, and the member that takes it to 0 wakes that address. A member is in the
 * `members` list (under `mu`) only while it runs as a fiber of its own, from the moment a loop starts
 * it (cio__e_group_started) until it finishes: that is where a group cancel must reach it. One not
 * started yet sees `canceled` when it starts; one that runs inline on the awaiting fiber shares the
 * awaiter's cancel state (and runs only while no cancel is under way). The decrement of `running` is
 * a member's last touch of the record (its unlink comes before), so the awaiter frees the record once
 * it reads 0. */

struct cio__e_group {
    _Atomic(uint32_t) mu; /* spin_lock: members */
    struct cio_any_future *members;
    _Atomic(uint32_t) running;
    _Atomic(uint32_t) canceled;
};

static inline struct cio__e_group *group_get(cio_group *g, bool create)
{
    struct cio__e_group *gr = (struct cio__e_group *)atomic_load_explicit(&g->token, memory_order_acquire);
    if (gr != NULL || !create)
        return gr;
    struct cio__e_group *fresh = (struct cio__e_group *)CIO__SYS(calloc, evented_group)(1, sizeof *fresh);
    CIO__GROUP_INSTALL(struct cio__e_group, g, fresh, gr);
    return gr;
}

void cio__e_group_started(struct cio_any_future *f)
{
    struct cio__e_group *gr = f->group;
    spin_lock(&gr->mu);
    f->gprev = NULL;
    f->gnext = gr->members;
    if (gr->members != NULL)
        gr->members->gprev = f;
    gr->members = f;
    f->glinked = true;
    if (atomic_load_explicit(&gr->canceled, memory_order_acquire))
        atomic_fetch_or_explicit(&f->cancel, CIO__E_REQ, memory_order_seq_cst);
    spin_unlock(&gr->mu);
}

/* True when f was the group's last member (the group's live unit ends). */
static bool group_drop(struct cio__e_group *gr, struct cio_any_future *f)
{
    struct cio_evented *e = f->owner;
    if (f->glinked) {
        spin_lock(&gr->mu);
        CIO__LIST_UNLINK(gr->members, f, gprev, gnext);
        spin_unlock(&gr->mu);
    }
    cio__e_fiber_free(e, f);
    if (atomic_fetch_sub_explicit(&gr->running, 1, memory_order_acq_rel) != 1)
        return false;
    cio__e_fiber_futex_wake(&gr->running, UINT32_MAX); /* address only: harmless if the record is gone */
    return true;
}

/* Exit accounting shared by fibers and inline runs: one fewer live unit (a fiber, or a group with
 * members); the last wakes destroy. */
static void live_done(struct cio_evented *e)
{
    if (atomic_fetch_sub_explicit(&e->live, 1, memory_order_acq_rel) == 1) {
        atomic_fetch_add_explicit(&e->live_seq, 1, memory_order_release);
        cio__e_fiber_futex_wake(&e->live_seq, UINT32_MAX);
    }
}

/* f finished: true when a live unit ended with it. */
static bool finish(struct cio_any_future *f)
{
    if (f->group != NULL)
        return group_drop(f->group, f);
    if (f->handed_off) { /* the awaiter is already running (it is what runs this) */
        atomic_store_explicit(&f->done, CIO__E_DONE, memory_order_release);
        return true;
    }
    uint32_t old = atomic_exchange_explicit(&f->done, CIO__E_DONE, memory_order_acq_rel);
    if (old == CIO__E_DONE_AWAITED)
        cio__e_make_ready(f->awaiter); /* parked: nothing else wakes it, so f is still there */
    else if (old == CIO__E_DONE_TABLE)
        cio__e_fiber_futex_wake(&f->done, UINT32_MAX); /* address only: the waiter may free f at once */
    return true;
}

void cio__e_finish(struct cio_any_future *f)
{
    struct cio_evented *e = f->owner;
    if (finish(f)) /* f may be freed from here on */
        live_done(e);
}

static inline struct cio_any_future *group_fiber(struct cio_evented *e, cio_group *g, cio_task_fn fn, const void *ctx,
                                                 size_t ctx_size)
{
    struct cio__e_group *gr = group_get(g, true);
    if (gr == NULL)
        return NULL;
    struct cio_any_future *f = cio__e_fiber_new(e, fn, ctx, ctx_size, false);
    if (f == NULL)
        return NULL;
    f->group = gr;
    if (atomic_fetch_add_explicit(&gr->running, 1, memory_order_acq_rel) == 0)
        cio__e_live_add(e); /* the group's members count as one live unit while it has any */
    return f;
}

void cio__e_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio_any_future *f = group_fiber(e, g, fn, ctx, ctx_size);
    if (f != NULL) {
        f->inline_ok = true; /* an async member may run on the awaiting fiber (group_await) */
        cio__e_spawn(e, f);
    } else {
        atomic_fetch_add_explicit(&e->n_inline_gone, 1, memory_order_relaxed); /* rare: no fiber */
        (void)cio__run_inline(fn, ctx, ctx_size);
    }
}

cio_err cio__e_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio_any_future *f = group_fiber(e, g, fn, ctx, ctx_size);
    if (f == NULL)
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    cio__e_spawn(e, f);
    return CIO_OK;
}

static void group_cancel_all(struct cio__e_group *gr)
{
    spin_lock(&gr->mu);
    atomic_store_explicit(&gr->canceled, 1, memory_order_release);
    for (struct cio_any_future *m = gr->members; m != NULL; m = m->gnext)
        request_cancel(m);
    spin_unlock(&gr->mu);
}

static void group_wait_all(struct cio_evented *e, struct cio__e_group *gr)
{
    uint32_t n;
    while ((n = atomic_load_explicit(&gr->running, memory_order_acquire)) != 0)
        (void)cio__e_fiber_futex_wait(e, &gr->running, n, CIO_TIMEOUT_NONE, false);
}

/* `running` is 0: no member touches the record any more. */
static void group_release(cio_group *g, struct cio__e_group *gr)
{
    atomic_store_explicit(&g->token, 0, memory_order_release);
    free(gr);
}

cio_err cio__e_group_await(void *ud, cio_group *g)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio__e_group *gr = group_get(g, false);
    if (gr == NULL)
        return CIO_OK;
    cio_err result = CIO_OK;
    /* Members not started yet that this fiber would switch to next anyway run here (sched.c). One
     * that takes this fiber's cancel request (it sees the awaiter's state) cancels the await. */
    if (cio__e_group_inline(e, gr) < 0) { /* a member acknowledged this fiber's cancel request */
        group_cancel_all(gr);
        group_wait_all(e, gr);
        group_release(g, gr);
        return CIO__IN_SET(cancelable, CIO_E_CANCELED);
    }
    uint32_t n;
    while ((n = atomic_load_explicit(&gr->running, memory_order_acquire)) != 0) {
        cio_err err = cio__e_fiber_futex_wait(e, &gr->running, n, CIO_TIMEOUT_NONE, true);
        if (err == CIO_E_CANCELED) {
            group_cancel_all(gr);
            group_wait_all(e, gr);
            result = CIO_E_CANCELED;
            break;
        }
    }
    group_release(g, gr);
    return CIO__IN_SET(cancelable, result);
}

void cio__e_group_cancel(void *ud, cio_group *g)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    struct cio__e_group *gr = group_get(g, false);
    if (gr == NULL)
        return;
    group_cancel_all(gr);
    group_wait_all(e, gr);
    group_release(g, gr);
}

/* ---- cancellation and futex slots ---------------------------------------------------------------------------- */


cio_err cio__e_check_cancel(void *ud)
{
    return CIO__IN_SET(cancelable, cio__e_cancel_point((struct cio_evented *)ud));
}

void cio__e_recancel(void *ud)
{
    struct cio_any_future *f = cio__e_self((struct cio_evented *)ud);
    if (f == NULL)
        return;
    uint32_t s = atomic_load_explicit(&f->cancel, memory_order_acquire);
    assert((s & CIO__E_ACK) && "cio_recancel without a received cancel request");
    while (s & CIO__E_ACK) {
        if (atomic_compare_exchange_weak_explicit(&f->cancel, &s, (s & ~CIO__E_ACK) | CIO__E_REQ, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
    }
}

cio_cancel_protection cio__e_swap_cancel_protection(void *ud, cio_cancel_protection prot)
{
    struct cio_any_future *f = cio__e_self((struct cio_evented *)ud);
    cio_cancel_protection *slot = f != NULL ? &f->protection : &foreign_protection;
    cio_cancel_protection old = *slot;
    *slot = prot;
    return old;
}

cio_err cio__e_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout)
{
    return CIO__IN_SET(futex_wait, cio__e_fiber_futex_wait((struct cio_evented *)ud, ptr, expected, timeout, true));
}

void cio__e_futex_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    (void)cio__e_fiber_futex_wait((struct cio_evented *)ud, ptr, expected, CIO_TIMEOUT_NONE, false);
}

void cio__e_futex_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    (void)ud;
    cio__e_fiber_futex_wake(ptr, max_waiters);
}
