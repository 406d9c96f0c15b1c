/*
 * Real paths, rename and rename-without-replace for the Threaded backend on Windows.
 *
 * Invariants:
 * - A handle's real path is GetFinalPathNameByHandleW (normalized, DOS volume name), its "\\?\"
 *   prefix dropped ("\\?\UNC\server\x" becomes "\\server\x"), converted WTF-16 -> WTF-8 into buf
 *   with a NUL; a path that does not fit is NameTooLong (buf then ""). The current directory
 *   (cio_dir_cwd(), no handle) is GetCurrentDirectoryW's answer. The WTF-16 buffer is one heap block
 *   per call (never a worker's small stack).
 * - dir_real_path_file opens the path for FILE_READ_ATTRIBUTES only (symbolic links followed), asks
 *   its handle and closes it on every path (cio__os_file_close).
 * - dir_rename is FileRenameInformationEx with FILE_RENAME_REPLACE_IF_EXISTS |
 *   FILE_RENAME_POSIX_SEMANTICS where NT has it (Windows 10 1607+): a target another handle has open
 *   (sharing delete) is replaced, as rename(2) does, the open handle keeping the old file. Where NT
 *   lacks the class (STATUS_INVALID_INFO_CLASS, STATUS_NOT_IMPLEMENTED: Wine 8) that is remembered
 *   for the process and FileRenameInformation with ReplaceIfExists does it from then on (a target
 *   held open is then AccessDenied); where the file system lacks it (STATUS_INVALID_PARAMETER: FAT)
 *   or refuses a flag (STATUS_NOT_SUPPORTED), that call falls back alone. Either way one rename.
 * - dir_rename_preserve is FileRenameInformation with ReplaceIfExists off: NT refuses an existing
 *   target itself (OBJECT_NAME_COLLISION: PathAlreadyExists), atomically (POSIX semantics only
 *   change how a target is replaced, so the classic class serves).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/ntapi.h"
#include "fs_windows.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "path_windows.h"
#include "os.h"

#define WIDE_MAX CIO__WIN_NT_PATH_MAX

/* WTF-16 `w` (n units, "\\?\" prefix and all) into buf as WTF-8 with a NUL. */
static cio_err narrow_path(uint16_t *w, size_t n, char *buf, size_t len, size_t *out_len)
{
    static const uint16_t verbatim[] = {'\\', '\\', '?', '\\'};
    static const uint16_t unc[] = {'U', 'N', 'C', '\\'};
    if (n >= 4 && memcmp(w, verbatim, sizeof verbatim) == 0) {
        if (n >= 8 && memcmp(w + 4, unc, sizeof unc) == 0) {
            w += 6; /* "\\?\UNC\" -> "\\" */
            n -= 6;
            w[0] = '\\';
            w[1] = '\\';
        } else {
            w += 4;
            n -= 4;
        }
    }
    size_t got = 0;
    cio_err e = cio__win_wtf16_to_wtf8(w, n, buf, len - 1, &got);
    if (e != CIO_OK) {
        buf[0] = '\0';
        return e == CIO_E_NAME_TOO_LONG ? e : CIO_E_UNEXPECTED;
    }
    buf[got] = '\0';
    *out_len = got;
    return CIO_OK;
}

/* The real path of handle h (NULL: the current directory, when `cwd` allows it; InvalidArgument
 * otherwise) into buf, after the checks of buf. */
