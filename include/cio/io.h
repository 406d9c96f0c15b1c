/**
 * @file cio/io.h
 * @brief The Io interface: the table of contents of cio.
 *
 * Every function that does I/O takes a cio_io: a vtable and the backend's userdata, passed by value
 * like an allocator. The same straight-line code then runs on the Threaded backend (blocking
 * syscalls, a thread pool for async/concurrent) or on an evented one. A backend fills in every slot
 * of struct cio_vtable below; the public functions (cio_async, cio_sleep, cio_file_write_all, …)
 * are thin wrappers over the slots plus library code that needs only the slots (Mutex, Condition,
 * Event, Queue, … in cio/sync.h are built on the three futex slots).
 *
 * Errors. Every fallible call returns cio_err (0 = CIO_OK). The set each slot may return is named
 * after Zig's (spec/errors.yaml); debug builds assert it. Any call may also return
 * CIO_E_INVALID_ARGUMENT for a NULL or out-of-range argument (what Zig's types rule out at compile
 * time). Cancelable means "may return CIO_E_CANCELED": such a call is a cancellation point.
 * In this reference, `@return ... File.OpenError = { ... }` names a function's set and lists its
 * members (@ref errors has every set); "Cancellation point" says whether the call is one.
 *
 * Cancellation. cio_cancel(io, &future) asks the task to stop: its next cancellation point returns
 * CIO_E_CANCELED once (cio_recancel re-arms it). A task blocked in a syscall (read on a pipe,
 * accept, futex wait, sleep) is woken. Protection CIO_CANCEL_BLOCKED (cio_swap_cancel_protection)
 * defers delivery until it is unblocked again.
 *
 * Thread-safety. A cio_io may be used from any number of threads at once, unless a slot says
 * otherwise. A cio_future and a cio_group are not thread-safe: await/cancel one from one thread.
 */
#ifndef CIO_IO_H
#define CIO_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/atomic.h"
#include "cio/diag.h"
#include "cio/errors.h"
#include "cio/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- handles and time ------------------------------------------------------------------------ */

#if defined(CIO_OS_WINDOWS)
typedef void *cio_handle; /**< An OS handle: a HANDLE. */
#else
typedef int cio_handle; /**< An OS handle: a file descriptor (a HANDLE on Windows). */
#endif

/** A file: a plain value around the OS handle (wrap a handle you own with (cio_file){fd}). */
typedef struct cio_file {
    cio_handle handle; /**< the OS handle */
} cio_file;

/** A directory: a plain value around the OS handle; cio_dir_cwd() is the current directory. */
typedef struct cio_dir {
    cio_handle handle; /**< the OS handle */
} cio_dir;

/** A file lock's kind (cio_file_lock, cio_file_try_lock): advisory, whole-file (flock on POSIX;
 * Windows: its first byte, with LockFileEx). */
typedef enum cio_lock {
    CIO_LOCK_NONE = 0, /* no lock: releases the one held */
    CIO_LOCK_SHARED,   /* many holders, none exclusive */
    CIO_LOCK_EXCLUSIVE /* one holder */
} cio_lock;

/** A handle that is no handle (-1; INVALID_HANDLE_VALUE on Windows): initialise a cio_file or
 * cio_dir that holds nothing yet with CIO_FILE_INVALID / CIO_DIR_INVALID rather than zero, which is a
 * valid descriptor (standard input) on POSIX. An operation on it fails with the operation's error for
 * a bad handle (NotOpenForReading, NotOpenForWriting, ...) or records it (close). */
#if defined(CIO_OS_WINDOWS)
#define CIO_HANDLE_INVALID ((cio_handle)(intptr_t)-1)
#else
#define CIO_HANDLE_INVALID ((cio_handle)-1)
#endif
/** A cio_file that holds no file (see CIO_HANDLE_INVALID). */
#define CIO_FILE_INVALID ((cio_file){CIO_HANDLE_INVALID})
/** A cio_dir that holds no directory (see CIO_HANDLE_INVALID). */
#define CIO_DIR_INVALID ((cio_dir){CIO_HANDLE_INVALID})

