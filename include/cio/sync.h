/**
 * @file cio/sync.h
 * @brief Mutex, Condition, Event, Semaphore, RwLock, Queue and Select over the futex slots.
 *
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

/* ---- Mutex: a futex mutex that counts its sleepers; no owner, not recursive ------------------ */
/** A mutex: a futex mutex that counts its sleepers (src/core/mutex.c); no owner, not recursive. */
typedef struct cio_mutex {
    CIO_ATOMIC(uint32_t) state; /**< bit 0: locked; bits 1..31: tasks in the slow path of lock */
} cio_mutex;
/** An unlocked mutex. */
#define CIO_MUTEX_INIT \
    {                  \
        0              \
    }

/**
 * Locks the mutex, waiting as long as it takes.
 * @param io the Io
 * @param mutex the mutex
 * @return #CIO_OK (locked), or an error of Cancelable \errset_cancelable (not locked)
 * @cancellation yes, when it has to wait (the uncontended fast path is not one)
 */
cio_err cio_mutex_lock(cio_io io, cio_mutex *mutex);
/**
 * Locks the mutex if it is free, without waiting.
 * @param mutex the mutex
 * @return whether it was locked.
 * @cancellation no
 */
bool cio_mutex_try_lock(cio_mutex *mutex);
/**
 * Locks the mutex, never a cancellation point.
 * @param io the Io
 * @param mutex the mutex
 * @cancellation no
 */
void cio_mutex_lock_uncancelable(cio_io io, cio_mutex *mutex);
/**
 * Unlocks the mutex (held by the caller) and wakes a waiter.
 * @param io the Io
 * @param mutex the mutex
 * @cancellation no
 */
void cio_mutex_unlock(cio_io io, cio_mutex *mutex);

/* ---- Condition ------------------------------------------------------------------------------ */
/** A condition variable, used with a cio_mutex. */
typedef struct cio_condition {
    CIO_ATOMIC(uint32_t) state;    /**< waiters (low 16 bits) and pending signals (high 16 bits) */
    CIO_ATOMIC(uint32_t) epoch;    /**< the futex word waiters sleep on */
    CIO_ATOMIC(uint32_t) sleepers; /**< waiters inside a futex wait on epoch (signal skips the wake if 0) */
} cio_condition;
/** A condition nobody waits on. */
#define CIO_CONDITION_INIT \
    {                      \
        0, 0, 0            \
    }

/**
 * Unlocks the mutex, waits for a signal, locks the mutex again (also on error: it re-acquires the
 * mutex first). May wake spuriously: re-check the predicate.
 * @param io the Io
 * @param cond the condition
 * @param mutex the mutex the caller holds
 * @return #CIO_OK, or an error of Cancelable \errset_cancelable
 * @cancellation yes
 */
cio_err cio_condition_wait(cio_io io, cio_condition *cond, cio_mutex *mutex);
/**
 * As cio_condition_wait; CIO_E_TIMEOUT when the timeout passed first (Sets: Cancelable, TimeoutError).
 * @param io the Io
 * @param cond the condition
 * @param mutex the mutex the caller holds
 * @param timeout how long to wait
 * @return #CIO_OK, or an error of Condition.WaitTimeoutError \errset_condition_wait_timeout
 * @cancellation yes
 */
cio_err cio_condition_wait_timeout(cio_io io, cio_condition *cond, cio_mutex *mutex, cio_timeout timeout);
/**
 * As cio_condition_wait, never a cancellation point.
 * @param io the Io
 * @param cond the condition
 * @param mutex the mutex the caller holds
 * @cancellation no
 */
void cio_condition_wait_uncancelable(cio_io io, cio_condition *cond, cio_mutex *mutex);
/**
 * Wakes one waiter.
 * @param io the Io
 * @param cond the condition
 * @cancellation no
 */
void cio_condition_signal(cio_io io, cio_condition *cond);
/**
 * Wakes every waiter.
 * @param io the Io
 * @param cond the condition
 * @cancellation no
 */
void cio_condition_broadcast(cio_io io, cio_condition *cond);

