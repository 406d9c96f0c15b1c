/*
 * The Threaded backend's worker pool: the run queue, the workers, the monitor, async, concurrent,
 * await and cancel (groups: pool_group.c, which calls in here, never the reverse).
 *
 * Threads: the spawners (any thread calling async/concurrent/group_*), the workers (worker_main:
 * they run tasks), the monitor (monitor_main: it runs no task, it only starts workers) and the
 * awaiters/cancelers.
 *
 * Invariants:
 * - `mu` guards the run queue (FIFO: head/tail), the `running` list, the worker counts (workers,
 *   idle, wakeups, blocked), `taken`, the monitor's state, the limits, the free list of task
 *   blocks and `shutdown`; it is the pool's only lock (groups have none: a group's members are
 *   found on `running`, and the last member's wake of the group's awaiter happens under mu).
 * - `busy` counts tasks queued or running on workers; async runs inline once busy >= async_limit,
 *   concurrent fails once busy >= concurrent_limit (default unlimited). `async_full` mirrors
 *   busy >= async_limit (written under mu) so that async can run inline without taking mu.
 * - A queued task has a unit of concurrency without a thread per task. Workers take tasks off the
 *   queue in FIFO order and a worker that finishes one takes the next in the same critical section
 *   (it parks only when the queue is empty), so a busy pool drains a batch without wake-ups. On a
 *   push (provide_locked): an idle worker gets a wakeup (announced by bumping `wake_gen`) unless
 *   one is already on its way (`wakeups` > 0): a worker that takes a task fresh from idle grants
 *   the next idle worker while tasks remain queued, so a burst costs the spawner one wake-up and
 *   the workers one each, not one per task; else (no idle worker) a new worker starts while fewer than
 *   `target` workers are outside a known wait (workers - blocked < target: max(CPUs, 4)); else the
 *   task waits for a worker that finishes, and the monitor is armed. The progress guarantee
 *   (nothing queued waits for ever behind workers that wait themselves, e.g. on the task):
 *     * a worker about to sleep in a futex wait (await, group await, the futex slots: cio_mutex,
 *       cio_queue, cio_event …) counts as `blocked` until it wakes (cio__t_pool_block), and a
 *       queued task then gets a worker at once (provide_locked again);
 *     * the monitor (one thread, started at the first push that finds no worker, parked while the
 *       queue is empty, retired after idle_timeout_ms) looks every MONITOR_TICK_NS while tasks
 *       are queued: if the queue was not empty at its last look and no task was taken since, it
 *       grants an idle worker or starts one more, above `target` (workers blocked in a read, a
 *       sleep, a long computation). So a queued task starts within about two ticks of the last
 *       progress, whatever the running tasks do.
 *   Nothing queued without a worker: enqueue fails (async runs inline, concurrent is unavailable)
 *   only when no worker exists and none can be started.
 * - A worker counts as idle from the moment it gives up `busy` for a finished task with the queue
 *   empty (same critical section), so a submit right after an await grants it the task instead of
 *   starting a thread; it then takes work only through a granted wakeup.
 * - Yield before sleeping: a worker that runs out of work stays counted idle and, without mu,
 *   sched_yields for up to IDLE_YIELD_NS watching `wake_gen` before it waits on `work`; an
 *   awaiter does the same on the task's `done` word (a group awaiter on `running`) before its
 *   futex wait; a canceler that had to signal its task, for CIO__T_CANCEL_YIELD_NS; an untimed wait
 *   through the futex slots for SYNC_YIELD_NS (pool_slots.c). Waking a sleeping thread costs a
 *   context switch on the same CPU and, on KVM guests with halt-polling off, ~26 µs for a halted
 *   vCPU; a serial async/await loop hands work back within a few µs.
 * - Workers retire after idle_timeout_ms without work; destroy waits until busy == 0 and neither a
 *   worker nor the monitor is left, so it returns only after every task finished. Tasks taken by a
 *   worker are on the `running` list (under mu) until they finish: destroy cancels those that
 *   outlast a grace period (pool_life.c).
 * - A future's block is freed by whoever awaits/cancels it, after `done` is FINISHED. A group
 *   member's block is freed by its own worker, in the critical section that gives up `busy` for it,
 *   counts it out of its group and takes the next task (one pool lock per task on the worker's
 *   side). Cancelers (cio_cancel excepted: it knows its task) walk `running` under mu, so a task
 *   they kick is still running; a queued member of a canceled group gets its request when taken.
 * - Task blocks are recycled through a free list (at most FREE_MAX blocks of BLOCK_CTX bytes of
 *   context), so a hot async/await loop does not call malloc; with a recycled block async takes mu
 *   once (limit check, block, enqueue). `work` is signalled, and the monitor woken, after mu is
 *   released.
 * - The OS pieces (aligned blocks, CPU count, stack size) are pool_posix.c / pool_windows.c; the
 *   threads, locks and condition variables are POSIX threads (winpthreads on Windows).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag.h"
#include "internal.h"
#include "overflow.h"
#include "list.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"
#include "pool.h"

#define FREE_MAX 1024u         /* a 1,000-task burst reuses its blocks (~450 KiB kept at most) */
#define MONITOR_TICK_NS 250000 /* monitor_main */