/** A buffer to read into (vectored I/O). */
typedef struct cio_iovec {
    void *base; /**< the first byte */
    size_t len; /**< its length in bytes */
} cio_iovec;

/** A buffer to write from (vectored I/O). */
typedef struct cio_const_iovec {
    const void *base; /**< the first byte */
    size_t len;       /**< its length in bytes */
} cio_const_iovec;

/** A clock to read (cio_now) or to time out on (cio_timeout). */
typedef enum cio_clock {
    CIO_CLOCK_REAL = 0,    /**< wall clock, nanoseconds since the Unix epoch */
    CIO_CLOCK_AWAKE,       /**< monotonic, stops while suspended (Linux CLOCK_MONOTONIC) */
    CIO_CLOCK_BOOT,        /**< monotonic, counts suspend (Linux CLOCK_BOOTTIME) */
    CIO_CLOCK_CPU_PROCESS, /**< CPU time of the process */
    CIO_CLOCK_CPU_THREAD   /**< CPU time of the calling thread */
} cio_clock;

/** A reading of a cio_clock. */
typedef struct cio_timestamp {
    int64_t ns; /**< nanoseconds (since the Unix epoch for CIO_CLOCK_REAL) */
} cio_timestamp;

/** What a cio_timeout means. */
typedef enum cio_timeout_kind {
    CIO_TIMEOUT_KIND_NONE = 0, /**< no timeout: wait forever */
    CIO_TIMEOUT_KIND_DURATION, /**< ns from now, on `clock` */
    CIO_TIMEOUT_KIND_DEADLINE  /**< until `clock` reads ns */
} cio_timeout_kind;

/** A timeout: none, a duration or a deadline on a clock (build one with cio_timeout_ms & co.). */
typedef struct cio_timeout {
    cio_timeout_kind kind; /**< none, duration or deadline */
    cio_clock clock;       /**< the clock it is measured on */
    int64_t ns;            /**< the duration, or the deadline's clock reading, in nanoseconds */
} cio_timeout;

/** No timeout: wait forever (or until canceled). */
#define CIO_TIMEOUT_NONE ((cio_timeout){CIO_TIMEOUT_KIND_NONE, CIO_CLOCK_AWAKE, 0})

/**
 * A duration on CIO_CLOCK_AWAKE; negative durations are treated as 0 (already expired).
 * @param ms milliseconds from now
 * @return the timeout (never fails).
 * @cancellation no (pure library code)
 */
cio_timeout cio_timeout_ms(int64_t ms);
/**
 * A duration on CIO_CLOCK_AWAKE; negative durations are treated as 0 (already expired).
 * @param ns nanoseconds from now
 * @return the timeout (never fails).
 * @cancellation no (pure library code)
 */
cio_timeout cio_timeout_ns(int64_t ns);
/**
 * A duration on the given clock; negative durations are treated as 0 (already expired).
 * @param clock the clock it runs on
 * @param ns nanoseconds from now
 * @return the timeout (never fails).
 * @cancellation no (pure library code)
 */
cio_timeout cio_timeout_duration(cio_clock clock, int64_t ns);
/**
 * A deadline: the timeout expires when `clock` reads `deadline`.
 * @param clock the clock the deadline is read on
 * @param deadline the clock reading at which it expires
 * @return the timeout (never fails).
 * @cancellation no (pure library code)
 */
cio_timeout cio_timeout_deadline(cio_clock clock, cio_timestamp deadline);

/* ---- tasks ----------------------------------------------------------------------------------- */

/** A task: gets a pointer to its own copy of the context bytes (aligned to CIO_CONTEXT_ALIGN), returns
 * a cio_err, and writes any other result through pointers it finds in its context. */
typedef cio_err (*cio_task_fn)(void *context);

/** The alignment of a task's copy of its context bytes. */
#define CIO_CONTEXT_ALIGN 64

struct cio_any_future; /* the backend's */

