/*
 * cio/diag.h — diagnostics: the OS error behind an Unexpected, and the rule for misuse.
 *
 * The rule (every build type). A NULL or otherwise invalid argument to a function that returns
 * cio_err makes it return CIO_E_INVALID_ARGUMENT (or the error its documentation names) without
 * touching anything; a debug build (no NDEBUG) also prints one line on stderr naming the function
 * and the argument. Nothing aborts for such an argument. The few misuses that cannot be reported
 * through a return value abort the process with a one-line message on stderr naming the misuse:
 *   - cio_await / cio_cancel / cio_group_cancel with a NULL future or group;
 *   - cio_await / cio_cancel of a future through a stale copy (another copy of the same cio_future
 *     was awaited or canceled already: "future awaited through a stale copy");
 *   - any function called through a zeroed cio_io (no backend);
 *   - a task that runs off its stack (POSIX): "stack overflow in a cio task (stack N KiB; ...
 *     spawned at file:line, ...)" from a SIGSEGV handler on an alternate signal stack; faults
 *     that are not a task's overflow go on to the handler that was there before (the default:
 *     the usual crash).
 *
 * The OS error. When an operation returns CIO_E_UNEXPECTED because of a native error it has no
 * better name for (an errno, NTSTATUS or Winsock code its map in spec/errmaps.yaml sends to
 * Unexpected), that code is recorded for the calling task and cio_last_os_error() returns it,
 * with the name of the operation's map. A debug build also prints it on stderr. The record
 * belongs to the task that made the call, on every backend: a task spawned on a Threaded worker
 * or as an Evented fiber starts with none; an Evented fiber keeps its own while it is suspended
 * (other fibers of its loop thread keep theirs); a call that ran on the Evented helper pool (a
 * blocking call without an async form) records it for the fiber that waited for it; a task run
 * inline on its awaiter (cio_async at its limit, a group member run by the awaiting task) shares
 * the awaiter's record. Outside any task it is the calling thread's.
 */
#ifndef CIO_DIAG_H
#define CIO_DIAG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cio_os_error_kind {
    CIO_OS_ERROR_NONE = 0, /* nothing recorded for this task (or cleared) */
    CIO_OS_ERROR_ERRNO,    /* an errno value of the target */
    CIO_OS_ERROR_NTSTATUS, /* a Windows NTSTATUS */
    CIO_OS_ERROR_WSA,      /* a Winsock error */
    CIO_OS_ERROR_WIN32     /* a Win32 error code (GetLastError) */
} cio_os_error_kind;

/** The native error behind the last Unexpected of this task (cio_last_os_error). */
typedef struct cio_os_error {
    cio_os_error_kind kind; /**< what kind of code */
    int64_t code;           /**< the native value (an NTSTATUS as its unsigned 32 bits) */
    const char *operation;  /**< the operation's error map (spec/errmaps.yaml), e.g. "write"; "" if none */
} cio_os_error;

/**
 * The native error behind the calling task's most recent CIO_E_UNEXPECTED (outside a task: the
 * calling thread's).
 * @return the error, or kind CIO_OS_ERROR_NONE when none was recorded since the task (or thread)
 *         started or since cio_clear_last_os_error. Never fails; not a cancellation point.
 * @cancellation no
 */
cio_os_error cio_last_os_error(void);

/** Forgets the calling task's (or thread's) recorded OS error. Never fails; not a cancellation point.
 * @cancellation no
 */
void cio_clear_last_os_error(void);

#ifdef __cplusplus
}
#endif

#endif /* CIO_DIAG_H */
