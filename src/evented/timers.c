/*
 * The Evented backend's loop timers (split from sched.c): each loop's deadlines, on the loop thread
 * only (a timer lives in a wait record on its fiber's stack, or in the loop); and their clock
 * (cio__e_now_ns, cio__e_mono_deadline: any thread).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "evented.h"
#include "internal.h"
#include "list.h"
#include "internal/cio_oscalls.h"
#include "os.h" /* cio__os_now */

/* ---- the clock ---------------------------------------------------------------------------------- */

int64_t cio__e_mono_deadline(cio_timeout timeout)
{
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return -1;
    int64_t remaining = timeout.ns;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
        remaining = timeout.ns - cio__os_now(NULL, timeout.clock).ns;
    return cio__deadline_after(cio__e_now_ns(), remaining);
}

/* A failed reading (none is expected of CLOCK_MONOTONIC) is asked again through the Threaded
 * backend's clock (the same clock, clock_gettime@now); when that fails too, this thread's last good
 * reading stands (0 before the first), so the loop goes on and its timers fire, if off time. */
static _Thread_local int64_t last_now;

int64_t cio__e_now_ns(void)
{
    struct timespec ts;
    if (CIO__SYS(clock_gettime, evented_now)(CLOCK_MONOTONIC, &ts) == 0) {
        last_now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    } else {
        int64_t again = cio__os_now(NULL, CIO_CLOCK_AWAKE).ns; /* 0: failed as well */
        if (again != 0)
            last_now = again;
    }
    return last_now;
}

int64_t cio__e_now_last(void)
{
    return last_now;
}

bool cio__e_deadline_passed(int64_t deadline_ns)
{
    /* The clock never goes back, so a deadline at or before the last reading has passed. One more
     * than a millisecond after it is taken as not passed: the last reading is that of the latest
     * cio__e_mono_deadline or loop pass on this thread, so it is later only if this thread went that
     * long without looking at the clock; then the deadline's timer fires on the loop's next pass. */
    if (deadline_ns <= last_now)
        return true;
    if (deadline_ns - last_now > 1000000)
        return false;
    return deadline_ns <= cio__e_now_ns();
}

/* ---- the timers --------------------------------------------------------------------------------- */

/*
 * Two structures, both on the loop thread only. Most timers of a loop are armed with deadlines in
 * the order they fall due (many fibers sleeping or waiting with the same timeout, each arming "now
 * + d"): those go on a FIFO, O(1) to arm, remove and fire, touching only the timer and its
 * neighbours (the timers live in wait records on fibers' stacks: a heap of 100,000 of them costs a
 * cache and TLB miss per level on every pop). A timer due before the FIFO's tail goes on a binary
 * min-heap instead. The earliest deadline is the smaller of the FIFO's head and the heap's root.
 */

static void heap_set(struct cio__e_loop *l, size_t i, struct cio__e_timer *t)
{
    l->heap[i] = t;
    t->index = i;
}

static void heap_up(struct cio__e_loop *l, size_t i)
{
    struct cio__e_timer *t = l->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (l->heap[p]->deadline <= t->deadline)
            break;
        heap_set(l, i, l->heap[p]);
        i = p;
    }
    heap_set(l, i, t);
}

static void heap_down(struct cio__e_loop *l, size_t i)
{
    struct cio__e_timer *t = l->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->heap_len)
            break;
        if (c + 1 < l->heap_len && l->heap[c + 1]->deadline < l->heap[c]->deadline)
            c++;
        if (t->deadline <= l->heap[c]->deadline)
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

void cio__e_timer_add(struct cio__e_loop *l, struct cio__e_timer *t)
{
    if (l->tq_tail == NULL || l->tq_tail->deadline <= t->deadline) {
        t->index = CIO__E_TIMER_QUEUED;
        t->qnext = NULL;
        t->qprev = l->tq_tail;
        if (l->tq_tail != NULL)
            l->tq_tail->qnext = t;
        else
            l->tq_head = t;
        l->tq_tail = t;
        return;
    }
    if (l->heap_len == l->heap_cap) {
        size_t cap = l->heap_cap ? l->heap_cap * 2 : 64;
        struct cio__e_timer **h = (struct cio__e_timer **)CIO__SYS(realloc, timer_heap)(l->heap, cap * sizeof *h);
        if (h == NULL) {
            /* No room to remember the deadline: fire it now (an early timeout beats a lost one). */
            t->index = SIZE_MAX;
            t->deadline = 0;
            t->fire(l, t);
            return;
        }
        l->heap = h;
        l->heap_cap = cap;
    }
    l->heap_len++;
    heap_set(l, l->heap_len - 1, t);
    heap_up(l, l->heap_len - 1);
}

void cio__e_timer_remove(struct cio__e_loop *l, struct cio__e_timer *t)
{
    size_t i = t->index;
    if (i == SIZE_MAX)
        return;
    t->index = SIZE_MAX;
    if (i == CIO__E_TIMER_QUEUED) {
        CIO__LIST_UNLINK_TAILED(l->tq_head, l->tq_tail, t, qprev, qnext);
        t->qprev = t->qnext = NULL;
        return;
    }
    l->heap_len--;
    if (i == l->heap_len)
        return;
    heap_set(l, i, l->heap[l->heap_len]);
    heap_down(l, i);
    heap_up(l, l->heap[i]->index);
}

/* The armed timer with the earliest deadline, or NULL. */
static struct cio__e_timer *timer_first(const struct cio__e_loop *l)
{
    struct cio__e_timer *q = l->tq_head;
    struct cio__e_timer *h = l->heap_len > 0 ? l->heap[0] : NULL;
    if (q == NULL)
        return h;
    return h != NULL && h->deadline < q->deadline ? h : q;
}

int64_t cio__e_timer_next(const struct cio__e_loop *l)
{
    const struct cio__e_timer *t = timer_first(l);
    return t != NULL ? t->deadline : -1;
}

bool cio__e_fire_timers(struct cio__e_loop *l)
{
    struct cio__e_timer *t = timer_first(l);
    if (t == NULL)
        return false;
    int64_t now = cio__e_now_ns();
    while (t != NULL && t->deadline <= now) {
        cio__e_timer_remove(l, t);
        t->fire(l, t);
        t = timer_first(l);
    }
    return true;
}
