/*
 * ANSI escape codes on Windows: a console takes them while ENABLE_VIRTUAL_TERMINAL_PROCESSING is in
 * its output mode (Windows 10 1511 and later; Wine's console too). supports asks GetConsoleMode; enable
 * sets the flag with SetConsoleMode (through the OS call table) and refuses a handle that is no
 * console (a file, a pipe, a Cygwin/MSYS pty) with NotTerminalDevice. Neither call blocks.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cio/fs.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

#ifndef ENABLE_VIRTUAL_TERMINAL_PROCESSING
#define ENABLE_VIRTUAL_TERMINAL_PROCESSING 0x0004
#endif

bool cio__env_set(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0';
}

/* The console's output mode; false when the handle is no console. */
static bool console_mode(HANDLE h, DWORD *mode)
{
    return GetFileType(h) == FILE_TYPE_CHAR && GetConsoleMode(h, mode) != 0;
}

cio_err cio__os_file_supports_ansi_escape_codes(void *ud, cio_file file, bool *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    DWORD mode = 0;
    *out = console_mode(file.handle, &mode) && (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0;
    return CIO_OK;
}

cio_err cio__os_file_enable_ansi_escape_codes(void *ud, cio_file file)
{
    (void)ud;
    DWORD mode = 0;
    cio_err err = CIO_OK;
    if (!console_mode(file.handle, &mode))
        err = CIO_E_NOT_TERMINAL_DEVICE;
    else if ((mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) == 0 &&
             !CIO__SYS(SetConsoleMode, enable_ansi)(file.handle, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING))
        err = GetLastError() == ERROR_INVALID_PARAMETER ? CIO_E_NOT_TERMINAL_DEVICE : CIO_E_UNEXPECTED;
    return CIO__IN_SET(file_enable_ansi_escape_codes, err);
}
