/*
 * The running program's executable on Windows: its path and an open handle, both from the PEB's
 * ProcessParameters->ImagePathName (a DOS path such as C:\dir\prog.exe).
 *
 * Invariants:
 * - The path slot converts ImagePathName from WTF-16 to WTF-8 and adds a NUL; NameTooLong if buf
 *   cannot hold both. Nothing is cached: the PEB is read each time (it is never freed).
 * - The open slot converts ImagePathName to a prefixed NT path ("\??\C:\dir\prog.exe", through
 *   path_windows.c, resolving against the current directory only if the image path were
 *   relative) and opens it with no root directory handle: Zig's openSelfExe fix (seed 001), which
 *   the old code got wrong by passing the DOS path relative to the current directory's handle.
 * - The PEB layout used (ImagePathName at ProcessParameters + 0x60, ProcessParameters at PEB +
 *   0x20) is declared in spec/ntapi.yaml and asserted there.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "cio/ntapi.h"
#include "fs_windows.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "path_windows.h"
#include "os.h"

static const cio_nt_unicode_string *image_path(void)
{
    cio_nt_peb_prefix *peb = RtlGetCurrentPeb();
    if (peb == NULL || peb->ProcessParameters == NULL)
        return NULL;
    return &peb->ProcessParameters->ImagePathName;
}

cio_err cio__os_process_executable_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (out_len != NULL)
        *out_len = 0;
    const cio_nt_unicode_string *img = image_path();
    if (img == NULL || img->Buffer == NULL || img->Length == 0)
        return CIO__IN_SET(process_executable_path, CIO_E_FILE_NOT_FOUND);
    if (len < 2)
        return CIO__IN_SET(process_executable_path, CIO_E_NAME_TOO_LONG);
    size_t n = 0;
    cio_err e = cio__win_wtf16_to_wtf8(img->Buffer, img->Length / 2u, buf, len - 1, &n);
    if (e != CIO_OK)
        return CIO__IN_SET(process_executable_path, CIO_E_NAME_TOO_LONG);
    buf[n] = '\0';
    if (out_len != NULL)
        *out_len = n;
    return CIO_OK;
}

typedef struct exe_path {
    uint16_t cwd[CIO__WIN_NT_PATH_MAX];
    uint16_t nt[CIO__WIN_NT_PATH_MAX];
} exe_path;

cio_err cio__os_process_executable_open(void *ud, const cio_open_file_options *options, cio_file *out)
{
    (void)ud;
    cio_open_file_options o;
    if (!cio__win_open_args(options, out, &o))
        return CIO_E_INVALID_ARGUMENT;
    const cio_nt_unicode_string *img = image_path();
    if (img == NULL || img->Buffer == NULL || img->Length == 0)
        return CIO__IN_SET(process_executable_open, CIO_E_FILE_NOT_FOUND);
    exe_path *p = (exe_path *)CIO__SYS(malloc, exe_open)(sizeof *p);
    if (p == NULL)
        return CIO__IN_SET(process_executable_open, CIO_E_SYSTEM_RESOURCES);
    DWORD cwd_len = CIO__SYS(GetCurrentDirectoryW, exe_open)(CIO__WIN_NT_PATH_MAX, (WCHAR *)p->cwd);
    if (cwd_len >= CIO__WIN_NT_PATH_MAX)
        cwd_len = 0;
    cio__win_nt_path_options po = {cwd_len ? p->cwd : NULL, cwd_len, false};
    size_t n = 0;
    bool absolute = false;
    cio_err e = cio__win_to_nt_path(img->Buffer, img->Length / 2u, &po, p->nt, CIO__WIN_NT_PATH_MAX, &n, &absolute);
    if (e == CIO_OK && (!absolute || n * 2 > 0xFFFEu))
        e = CIO_E_BAD_PATH_NAME;
    if (e == CIO_OK) {
        cio_nt_unicode_string name = {(uint16_t)(n * 2), (uint16_t)(n * 2), p->nt};
        void *h = NULL;
        e = cio__win_open_file(NULL, &name, &o, &h);
        if (e == CIO_OK)
            out->handle = h;
    }
    free(p);
    return CIO__IN_SET(process_executable_open, e);
}
