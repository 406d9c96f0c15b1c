/*
 * The process-wide recursive stderr lock (Zig's lockStderr/tryLockStderr/unlockStderr), one for the
 * whole process, shared by every Io instance of every backend and by cio's own diagnostics.
 *
 * Invariants:
 * - `word` is a three-state futex word: 0 free, 1 held, 2 held and maybe waited for. Only the
 *   holder writes `owner` (non-zero: the holder's task identity), `owner_thread` (the identity of
 *   the thread it took the lock on) and `depth`; another task reads `owner` only to tell that it is
 *   not itself, which a stale value cannot fake (a task's identity is written only by that task).
 * - Threads (Threaded tasks, foreign threads, diagnostics) have one identity per thread
 *   (cio__stderr_thread_self), whichever instance they go through; a fiber's identity is its own.
 * - A waiter waits with the backend's own futex slot, so a fiber does not block its loop thread and
 *   the wait is a cancellation point; a canceled lock leaves the state as it found it (a waiter
 *   that set 2 only causes one spare wake). Threads wait on the OS futex, fibers (and Evented's
 *   foreign threads) in Evented's wait table: unlock wakes one of each (`thread_wake`, installed by
 *   every cio_threaded_create; `fiber_wakes`, by every Evented instance and lock), a spare wake at
 *   most. The backends' functions are reached through these pointers only (no call into them).
 * - A diagnostic takes the lock as its task: the running fiber (Evented's `fiber_who`, installed
 *   with every instance) or else the thread, so one made while its task holds the lock nests.
 * - Diagnostics wait in rounds of 50 ms and write without the lock after 20 rounds that no unlock
 *   ended (about a second), so a diagnostic made while its thread holds a lock the stderr holder
 *   needs cannot deadlock.
 */
#include <stdatomic.h>

#include "stderr_lock.h"

static _Atomic(uint32_t) word;
static _Atomic(uintptr_t) owner;
static _Atomic(uintptr_t) owner_thread;
static uint32_t depth;
static _Atomic(cio__stderr_wake_fn) fiber_wakes;
static _Atomic(cio__stderr_wait_fn) thread_wait; /* the OS futex (Threaded's slots): cio__stderr_set_threads */
static _Atomic(cio__stderr_wake_fn) thread_wake;
static _Atomic(cio__stderr_who_fn) fiber_who;
static _Atomic(cio__stderr_wait_fn) fiber_wait;

static _Thread_local char thread_identity;

uintptr_t cio__stderr_thread_self(void)
{
    return (uintptr_t)&thread_identity;
}

static void took(uintptr_t self)
{
    atomic_store_explicit(&owner, self, memory_order_relaxed);
    atomic_store_explicit(&owner_thread, cio__stderr_thread_self(), memory_order_relaxed);
    depth = 1;
}

static bool try_take(uintptr_t self)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) == self) {
        depth++;
        return true;
    }
    uint32_t expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&word, &expected, 1, memory_order_acquire, memory_order_relaxed))
        return false;
    took(self);
    return true;
}

/* One round of waiting: true once the lock is taken; otherwise the wait's result. */
static bool contend(uintptr_t self, void *ud, cio__stderr_wait_fn wait, cio_timeout t, cio_err *err)
{
    if (atomic_exchange_explicit(&word, 2, memory_order_acquire) == 0) {
        took(self);
        return true;
    }
    *err = wait(ud, &word, 2, t);
    return false;
}

cio_err cio__stderr_lock(uintptr_t self, void *ud, cio__stderr_wait_fn wait, cio__stderr_wake_fn fiber_wake)
{
    if (try_take(self))
        return CIO_OK;
    if (fiber_wake != NULL)
        atomic_store_explicit(&fiber_wakes, fiber_wake, memory_order_release); /* before word reads 2 */
    for (;;) {
        cio_err err = CIO_OK;
        if (contend(self, ud, wait, CIO_TIMEOUT_NONE, &err))
            return CIO_OK;
        if (err == CIO_E_CANCELED)
            return err;
    }
}

bool cio__stderr_try_lock(uintptr_t self)
{
    return try_take(self);
}

void cio__stderr_unlock(uintptr_t self)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) != self || depth == 0)
        return; /* not the holder: a caller's mistake, ignored rather than breaking another's lock */
    if (--depth > 0)
        return;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    atomic_store_explicit(&owner_thread, 0, memory_order_relaxed);
    if (atomic_exchange_explicit(&word, 0, memory_order_release) != 2)
        return;
    cio__stderr_wake_fn tw = atomic_load_explicit(&thread_wake, memory_order_acquire);
    if (tw != NULL)
        tw(NULL, &word, 1);
    cio__stderr_wake_fn fw = atomic_load_explicit(&fiber_wakes, memory_order_acquire);
    if (fw != NULL)
        fw(NULL, &word, 1);
}

void cio__stderr_set_threads(cio__stderr_wait_fn wait, cio__stderr_wake_fn wake)
{
    atomic_store_explicit(&thread_wait, wait, memory_order_relaxed);
    atomic_store_explicit(&thread_wake, wake, memory_order_release);
}

void cio__stderr_set_fibers(cio__stderr_who_fn who, cio__stderr_wait_fn wait, cio__stderr_wake_fn wake)
{
    atomic_store_explicit(&fiber_wait, wait, memory_order_relaxed);
    atomic_store_explicit(&fiber_wakes, wake, memory_order_relaxed);
    atomic_store_explicit(&fiber_who, who, memory_order_release);
}

/* The diagnostic's identity, ud and wait: the running fiber's, else the thread's. */
static uintptr_t diag_self(void **ud, cio__stderr_wait_fn *wait)
{
    *ud = NULL;
    *wait = atomic_load_explicit(&thread_wait, memory_order_acquire);
    cio__stderr_who_fn who = atomic_load_explicit(&fiber_who, memory_order_acquire);
    uintptr_t self = 0;
    if (who != NULL && who(&self, ud)) {
        *wait = atomic_load_explicit(&fiber_wait, memory_order_relaxed);
        return self;
    }
    return cio__stderr_thread_self();
}

bool cio__stderr_diag_lock(void)
{
    void *ud;
    cio__stderr_wait_fn wait;
    uintptr_t self = diag_self(&ud, &wait);
    if (try_take(self))
        return true;
    if (self == cio__stderr_thread_self() && atomic_load_explicit(&owner_thread, memory_order_relaxed) == self)
        return false; /* a fiber of this thread holds it: waiting here would stop it for good */
    if (wait == NULL)
        return false;                  /* no Threaded instance was ever made: nobody can hold it */
    for (int quiet = 0; quiet < 20;) { /* 20 waits of 50 ms with no wake at all: give up */
        cio_err err = CIO_OK;
        if (contend(self, ud, wait, (cio_timeout){CIO_TIMEOUT_KIND_DURATION, CIO_CLOCK_AWAKE, 50000000}, &err))
            return true;
        if (err == CIO_E_CANCELED)
            break; /* a Threaded worker with a cancel request: its waits all return at once */
        if (err != CIO_OK)
            quiet++;
    }
    return false;
}

void cio__stderr_diag_unlock(void)
{
    void *ud;
    cio__stderr_wait_fn wait;
    cio__stderr_unlock(diag_self(&ud, &wait));
}
