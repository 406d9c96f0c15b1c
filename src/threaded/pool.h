/*
 * The Threaded pool's records, shared by pool.c (tasks, workers, the monitor), pool_group.c (groups)
 * and pool_life.c (create, destroy, limits). The invariants (locks, lists, which thread runs what)
 * are written at the top of pool.c.
 */
#ifndef CIO_THREADED_POOL_H
#define CIO_THREADED_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"
#include "os_mutex.h"
#include "threaded.h"

#define CIO__T_BLOCK_CTX 256u          /* context bytes of a recycled task block */
#define CIO__T_IDLE_YIELD_NS 20000     /* idle workers and awaiters yield this long before sleeping */
#define CIO__T_RESIGNAL_FIRST_NS 50000 /* a canceler's first timed wait before it signals again */
#define CIO__T_CANCEL_YIELD_NS 50000   /* a canceler that signalled yields this long first */

/* The monitor's state (pool.c's top comment). */
#define CIO__T_MON_NONE 0    /* no monitor thread */
#define CIO__T_MON_TICKING 1 /* looking at the queue every tick */
#define CIO__T_MON_PARKED 2  /* waiting on mon_word for a push that leaves a task waiting */

/* The pool's alarms (alarm.c's top comment): tasks in a timed call, by the time the alarm thread
 * looks at them next. */
#define CIO__T_ALARM_NONE 0    /* no alarm thread yet */
#define CIO__T_ALARM_RUNNING 1 /* the alarm thread runs */
#define CIO__T_ALARM_FAILED 2  /* it could not be started: timed calls take their other path */
#define CIO__T_ALARM_STOP 3    /* destroy asked it to leave */
struct cio__t_alarms {
    cio__mutex mu;
    struct cio_any_future *head, *tail;
    int64_t wake_at; /* when the alarm thread looks next (INT64_MAX: only when woken) */
    int state;       /* CIO__T_ALARM_* */
    pthread_t thread;
    _Atomic(uint32_t) word; /* the alarm thread's futex word: bumped to wake it */
};

/* Laid out by who writes what: the lock and the queue on the first line (taken together), the
 * counts the lock guards on the next, what is set once (or rarely) after them; the words idle
 * workers and cancelers poll on a line of their own, so that a push does not pull it away from
 * them; the spawner's stats on another. */
struct cio_threaded {
    _Alignas(64) cio__mutex mu;
    struct cio_any_future *head, *tail;
    struct cio_any_future *free_list;
    struct cio_any_future *running; /* tasks on workers (rnext/rprev) */
    size_t free_count;
    size_t busy;    /* tasks queued or running */
    size_t idle;    /* workers waiting on `work` */
    size_t wakeups; /* wakeups granted to idle workers, not yet taken */
    size_t taken;   /* tasks taken off the queue (the monitor's progress mark) */
    size_t blocked; /* workers asleep in a futex wait (cio__t_pool_block) */
    size_t workers; /* live worker threads */
    size_t target;  /* workers started without waiting: max(CPUs, 4) */
    int monitor;    /* CIO__T_MON_* */
    bool shutdown;
    _Atomic(bool) async_full; /* busy >= async_limit, kept under mu (stored when it changes): async's lock-free hint */
    size_t async_limit;
    size_t concurrent_limit;
    size_t stack_size;
    unsigned idle_timeout_ms;
    _Alignas(64) _Atomic(uint32_t) wake_gen; /* bumped when a wakeup is granted: what yielding idle workers watch */
    _Atomic(uint32_t) mon_word;              /* the monitor's futex word: bumped to wake it (arm, shutdown) */
    _Atomic(uint32_t) signalers;             /* cancelers inside their check-then-kick window (task.h) */
    _Atomic(size_t) kicks;                   /* kicks sent (cio_threaded_get_stats) */
    /* cio_threaded_get_stats' task counts, on a line of their own (the spawner writes them; no
     * worker reads them): bumped with a relaxed load and store, not a locked add, so the inline
     * path stays as cheap as before; exact while one thread spawns at a time. */
    _Alignas(64) _Atomic(size_t) n_inline;
    _Atomic(size_t) n_workers;
    _Alignas(64) cio__cond work; /* idle workers wait here */
    cio__cond quiet;             /* destroy waits here */
    _Alignas(64) struct cio__t_alarms alarms;
};