static cio_err real_path_of(void *h, bool cwd, char *buf, size_t len, size_t *out_len)
{
    cio_err e = cio__os_path_out_init(buf, len, out_len);
    if (e != CIO_OK || (h == NULL && !cwd))
        return CIO_E_INVALID_ARGUMENT;
    uint16_t *w = (uint16_t *)CIO__SYS(malloc, win_real_path)(WIDE_MAX * sizeof(uint16_t));
    if (w == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    DWORD n;
    if (h == NULL)
        n = CIO__SYS(GetCurrentDirectoryW, real_path_cwd)(WIDE_MAX, (WCHAR *)w);
    else
        n = CIO__SYS(GetFinalPathNameByHandleW, real_path)(h, (WCHAR *)w, WIDE_MAX, 0 /* normalized, DOS */);
    if (n == 0 || n >= WIDE_MAX) {
        DWORD code = GetLastError();
        e = code == ERROR_NOT_ENOUGH_MEMORY || code == ERROR_OUTOFMEMORY   ? CIO_E_SYSTEM_RESOURCES
            : code == ERROR_PATH_NOT_FOUND || code == ERROR_FILE_NOT_FOUND ? CIO_E_FILE_NOT_FOUND
            : code == ERROR_ACCESS_DENIED                                  ? CIO_E_ACCESS_DENIED
            : n >= WIDE_MAX                                                ? CIO_E_NAME_TOO_LONG
                                                                           : CIO_E_UNEXPECTED;
    } else {
        e = narrow_path(w, n, buf, len, out_len);
    }
    free(w);
    return e;
}

cio_err cio__os_file_real_path(void *ud, cio_file file, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    return CIO__IN_SET(file_real_path, real_path_of(file.handle, false, buf, len, out_len));
}

cio_err cio__os_dir_real_path(void *ud, cio_dir dir, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    return CIO__IN_SET(file_real_path, real_path_of(dir.handle, true, buf, len, out_len));
}

cio_err cio__os_dir_real_path_file(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    cio_err e = cio__os_path_out_init(buf, len, out_len);
    if (e != CIO_OK || path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    void *h = NULL;
    e = cio__win_open_path(dir, path, CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES,
                           CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT | CIO_NT_FILE_OPEN_FOR_BACKUP_INTENT,
                           cio__ntstatus_nt_create_file, &h);
    if (e == CIO_OK) {
        e = real_path_of(h, false, buf, len, out_len);
        cio_file f = {h};
        (void)cio__os_file_close(NULL, f);
    }
    return CIO__IN_SET(dir_real_path_file, e);
}

/* Whether NtSetInformationFile knows FileRenameInformationEx: 0 not asked yet, 1 yes, -1 no. */
static atomic_int rename_ex_known;

int cio__win_rename_ex_known(bool forget)
{
    if (forget)
        atomic_store(&rename_ex_known, 0);
    return atomic_load(&rename_ex_known);
}

void cio__win_rename_ex_assume(int known)
{
    atomic_store(&rename_ex_known, known);
}

/* dir_rename with POSIX semantics, in the cancellation bracket: true with *e its outcome, false when
 * the classic class must do it (the OS or the file system lacks this one; nothing was renamed). */
static bool rename_posix(void *h, cio_nt_file_rename_information *info, uint32_t size, cio_err *e)
{
    if (atomic_load_explicit(&rename_ex_known, memory_order_relaxed) < 0)
        return false;
    *e = cio__t_syscall_begin();
    if (*e != CIO_OK)
        return true;
    info->Flags = CIO_NT_FILE_RENAME_REPLACE_IF_EXISTS | CIO_NT_FILE_RENAME_POSIX_SEMANTICS;
    for (;;) {
        cio_nt_io_status_block iosb;
        int32_t st = CIO__SYS(NtSetInformationFile, rename_ex)(h, &iosb, info, size, CIO_NT_FileRenameInformationEx);
        bool no_class = st == CIO_NTSTATUS_INVALID_INFO_CLASS || st == CIO_NTSTATUS_NOT_IMPLEMENTED;
        if (no_class || st == CIO_NTSTATUS_INVALID_PARAMETER || st == CIO_NTSTATUS_NOT_SUPPORTED) {
            cio__t_syscall_end();
            if (no_class)
                atomic_store_explicit(&rename_ex_known, -1, memory_order_relaxed);
            return false;
        }
        if (st >= 0)
            atomic_store_explicit(&rename_ex_known, 1, memory_order_relaxed);
        if (!cio__win_nt_again(st, cio__ntstatus_nt_rename, e))
            return true;
    }
}

cio_err cio__os_dir_rename(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    (void)ud;
    void *h = NULL;
    cio_err e = cio__win_narrow(cio__win_rename_source(old_dir, old_path, new_path, &h),
                                cio_errset_dir_rename_contains);
    if (e != CIO_OK)
        return CIO__IN_SET(dir_rename, e);
    struct cio__win_path *p;
    e = cio__win_path_convert(new_dir, new_path, &p);
    if (e == CIO_OK) {
        cio_nt_unicode_string *name = cio__win_path_name(p);
        size_t size = cio__win_rename_info_size(name->Length); /* a one-letter name: the struct's size */
        void *mem = CIO__SYS(calloc, win_rename_info)(1, size + 2);
        cio_nt_file_rename_information *info = (cio_nt_file_rename_information *)mem;
        if (info == NULL) {
            e = CIO_E_SYSTEM_RESOURCES;
        } else {
            info->RootDirectory = cio__win_path_root(p);
            info->FileNameLength = name->Length;
            memcpy(info->FileName, name->Buffer, name->Length);
            if (!rename_posix(h, info, (uint32_t)size, &e)) {
                info->Flags = 1; /* ReplaceIfExists */
                e = cio__win_info(true, h, info, (uint32_t)size, CIO_NT_FileRenameInformation, cio__ntstatus_nt_rename);
            }
            e = cio__win_narrow(e, cio_errset_dir_rename_contains);
            free(info);
        }
        cio__win_path_free(p);
    }
    CIO__SYS(NtClose, rename)(h);
    return CIO__IN_SET(dir_rename, e);
}

cio_err cio__os_dir_rename_preserve(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir,
                                    const char *new_path)
{
    (void)ud;
    void *h = NULL;
    cio_err e = cio__win_rename_source(old_dir, old_path, new_path, &h);
    e = cio__win_narrow(e == CIO_E_SHARING_VIOLATION ? CIO_E_FILE_BUSY : e, cio_errset_dir_rename_preserve_contains);
    if (e != CIO_OK)
        return CIO__IN_SET(dir_rename_preserve, e);
    struct cio__win_path *p;
    e = cio__win_path_convert(new_dir, new_path, &p);
    if (e == CIO_OK) {
        cio_nt_unicode_string *name = cio__win_path_name(p);
        size_t size = cio__win_rename_info_size(name->Length);
        cio_nt_file_rename_information *info = (cio_nt_file_rename_information *)
            CIO__SYS(calloc, win_rename_preserve_info)(1, size + 2);
        if (info == NULL) {
            e = CIO_E_SYSTEM_RESOURCES;
        } else {
            info->Flags = 0; /* ReplaceIfExists off: NT refuses an existing target */
            info->RootDirectory = cio__win_path_root(p);
            info->FileNameLength = name->Length;
            memcpy(info->FileName, name->Buffer, name->Length);
            e = cio__win_info(true, h, info, (uint32_t)size, CIO_NT_FileRenameInformation, cio__ntstatus_nt_rename);
            free(info);
        }
        cio__win_path_free(p);
    }
    cio_file f = {h};
    (void)cio__os_file_close(NULL, f);
    return CIO__IN_SET(dir_rename_preserve, cio__win_narrow(e, cio_errset_dir_rename_preserve_contains));
}
