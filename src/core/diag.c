/*
 * Diagnostics (cio/diag.h): the per-thread record of the OS error behind an Unexpected, the debug
 * lines for invalid arguments and native errors that mean a bug, and the abort for misuse that no
 * return value can report. Each message is one write to stderr of a line built first, made under
 * the process-wide stderr lock (stderr_lock.c, the one cio_lock_stderr takes), so a diagnostic never
 * lands inside lines another task writes while it holds the lock.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cio/diag.h"
#include "diag.h"
#include "stderr_lock.h"

/* The record: per thread, and per task on Evented (sched.c keeps a fiber's across its suspensions and
 * starts each fiber with none; helper.c brings a helper thread's back to the waiting fiber). */
_Thread_local cio_os_error cio__os_last = {CIO_OS_ERROR_NONE, 0, ""};
static _Thread_local bool printed; /* the record's debug line was the last one (bug_note adds none) */

/* Debug builds print the lines below; release builds (NDEBUG) compile them out as dead code. */
#ifdef NDEBUG
enum { DEBUG_LINES = 0 };
#else
enum { DEBUG_LINES = 1 };
#endif

_Atomic(int) cio__diag_quiet;

cio_os_error cio_last_os_error(void)
{
    return cio__os_last;
}

void cio_clear_last_os_error(void)
{
    cio__os_error_clear();
}

/* A small formatter (%s %d %u %lld %p and %%), so that diagnostics need no stdio: the BSD targets
 * are built against a C library surface without it. Always NUL-terminates when cap > 0. */
static size_t put(char *buf, size_t cap, size_t at, const char *s)
{
    while (*s != '\0' && at + 1 < cap)
        buf[at++] = *s++;
    return at;
}

static size_t put_num(char *buf, size_t cap, size_t at, unsigned long long v, bool neg, unsigned base)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0);
    if (neg && at + 1 < cap)
        buf[at++] = '-';
    while (n > 0 && at + 1 < cap)
        buf[at++] = tmp[--n];
    return at;
}

void cio__vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
    size_t at = 0;
    if (cap == 0)
        return;
    for (const char *f = fmt; *f != '\0' && at + 1 < cap; f++) {
        if (*f != '%') {
            buf[at++] = *f;
            continue;
        }
        f++;
        if (*f == 's') {
            const char *s = va_arg(ap, const char *);
            at = put(buf, cap, at, s != NULL ? s : "(null)");
        } else if (*f == 'd') {
            int v = va_arg(ap, int);
            at = put_num(buf, cap, at, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0, 10);
        } else if (*f == 'u') {
            at = put_num(buf, cap, at, va_arg(ap, unsigned), false, 10);
        } else if (f[0] == 'l' && f[1] == 'l' && f[2] == 'd') {
            long long v = va_arg(ap, long long);
            at = put_num(buf, cap, at, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0, 10);
            f += 2;
        } else if (*f == 'p') {
            at = put(buf, cap, at, "0x");
            at = put_num(buf, cap, at, (unsigned long long)(uintptr_t)va_arg(ap, void *), false, 16);
        } else if (*f == '%') {
            buf[at++] = '%';
        } else {
            break;
        }
    }
    buf[at] = '\0';
}

void cio__fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cio__vfmt(buf, cap, fmt, ap);
    va_end(ap);
}

/* One line on stderr in one write, under the stderr lock (cio__stderr_diag_lock: never waits for
 * long, never for a fiber of this thread). A diagnostic, not an operation of the library: written to
 * descriptor 2 directly, outside the OS call table, and its failure ignored. */
static void line(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    cio__vfmt(buf, sizeof buf, fmt, ap);
    va_end(ap);
    bool locked = cio__stderr_diag_lock();
    ssize_t r = write(2, buf, (unsigned)strlen(buf)); /* mingw: unsigned count */
    (void)r;
    if (locked)
        cio__stderr_diag_unlock();
}

static const char *const kind_names[] = {"", "errno", "NTSTATUS", "Winsock error", "Win32 error"};

void cio__os_error_record(int kind, int64_t code, const char *operation)
{
    cio__os_last = (cio_os_error){(cio_os_error_kind)kind, code, operation};
    printed = DEBUG_LINES && !cio__diag_quiet;
    if (printed)
        line("cio: %s: Unexpected, from %s %lld (cio_last_os_error() has it)\n", operation,
             kind_names[kind >= 0 && kind <= 4 ? kind : 0], (long long)code);
}

cio_err cio__invalid_arg(const char *func, const char *what)
{
    if (DEBUG_LINES && !cio__diag_quiet)
        line("cio: %s: invalid argument: %s (returns InvalidArgument)\n", func, what);
    return CIO_E_INVALID_ARGUMENT;
}

cio_err cio__bug_note(const char *func, const char *what)
{
    bool said = printed; /* the map that made this Unexpected printed its line already */
    printed = false;
    if (DEBUG_LINES && !cio__diag_quiet && !said)
        line("cio: %s: %s (returns Unexpected)\n", func, what);
    return CIO_E_UNEXPECTED;
}

cio_err cio__close_result(const char *func, long long handle, cio_err err)
{
    if (DEBUG_LINES && err == CIO_E_NOT_OPEN && !cio__diag_quiet)
        line("cio: %s: handle %lld is not open (closed twice, or never opened; returns NotOpen)\n", func, handle);
    return err;
}

void cio__debug_note(const char *func, const char *what)
{
    if (DEBUG_LINES && !cio__diag_quiet)
        line("cio: %s: %s\n", func, what);
}

void cio__misuse_abort(const char *func, const char *what)
{
    line("cio: %s: %s\n", func, what);
    abort();
}
