/*
 * Futex wait/wake on NetBSD: a parking futex built on _lwp_park (symbol ___lwp_park60) and
 * _lwp_unpark, the primitives NetBSD's own libpthread sleeps on.
 *
 * Why this and not the alternatives:
 * - The seeds' ResetEvent on a pthread mutex + condition variable works, but a thread blocked in
 *   pthread_cond_(timed)wait is not knocked out by a signal (POSIX lets it resume waiting), so a
 *   cancel request could not interrupt a futex wait. _lwp_park fails with EINTR when a signal is
 *   handled, which is exactly what cancel.c's bracket needs.
 * - NetBSD 10 has a Linux-style __futex system call, but no libc wrapper or documented interface
 *   for it; _lwp_park/_lwp_unpark are documented (_lwp_park(2)) and have been stable since 5.0.
 *
 * Structure: waiters are kept in a fixed table of buckets hashed by the futex word's address; each
 * bucket has a spinlock and a doubly linked list of the waiters parked on words of that bucket.
 *
 * Invariants:
 * - A waiter compares the word with `expected` while holding its bucket's lock and enqueues itself
 *   under that same lock. A waker stores to the word before calling wake, which takes the lock: so
 *   either the waiter saw the new value, or the waker finds the waiter in the list. No lost wake-up.
 * - Only a waker dequeues a waiter it wakes (setting `woken` under the lock, then unparking it after
 *   dropping the lock); a waiter that returns for any other reason (timeout, cancel, a stray
 *   unpark) dequeues itself under the lock if it is still queued. Nothing touches a waiter's node
 *   (it lives on the waiter's stack) after it is off the list: the waker copies the LWP id and hint
 *   out before unlocking.
 * - An unpark that arrives before the target parks is remembered by the kernel (the next park
 *   returns at once, EALREADY), so a wake-up between enqueue and park is not lost. The price: an
 *   unpark aimed at a waiter that already left (timed out, canceled) wakes that LWP's next park
 *   early. Every user of _lwp_park (ours and libpthread's) treats that as a spurious wake-up.
 * - Timeouts are absolute (TIMER_ABSTIME) on CLOCK_MONOTONIC, or CLOCK_REALTIME for a
 *   CIO_CLOCK_REAL deadline, computed once (wait_posix.c): EINTR retries never extend them. The
 *   wait loop is this file's own (the queue), not wait_posix.c's.
 * - Bucket locks are leaves: nothing else is locked or called while one is held.
 */
#include <errno.h>
#include <lwp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "list.h"
#include "task.h"
#include "threaded.h"
#include "wait_posix.h"

#define BUCKETS 64    /* a power of two */
#define WAKE_BATCH 32 /* LWPs unparked per pass over a bucket */

typedef struct waiter {
    const void *addr;
    lwpid_t lid;
    _Bool woken;
    struct waiter *prev, *next;
} waiter;

static struct bucket {
    _Atomic(uint32_t) lock;
    waiter *head;
} buckets[BUCKETS];

static struct bucket *bucket_of(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    a ^= a >> 11;
    a *= (uintptr_t)0x9E3779B97F4A7C15ULL;
    return &buckets[(a >> 17) & (BUCKETS - 1)];
}

static void lock(struct bucket *b)
{
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&b->lock, memory_order_relaxed) == 0 &&
            atomic_exchange_explicit(&b->lock, 1, memory_order_acquire) == 0)
            return;
        if (spins >= 64)
            sched_yield();
    }
}

static void unlock(struct bucket *b)
{
    atomic_store_explicit(&b->lock, 0, memory_order_release);
}

static void unlink_locked(struct bucket *b, waiter *w)
{
    CIO__LIST_UNLINK(b->head, w, prev, next);
    w->prev = w->next = NULL;
}

/* Leaves the queue if still on it; true if a waker took us off (a real wake-up). */
static _Bool leave(struct bucket *b, waiter *self)
{
    lock(b);
    _Bool woken = self->woken;
    if (!woken)
        unlink_locked(b, self);
    unlock(b);
    return woken;
}

cio_err cio__t_os_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable)
{
    cio__os_deadline d = cio__os_deadline_of(timeout);
    struct timespec abs = cio__os_timespec(d.ns);
    clockid_t clk = cio__os_deadline_clockid(&d);
    _Bool timed = d.timed;
    if (cancelable) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return e;
    }
    struct bucket *b = bucket_of((const void *)ptr);
    waiter self = {(const void *)ptr, _lwp_self(), 0, NULL, NULL};
    lock(b);
    if (atomic_load_explicit(ptr, memory_order_seq_cst) != expected) {
        unlock(b);
        if (cancelable)
            cio__t_syscall_end();
        return CIO_OK; /* the value already differed */
    }
    self.next = b->head;
    if (b->head != NULL)
        b->head->prev = &self;
    b->head = &self;
    unlock(b);

    cio_err result = CIO_OK;
    for (;;) {
        int rc = _lwp_park(clk, timed ? TIMER_ABSTIME : 0, timed ? &abs : NULL, 0, &self, NULL);
        int err = rc == 0 ? 0 : errno;
        if (err == EINTR) {
            if (cancelable) {
                cio_err e = cio__t_syscall_interrupted();
                if (e != CIO_OK) {
                    /* canceled: the bracket is closed; a wake-up that raced in is passed on as
                     * spurious to the next park of this LWP, which every caller tolerates */
                    (void)leave(b, &self);
                    return e;
                }
            }
            lock(b);
            _Bool woken = self.woken;
            unlock(b);
            if (woken)
                break;
            continue; /* a stray signal: park again */
        }
        if (err == ETIMEDOUT) {
            if (!leave(b, &self))
                result = CIO_E_TIMEOUT;
            break;
        }
        if (err != 0 && err != EALREADY) {
            (void)leave(b, &self);
            cio__mapped m = cio__errno_futex_wait(err);
            result = m.action == CIO__MAP_BUG ? CIO__BUG("_lwp_park") : m.err;
            break;
        }
        (void)leave(b, &self); /* unparked (EALREADY: before we parked): done, spurious or not */
        break;
    }
    if (cancelable)
        cio__t_syscall_end();
    return result;
}

void cio__t_os_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    struct bucket *b = bucket_of((const void *)ptr);
    uint32_t left = max_waiters;
    while (left > 0) {
        lwpid_t lids[WAKE_BATCH];
        const void *hints[WAKE_BATCH];
        size_t n = 0;
        _Bool more = 0;
        lock(b);
        for (waiter *w = b->head, *next; w != NULL; w = next) {
            next = w->next;
            if (w->addr != (const void *)ptr)
                continue;
            if (n == WAKE_BATCH || left == 0) {
                more = left > 0;
                break;
            }
            unlink_locked(b, w);
            w->woken = 1;
            lids[n] = w->lid;
            hints[n] = w;
            n++;
            left--;
        }
        unlock(b);
        for (size_t i = 0; i < n; i++)
            (void)_lwp_unpark(lids[i], hints[i]);
        if (!more)
            break;
    }
}
