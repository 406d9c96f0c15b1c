/*
 * Synchronisation through a cio_io: library code over the three futex slots of the vtable, so it
 * works on every backend (threads block their thread, fibers only their fiber).
 * Every type is statically initialisable (CIO_*_INIT) and needs no destroy.
 * "Cancelable" calls return CIO_E_CANCELED when the calling task is canceled; on that error they
 * have not acquired or consumed anything (a condition wait re-acquires the mutex first).
 */
#ifndef CIO_SYNC_H
#define CIO_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Mutex: 3-state futex mutex; no owner, not recursive ------------------------------------ */
typedef struct cio_mutex {
    _Atomic(uint32_t) state;
} cio_mutex;
#define CIO_MUTEX_INIT {0}

cio_err cio_mutex_lock(cio_io io, cio_mutex *mutex); /* Cancelable */
bool cio_mutex_try_lock(cio_mutex *mutex);
void cio_mutex_lock_uncancelable(cio_io io, cio_mutex *mutex);
void cio_mutex_unlock(cio_io io, cio_mutex *mutex);

/* ---- Condition ------------------------------------------------------------------------------ */
typedef struct cio_condition {
    _Atomic(uint32_t) state; /* waiters (low 16 bits) and pending signals (high 16 bits) */
    _Atomic(uint32_t) epoch;
    _Atomic(uint32_t) sleepers; /* waiters inside a futex wait on epoch (signal skips the wake if 0) */
} cio_condition;
#define CIO_CONDITION_INIT {0, 0, 0}

cio_err cio_condition_wait(cio_io io, cio_condition *cond, cio_mutex *mutex); /* Cancelable */
/* CIO_E_TIMEOUT when the timeout passed first. Sets: Cancelable, TimeoutError. */
cio_err cio_condition_wait_timeout(cio_io io, cio_condition *cond, cio_mutex *mutex, cio_timeout timeout);
void cio_condition_wait_uncancelable(cio_io io, cio_condition *cond, cio_mutex *mutex);
void cio_condition_signal(cio_io io, cio_condition *cond);
void cio_condition_broadcast(cio_io io, cio_condition *cond);

/* ---- Event (a reset event) -------------------------------------------------------------------- */
typedef struct cio_event {
    _Atomic(uint32_t) state; /* 0 unset, 1 waiting, 2 set */
} cio_event;
#define CIO_EVENT_INIT {0}

bool cio_event_is_set(const cio_event *event);
/* Wakes every waiter. */
void cio_event_set(cio_io io, cio_event *event);
/* Must not race with waiters. */
void cio_event_reset(cio_event *event);
cio_err cio_event_wait(cio_io io, cio_event *event); /* Cancelable */
void cio_event_wait_uncancelable(cio_io io, cio_event *event);
/* CIO_E_TIMEOUT if not set by the timeout. */
cio_err cio_event_wait_timeout(cio_io io, cio_event *event, cio_timeout timeout);

/* ---- Semaphore ------------------------------------------------------------------------------ */
typedef struct cio_semaphore {
    cio_mutex mutex;
    cio_condition cond;
    uint32_t permits;
} cio_semaphore;
#define CIO_SEMAPHORE_INIT(permits) {CIO_MUTEX_INIT, CIO_CONDITION_INIT, (permits)}

cio_err cio_semaphore_wait(cio_io io, cio_semaphore *sem); /* Cancelable */
cio_err cio_semaphore_wait_timeout(cio_io io, cio_semaphore *sem, cio_timeout timeout);
void cio_semaphore_wait_uncancelable(cio_io io, cio_semaphore *sem);
void cio_semaphore_post(cio_io io, cio_semaphore *sem);

/* ---- RwLock: many readers or one writer; writers are not starved by new readers --------------- */
typedef struct cio_rwlock {
    cio_mutex mutex;
    cio_condition cond;
    uint32_t readers;         /* active readers */
    uint32_t writers_waiting; /* writers queued: new readers wait behind them */
    bool writer;              /* a writer holds the lock */
} cio_rwlock;
#define CIO_RWLOCK_INIT {CIO_MUTEX_INIT, CIO_CONDITION_INIT, 0, 0, false}

cio_err cio_rwlock_lock(cio_io io, cio_rwlock *rw); /* Cancelable */
bool cio_rwlock_try_lock(cio_io io, cio_rwlock *rw);
void cio_rwlock_lock_uncancelable(cio_io io, cio_rwlock *rw);
void cio_rwlock_unlock(cio_io io, cio_rwlock *rw);
cio_err cio_rwlock_lock_shared(cio_io io, cio_rwlock *rw); /* Cancelable */
bool cio_rwlock_try_lock_shared(cio_io io, cio_rwlock *rw);
void cio_rwlock_lock_shared_uncancelable(cio_io io, cio_rwlock *rw);
void cio_rwlock_unlock_shared(cio_io io, cio_rwlock *rw);

/* ---- Queue: bounded MPMC channel with close ---------------------------------------------------- */
struct cio__queue_waiter;

typedef struct cio_queue {
    cio_mutex mutex;
    unsigned char *buffer;
    size_t elem_size;
    size_t capacity; /* 0: a rendezvous channel */
    size_t start;
    size_t len;
    bool closed;
    struct cio__queue_waiter *getters; /* FIFO lists of blocked tasks */
    struct cio__queue_waiter *putters;
} cio_queue;