/* ---- task blocks ------------------------------------------------------------------------------- */

/* Clears a block's header for a new task (its context area and capacity stay). */
static void task_reset(cio_threaded *t, struct cio_any_future *task)
{
    unsigned char *ctx = task->ctx;
    size_t cap = task->capacity;
    memset(task, 0, sizeof *task);
    task->ctx = ctx;
    task->capacity = cap;
    task->owner = t;
    task->signalers = &t->signalers;
    task->kicks = &t->kicks;
}

static struct cio_any_future *task_alloc(cio_threaded *t, size_t ctx_size)
{
    struct cio_any_future *task = NULL;
    if (ctx_size <= CIO__T_BLOCK_CTX) {
        cio__t_lock(&t->mu);
        task = t->free_list;
        if (task != NULL) {
            t->free_list = task->next;
            t->free_count--;
        }
        cio__mu_unlock(&t->mu);
    }
    if (task == NULL) {
        size_t cap = ctx_size <= CIO__T_BLOCK_CTX ? CIO__T_BLOCK_CTX : ctx_size;
        size_t header = (sizeof(struct cio_any_future) + CIO_CONTEXT_ALIGN - 1) & ~(size_t)(CIO_CONTEXT_ALIGN - 1);
        if (cap > SIZE_MAX - header - CIO_CONTEXT_ALIGN)
            return NULL;
        void *mem = cio__t_block_alloc(header + cap);
        if (mem == NULL)
            return NULL;
        task = (struct cio_any_future *)mem;
        task->capacity = cap;
        task->ctx = (unsigned char *)mem + header;
    }
    task_reset(t, task);
    return task;
}

/* With mu held: keeps the block for reuse; returns it when the free list is full (the caller frees
 * it after unlocking), NULL when kept. */
static struct cio_any_future *task_keep_locked(cio_threaded *t, struct cio_any_future *task)
{
    if (task->capacity != CIO__T_BLOCK_CTX || t->free_count >= FREE_MAX)
        return task;
    task->next = t->free_list;
    t->free_list = task;
    t->free_count++;
    return NULL;
}

void cio__t_task_free(cio_threaded *t, struct cio_any_future *task)
{
    if (task->capacity == CIO__T_BLOCK_CTX) {
        cio__t_lock(&t->mu);
        task = task_keep_locked(t, task);
        cio__mu_unlock(&t->mu);
    }
    cio__t_block_free(task);
}

struct cio_any_future *cio__t_make_task(cio_threaded *t, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    struct cio_any_future *task = task_alloc(t, ctx_size);
    if (task == NULL)
        return NULL;
    task->fn = fn;
    task->site = cio__spawn_site();
    task->ctx_size = ctx_size;
    if (ctx_size > 0)
        memcpy(task->ctx, ctx, ctx_size);
    return task;
}

/* ---- threads: workers and the monitor --------------------------------------------------------------- */