/* ---- Event (a reset event) -------------------------------------------------------------------- */
/** A reset event: waiters block until it is set. */
typedef struct cio_event {
    CIO_ATOMIC(uint32_t) state; /**< 0 unset, 1 waiting, 2 set */
} cio_event;
/** An event that is not set. */
#define CIO_EVENT_INIT \
    {                  \
        0              \
    }

/**
 * Whether the event is set.
 * @param event the event
 * @return true when set.
 * @cancellation no
 */
bool cio_event_is_set(const cio_event *event);
/**
 * Sets the event and wakes every waiter.
 * @param io the Io
 * @param event the event
 * @cancellation no
 */
void cio_event_set(cio_io io, cio_event *event);
/**
 * Unsets the event. Must not race with waiters.
 * @param event the event
 * @cancellation no
 */
void cio_event_reset(cio_event *event);
/**
 * Waits until the event is set.
 * @param io the Io
 * @param event the event
 * @return #CIO_OK, or an error of Cancelable \errset_cancelable
 * @cancellation yes
 */
cio_err cio_event_wait(cio_io io, cio_event *event);
/**
 * As cio_event_wait, never a cancellation point.
 * @param io the Io
 * @param event the event
 * @cancellation no
 */
void cio_event_wait_uncancelable(cio_io io, cio_event *event);
/**
 * As cio_event_wait; CIO_E_TIMEOUT if not set by the timeout.
 * @param io the Io
 * @param event the event
 * @param timeout how long to wait
 * @return #CIO_OK, or an error of Event.WaitTimeoutError \errset_event_wait_timeout
 * @cancellation yes
 */
cio_err cio_event_wait_timeout(cio_io io, cio_event *event, cio_timeout timeout);

/* ---- Semaphore ------------------------------------------------------------------------------ */
/** A counting semaphore. */
typedef struct cio_semaphore {
    cio_mutex mutex;    /**< guards permits */
    cio_condition cond; /**< waiters for a permit */
    uint32_t permits;   /**< permits available */
} cio_semaphore;
/** A semaphore with `permits` permits. */
#define CIO_SEMAPHORE_INIT(permits)                   \
    {                                                 \
        CIO_MUTEX_INIT, CIO_CONDITION_INIT, (permits) \
    }

/**
 * Takes a permit, waiting for one.
 * @param io the Io
 * @param sem the semaphore
 * @return #CIO_OK (taken), or an error of Cancelable \errset_cancelable (not taken)
 * @cancellation yes
 */
cio_err cio_semaphore_wait(cio_io io, cio_semaphore *sem);
/**
 * As cio_semaphore_wait; CIO_E_TIMEOUT when none came by the timeout.
 * @param io the Io
 * @param sem the semaphore
 * @param timeout how long to wait
 * @return #CIO_OK, or an error of Condition.WaitTimeoutError \errset_condition_wait_timeout
 * @cancellation yes
 */
cio_err cio_semaphore_wait_timeout(cio_io io, cio_semaphore *sem, cio_timeout timeout);
/**
 * As cio_semaphore_wait, never a cancellation point.
 * @param io the Io
 * @param sem the semaphore
 * @cancellation no
 */
void cio_semaphore_wait_uncancelable(cio_io io, cio_semaphore *sem);
/**
 * Returns a permit and wakes a waiter.
 * @param io the Io
 * @param sem the semaphore
 * @cancellation no
 */
void cio_semaphore_post(cio_io io, cio_semaphore *sem);

/* ---- RwLock: many readers or one writer; writers are not starved by new readers --------------- */
/** A readers-writer lock: many readers or one writer; writers are not starved by new readers. */
typedef struct cio_rwlock {
    cio_mutex mutex;          /**< guards the fields below */
    cio_condition cond;       /**< waiters */
    uint32_t readers;         /**< active readers */
    uint32_t writers_waiting; /**< writers queued: new readers wait behind them */
    bool writer;              /**< a writer holds the lock */
} cio_rwlock;
/** An unlocked rwlock. */
#define CIO_RWLOCK_INIT                                 \
    {                                                   \
        CIO_MUTEX_INIT, CIO_CONDITION_INIT, 0, 0, false \
    }

