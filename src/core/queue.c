/*
 * cio_queue: a bounded MPMC channel with close (Zig's Io.Queue, type-erased to elem_size bytes).
 *
 * State (all under q->mutex):
 *     buffer[capacity]  a ring of elements: `len` of them starting at index `start`
 *     getters, putters  FIFO lists of blocked tasks (circular doubly-linked; the head's prev is the
 *                       tail). A node is a struct cio__queue_waiter on the blocked task's stack.
 *     closed            set once by close, never cleared
 * The ring holds data that is logically *after* every queued getter: the ring is non-empty only
 * when no getter waits, and putters wait only when the ring is full (or capacity is 0).
 *
 * A waiter records where its data goes (getter) or comes from (putter), `remaining` elements it
 * may still transfer and `needed` elements it must still transfer before it may return (its min).
 * It is on its list (queued) exactly until needed reaches 0 or the queue closes; whoever takes it
 * off the list (a peer completing it, or close) does so under q->mutex and then stores done =
 * DONE_MARKED (release): its counts were written before that store. The futex wake for it is made
 * after q->mutex is released (unlock_and_wake), and only then does the waker store DONE_RELEASED,
 * its last touch of the node. The waiter sleeps on `done` without the mutex and returns only once
 * it reads DONE_RELEASED (acquire), so its frame outlives every access to it (valgrind saw the wake
 * land in a dead frame when the waiter returned at MARKED). MARKED lasts one futex wake system
 * call: a waiter that finds it naps (a timed futex wait on MARKED, cancellation blocked) and looks
 * again. A woken waiter never has to take q->mutex again, and the waker does not hold it when the
 * waiter runs. A canceled waiter takes q->mutex to dequeue itself, unless a peer completed it
 * meanwhile (then it waits for RELEASED as well).
 *
 * Who does what:
 *   - put: closed -> CIO_E_CLOSED. Copies straight into waiting getters (oldest first), then into
 *     the ring, then, if fewer than min went in, queues itself and sleeps until peers have taken
 *     `needed` more from it, the queue closes, or it is canceled.
 *   - get: drains the ring, then copies straight from waiting putters, then (if it filled its
 *     buffer) refills the ring from the remaining putters, waking those whose min is met. A closed
 *     queue never blocks a get: it returns what there is, CIO_E_CLOSED only if that is nothing.
 *     Otherwise, below min, it queues itself and sleeps like put.
 *   - a canceled waiter dequeues itself. If nothing was transferred it returns CIO_E_CANCELED;
 *     otherwise it reports the count (those elements did move) and re-arms the cancel request
 *     with cio_recancel so the next cancellation point sees it.
 *   - close wakes and dequeues every waiter.
 * Lock order: q->mutex, then nothing.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cio/sync.h"
#include "internal.h"

struct cio__queue_waiter {
    struct cio__queue_waiter *next, *prev;
    unsigned char *dst;       /* getter: where the next element goes */
    const unsigned char *src; /* putter: the next element to hand over */
    size_t remaining;         /* elements it may still transfer */
    size_t needed;            /* elements it must still transfer before it may return */
    bool queued;
    _Atomic(uint32_t) done; /* futex word: DONE_* (a peer or close took it off its list, then woke it) */
};

typedef struct cio__queue_waiter waiter;

#define DONE_WAITING 0u  /* queued */
#define DONE_MARKED 1u   /* off its list, counts final; its waker still owes it a futex wake */
#define DONE_RELEASED 2u /* woken: nobody touches the node any more */
#define MARKED_NAP_NS 20000

/* Futex wakes owed to completed waiters, made after q->mutex is released (see the top comment). */
#define DEFERRED_WAKES 4
typedef struct wakes {
    _Atomic(uint32_t) *word[DEFERRED_WAKES];
    size_t n;
} wakes;

/* ---- intrusive lists ---------------------------------------------------------------------------- */