/* What to wake once mu is released (the woken thread should not wake into a held mutex). */
typedef struct wakes {
    bool worker;  /* signal `work`: an idle worker was granted a wakeup */
    bool monitor; /* the parked monitor was armed: wake its word */
} wakes;

static void wake_after_unlock(cio_threaded *t, const wakes *w)
{
    if (w->worker)
        cio__cv_signal(&t->work);
    if (w->monitor)
        cio__t_os_futex_wake(&t->mon_word, 1);
}

/* With mu held: starts a detached thread running fn(t). */
static bool start_thread_locked(cio_threaded *t, void *(*fn)(void *))
{
    pthread_attr_t attr;
    pthread_t th;
    if (CIO__SYS(pthread_attr_init, enqueue)(&attr) != 0)
        return false;
    (void)pthread_attr_setstacksize(&attr, t->stack_size);
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = CIO__SYS(pthread_create, enqueue)(&th, &attr, fn, t);
    pthread_attr_destroy(&attr);
    return rc == 0;
}

static void *worker_main(void *arg);
static void *monitor_main(void *arg);

static bool spawn_worker_locked(cio_threaded *t)
{
    if (!start_thread_locked(t, worker_main))
        return false;
    t->workers++;
    return true;
}

/* With mu held, a task queued: the monitor will look at the queue (started, or woken from its
 * park). A monitor that cannot be started is tried again at the next push. */
static void arm_monitor_locked(cio_threaded *t, wakes *w)
{
    if (t->monitor == CIO__T_MON_PARKED) {
        t->monitor = CIO__T_MON_TICKING;
        atomic_fetch_add_explicit(&t->mon_word, 1, memory_order_release);
        w->monitor = true;
    } else if (t->monitor == CIO__T_MON_NONE && !t->shutdown && start_thread_locked(t, monitor_main)) {
        t->monitor = CIO__T_MON_TICKING;
    }
}

static void grant_locked(cio_threaded *t, wakes *w)
{
    t->wakeups++;
    atomic_fetch_add_explicit(&t->wake_gen, 1, memory_order_release);
    w->worker = true;
}

/* With mu held and the queue not empty: makes sure a worker will take the head (top comment).
 * Returns false only when no worker exists and none could be started. */
static bool provide_locked(cio_threaded *t, wakes *w)
{
    if (t->idle > t->wakeups) {
        if (t->wakeups == 0)
            grant_locked(t, w); /* else a granted worker is on its way: it passes the rest on */
        return true;
    }
    if (t->workers - t->blocked < t->target && spawn_worker_locked(t))
        return true;
    if (t->workers == 0)
        return false;
    arm_monitor_locked(t, w);
    return true;
}

/* With the pool's mu held: one member fewer; the last one out bumps `seq` and wakes the awaiter,
 * both under mu: the awaiter takes mu before it frees the record (group_release), so the record
 * (and the futex word) outlives the wake. */
static void group_member_end_locked(struct cio__t_group *gr)
{
    if (atomic_fetch_sub_explicit(&gr->running, 1, memory_order_acq_rel) == 1) {
        atomic_fetch_add_explicit(&gr->seq, 1, memory_order_release);
        cio__t_os_futex_wake(&gr->seq, UINT32_MAX);
    }
}

/* With mu held: the head of the queue, moved to the running list, or NULL. */
static struct cio_any_future *take_locked(cio_threaded *t)
{
    struct cio_any_future *task = t->head;
    if (task == NULL)
        return NULL;
    t->head = task->next;
    if (t->head == NULL)
        t->tail = NULL;
    task->rprev = NULL;
    task->rnext = t->running;
    if (t->running != NULL)
        t->running->rprev = task;
    t->running = task;
    t->taken++;
    /* a member queued before its group was canceled, and missed by the cancel's walk of `running` */
    if (task->group != NULL && atomic_load_explicit(&task->group->canceled, memory_order_acquire))
        atomic_fetch_or_explicit(&task->cancel, CIO__T_REQ, memory_order_acq_rel);
    return task;
}