/**
 * Locks for writing (exclusive), waiting as long as it takes.
 * @param io the Io
 * @param rw the lock
 * @return #CIO_OK (locked), or an error of Cancelable \errset_cancelable (not locked)
 * @cancellation yes
 */
cio_err cio_rwlock_lock(cio_io io, cio_rwlock *rw);
/**
 * Locks for writing if that is possible without waiting.
 * @param io the Io
 * @param rw the lock
 * @return whether it was locked.
 * @cancellation no
 */
bool cio_rwlock_try_lock(cio_io io, cio_rwlock *rw);
/**
 * As cio_rwlock_lock, never a cancellation point.
 * @param io the Io
 * @param rw the lock
 * @cancellation no
 */
void cio_rwlock_lock_uncancelable(cio_io io, cio_rwlock *rw);
/**
 * Releases the write lock.
 * @param io the Io
 * @param rw the lock
 * @cancellation no
 */
void cio_rwlock_unlock(cio_io io, cio_rwlock *rw);
/**
 * Locks for reading (shared), behind any waiting writer.
 * @param io the Io
 * @param rw the lock
 * @return #CIO_OK (locked), or an error of Cancelable \errset_cancelable (not locked)
 * @cancellation yes
 */
cio_err cio_rwlock_lock_shared(cio_io io, cio_rwlock *rw);
/**
 * Locks for reading if that is possible without waiting.
 * @param io the Io
 * @param rw the lock
 * @return whether it was locked.
 * @cancellation no
 */
bool cio_rwlock_try_lock_shared(cio_io io, cio_rwlock *rw);
/**
 * As cio_rwlock_lock_shared, never a cancellation point.
 * @param io the Io
 * @param rw the lock
 * @cancellation no
 */
void cio_rwlock_lock_shared_uncancelable(cio_io io, cio_rwlock *rw);
/**
 * Releases a read lock.
 * @param io the Io
 * @param rw the lock
 * @cancellation no
 */
void cio_rwlock_unlock_shared(cio_io io, cio_rwlock *rw);

/* ---- Queue: bounded MPMC channel with close ---------------------------------------------------- */
struct cio__queue_waiter;

/** A bounded multi-producer multi-consumer channel with close; set up with cio_queue_init. */
typedef struct cio_queue {
    cio_mutex mutex;                   /**< guards the fields below */
    unsigned char *buffer;             /**< the caller's ring of capacity elements */
    size_t elem_size;                  /**< bytes per element */
    size_t capacity;                   /**< 0: a rendezvous channel */
    size_t start;                      /**< the first element's index in buffer */
    size_t len;                        /**< elements in buffer */
    bool closed;                       /**< cio_queue_close was called */
    struct cio__queue_waiter *getters; /**< FIFO list of blocked getters */
    struct cio__queue_waiter *putters; /**< FIFO list of blocked putters */
} cio_queue;

/**
 * Sets up a queue over the caller's buffer.
 * @param[out] queue the queue
 * @param buffer holds capacity elements of elem_size bytes (capacity 0: may be NULL)
 * @param elem_size bytes per element
 * @param capacity elements the buffer holds (0: a rendezvous channel)
 * @cancellation no
 */
void cio_queue_init(cio_queue *queue, void *buffer, size_t elem_size, size_t capacity);
/**
 * Adds up to n elements, returning once at least `min` were added (*added says how many), or the
 * queue closed, or the task was canceled. Waiting getters are served first, then the buffer.
 * Errors: CIO_E_CLOSED (nothing added: closed), CIO_E_CANCELED (nothing added: canceled; if some
 * were added the count is returned and the cancel request re-armed), CIO_E_INVALID_ARGUMENT
 * (elem_size 0, min > n).
 * @param io the Io
 * @param queue the queue
 * @param elems n elements of the queue's elem_size
 * @param n how many to add at most
 * @param min how many to add before returning
 * @param[out] added how many were added
 * @return #CIO_OK, or an error of Queue.Error \errset_queue
 * @cancellation yes
 */