/** A task started by cio_async or cio_concurrent; any == NULL: the task already ran (inline) and
 * `result` holds its return value. `gen` is the task's generation: a copy of a future that another
 * copy already awaited no longer matches its task block, and cio_await/cio_cancel abort naming the
 * misuse instead of touching a freed task. */
typedef struct cio_future {
    struct cio_any_future *any; /**< the backend's task, NULL once done (or when it ran inline) */
    cio_err result;             /**< the task's result once `any` is NULL */
    uint32_t gen;               /**< the task's generation when this future was made */
} cio_future;

/** A set of tasks awaited or canceled together; a cancellation boundary (members' results are
 * discarded). All-zero is the empty group: statically initialisable with CIO_GROUP_INIT, and
 * await/cancel of an empty group return at once without calling the backend. */
typedef struct cio_group {
    CIO_ATOMIC(uintptr_t) token; /**< the backend's (0: empty) */
    uintptr_t state;             /**< the backend's */
} cio_group;

/** The empty group. */
#define CIO_GROUP_INIT \
    {                  \
        0, 0           \
    }

/** Whether cancellation points deliver a pending cancel request (cio_swap_cancel_protection). */
typedef enum cio_cancel_protection {
    CIO_CANCEL_UNBLOCKED = 0, /**< cancellation points deliver a pending request */
    CIO_CANCEL_BLOCKED = 1    /**< requests stay pending until unblocked */
} cio_cancel_protection;

/* ---- files and directories (declared in cio/fs.h) --------------------------------------------- */

struct cio_open_file_options;
struct cio_create_file_options;
struct cio_open_dir_options;
struct cio_stat;
struct cio_set_timestamps;
struct cio_memory_map_options;
struct cio_memory_map;
struct cio_dir_reader;
struct cio_dir_entry;

/* ---- networking (declared in cio/net.h) -------------------------------------------------------- */

struct cio_ip_address;
struct cio_unix_address;
struct cio_listen_options;
struct cio_connect_options;
struct cio_bind_options;
struct cio_server;
struct cio_stream;
struct cio_socket;
struct cio_message;

/* ---- processes (declared in cio/process.h) ----------------------------------------------------- */

struct cio_spawn_options;
struct cio_child;
struct cio_term;

/* ---- operations (declared in cio/batch.h) --------------------------------------------------------- */

struct cio_operation;
struct cio_sigset;

/* The slot list itself: one row per slot (cio/slots.h). */
#include "cio/slots.h"

/** The whole vtable, in table order: CIO_VTABLE_SLOTS_TASKS then CIO_VTABLE_SLOTS_SYSTEM.
 * @param X a macro taking (return type, slot name, parenthesised parameter list) */
#define CIO_VTABLE_SLOTS(X) CIO_VTABLE_SLOTS_TASKS(X) CIO_VTABLE_SLOTS_SYSTEM(X)

#define CIO__VTABLE_FIELD(ret, name, params) ret(*name) params;
/** A backend's table: one function pointer per row of CIO_VTABLE_SLOTS, in that order (`ret
 * (*name) params`); slot `name` has the contract of the public wrapper cio_<name>. */
struct cio_vtable {
    CIO_VTABLE_SLOTS(CIO__VTABLE_FIELD)
};

/** An Io: the backend's table and its userdata, passed by value to every function that does I/O. */
typedef struct cio_io {
    void *userdata;                  /**< the backend's instance, the `ud` of every slot */
    const struct cio_vtable *vtable; /**< the backend's table */
} cio_io;

/* ---- the public wrappers ---------------------------------------------------------------------- */

/**
 * Runs fn on a copy of context, possibly inline. Never fails: either fn ran already, inline on the
 * caller (future.any == NULL, result in future.result), or it has a thread or fiber of its own.
 *
 * Inline async and what it means: the Threaded backend runs fn inline once its async limit is
 * reached (and always where it has no threads: WASI), so tasks started with cio_async may run one
 * after the other, in order, on the caller. Code that needs two tasks to make progress together —
 * one blocks until the other acts (a reader and a writer of one pipe, a read raced against a sleep
 * standing for its timeout) — deadlocks there: use cio_concurrent (which says
 * CIO_E_CONCURRENCY_UNAVAILABLE instead), cio_select_async (which starts its members concurrently,
 * cio/sync.h), or the _timeout calls of cio/batch.h for a timeout.
 * @param io            the Io
 * @param fn            the task
 * @param context       copied (context_size bytes, aligned to CIO_CONTEXT_ALIGN) for the task
 * @param context_size  bytes of context
 * @return the future: await or cancel it exactly as if it were running.
 * @cancellation no
 */