static void list_append(waiter **head, waiter *w)
{
    if (*head == NULL) {
        w->next = w->prev = w;
        *head = w;
    } else {
        w->prev = (*head)->prev;
        w->next = *head;
        (*head)->prev->next = w;
        (*head)->prev = w;
    }
    w->queued = true;
}

static void list_remove(waiter **head, waiter *w)
{
    assert(w->queued);
    if (w->next == w) {
        *head = NULL;
    } else {
        w->prev->next = w->next;
        w->next->prev = w->prev;
        if (*head == w)
            *head = w->next;
    }
    w->next = w->prev = NULL;
    w->queued = false;
}

/* Takes a waiter whose min is met (or the queue closed) off its list and marks it done. From the
 * release store on, the waiter may return and its frame be gone: only the word's address is kept,
 * for the futex wake (which needs no memory there). More wakes than fit are made at once. */
static void complete(const cio_io *io, wakes *wk, waiter **head, waiter *w)
{
    list_remove(head, w);
    atomic_store_explicit(&w->done, DONE_MARKED, memory_order_release);
    if (wk->n < DEFERRED_WAKES) {
        wk->word[wk->n++] = &w->done;
    } else {
        io->vtable->futex_wake(io->userdata, &w->done, 1);
        atomic_store_explicit(&w->done, DONE_RELEASED, memory_order_release);
    }
}

/* Releases q->mutex, then wakes the waiters completed under it: a woken waiter does not need the
 * mutex, and one woken while we still held it would (on one CPU) preempt us only to find its next
 * queue operation blocked on it. */
static void unlock_and_wake(const cio_io *io, cio_queue *q, wakes *wk)
{
    cio_mutex_unlock(*io, &q->mutex);
    for (size_t i = 0; i < wk->n; i++) {
        io->vtable->futex_wake(io->userdata, wk->word[i], 1);
        atomic_store_explicit(wk->word[i], DONE_RELEASED, memory_order_release);
    }
    wk->n = 0;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ---- the ring ------------------------------------------------------------------------------------ */

/* One element: sizes that are a machine word or two copy inline instead of through a memcpy call
 * (a one-element put or get is the common case, and the call was a third of its cost). */
static inline void copy_one(unsigned char *dst, const unsigned char *src, size_t es)
{
    switch (es) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, es); break;
    }
}

/* One element into the ring, which has room. */
static inline void ring_put_one(cio_queue *q, const unsigned char *src)
{
    size_t tail = q->start + q->len;
    if (tail >= q->capacity)
        tail -= q->capacity;
    copy_one(q->buffer + tail * q->elem_size, src, q->elem_size);
    q->len++;
}

/* One element out of the ring, which is not empty. */
static inline void ring_take_one(cio_queue *q, unsigned char *dst)
{
    copy_one(dst, q->buffer + q->start * q->elem_size, q->elem_size);
    if (++q->start == q->capacity)
        q->start = 0;
    q->len--;
}

static size_t ring_put(cio_queue *q, const unsigned char *src, size_t max)
{
    size_t es = q->elem_size, count = 0;
    while (count < max && q->len < q->capacity) {
        size_t tail = q->start + q->len;
        if (tail >= q->capacity)
            tail -= q->capacity;
        size_t chunk = min_size(max - count, min_size(q->capacity - q->len, q->capacity - tail));
        memcpy(q->buffer + tail * es, src + count * es, chunk * es);
        q->len += chunk;
        count += chunk;
    }
    return count;
}

static size_t ring_take(cio_queue *q, unsigned char *dst, size_t max)
{
    size_t es = q->elem_size, count = 0;
    while (count < max && q->len > 0) {
        size_t chunk = min_size(max - count, min_size(q->len, q->capacity - q->start));
        memcpy(dst + count * es, q->buffer + q->start * es, chunk * es);
        q->start += chunk;
        if (q->start == q->capacity)
            q->start = 0;
        q->len -= chunk;
        count += chunk;
    }
    return count;
}