cio_err cio_queue_put(cio_io io, cio_queue *queue, const void *elems, size_t n, size_t min, size_t *added);
/**
 * Takes up to n elements, at least `min` unless the queue closed (a closed queue never blocks a
 * get; CIO_E_CLOSED only when closed and empty).
 * @param io the Io
 * @param queue the queue
 * @param elems room for n elements
 * @param n how many to take at most
 * @param min how many to take before returning
 * @param[out] got how many were taken
 * @return #CIO_OK, or an error of Queue.Error \errset_queue
 * @cancellation yes
 */
cio_err cio_queue_get(cio_io io, cio_queue *queue, void *elems, size_t n, size_t min, size_t *got);
/**
 * Adds one element (cio_queue_put with n = min = 1).
 * @param io the Io
 * @param queue the queue
 * @param elem the element
 * @return #CIO_OK, or an error of Queue.Error \errset_queue
 * @cancellation yes
 */
cio_err cio_queue_put_one(cio_io io, cio_queue *queue, const void *elem);
/**
 * Takes one element (cio_queue_get with n = min = 1).
 * @param io the Io
 * @param queue the queue
 * @param[out] elem the element
 * @return #CIO_OK, or an error of Queue.Error \errset_queue
 * @cancellation yes
 */
cio_err cio_queue_get_one(cio_io io, cio_queue *queue, void *elem);
/**
 * As cio_queue_put, never a cancellation point: only CIO_E_CLOSED (or CIO_E_INVALID_ARGUMENT).
 * @param io the Io
 * @param queue the queue
 * @param elems n elements of the queue's elem_size
 * @param n how many to add at most
 * @param min how many to add before returning
 * @param[out] added how many were added
 * @return #CIO_OK, or an error of Queue.ClosedError \errset_queue_closed
 * @cancellation no
 */
cio_err cio_queue_put_uncancelable(cio_io io, cio_queue *queue, const void *elems, size_t n, size_t min, size_t *added);
/**
 * As cio_queue_get, never a cancellation point.
 * @param io the Io
 * @param queue the queue
 * @param elems room for n elements
 * @param n how many to take at most
 * @param min how many to take before returning
 * @param[out] got how many were taken
 * @return #CIO_OK, or an error of Queue.ClosedError \errset_queue_closed
 * @cancellation no
 */
cio_err cio_queue_get_uncancelable(cio_io io, cio_queue *queue, void *elems, size_t n, size_t min, size_t *got);
/**
 * As cio_queue_put_one, never a cancellation point.
 * @param io the Io
 * @param queue the queue
 * @param elem the element
 * @return #CIO_OK, or an error of Queue.ClosedError \errset_queue_closed
 * @cancellation no
 */
cio_err cio_queue_put_one_uncancelable(cio_io io, cio_queue *queue, const void *elem);
/**
 * As cio_queue_get_one, never a cancellation point.
 * @param io the Io
 * @param queue the queue
 * @param[out] elem the element
 * @return #CIO_OK, or an error of Queue.ClosedError \errset_queue_closed
 * @cancellation no
 */
cio_err cio_queue_get_one_uncancelable(cio_io io, cio_queue *queue, void *elem);
/**
 * Closes the queue. Idempotent; wakes every blocked putter and getter.
 * @param io the Io
 * @param queue the queue
 * @cancellation no
 */
void cio_queue_close(cio_io io, cio_queue *queue);
/**
 * The queue's capacity.
 * @param queue the queue
 * @return how many elements its buffer holds.
 * @cancellation no
 */
size_t cio_queue_capacity(const cio_queue *queue);

/* ---- Select: a group whose tasks post results to a queue; first result wins ------------------- */

/** A select task: writes its result (elem_size bytes, typically a tagged union) into *result. */
typedef cio_err (*cio_select_fn)(void *context, void *result);

/** A select: a group whose tasks post results to a queue; the first result wins. */
typedef struct cio_select {
    cio_group group;             /**< the tasks */
    cio_queue queue;             /**< their results */
    CIO_ATOMIC(uint32_t) failed; /**< 0, or the cio_err of a task that could not deliver its result */
} cio_select;