cio_future cio_async(cio_io io, cio_task_fn fn, const void *context, size_t context_size);
/**
 * Runs fn concurrently with the caller, never inline.
 * @param io the Io
 * @param fn the task
 * @param context the bytes copied for the task (may be NULL when context_size is 0)
 * @param context_size their length
 * @param[out] out the future; on error an empty future
 * @return #CIO_OK, or an error of ConcurrentError \errset_concurrent
 * @cancellation no
 */
cio_err cio_concurrent(cio_io io, cio_task_fn fn, const void *context, size_t context_size, cio_future *out);
/**
 * Waits for the task, frees it and returns its result. Idempotent: the first call waits and frees,
 * later calls return the cached result. A cancel request on the awaiting task is forwarded to the
 * awaited one. (Evented: an async task that has not started and would run next anyway may run on
 * the awaiting fiber itself, seeing its cancel state.)
 * @param io the Io
 * @param future the task's future
 * @return the task's result (any cio_err the task returned).
 * @cancellation no, but a cancel request on the awaiter is forwarded to the task
 */
cio_err cio_await(cio_io io, cio_future *future);
/**
 * Requests cancellation, then as cio_await. Idempotent.
 * @param io the Io
 * @param future the task's future
 * @return the task's result (CIO_E_CANCELED if it noticed the request).
 * @cancellation no
 */
cio_err cio_cancel(cio_io io, cio_future *future);
/**
 * A pure cancellation point.
 * @param io the Io
 * @return #CIO_OK, or an error of Cancelable \errset_cancelable
 * @cancellation yes
 */
cio_err cio_check_cancel(cio_io io);
/**
 * Re-arms a cancel request the current task has received (its next cancellation point returns
 * CIO_E_CANCELED again).
 * @param io the Io
 * @cancellation no
 */
void cio_recancel(cio_io io);
/**
 * Sets the current task's protection.
 * @param io the Io
 * @param prot CIO_CANCEL_BLOCKED defers delivery of requests until unblocked again
 * @return the previous protection.
 * @cancellation no
 */
cio_cancel_protection cio_swap_cancel_protection(cio_io io, cio_cancel_protection prot);

/**
 * Adds a task to a group (may run it inline, as cio_async). Never fails.
 * @param io the Io
 * @param group the group (CIO_GROUP_INIT to start empty)
 * @param fn the task
 * @param context the bytes copied for the task
 * @param context_size their length
 * @cancellation no
 */
void cio_group_async(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size);
/**
 * Adds a task that runs concurrently with the caller, never inline.
 * @param io the Io
 * @param group the group
 * @param fn the task
 * @param context the bytes copied for the task
 * @param context_size their length
 * @return #CIO_OK, or an error of ConcurrentError \errset_concurrent
 * @cancellation no
 */
cio_err cio_group_concurrent(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size);

/**
 * Waits for every member. If the awaiter is canceled meanwhile, the request goes to every member,
 * the wait still covers all of them, and then CIO_E_CANCELED. Members' results are discarded.
 * (Evented: members not started yet may run on the awaiting fiber, as for await.)
 * @param io the Io
 * @param group the group
 * @return #CIO_OK, or an error of Cancelable \errset_cancelable
 * @cancellation yes
 */
cio_err cio_group_await(cio_io io, cio_group *group);
/**
 * Cancels every member (members added meanwhile start canceled) and waits for all.
 * @param io the Io
 * @param group the group
 * @cancellation no
 */
void cio_group_cancel(cio_io io, cio_group *group);

