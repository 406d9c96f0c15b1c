/*
 * The current working directory on Windows (Zig's processCurrentPath, processSetCurrentPath,
 * processSetCurrentDir): GetCurrentDirectoryW / SetCurrentDirectoryW, paths converted between WTF-8
 * and WTF-16 by path_windows.c; a directory handle becomes a path with GetFinalPathNameByHandleW
 * (cio__win_dir_wpath, which spawn also uses for cwd_dir and spawn_path). Invariants: the path
 * written ends in a NUL (too small a buffer is NameTooLong, never a truncated path); the WTF-16
 * buffers are the heap's, freed on every path.
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
#include "process_windows.h"

cio_err cio__win_dir_wpath(void *h, WCHAR **out)
{
    *out = NULL;
    WCHAR *w = (WCHAR *)CIO__SYS(malloc, dir_wpath)(CIO__WIN_NT_PATH_MAX * sizeof(WCHAR));
    if (w == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    DWORD n = CIO__SYS(GetFinalPathNameByHandleW, dir_wpath)(h, w, CIO__WIN_NT_PATH_MAX, 0 /* normalized, DOS */);
    if (n == 0 || n >= CIO__WIN_NT_PATH_MAX) {
        DWORD code = GetLastError();
        free(w);
        if (n != 0)
            return CIO_E_NAME_TOO_LONG;
        return code == ERROR_NOT_ENOUGH_MEMORY || code == ERROR_OUTOFMEMORY   ? CIO_E_SYSTEM_RESOURCES
               : code == ERROR_ACCESS_DENIED                                  ? CIO_E_ACCESS_DENIED
               : code == ERROR_PATH_NOT_FOUND || code == ERROR_FILE_NOT_FOUND ? CIO_E_FILE_NOT_FOUND
                                                                              : CIO_E_UNEXPECTED;
    }
    w[n] = 0;
    size_t skip = 0;
    if (n >= 8 && memcmp(w, L"\\\\?\\UNC\\", 8 * sizeof(WCHAR)) == 0) {
        skip = 6; /* \\?\UNC\server\share -> \\server\share: keep two backslashes */
        w[6] = L'\\';
    } else if (n >= 4 && memcmp(w, L"\\\\?\\", 4 * sizeof(WCHAR)) == 0) {
        skip = 4; /* \\?\C:\dir -> C:\dir */
    }
    memmove(w, w + skip, (n - skip + 1) * sizeof(WCHAR));
    *out = w;
    return CIO_OK;
}

/* SetCurrentDirectoryW's failure (GetLastError) as a member of Process.SetCurrentDirError. */
static cio_err set_dir_error(DWORD code)
{
    switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE: return CIO_E_FILE_NOT_FOUND;
    case ERROR_DIRECTORY: return CIO_E_NOT_DIR;
    case ERROR_ACCESS_DENIED: return CIO_E_ACCESS_DENIED;
    case ERROR_FILENAME_EXCED_RANGE: return CIO_E_NAME_TOO_LONG;
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME: return CIO_E_BAD_PATH_NAME;
    default: return cio__unexpected_os(CIO_OS_ERROR_WIN32, (int64_t)code, "process_set_current_dir");
    }
}

cio_err cio__os_process_current_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    cio_err err = cio__os_cwd_begin(buf, out_len);
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
    cio_err err = cio__os_cwd_set_begin(path, true);
    if (err != CIO_OK)
        return CIO__IN_SET(process_set_current_path, err);
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
    if (!CIO__SYS(SetCurrentDirectoryW, set_current_path)(w))
        err = set_dir_error(GetLastError());
    free(w);
    return CIO__IN_SET(process_set_current_path, err);
}

cio_err cio__os_process_set_current_dir(void *ud, cio_dir dir)
{
    (void)ud;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK || dir.handle == NULL) /* NULL: cio_dir_cwd(), already the current directory */
        return err;
    WCHAR *w = NULL;
    err = cio__win_dir_wpath(dir.handle, &w);
    if (err == CIO_E_SYSTEM_RESOURCES)
        err = CIO_E_UNEXPECTED; /* Process.SetCurrentDirError has no SystemResources */
    if (err == CIO_OK && !CIO__SYS(SetCurrentDirectoryW, set_current_dir)(w))
        err = set_dir_error(GetLastError());
    free(w);
    return CIO__IN_SET(process_set_current_dir, err);
}