/**
 * Makes an empty select whose results go to `buffer` (capacity results of elem_size bytes).
 * @param[out] sel   the select (caller-allocated)
 * @param buffer     room for the results not awaited yet; see cio_select_cancel for its size
 * @param elem_size  bytes of one result
 * @param capacity   results the buffer holds (0 is allowed: then use cio_select_cancel_discard)
 * @cancellation no
 */
void cio_select_init(cio_select *sel, void *buffer, size_t elem_size, size_t capacity);
/**
 * Adds a member that runs `fn` on a copy of `context`.
 *
 * Rules (why select cannot deadlock). Members race one another (a blocking read against a sleep
 * that stands for its timeout), so a member may block until another finishes. Such a member must
 * never run inline on the awaiter, as cio_async does once the Threaded backend's async limit is
 * reached (the read would block the caller and the sleep would never start). cio_select_async
 * therefore starts every member with concurrent semantics (cio_group_concurrent: a thread or fiber
 * of its own, whatever the async limit). Only where no concurrency can be had at all (WASI's
 * single-threaded backend, a concurrent limit reached, no memory for the task) does the member run
 * as cio_group_async would, which may be inline and in order: members that wait on each other then
 * deadlock there. To be told instead, use cio_select_concurrent (ConcurrencyUnavailable). For a
 * timeout on one read, cio_stream_read_timeout (cio/batch.h) is cheaper than a select.
 * Never fails.
 * @param io the Io
 * @param sel the select
 * @param fn the task
 * @param context the bytes copied for the task
 * @param context_size their length
 * @cancellation no
 */
void cio_select_async(cio_io io, cio_select *sel, cio_select_fn fn, const void *context, size_t context_size);
/**
 * Adds a member that runs `fn` concurrently with the caller, never inline.
 * @param io the Io
 * @param sel the select
 * @param fn the task
 * @param context the bytes copied for the task
 * @param context_size their length
 * @return #CIO_OK, or an error of ConcurrentError \errset_concurrent (no thread or fiber: nothing
 *         was added)
 * @cancellation no
 */
cio_err cio_select_concurrent(cio_io io, cio_select *sel, cio_select_fn fn, const void *context, size_t context_size);
/**
 * The next result. Set: Cancelable (CIO_E_CLOSED cannot happen before cancel), and
 * CIO_E_OUT_OF_MEMORY when a task found no memory for its result (elem_size over 256 bytes is
 * allocated per task): that task's fn did not run, the select has failed, and the results posted
 * before the failure come out first. By the time await reports it, every other task has been
 * canceled and awaited (their later results are dropped); cancel the select as usual afterwards.
 * @param io the Io
 * @param sel the select
 * @param[out] result the result (elem_size bytes)
 * @return #CIO_OK, #CIO_E_OUT_OF_MEMORY, or an error of Queue.Error \errset_queue
 * @cancellation yes
 */
cio_err cio_select_await(cio_io io, cio_select *sel, void *result);
/**
 * As cio_select_await for up to n results, at least min (fewer only when the select failed: then
 * CIO_OK with what there was, and the next call reports the failure).
 * @param io the Io
 * @param sel the select
 * @param[out] results room for n results
 * @param n how many to take at most
 * @param min how many to wait for
 * @param[out] got how many were taken
 * @return #CIO_OK, #CIO_E_OUT_OF_MEMORY, or an error of Queue.Error \errset_queue
 * @cancellation yes
 */
cio_err cio_select_await_many(cio_io io, cio_select *sel, void *results, size_t n, size_t min, size_t *got);
/**
 * Cancels and waits for every task, closes the queue, then hands out one remaining result per call:
 * true with *result filled, false when none is left. The buffer must be able to hold every result
 * still to come, or tasks block (use cio_select_cancel_discard then).
 * @param io the Io
 * @param sel the select
 * @param[out] result a remaining result
 * @return true with *result filled, false when none is left.
 * @cancellation no
 */
bool cio_select_cancel(cio_io io, cio_select *sel, void *result);
/**
 * Closes the queue first (late results are dropped), then cancels and waits for every task.
 * @param io the Io
 * @param sel the select
 * @cancellation no
 */
void cio_select_cancel_discard(cio_io io, cio_select *sel);

#ifdef __cplusplus
}
#endif

#endif /* CIO_SYNC_H */
