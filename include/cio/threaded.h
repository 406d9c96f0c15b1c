/*
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

typedef struct cio_threaded cio_threaded;

/* All-zero (or NULL) gives the defaults. */
typedef struct cio_threaded_options {
    size_t stack_size;        /* worker stack, with a guard page; 0: 256 KiB */
    size_t async_limit;       /* tasks async puts on workers; 0: CPU count - 1, at least 4 (blocking
                                 I/O overlaps even on one CPU; see set_async_limit) */
    size_t concurrent_limit;  /* tasks on workers for concurrent; 0: unlimited */
    unsigned idle_timeout_ms; /* an idle worker retires after this; 0: 5000 */
} cio_threaded_options;

/* Errors: SystemResources (out of memory). */
cio_err cio_threaded_create(const cio_threaded_options *options, cio_threaded **out);
/* Waits for every task still running, then frees everything. */
void cio_threaded_destroy(cio_threaded *threaded);
cio_io cio_threaded_io(cio_threaded *threaded);
/* 0: async always runs inline. */
void cio_threaded_set_async_limit(cio_threaded *threaded, size_t limit);
/* SIZE_MAX: unlimited. */
void cio_threaded_set_concurrent_limit(cio_threaded *threaded, size_t limit);

/* Counters since cio_threaded_create, for benchmarks and tests (they only grow; size_t wraps). */
typedef struct cio_threaded_stats {
    size_t kicks; /* a canceler knocked a task's thread out of a blocked call: one signal on POSIX
                     (an APC, CancelSynchronousIo and a futex wake on Windows), counting the
                     re-kicks of the backoff; 0 where nothing can be canceled (WASI) */
} cio_threaded_stats;
void cio_threaded_get_stats(cio_threaded *threaded, cio_threaded_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* CIO_THREADED_H */
