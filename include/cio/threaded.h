/**
 * @file cio/threaded.h
 * @brief The Threaded backend: blocking syscalls, a pool of worker threads for tasks.
 *
 * The Threaded backend: blocking syscalls on the calling thread; async/concurrent tasks on a pool of
 * worker threads. Create one per program (or per test), take its cio_io with cio_threaded_io.
 *
 * Where CIO_HAVE_THREADS is 0 (WASI) it is single-threaded: async always runs inline, concurrent
 * fails with CIO_E_CONCURRENCY_UNAVAILABLE, nothing can be canceled, and the options and limits
 * below are accepted and have no effect.
 */
#ifndef CIO_THREADED_H
#define CIO_THREADED_H

#include <stddef.h>

#include "cio/config.h"
#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A Threaded instance (opaque): its worker pool. */
typedef struct cio_threaded cio_threaded;

/** Options of cio_threaded_create. All-zero (or NULL) gives the defaults. */
typedef struct cio_threaded_options {
    size_t stack_size;        /**< worker stack, with a guard page; 0: 256 KiB. An overflow aborts with
                                 a message naming the size and the task's spawn site. Windows: the
                                 stack's commit; it can grow to the executable's stack reserve when
                                 that is larger (the message names the real size) */
    size_t async_limit;       /**< tasks async puts on workers; 0: CPU count - 1, at least 4 (blocking
                                 I/O overlaps even on one CPU; see set_async_limit) */
    size_t concurrent_limit;  /**< tasks on workers for concurrent; 0: unlimited */
    unsigned idle_timeout_ms; /**< an idle worker retires after this; 0: 5000 */
} cio_threaded_options;

/**
 * Creates a Threaded instance.
 * Errors: SystemResources (out of memory).
 * @param options NULL or all-zero: the defaults
 * @param[out] out the instance
 * @return #CIO_OK, or #CIO_E_SYSTEM_RESOURCES (no named set: exactly this one)
 * @cancellation no
 */
cio_err cio_threaded_create(const cio_threaded_options *options, cio_threaded **out);
/**
 * Waits for every task still running, then frees everything. Tasks still running 1 s after
 * destroy began get a cancel request (signalled again while they sit in a blocking call); a debug
 * build lists any that still run 5 s in, with where they were spawned (cio/spawn.h).
 * @param threaded the instance
 * @cancellation no
 */
void cio_threaded_destroy(cio_threaded *threaded);
/**
 * The instance's Io.
 * @param threaded the instance
 * @return the cio_io to pass to every I/O function.
 * @cancellation no
 */
cio_io cio_threaded_io(cio_threaded *threaded);
/**
 * Sets how many tasks async puts on workers; 0: async always runs inline.
 * @param threaded the instance
 * @param limit the new limit
 * @cancellation no
 */
void cio_threaded_set_async_limit(cio_threaded *threaded, size_t limit);
/**
 * Sets how many tasks concurrent puts on workers; SIZE_MAX: unlimited.
 * @param threaded the instance
 * @param limit the new limit
 * @cancellation no
 */
void cio_threaded_set_concurrent_limit(cio_threaded *threaded, size_t limit);

/** Counters since cio_threaded_create, for benchmarks and tests (they only grow; size_t wraps). */
typedef struct cio_threaded_stats {
    size_t kicks;            /**< a canceler knocked a task's thread out of a blocked call: one signal on POSIX
                                (an APC, CancelSynchronousIo and a futex wake on Windows), counting the
                                re-kicks of the backoff; 0 where nothing can be canceled (WASI) */
    size_t tasks_inline;     /**< async and group_async calls whose function ran inline on the caller
                                (the async limit was reached, or no worker could be had); exact while
                                one thread spawns at a time, possibly a little low with several */
    size_t tasks_on_workers; /**< tasks put on a worker (async, concurrent, group members) */
} cio_threaded_stats;
/**
 * Reads the counters.
 * @param threaded the instance
 * @param[out] out the counters
 * @cancellation no
 */
void cio_threaded_get_stats(cio_threaded *threaded, cio_threaded_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* CIO_THREADED_H */
