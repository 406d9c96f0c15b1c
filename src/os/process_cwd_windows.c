/*
 * The current working directory on Windows (Zig's processCurrentPath, processSetCurrentPath):
 * GetCurrentDirectoryW / SetCurrentDirectoryW, paths converted between WTF-8 and WTF-16 by
 * path_windows.c. Invariants: the path written ends in a NUL (too small a buffer is NameTooLong,
 * never a truncated path); the WTF-16 buffers are the heap's, freed on every path.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/process.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "path_windows.h"
#include "os.h"

cio_err cio__os_process_current_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (out_len != NULL)
        *out_len = 0;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    WCHAR *w = (WCHAR *)CIO__SYS(malloc, current_path)(CIO__WIN_NT_PATH_MAX * sizeof(WCHAR));
    if (w == NULL)
        return CIO__IN_SET(process_current_path, CIO_E_UNEXPECTED);
    DWORD n = CIO__SYS(GetCurrentDirectoryW, current_path)(CIO__WIN_NT_PATH_MAX, w);
    size_t got = 0;
    if (n == 0 || n >= CIO__WIN_NT_PATH_MAX)
        err = n == 0 ? CIO_E_UNEXPECTED : CIO_E_NAME_TOO_LONG;
    else if (len < 1 || cio__win_wtf16_to_wtf8((const uint16_t *)w, n, buf, len - 1, &got) != CIO_OK)
        err = CIO_E_NAME_TOO_LONG;
    free(w);
    if (err != CIO_OK)
        return CIO__IN_SET(process_current_path, err);
    buf[got] = '\0';
    if (out_len != NULL)
        *out_len = got;
    return CIO_OK;
}

cio_err cio__os_process_set_current_path(void *ud, const char *path)
{
    (void)ud;
    if (path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (path[0] == '\0')
        return CIO__IN_SET(process_set_current_path, CIO_E_FILE_NOT_FOUND);
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    size_t len = strlen(path);
    WCHAR *w = (WCHAR *)CIO__SYS(malloc, set_current_path)((len + 1) * sizeof(WCHAR));
    if (w == NULL)
        return CIO__IN_SET(process_set_current_path, CIO_E_SYSTEM_RESOURCES);
    size_t n = 0;
    if (cio__win_utf8_to_wtf16(path, len, (uint16_t *)w, len, &n) != CIO_OK) {
        free(w);
        return CIO__IN_SET(process_set_current_path, CIO_E_INVALID_WTF8);
    }
    w[n] = 0;
    if (!CIO__SYS(SetCurrentDirectoryW, set_current_path)(w)) {
        switch (GetLastError()) {
        case ERROR_FILE_NOT_FOUND:
        case ERROR_PATH_NOT_FOUND:
        case ERROR_INVALID_DRIVE: err = CIO_E_FILE_NOT_FOUND; break;
        case ERROR_DIRECTORY: err = CIO_E_NOT_DIR; break;
        case ERROR_ACCESS_DENIED: err = CIO_E_ACCESS_DENIED; break;
        case ERROR_FILENAME_EXCED_RANGE: err = CIO_E_NAME_TOO_LONG; break;
        case ERROR_INVALID_NAME:
        case ERROR_BAD_PATHNAME: err = CIO_E_BAD_PATH_NAME; break;
        default: err = CIO_E_UNEXPECTED; break;
        }
    }
    free(w);
    return CIO__IN_SET(process_set_current_path, err);
}
