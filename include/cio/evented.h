/**
 * @file cio/evented.h
 * @brief The Evented backend: fibers over io_uring or epoll (Linux), kqueue (the BSDs) and an I/O
 * completion port (Windows x64).
 *
 * The Evented backend: tasks are fibers (small stacks, switched in user space) run by a few event-loop
 * threads; I/O is submitted to the kernel's completion interface (io_uring on Linux, the completion
 * port's overlapped operations on Windows: the iocp flavour) or driven by readiness (the epoll flavour
 * on Linux, the kqueue flavour on FreeBSD, NetBSD and OpenBSD: one core over two pollers), with the
 * calls that have no asynchronous form on a small helper pool. async and concurrent both create a
 * fiber, so concurrent only fails (CIO_E_CONCURRENCY_UNAVAILABLE) when memory for one runs out.
 *
 * Exists where CIO_HAVE_EVENTED is 1 (cio/config.h); elsewhere this header declares nothing, as
 * Zig's std.Io.Evented is `void` where unimplemented.
 *
 * Threads. Any thread may use an Evented io: the first time a thread that is not one of the loop's
 * calls a blocking slot, the call is carried out by a fiber of the loop and the thread waits for it.
 * Cancellation behaves exactly as on Threaded (cio/io.h).
 *
 * Windows (the iocp flavour). Regular files an Evented io opens are asynchronous handles (read and
 * written as overlapped operations; a Threaded io can use them too), and a file or socket is tied to
 * the completion port of the instance that first ran an overlapped operation on it, for the handle's
 * life (Windows allows one port per handle). Another Evented instance can still use it, alive or
 * after the first is destroyed, as can a handle the caller attached to a port of its own: those
 * calls run as Threaded's do, on the instance's blocking helper threads, slower than overlapped
 * ones but the same in result. Close such handles through cio (a handle closed behind cio's back
 * whose value comes back attached to a foreign port is taken for the old one).
 */
#ifndef CIO_EVENTED_H
#define CIO_EVENTED_H

#include <stddef.h>

#include "cio/config.h"
#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif

#if CIO_HAVE_EVENTED

/** An Evented instance (opaque): its loops, fibers and helper pool. */
typedef struct cio_evented cio_evented;

/** Which poller an Evented instance runs. Each OS has its own flavours; forcing one the OS lacks fails
 * with CIO_E_OPERATION_UNSUPPORTED. */
typedef enum cio_evented_flavour {
    CIO_EVENTED_AUTO = 0, /**< Linux: io_uring when the kernel allows it, else epoll;
                             CIO_EVENTED_BACKEND (io_uring | epoll) in the environment overrides,
                             read at create time. The BSDs: kqueue (the variable is not read). */
    CIO_EVENTED_IO_URING, /**< Linux: io_uring, or fail (OperationUnsupported / SystemResources) */
    CIO_EVENTED_EPOLL,    /**< Linux: readiness through epoll */
    CIO_EVENTED_KQUEUE,   /**< FreeBSD, NetBSD, OpenBSD: readiness through kqueue */
    CIO_EVENTED_IOCP      /**< Windows: completions through an I/O completion port */
} cio_evented_flavour;

/** Options of cio_evented_create. All-zero (or NULL) gives the defaults. */
typedef struct cio_evented_options {
    cio_evented_flavour flavour; /**< the poller (CIO_EVENTED_AUTO: the best this OS and kernel offer) */
    unsigned threads;            /**< event-loop threads; 0: CPU count */
    size_t stack_size;           /**< per fiber, plus a guard page; 0: 64 KiB. An overflow aborts with a
                                    message naming the size and the task's spawn site (POSIX) */
    unsigned helper_threads;     /**< blocking helper pool (ops with no async form); 0: 4 */
    unsigned ring_entries;       /**< io_uring submission queue size per loop; 0: 256 */
} cio_evented_options;

/**
 * Creates an Evented instance and starts its loops.
 * Errors (Evented.CreateError): SystemResources (memory, threads, ring), ProcessFdQuotaExceeded /
 * SystemFdQuotaExceeded (the pollers' descriptors), OperationUnsupported (a forced flavour this OS or
 * kernel does not offer: no kqueue on Linux, io_uring refused with ENOSYS or EPERM or missing
 * features), InvalidArgument (out NULL, an unknown flavour).
 * @param options NULL or all-zero: the defaults
 * @param[out] out the instance
 * @return #CIO_OK, or an error of Evented.CreateError \errset_evented_create
 * @cancellation no
 */
cio_err cio_evented_create(const cio_evented_options *options, cio_evented **out);
/**
 * Waits for every fiber still running, then stops the loops and frees everything. Fibers still
 * running 1 s after destroy began get a cancel request (their blocked read, sleep or futex wait
 * ends with CIO_E_CANCELED); a debug build lists any that still run 5 s in, with where they were
 * spawned (cio/spawn.h), and destroy goes on waiting for them.
 * @param evented the instance
 * @cancellation no
 */
void cio_evented_destroy(cio_evented *evented);
/**
 * The instance's Io.
 * @param evented the instance
 * @return the cio_io to pass to every I/O function.
 * @cancellation no
 */
cio_io cio_evented_io(cio_evented *evented);
/**
 * The flavour actually in use (never CIO_EVENTED_AUTO).
 * @param evented the instance
 * @return the flavour.
 * @cancellation no
 */
cio_evented_flavour cio_evented_flavour_of(const cio_evented *evented);

/** Counters since cio_evented_create, for benchmarks and tests (they only grow; size_t wraps). A
 * task either starts as a fiber of its own or runs inline on the fiber that awaits it (an async
 * task not started yet when awaited, a group member not started when the group is awaited) or, when
 * no fiber can be had, on the caller. */
typedef struct cio_evented_stats {
    size_t fibers_started; /**< tasks that started running as a fiber on a stack of their own */
    size_t tasks_inline;   /**< tasks whose function ran inline on the awaiting fiber or the caller */
} cio_evented_stats;
/**
 * Reads the counters (summed over the loops; exact once the tasks counted have finished).
 * @param evented the instance
 * @param[out] out the counters
 * @cancellation no
 */
void cio_evented_get_stats(const cio_evented *evented, cio_evented_stats *out);

#endif /* CIO_HAVE_EVENTED */

#ifdef __cplusplus
}
#endif

#endif /* CIO_EVENTED_H */
