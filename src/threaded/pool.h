/*
 * The Threaded pool's records, shared by pool.c (tasks, groups, workers) and pool_life.c (create,
 * destroy, limits). The invariants (locks, lists) are written at the top of pool.c.
 */
#ifndef CIO_THREADED_POOL_H
#define CIO_THREADED_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task.h"
#include "threaded.h"

struct cio_threaded {
    pthread_mutex_t mu;
    pthread_cond_t work;  /* idle workers wait here */
    pthread_cond_t quiet; /* destroy waits here */
    struct cio_any_future *head, *tail;
    struct cio_any_future *free_list;
    struct cio_any_future *running; /* tasks on workers (rnext/rprev) */
    size_t free_count;
    size_t workers;           /* live worker threads */
    size_t idle;              /* workers waiting on `work` */
    size_t wakeups;           /* wakeups granted to idle workers, not yet taken */
    size_t busy;              /* tasks queued or running */
    _Atomic(bool) async_full; /* busy >= async_limit, kept under mu: async's lock-free hint */
    size_t async_limit;
    size_t concurrent_limit;
    size_t stack_size;
    unsigned idle_timeout_ms;
    _Atomic(uint32_t) wake_gen;  /* bumped when a wakeup is granted: what yielding idle workers watch */
    _Atomic(uint32_t) signalers; /* cancelers inside their check-then-kick window (task.h) */
    _Atomic(size_t) kicks;       /* kicks sent (cio_threaded_get_stats) */
    /* cio_threaded_get_stats' task counts, on a line of their own (the spawner writes them; no
     * worker reads them): bumped with a relaxed load and store, not a locked add, so the inline
     * path stays as cheap as before; exact while one thread spawns at a time. */
    _Alignas(64) _Atomic(size_t) n_inline;
    _Atomic(size_t) n_workers;
    bool shutdown;
};

/* One more task counted in *c (pool.h's n_inline / n_workers). */
static inline void cio__t_count(_Atomic(size_t) *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* A group's record, allocated on the first member (cio_group.token points to it). */
struct cio__t_group {
    pthread_mutex_t mu; /* guards members */
    struct cio_any_future *members;
    _Atomic(uint32_t) running;  /* members not finished */
    _Atomic(uint32_t) seq;      /* futex word: bumped when running drops to 0 */
    _Atomic(uint32_t) canceled; /* new members start with a cancel request */
};

/* pool_life.c: the calling worker's stack (top: an address near its top; 0, 0: none), for the
 * stack-overflow message (src/core/overflow.h). */
void cio__t_worker_stack(uintptr_t top, size_t size);

#endif
