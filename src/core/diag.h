/*
 * The library's side of cio/diag.h (diag.c): recording the OS error, the debug lines, the misuse
 * abort. Internal (cio__).
 */
#ifndef CIO_CORE_DIAG_H
#define CIO_CORE_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/diag.h"
#include "cio/errors.h"

/* snprintf without stdio: %s %d %u %lld %p %% only (diag.c). */
void cio__fmt(char *buf, size_t cap, const char *fmt, ...);
void cio__vfmt(char *buf, size_t cap, const char *fmt, va_list ap);

/* Non-zero: no debug lines (tests that drive every native code through the maps). */
extern _Atomic(int) cio__diag_quiet;

/* The calling thread's record (cio_last_os_error). The Evented backend moves it with its tasks: a
 * fiber saves it when it suspends and puts it back when it resumes, starts with none, and a helper
 * thread's record is copied to the fiber that waited for the call. */
extern _Thread_local cio_os_error cio__os_last;
static inline void cio__os_error_clear(void)
{
    cio__os_last = (cio_os_error){CIO_OS_ERROR_NONE, 0, ""};
}

/* Records the calling thread's OS error (kind: a cio_os_error_kind); debug builds print it. */
void cio__os_error_record(int kind, int64_t code, const char *operation);
/* A native code no map names: records it (kind, code, operation) and returns CIO_E_UNEXPECTED. */
static inline cio_err cio__unexpected_os(int kind, int64_t code, const char *operation)
{
    cio__os_error_record(kind, code, operation);
    return CIO_E_UNEXPECTED;
}
/* Debug builds print "func: invalid argument: what"; returns CIO_E_INVALID_ARGUMENT. */
cio_err cio__invalid_arg(const char *func, const char *what);
/* Debug builds print "func: what"; returns CIO_E_UNEXPECTED. */
cio_err cio__bug_note(const char *func, const char *what);
/* The result of a public close (func: its name): for NotOpen (a handle closed twice or never opened:
 * EBADF, STATUS_INVALID_HANDLE, WSAENOTSOCK) debug builds print one line naming func and the handle.
 * Returns err. */
cio_err cio__close_result(const char *func, long long handle, cio_err err);
/* Debug builds print "cio: func: what" (a diagnostic that changes nothing). */
void cio__debug_note(const char *func, const char *what);
/* Prints "cio: func: what" on stderr and aborts. */
_Noreturn void cio__misuse_abort(const char *func, const char *what);

#endif
