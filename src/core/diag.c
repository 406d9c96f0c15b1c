/*
 * Diagnostics (cio/diag.h): the per-thread record of the OS error behind an Unexpected, the debug
 * lines for invalid arguments and native errors that mean a bug, and the abort for misuse that no
 * return value can report. Each message is one write to stderr (fputs of a line built first), so
 * lines of different threads do not interleave.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cio/diag.h"
#include "diag.h"

static _Thread_local cio_os_error last = {CIO_OS_ERROR_NONE, 0, ""};
#ifndef NDEBUG
static _Thread_local bool printed; /* the record's debug line was the last one (bug_note adds none) */
#endif

_Atomic(int) cio__diag_quiet;

cio_os_error cio_last_os_error(void)
{
    return last;
}

void cio_clear_last_os_error(void)
{
    last.kind = CIO_OS_ERROR_NONE;
    last.code = 0;
    last.operation = "";
}

static void line(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fputs(buf, stderr);
}

#ifndef NDEBUG
static const char *const kind_names[] = {"", "errno", "NTSTATUS", "Winsock error"};
#endif

void cio__os_error_record(int kind, int64_t code, const char *operation)
{
    last.kind = (cio_os_error_kind)kind;
    last.code = code;
    last.operation = operation;
#ifndef NDEBUG
    printed = !cio__diag_quiet;
    if (!cio__diag_quiet)
        line("cio: %s: Unexpected, from %s %lld (cio_last_os_error() has it)\n", operation,
             kind_names[kind & 3], (long long)code);
#endif
}

cio_err cio__invalid_arg(const char *func, const char *what)
{
#ifndef NDEBUG
    if (!cio__diag_quiet)
        line("cio: %s: invalid argument: %s (returns InvalidArgument)\n", func, what);
#else
    (void)func;
    (void)what;
#endif
    return CIO_E_INVALID_ARGUMENT;
}

cio_err cio__bug_note(const char *func, const char *what)
{
#ifndef NDEBUG
    bool said = printed; /* the map that made this Unexpected printed its line already */
    printed = false;
    if (!cio__diag_quiet && !said)
        line("cio: %s: %s (returns Unexpected)\n", func, what);
#else
    (void)func;
    (void)what;
#endif
    return CIO_E_UNEXPECTED;
}

void cio__close_note_(const char *func, const char *fmt, long long handle)
{
#ifndef NDEBUG
    printed = false;
    if (!cio__diag_quiet) {
        char msg[256];
        snprintf(msg, sizeof msg, fmt, func, (int)handle);
        line("cio: %s\n", msg);
    }
#else
    (void)func;
    (void)fmt;
    (void)handle;
#endif
}

void cio__debug_note(const char *func, const char *what)
{
#ifndef NDEBUG
    if (!cio__diag_quiet)
        line("cio: %s: %s\n", func, what);
#else
    (void)func;
    (void)what;
#endif
}

void cio__misuse_abort(const char *func, const char *what)
{
    line("cio: %s: %s\n", func, what);
    abort();
}