/* Runs a task taken off the queue, then, in one critical section, gives up `busy` for it and takes
 * the next queued task (returned) or counts the worker idle (NULL). The worker is free again before
 * anyone learns the task finished, so an await followed by an async finds room under the async
 * limit and hands the task to this worker instead of starting a thread. */
static struct cio_any_future *run_task(cio_threaded *t, struct cio_any_future *task)
{
    struct cio_any_future *prev = cio__t_current;
    cio__t_record_thread(task);
    cio__t_current = task;
    cio__os_error_clear(); /* a task starts with no OS error of its own (cio_last_os_error) */
    cio_err r = task->fn(task->ctx);
    cio__t_current = prev;
    task->result = r;
    bool member = task->group != NULL;
    struct cio_any_future *unkept = NULL;
    cio__t_lock(&t->mu); /* which its cancelers hold while they kick: none can after this */
    CIO__LIST_UNLINK(t->running, task, rprev, rnext);
    t->busy--;
    cio__t_update_full(t);
    if (member) {
        group_member_end_locked(task->group);
        unkept = task_keep_locked(t, task); /* its block, in the same critical section */
    }
    struct cio_any_future *next = take_locked(t);
    if (next == NULL)
        t->idle++;
    if (t->shutdown && t->busy == 0)
        cio__cv_broadcast(&t->quiet);
    cio__mu_unlock(&t->mu);
    if (unkept != NULL)
        cio__t_block_free(unkept);
    /* seq_cst: against signal_if_blocked. Only an awaiter that announced itself may sleep. */
    if (!member && atomic_exchange_explicit(&task->done, CIO__T_FINISHED, memory_order_seq_cst) == CIO__T_SLEEPER)
        cio__t_os_futex_wake(&task->done, UINT32_MAX);
    cio__t_quiesce(&t->signalers); /* no kick may reach this thread once it runs on (task.h) */
    return next;
}

/* The wall-clock deadline `ms` from now for the idle wait; now (time out at once: the worker
 * retires if idle) when the clock cannot be read. */
static struct timespec idle_deadline(unsigned ms)
{
    struct timespec deadline;
    if (CIO__SYS(clock_gettime, worker_idle)(CLOCK_REALTIME, &deadline) != 0) {
        deadline.tv_sec = 0;
        deadline.tv_nsec = 0;
    }
    deadline.tv_sec += (time_t)(ms / 1000u);
    deadline.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    return deadline;
}

static void *worker_main(void *arg)
{
    cio_threaded *t = (cio_threaded *)arg;
    char top; /* near the top of this thread's stack (the overflow message's estimate) */
    uintptr_t stack_lo;
    size_t stack_size;
    cio__t_thread_stack((uintptr_t)&top, t->stack_size, &stack_lo, &stack_size);
    cio__t_worker_stack(stack_lo, stack_size);
    cio__overflow_thread_begin();
    cio__t_signals_unblock();
    cio__t_lock(&t->mu);
    bool idle = false; /* counted in t->idle: from run_task, or below */
    for (;;) {
        if (!idle) {
            struct cio_any_future *task = take_locked(t);
            if (task != NULL) {
                /* Fresh from idle with more queued: the next idle worker is granted one (a chain of
                 * wake-ups, one per worker, not one per task from the spawner). */
                wakes w = {false, false};
                if (t->head != NULL && t->idle > t->wakeups && t->wakeups == 0)
                    grant_locked(t, &w);
                cio__mu_unlock(&t->mu);
                wake_after_unlock(t, &w);
                while (task != NULL)
                    task = run_task(t, task); /* NULL: the queue was empty, this worker counted idle */
                cio__t_lock(&t->mu);
                idle = true;
                continue;
            }
            if (t->shutdown)
                break;
            t->idle++;
            idle = true;
        }
        if (t->wakeups == 0) {
            /* Counted idle while yielding, so that enqueue grants this worker the next task. */
            uint32_t gen = atomic_load_explicit(&t->wake_gen, memory_order_relaxed);
            cio__mu_unlock(&t->mu);
            cio__t_yield_while(&t->wake_gen, gen, true, CIO__T_IDLE_YIELD_NS);
            cio__t_lock(&t->mu);
        }
        struct timespec deadline = idle_deadline(t->idle_timeout_ms);
        bool timed_out = false;
        while (t->wakeups == 0 && !t->shutdown && !timed_out)
            timed_out = cio__cv_timedwait(&t->work, &t->mu, &deadline);
        t->idle--;
        idle = false;
        if (t->wakeups > 0) {
            t->wakeups--;
            continue;
        }
        if (t->shutdown || (timed_out && t->head == NULL))
            break;
    }
    cio__overflow_thread_end(); /* before destroy can see it gone (a syscall and a free, under mu) */
    cio__t_worker_stack(0, 0);
    t->workers--;
    if (t->workers == 0)
        cio__cv_broadcast(&t->quiet);
    cio__mu_unlock(&t->mu);
    return NULL;
}