/* Moves data of blocked putters into free ring slots, completing those whose min is met. */
/* w transferred k more elements: true when that meets its min (then it may be completed). */
static bool waiter_moved(waiter *w, size_t k)
{
    w->remaining -= k;
    w->needed -= min_size(w->needed, k);
    return w->needed == 0;
}

/* Elements [done, n) handed straight to the getters of *head (from src) or taken straight from its
 * putters (into dst; the other pointer is NULL), oldest first, completing each whose min is met;
 * returns done plus what moved. A waiter left incomplete took all there was (done == n). */
static size_t hand_over(const cio_io *io, wakes *wk, size_t es, waiter **head, const unsigned char *src,
                        unsigned char *dst, size_t done, size_t n)
{
    while (done < n && *head != NULL) {
        waiter *w = *head;
        size_t k = min_size(w->remaining, n - done);
        if (src != NULL) {
            memcpy(w->dst, src + done * es, k * es);
            w->dst += k * es;
        } else {
            memcpy(dst + done * es, w->src, k * es);
            w->src += k * es;
        }
        done += k;
        if (waiter_moved(w, k))
            complete(io, wk, head, w);
        else
            assert(done == n);
    }
    return done;
}

static void fill_ring_from_putters(const cio_io *io, wakes *wk, cio_queue *q)
{
    while (q->putters != NULL && q->len < q->capacity) {
        waiter *p = q->putters;
        size_t k = ring_put(q, p->src, p->remaining);
        p->src += k * q->elem_size;
        if (!waiter_moved(p, k))
            break; /* the ring is full */
        complete(io, wk, &q->putters, p);
    }
}

/* ---- blocking ------------------------------------------------------------------------------------ */

/* A completed waiter: until its waker has made the wake it owes (DONE_RELEASED), it naps. */
static void wait_released(cio_io io, waiter *w)
{
    if (atomic_load_explicit(&w->done, memory_order_acquire) == DONE_RELEASED)
        return;
    cio_cancel_protection prot = cio_swap_cancel_protection(io, CIO_CANCEL_BLOCKED);
    while (atomic_load_explicit(&w->done, memory_order_acquire) != DONE_RELEASED)
        (void)CIO__VT(io)->futex_wait(io.userdata, &w->done, DONE_MARKED, cio_timeout_ns(MARKED_NAP_NS));
    (void)cio_swap_cancel_protection(io, prot);
}

/* Queues w (on *head), releases q->mutex and sleeps until a peer or close marks w done or
 * (cancelable) the task is canceled. Returns with q->mutex released, w off the list and *moved =
 * elements transferred in total (of `total`). A done waiter reads its counts without the mutex:
 * the peer wrote them before its release store of done. */
static cio_err block(cio_io io, wakes *wk, cio_queue *q, waiter **head, waiter *w, size_t total, bool uncancelable,
                     size_t *moved)
{
    list_append(head, w);
    unlock_and_wake(&io, q, wk);
    cio_err err = CIO_OK;
    while (atomic_load_explicit(&w->done, memory_order_acquire) == DONE_WAITING) {
        if (uncancelable) {
            CIO__VT(io)->futex_wait_uncancelable(io.userdata, &w->done, 0);
            continue;
        }
        err = CIO__VT(io)->futex_wait(io.userdata, &w->done, 0, CIO_TIMEOUT_NONE);
        if (err == CIO_E_CANCELED)
            break;
        err = CIO_OK; /* woken, spurious, or done already: re-check */
    }
    if (err == CIO_E_CANCELED) {
        cio_mutex_lock_uncancelable(io, &q->mutex);
        if (w->queued)
            list_remove(head, w); /* else a peer or close completed it meanwhile */
        cio_mutex_unlock(io, &q->mutex);
    }
    if (atomic_load_explicit(&w->done, memory_order_acquire) != DONE_WAITING)
        wait_released(io, w);
    *moved = total - w->remaining;
    if (err == CIO_E_CANCELED) {
        if (*moved == 0)
            return err;
        cio_recancel(io); /* report the progress; the next cancellation point sees the request */
        return CIO_OK;
    }
    return *moved == 0 ? CIO_E_CLOSED : CIO_OK; /* done with nothing moved: only close does that */
}