/* buffer holds capacity elements of elem_size bytes (capacity 0: buffer may be NULL). */
void cio_queue_init(cio_queue *queue, void *buffer, size_t elem_size, size_t capacity);
/* Adds up to n elements, returning once at least `min` were added (*added says how many), or the
 * queue closed, or the task was canceled. Waiting getters are served first, then the buffer.
 * Errors: CIO_E_CLOSED (nothing added: closed), CIO_E_CANCELED (nothing added: canceled; if some
 * were added the count is returned and the cancel request re-armed), CIO_E_INVALID_ARGUMENT
 * (elem_size 0, min > n). Set: Queue.Error. */
cio_err cio_queue_put(cio_io io, cio_queue *queue, const void *elems, size_t n, size_t min, size_t *added);
/* Takes up to n elements, at least `min` unless the queue closed (a closed queue never blocks a
 * get; CIO_E_CLOSED only when closed and empty). Set: Queue.Error. */
cio_err cio_queue_get(cio_io io, cio_queue *queue, void *elems, size_t n, size_t min, size_t *got);
cio_err cio_queue_put_one(cio_io io, cio_queue *queue, const void *elem);
cio_err cio_queue_get_one(cio_io io, cio_queue *queue, void *elem);
/* Never cancellation points: only CIO_E_CLOSED (or CIO_E_INVALID_ARGUMENT). */
cio_err cio_queue_put_uncancelable(cio_io io, cio_queue *queue, const void *elems, size_t n, size_t min,
                                   size_t *added);
cio_err cio_queue_get_uncancelable(cio_io io, cio_queue *queue, void *elems, size_t n, size_t min, size_t *got);
cio_err cio_queue_put_one_uncancelable(cio_io io, cio_queue *queue, const void *elem);
cio_err cio_queue_get_one_uncancelable(cio_io io, cio_queue *queue, void *elem);
/* Idempotent; wakes every blocked putter and getter. */
void cio_queue_close(cio_io io, cio_queue *queue);
size_t cio_queue_capacity(const cio_queue *queue);

/* ---- Select: a group whose tasks post results to a queue; first result wins ------------------- */

/* A select task writes its result (elem_size bytes, typically a tagged union) into *result. */
typedef cio_err (*cio_select_fn)(void *context, void *result);

typedef struct cio_select {
    cio_group group;
    cio_queue queue;
    _Atomic(uint32_t) failed; /* 0, or the cio_err of a task that could not deliver its result */
} cio_select;

/**
 * Makes an empty select whose results go to `buffer` (capacity results of elem_size bytes).
 * @param sel        the select (caller-allocated)
 * @param buffer     room for the results not awaited yet; see cio_select_cancel for its size
 * @param elem_size  bytes of one result
 * @param capacity   results the buffer holds (0 is allowed: then use cio_select_cancel_discard)
 */
void cio_select_init(cio_select *sel, void *buffer, size_t elem_size, size_t capacity);
/**
 * Adds a member that runs `fn` on a copy of `context`.
 *
 * Rules (why select cannot deadlock). Members race one another — a blocking read against a sleep
 * that stands for its timeout — so a member may block until another finishes. Such a member must
 * never run inline on the awaiter, as cio_async does once the Threaded backend's async limit is
 * reached (the read would block the caller and the sleep would never start). cio_select_async
 * therefore starts every member with concurrent semantics (cio_group_concurrent: a thread or fiber
 * of its own, whatever the async limit). Only where no concurrency can be had at all (WASI's
 * single-threaded backend, a concurrent limit reached, no memory for the task) does the member run
 * as cio_group_async would, which may be inline and in order: members that wait on each other then
 * deadlock there. To be told instead, use cio_select_concurrent (ConcurrencyUnavailable). For a
 * timeout on one read, cio_stream_read_timeout (cio/batch.h) is cheaper than a select.
 * Never fails; not a cancellation point.
 */
void cio_select_async(cio_io io, cio_select *sel, cio_select_fn fn, const void *context, size_t context_size);
/**
 * Adds a member that runs `fn` concurrently with the caller, never inline.
 * @return CIO_OK or CIO_E_CONCURRENCY_UNAVAILABLE (no thread or fiber: nothing was added).
 *         Set: ConcurrentError. Not a cancellation point.
 */
cio_err cio_select_concurrent(cio_io io, cio_select *sel, cio_select_fn fn, const void *context,
                              size_t context_size);
/* The next result. Set: Cancelable (CIO_E_CLOSED cannot happen before cancel), and
 * CIO_E_OUT_OF_MEMORY when a task found no memory for its result (elem_size over 256 bytes is
 * allocated per task): that task's fn did not run, the select has failed, and the results posted
 * before the failure come out first. By the time await reports it, every other task has been
 * canceled and awaited (their later results are dropped); cancel the select as usual afterwards. */
cio_err cio_select_await(cio_io io, cio_select *sel, void *result);
/* As cio_select_await for up to n results, at least min (fewer only when the select failed: then
 * CIO_OK with what there was, and the next call reports the failure). */
cio_err cio_select_await_many(cio_io io, cio_select *sel, void *results, size_t n, size_t min, size_t *got);
/* Cancels and waits for every task, closes the queue, then hands out one remaining result per call:
 * true with *result filled, false when none is left. The buffer must be able to hold every result
 * still to come, or tasks block (use cio_select_cancel_discard then). */
bool cio_select_cancel(cio_io io, cio_select *sel, void *result);
/* Closes the queue first (late results are dropped), then cancels and waits for every task. */
void cio_select_cancel_discard(cio_io io, cio_select *sel);

#ifdef __cplusplus
}
#endif

#endif /* CIO_SYNC_H */