/* The monitor (top comment): ticks while tasks are queued, parks on `mon_word` while the queue is
 * empty (armed again by a push that left a task waiting), retires after idle_timeout_ms parked or
 * at shutdown. Holds mu except while it waits. */
static void *monitor_main(void *arg)
{
    cio_threaded *t = (cio_threaded *)arg;
    cio__t_lock(&t->mu);
    size_t last_taken = t->taken;
    bool backlog = false; /* the queue was not empty at the last look */
    while (!t->shutdown) {
        bool park = t->head == NULL;
        if (park)
            t->monitor = CIO__T_MON_PARKED;
        uint32_t word = atomic_load_explicit(&t->mon_word, memory_order_acquire);
        cio__mu_unlock(&t->mu);
        cio_timeout to = park ? cio_timeout_ms((int64_t)t->idle_timeout_ms) : cio_timeout_ns(MONITOR_TICK_NS);
        cio_err e = cio__t_os_futex_wait(&t->mon_word, word, to, false);
        cio__t_lock(&t->mu);
        if (park) {
            if (t->monitor == CIO__T_MON_PARKED && e == CIO_E_TIMEOUT && t->head == NULL)
                break;
            t->monitor = CIO__T_MON_TICKING;
            backlog = false;
            last_taken = t->taken;
            continue;
        }
        wakes w = {false, false};
        if (backlog && t->head != NULL && t->taken == last_taken) {
            /* Stuck: nothing taken for a whole tick. One more unit of concurrency. */
            if (t->idle > t->wakeups)
                grant_locked(t, &w);
            else
                (void)spawn_worker_locked(t);
        }
        backlog = t->head != NULL;
        last_taken = t->taken;
        if (w.worker) {
            cio__mu_unlock(&t->mu);
            wake_after_unlock(t, &w);
            cio__t_lock(&t->mu);
        }
    }
    t->monitor = CIO__T_MON_NONE;
    cio__cv_broadcast(&t->quiet);
    cio__mu_unlock(&t->mu);
    return NULL;
}

void cio__t_pool_block(bool begin)
{
    struct cio_any_future *task = cio__t_current;
    if (task == NULL)
        return; /* not a worker: no unit of concurrency is lost */
    cio_threaded *t = task->owner;
    wakes w = {false, false};
    cio__t_lock(&t->mu);
    if (begin) {
        t->blocked++;
        if (t->head != NULL)
            (void)provide_locked(t, &w);
    } else {
        t->blocked--;
    }
    cio__mu_unlock(&t->mu);
    wake_after_unlock(t, &w);
}

/* ---- submitting --------------------------------------------------------------------------------- */

/* With mu held: puts the task on the queue and makes sure a worker will take it (provide_locked).
 * Returns false (and leaves the queue unchanged) when no worker exists and none can be started. */
static bool enqueue_locked(cio_threaded *t, struct cio_any_future *task, wakes *w)
{
    CIO__FIFO_PUSH(t->head, t->tail, task, next);
    if (!provide_locked(t, w)) {
        t->head = t->tail = NULL; /* no worker: the queue held only this task */
        return false;
    }
    t->busy++;
    cio__t_count(&t->n_workers); /* under mu: exact */
    cio__t_update_full(t);
    return true;
}