/* Both run with q->mutex held and return with it released. */
static cio_err put_locked(cio_io io, wakes *wk, cio_queue *q, const unsigned char *src, size_t n, size_t min,
                          bool uncancelable, size_t *added)
{
    size_t es = q->elem_size, done = 0;
    *added = 0;
    if (q->closed) {
        unlock_and_wake(&io, q, wk);
        return CIO_E_CLOSED; /* even if there is room */
    }
    /* Waiting getters first: the ring is empty while any getter waits. */
    done = hand_over(&io, wk, es, &q->getters, src, NULL, done, n);
    done += ring_put(q, src + done * es, n - done);
    if (done >= min) { /* includes done == n */
        unlock_and_wake(&io, q, wk);
        *added = done;
        return CIO_OK;
    }
    waiter w = {.src = src + done * es, .remaining = n - done, .needed = min - done};
    return block(io, wk, q, &q->putters, &w, n, uncancelable, added);
}

static cio_err get_locked(cio_io io, wakes *wk, cio_queue *q, unsigned char *dst, size_t n, size_t min,
                          bool uncancelable, size_t *got)
{
    size_t es = q->elem_size;
    size_t done = ring_take(q, dst, n);
    *got = 0;
    /* Then straight from waiting putters (the ring is empty now unless done == n). */
    done = hand_over(&io, wk, es, &q->putters, NULL, dst, done, n);
    if (done == n)
        fill_ring_from_putters(&io, wk, q);
    /* Otherwise the ring and the putter list are both empty now. */
    if (done == n || done >= min || q->closed) {
        bool closed_empty = done == 0 && q->closed;
        unlock_and_wake(&io, q, wk);
        *got = done;
        return closed_empty ? CIO_E_CLOSED : CIO_OK;
    }
    waiter w = {.dst = dst + done * es, .remaining = n - done, .needed = min - done};
    return block(io, wk, q, &q->getters, &w, n, uncancelable, got);
}

/* ---- public -------------------------------------------------------------------------------------- */

void cio_queue_init(cio_queue *queue, void *buffer, size_t elem_size, size_t capacity)
{
    memset(queue, 0, sizeof *queue);
    queue->buffer = (unsigned char *)buffer;
    queue->elem_size = elem_size;
    queue->capacity = capacity;
}

size_t cio_queue_capacity(const cio_queue *queue)
{
    return queue->capacity;
}

/* The general path of every put and get: validates, locks (cancelably unless uncancelable), moves
 * what it can and blocks for the rest. */
static cio_err transfer(cio_io io, cio_queue *q, bool is_put, void *elems, size_t n, size_t min, bool uncancelable,
                        size_t *count)
{
    size_t moved = 0;
    if (count != NULL)
        *count = 0;
    CIO__REQUIRE_BUF(elems, n);
    if (q->elem_size == 0 || min > n || (q->buffer == NULL && q->capacity != 0))
        return CIO_E_INVALID_ARGUMENT;
    if (n == 0)
        return CIO_OK;
    if (uncancelable) {
        cio_mutex_lock_uncancelable(io, &q->mutex);
    } else {
        cio_err err = cio_mutex_lock(io, &q->mutex);
        if (err != CIO_OK)
            return err;
    }
    wakes wk = {.n = 0};
    cio_err err = is_put ? put_locked(io, &wk, q, (const unsigned char *)elems, n, min, uncancelable, &moved)
                         : get_locked(io, &wk, q, (unsigned char *)elems, n, min, uncancelable, &moved);
    if (count != NULL)
        *count = moved;
    return err;
}

/* one_fast's rare branch: a get made room, blocked putters fill it. */
static void refill_and_unlock(const cio_io *io, cio_queue *q)
{
    wakes wk = {.n = 0};
    fill_ring_from_putters(io, &wk, q);
    unlock_and_wake(io, q, &wk);
}