/**
 * If *ptr == expected, blocks until a wake, the timeout, a cancel, or spuriously.
 * @param io the Io
 * @param ptr the futex word
 * @param expected the value *ptr must have for the call to block
 * @param timeout how long to wait at most (CIO_TIMEOUT_NONE: no limit)
 * @return #CIO_OK (woken or spurious: re-check), or an error of Futex.WaitError \errset_futex_wait
 * @cancellation yes
 */
cio_err cio_futex_wait(cio_io io, const CIO_ATOMIC(uint32_t) * ptr, uint32_t expected, cio_timeout timeout);
/**
 * As cio_futex_wait with no timeout, never a cancellation point.
 * @param io the Io
 * @param ptr the futex word
 * @param expected the value *ptr must have for the call to block
 * @cancellation no
 */
void cio_futex_wait_uncancelable(cio_io io, const CIO_ATOMIC(uint32_t) * ptr, uint32_t expected);
/**
 * Wakes up to max_waiters threads or tasks waiting on ptr.
 * @param io the Io
 * @param ptr the futex word
 * @param max_waiters how many to wake at most
 * @cancellation no
 */
void cio_futex_wake(cio_io io, const CIO_ATOMIC(uint32_t) * ptr, uint32_t max_waiters);

/**
 * Reads a clock; never fails (an unavailable clock reads 0).
 * @param io the Io
 * @param clock which clock
 * @return its reading.
 * @cancellation no
 */
cio_timestamp cio_now(cio_io io, cio_clock clock);
/**
 * The resolution of a clock (Zig's clockResolution).
 * @param io    the Io
 * @param clock the clock
 * @param ns    receives the resolution in nanoseconds (at least 1)
 * @return CIO_OK, or Clock.ResolutionError: ClockUnavailable (the target lacks the clock),
 *         Unexpected. Not a cancellation point.
 * @cancellation no
 */
cio_err cio_clock_resolution(cio_io io, cio_clock clock, int64_t *ns);

/**
 * Sleeps until the timeout (CIO_TIMEOUT_NONE: until canceled).
 * @param io the Io
 * @param timeout how long, or until when
 * @return #CIO_OK, or an error of SleepError \errset_sleep
 * @cancellation yes
 */
cio_err cio_sleep(cio_io io, cio_timeout timeout);
/**
 * Fills buf from a fast CSPRNG seeded from the OS. Never fails.
 * @param io the Io
 * @param buf where the bytes go
 * @param len how many
 * @cancellation no
 */
void cio_random(cio_io io, void *buf, size_t len);
/**
 * Fills buf with fresh OS entropy.
 * @param io the Io
 * @param buf where the bytes go
 * @param len how many
 * @return #CIO_OK, or an error of RandomSecureError \errset_random_secure
 * @cancellation yes
 */
cio_err cio_random_secure(cio_io io, void *buf, size_t len);

/**
 * Destroys the backend instance behind io, whichever it is (cio_threaded_destroy or
 * cio_evented_destroy), so that switching backends changes only the create call. Same contract as
 * the backend's destroy: tasks still running are waited for (a task still blocked after a grace
 * period of 1 s is canceled, on either backend; a debug build reports any that still run after
 * 5 s, with where they were spawned).
 * @param io  a cio_io from cio_threaded_io or cio_evented_io; a zeroed cio_io, cio_failing_io() or an
 *            io of the program's own vtable: nothing happens. io must not be used afterwards.
 * @cancellation no (never fails)
 */
void cio_io_destroy(cio_io io);

/**
 * Zig's Io.failing: every operation fails (files: AccessDenied or Unexpected, concurrency:
 * ConcurrencyUnavailable, async runs inline, futex waits return at once), for tests.
 * @return the failing Io (needs no instance).
 * @cancellation no
 */
cio_io cio_failing_io(void);

#ifdef __cplusplus
}
#endif

/* cio/spawn.h continues this header: the spawn calls with their "file:line" (cio_async_at, ...). */
#include "cio/spawn.h"

#endif /* CIO_IO_H */