bool cio__t_submit(cio_threaded *t, struct cio_any_future *task, bool is_async)
{
    wakes w = {false, false};
    cio__t_lock(&t->mu);
    size_t limit = is_async ? t->async_limit : t->concurrent_limit;
    bool ok = t->busy < limit && !t->shutdown && enqueue_locked(t, task, &w);
    cio__mu_unlock(&t->mu);
    wake_after_unlock(t, &w);
    return ok;
}

bool cio__t_async_room(cio_threaded *t)
{
    cio__t_lock(&t->mu);
    bool room = t->busy < t->async_limit;
    cio__mu_unlock(&t->mu);
    return room;
}

struct cio_any_future *cio__t_async_recycled(cio_threaded *t, struct cio__t_group *gr, cio_task_fn fn, const void *ctx,
                                             size_t ctx_size, bool *full)
{
    wakes w = {false, false};
    bool abandon = false;
    /* Full by the hint: inline without touching mu (no cache-line traffic with busy workers). A
     * stale hint only moves a task between inline and a worker, both valid for async. */
    if (atomic_load_explicit(&t->async_full, memory_order_relaxed)) {
        *full = true;
        return NULL;
    }
    cio__t_lock(&t->mu);
    struct cio_any_future *task = NULL;
    *full = t->busy >= t->async_limit || t->shutdown;
    if (!*full && t->free_list != NULL) {
        task = t->free_list;
        t->free_list = task->next;
        t->free_count--;
        task_reset(t, task);
        task->fn = fn;
        task->site = cio__spawn_site();
        task->ctx_size = ctx_size;
        if (ctx_size > 0)
            memcpy(task->ctx, ctx, ctx_size);
        if (gr != NULL)
            cio__t_group_link(gr, task);
        if (!enqueue_locked(t, task, &w)) {
            if (gr != NULL) {
                abandon = true; /* unlinked and freed below, without mu */
            } else {
                task->next = t->free_list;
                t->free_list = task;
                t->free_count++;
            }
            *full = true;
        }
    }
    cio__mu_unlock(&t->mu);
    wake_after_unlock(t, &w);
    if (*full && task != NULL) {
        if (abandon)
            cio__t_group_drop(gr, task);
        task = NULL;
    }
    return task;
}

/* ---- futures -------------------------------------------------------------------------------------- */

struct cio_any_future *cio__t_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio_any_future *task = NULL;
    bool full = false;
    if (ctx_size <= CIO__T_BLOCK_CTX) {
        task = cio__t_async_recycled(t, NULL, fn, ctx, ctx_size, &full);
        if (task != NULL)
            return task;
    }
    if (!full && cio__t_async_room(t))
        task = cio__t_make_task(t, fn, ctx, ctx_size);
    if (task != NULL && cio__t_submit(t, task, true))
        return task;
    if (task != NULL)
        cio__t_task_free(t, task);
    cio__t_count(&t->n_inline);
    *inline_result = cio__run_inline(fn, ctx, ctx_size);
    return NULL;
}

cio_err cio__t_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out)
{
    cio_threaded *t = (cio_threaded *)ud;
    struct cio_any_future *task = cio__t_make_task(t, fn, ctx, ctx_size);
    if (task == NULL)
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    if (!cio__t_submit(t, task, false)) {
        cio__t_task_free(t, task);
        return CIO__IN_SET(concurrent, CIO_E_CONCURRENCY_UNAVAILABLE);
    }
    *out = task;
    return CIO_OK;
}

static bool finished(struct cio_any_future *task)
{
    return atomic_load_explicit(&task->done, memory_order_acquire) == CIO__T_FINISHED;
}

/* One futex wait for the task's end. The awaiter first announces itself (RUNNING -> SLEEPER), so
 * that the worker makes the wake system call only when somebody may sleep (task.h). A worker that
 * sleeps here counts as blocked (cio__t_pool_block). */