/* Takes a pool or group mutex: a bounded run of trylocks first, then the blocking lock. Its holders
 * keep it for a few dozen instructions; a spawner and a worker on different CPUs that collide
 * would otherwise put one of them to sleep and pay a cross-CPU wake-up (tens of µs on a KVM guest
 * whose vCPU halted) for a lock that is free again within nanoseconds. */
#define CIO__T_LOCK_SPINS 100
static inline void cio__t_lock(cio__mutex *mu)
{
    for (int i = 0; i < CIO__T_LOCK_SPINS; i++)
        if (cio__mu_trylock(mu))
            return;
    cio__mu_lock(mu);
}

/* With mu held: async_full follows busy against the limit, written only when it changes. */
static inline void cio__t_update_full(struct cio_threaded *t)
{
    bool full = t->busy >= t->async_limit;
    if (atomic_load_explicit(&t->async_full, memory_order_relaxed) != full)
        atomic_store_explicit(&t->async_full, full, memory_order_relaxed);
}

/* One more task counted in *c (pool.h's n_inline / n_workers). */
static inline void cio__t_count(_Atomic(size_t) *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* A group's record, allocated on the first member (cio_group.token points to it). */
struct cio__t_group {
    _Atomic(uint32_t) running;  /* members not finished */
    _Atomic(uint32_t) seq;      /* futex word: bumped when running drops to 0 */
    _Atomic(uint32_t) canceled; /* new members start with a cancel request */
};

/* ---- pool.c, for pool_group.c ---- */
/* A task block holding fn and a copy of ctx, or NULL (no memory). */
struct cio_any_future *cio__t_make_task(cio_threaded *t, cio_task_fn fn, const void *ctx, size_t ctx_size);
/* Frees a task block (kept for reuse when it is a recycled size). */
void cio__t_task_free(cio_threaded *t, struct cio_any_future *task);
/* Queues a made task with a unit of concurrency (false: the async or concurrent limit is reached, or
 * no worker exists and none can be started; the task is not queued). */
bool cio__t_submit(cio_threaded *t, struct cio_any_future *task, bool is_async);
/* Whether async may put a task on a worker now (busy < async_limit). */
bool cio__t_async_room(cio_threaded *t);
/* async's common case in one critical section: the limit check, a recycled block and the enqueue (a
 * group member, gr != NULL, is linked into gr under the pool's mu). NULL with *full set: run the
 * task inline; NULL with *full clear: no recycled block (make one). */
struct cio_any_future *cio__t_async_recycled(cio_threaded *t, struct cio__t_group *gr, cio_task_fn fn, const void *ctx,
                                             size_t ctx_size, bool *full);
/* Counts a new member into gr (it starts canceled when the group is). */
void cio__t_group_link(struct cio__t_group *gr, struct cio_any_future *task);
/* Counts a member that never ran out of its group (waking the awaiter when it was the last) and
 * frees its block. */
void cio__t_group_drop(struct cio__t_group *gr, struct cio_any_future *task);
/* Called by a task's thread before (begin) and after it sleeps in a futex wait: a worker counts as
 * blocked meanwhile and a queued task gets another worker at once (no-op off a worker). */
void cio__t_pool_block(bool begin);

/* pool_thread.c: the monotonic clock in ns, -1 when it cannot be read. */
int64_t cio__t_mono_ns(void);
/* pool_thread.c: the stack-overflow resolver of the workers (src/core/overflow.h). */
struct cio__overflow_info;
bool cio__t_worker_overflow(const void *addr, struct cio__overflow_info *out);
/* pool_thread.c: the calling worker's stack (lo: its lowest usable address; 0, 0: none), for the
 * stack-overflow message (src/core/overflow.h). */
void cio__t_worker_stack(uintptr_t lo, size_t size);

#endif