/* One element when the mutex is free and nobody waits on the other side: what most puts and gets
 * are, done without the general machinery (no waiter lists to walk, no blocking possible, so not a
 * cancellation point, like an uncontended cio_mutex_lock). false: take the general path. Inlined
 * into each public one-element call with is_put constant. io by address: with the by-value io
 * GCC kept a copy of it on the stack, made on every call by two 8-byte stores reloaded as one
 * 16-byte load (a store-forwarding stall that was half the time of a get). */
static inline bool one_fast(const cio_io *io, cio_queue *q, bool is_put, void *elem, cio_err *err)
{
    if (elem == NULL || q->elem_size == 0 || q->capacity == 0 || q->buffer == NULL || !cio_mutex_try_lock(&q->mutex))
        return false;
    if (is_put) {
        if (q->closed) {
            *err = CIO_E_CLOSED;
        } else if (q->getters == NULL && q->len < q->capacity) {
            ring_put_one(q, (const unsigned char *)elem);
            *err = CIO_OK;
        } else {
            cio_mutex_unlock(*io, &q->mutex);
            return false;
        }
    } else {
        if (q->len == 0) {
            cio_mutex_unlock(*io, &q->mutex);
            return false;
        }
        ring_take_one(q, (unsigned char *)elem);
        *err = CIO_OK;
        if (q->putters != NULL) {
            refill_and_unlock(io, q);
            return true;
        }
    }
    cio_mutex_unlock(*io, &q->mutex);
    return true;
}

static inline cio_err one(cio_io io, cio_queue *q, bool is_put, void *elem, bool uncancelable)
{
    cio_err err;
    if (one_fast(&io, q, is_put, elem, &err))
        return err;
    return transfer(io, q, is_put, elem, 1, 1, uncancelable, NULL);
}

cio_err cio_queue_put(cio_io io, cio_queue *queue, const void *elems, size_t n, size_t min, size_t *added)
{
    return CIO__IN_SET(queue, transfer(io, queue, true, (void *)(uintptr_t)elems, n, min, false, added));
}

cio_err cio_queue_put_uncancelable(cio_io io, cio_queue *queue, const void *elems, size_t n, size_t min, size_t *added)
{
    return CIO__IN_SET(queue_closed, transfer(io, queue, true, (void *)(uintptr_t)elems, n, min, true, added));
}

cio_err cio_queue_get(cio_io io, cio_queue *queue, void *elems, size_t n, size_t min, size_t *got)
{
    return CIO__IN_SET(queue, transfer(io, queue, false, elems, n, min, false, got));
}

cio_err cio_queue_get_uncancelable(cio_io io, cio_queue *queue, void *elems, size_t n, size_t min, size_t *got)
{
    return CIO__IN_SET(queue_closed, transfer(io, queue, false, elems, n, min, true, got));
}

cio_err cio_queue_put_one(cio_io io, cio_queue *queue, const void *elem)
{
    return CIO__IN_SET(queue, one(io, queue, true, (void *)(uintptr_t)elem, false));
}

cio_err cio_queue_put_one_uncancelable(cio_io io, cio_queue *queue, const void *elem)
{
    return CIO__IN_SET(queue_closed, one(io, queue, true, (void *)(uintptr_t)elem, true));
}

cio_err cio_queue_get_one(cio_io io, cio_queue *queue, void *elem)
{
    return CIO__IN_SET(queue, one(io, queue, false, elem, false));
}

cio_err cio_queue_get_one_uncancelable(cio_io io, cio_queue *queue, void *elem)
{
    return CIO__IN_SET(queue_closed, one(io, queue, false, elem, true));
}

void cio_queue_close(cio_io io, cio_queue *queue)
{
    wakes wk = {.n = 0};
    cio_mutex_lock_uncancelable(io, &queue->mutex);
    queue->closed = true;
    while (queue->getters != NULL)
        complete(&io, &wk, &queue->getters, queue->getters);
    while (queue->putters != NULL)
        complete(&io, &wk, &queue->putters, queue->putters);
    unlock_and_wake(&io, queue, &wk);
}