static cio_err sleep_until_finished(struct cio_any_future *task, cio_timeout timeout, bool cancelable)
{
    uint32_t v = CIO__T_RUNNING;
    if (!atomic_compare_exchange_strong_explicit(&task->done, &v, CIO__T_SLEEPER, memory_order_seq_cst,
                                                 memory_order_acquire) &&
        v == CIO__T_FINISHED)
        return CIO_OK;
    cio__t_pool_block(true);
    cio_err e = cio__t_os_futex_wait(&task->done, CIO__T_SLEEPER, timeout, cancelable);
    cio__t_pool_block(false);
    return e;
}

/* Waits for `task` to finish after a cancel request. `signalled`: the request found it in a
 * syscall and signalled it. A signal is lost only when it lands between cio__t_syscall_begin and
 * the syscall itself, so the canceler must come back and re-signal while the request stays
 * pending, but the common case should not pay for that: a timed futex wait costs 10-20 µs more
 * than an untimed one on the KVM guests this is measured on (the timer), and re-signalling at
 * once cost a second signal. So a signalled task first gets CIO__T_CANCEL_YIELD_NS of sched_yield (it
 * runs at once if it shares this CPU; on another CPU this covers its wake-up), then timed waits
 * from CIO__T_RESIGNAL_FIRST_NS doubling to 10 ms, re-signalling after each. */
static void wait_canceled(struct cio_any_future *task, bool signalled)
{
    int64_t backoff = CIO__T_RESIGNAL_FIRST_NS;
    bool again = signalled;
    if (again)
        cio__t_yield_while(&task->done, CIO__T_FINISHED, false, CIO__T_CANCEL_YIELD_NS);
    while (!finished(task)) {
        cio_timeout to = again ? cio_timeout_ns(backoff) : CIO_TIMEOUT_NONE;
        (void)sleep_until_finished(task, to, false);
        if (finished(task))
            break;
        again = cio__t_resignal(task);
        if (backoff < 10000000)
            backoff *= 2;
    }
}

static cio_err finish_future(cio_threaded *t, struct cio_any_future *task)
{
    cio_err r = task->result;
    cio__t_task_free(t, task);
    return r;
}

cio_err cio__t_await(void *ud, struct cio_any_future *task)
{
    cio_threaded *t = (cio_threaded *)ud;
    cio__t_yield_while(&task->done, CIO__T_FINISHED, false, CIO__T_IDLE_YIELD_NS);
    for (;;) {
        if (finished(task))
            return finish_future(t, task);
        cio_err e = sleep_until_finished(task, CIO_TIMEOUT_NONE, true);
        if (e == CIO_E_CANCELED) {
            /* The awaiter was canceled: forward the request, wait, and hand the request back to
             * the awaiter unless the awaited task acknowledged it. */
            bool sent = cio__t_request_cancel(task);
            wait_canceled(task, sent);
            uint32_t s = atomic_load_explicit(&task->cancel, memory_order_acquire);
            if (!(s & CIO__T_ACK) && cio__t_current != NULL)
                atomic_fetch_xor_explicit(&cio__t_current->cancel, CIO__T_ACK | CIO__T_REQ, memory_order_acq_rel);
            return finish_future(t, task);
        }
    }
}

cio_err cio__t_cancel(void *ud, struct cio_any_future *task)
{
    cio_threaded *t = (cio_threaded *)ud;
    if (!finished(task)) {
        bool sent = cio__t_request_cancel(task);
        wait_canceled(task, sent);
    }
    return finish_future(t, task);
}

/* ---- the group members' side that run_task needs (the rest: pool_group.c) ---------------------- */

void cio__t_group_link(struct cio__t_group *gr, struct cio_any_future *task)
{
    task->group = gr;
    atomic_fetch_add_explicit(&gr->running, 1, memory_order_acq_rel);
    if (atomic_load_explicit(&gr->canceled, memory_order_acquire))
        atomic_fetch_or_explicit(&task->cancel, CIO__T_REQ, memory_order_acq_rel);
}

void cio__t_group_drop(struct cio__t_group *gr, struct cio_any_future *task)
{
    cio_threaded *t = task->owner;
    cio__t_lock(&t->mu);
    group_member_end_locked(gr);
    task = task_keep_locked(t, task);
    cio__mu_unlock(&t->mu);
    cio__t_block_free(task);
}
