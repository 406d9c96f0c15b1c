/*
 * Links and metadata for the Threaded backend on Windows, over the NT calls fs_windows.c makes
 * (cio__win_open_path, cio__win_info: NtCreateFile, NtQueryInformationFile, NtSetInformationFile at
 * their existing sites, so the Windows fault suite's cases cover them).
 *
 * Invariants:
 * - Permission bits: Windows keeps one of them, the read-only attribute. Bits with no write bit
 *   (mode & 0222 == 0) set it; any write bit clears it; stat reports it back as the missing write
 *   bits (fs_windows.c). Other attributes are kept.
 * - Owners: NT files have security descriptors, not uids and gids: OperationUnsupported
 *   (fs_owner_none.c).
 * - Hard links: FileLinkInformation (FILE_RENAME_INFORMATION's layout, ReplaceIfExists off) on a
 *   handle to the old file, opened by path (FILE_OPEN_REPARSE_POINT with CIO_NO_FOLLOW) or the open
 *   file itself; the new name is converted like every path (root = new_dir's handle or absolute).
 * - Symbolic links: made as NT makes them (what CreateSymbolicLinkW does inside, and Zig): the link
 *   created empty (NtCreateFile FILE_CREATE, FILE_OPEN_REPARSE_POINT, a directory for
 *   CIO_SYM_LINK_DIRECTORY), then FSCTL_SET_REPARSE_POINT with IO_REPARSE_TAG_SYMLINK data; if that
 *   fails the empty entry is deleted (disposition) before the handle closes, so no half-made link
 *   stays. CreateSymbolicLinkW itself is not called: it answers through GetLastError, which has no
 *   per-operation map, and Wine 8's is a stub that reports success and makes nothing (measured).
 *   Wine 8 answers FSCTL_SET_REPARSE_POINT with STATUS_NOT_SUPPORTED: OperationUnsupported.
 *   Without SeCreateSymbolicLinkPrivilege NT answers PRIVILEGE_NOT_HELD: PermissionDenied.
 * - dir_read_link: FSCTL_GET_REPARSE_POINT into a buffer of the maximum reparse size; a symbolic
 *   link or a mount point gives its substitute name (an absolute one without "\??\"), another tag
 *   UnsupportedReparsePointType, no reparse point (NOT_A_REPARSE_POINT; Wine 8 for every file) NotLink.
 * - Every by-path operation opens with the rights it needs and closes its handle on every path
 *   (cio__os_file_close: the NtClose@file_close site); errors of the open are narrowed to the slot's
 *   set (cio__win_narrow).
 * - file_is_tty: a character device that answers GetConsoleMode is a console; neither call can
 *   block (GetFileType and GetConsoleMode are listed as excluded in spec/oscalls.yaml).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
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
#include "os.h"
#include "path_windows.h"

static void close_handle(void *h)
{
    cio_file f = {h};
    (void)cio__os_file_close(NULL, f);
}

cio_err cio__os_dir_stat(void *ud, cio_dir dir, cio_stat *out)
{
    if (out == NULL || dir.handle == NULL) /* cio_dir_cwd() is no handle here */
        return CIO_E_INVALID_ARGUMENT;
    cio_file f = {dir.handle};
    return CIO__IN_SET(file_stat, cio__os_file_stat(ud, f, out));
}

/* ---- permission bits: the read-only attribute ----------------------------------------------------- */

static cio_err set_read_only(void *h, uint32_t permissions)
{
    cio_nt_file_basic_information basic;
    cio_err e = cio__win_info(false, h, &basic, sizeof basic, CIO_NT_FileBasicInformation,
                              cio__ntstatus_nt_query_information_file);
    if (e != CIO_OK)
        return cio__win_narrow(e, cio_errset_file_set_permissions_contains);
    uint32_t attrs = basic.FileAttributes;
    if ((permissions & 0222u) == 0)
        attrs |= CIO_NT_FILE_ATTRIBUTE_READONLY;
    else
        attrs &= ~(uint32_t)CIO_NT_FILE_ATTRIBUTE_READONLY;
    if (attrs == basic.FileAttributes)
        return CIO_OK;
    memset(&basic, 0, sizeof basic); /* zero times: unchanged */
    basic.FileAttributes = attrs != 0 ? attrs : CIO_NT_FILE_ATTRIBUTE_NORMAL;
    return cio__win_narrow(cio__win_info(true, h, &basic, sizeof basic, CIO_NT_FileBasicInformation,
                                         cio__ntstatus_nt_set_basic_information),
                           cio_errset_file_set_permissions_contains);
}

cio_err cio__os_file_set_permissions(void *ud, cio_file file, uint32_t permissions)
{
    (void)ud;
    if (permissions > 07777u)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_set_permissions, set_read_only(file.handle, permissions));
}

cio_err cio__os_dir_set_permissions(void *ud, cio_dir dir, uint32_t permissions)
{
    (void)ud;
    if (permissions > 07777u || dir.handle == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_set_permissions, set_read_only(dir.handle, permissions));
}

static uint32_t open_options(unsigned flags)
{
    uint32_t o = CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT | CIO_NT_FILE_OPEN_FOR_BACKUP_INTENT;
    return (flags & CIO_NO_FOLLOW) ? o | CIO_NT_FILE_OPEN_REPARSE_POINT : o;
}

cio_err cio__os_dir_set_file_permissions(void *ud, cio_dir dir, const char *path, uint32_t permissions, unsigned flags)
{
    (void)ud;
    if (path == NULL || permissions > 07777u || (flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    void *h = NULL;
    cio_err e = cio__win_open_path(dir, path,
                                   CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES | CIO_NT_FILE_WRITE_ATTRIBUTES,
                                   open_options(flags), cio__ntstatus_nt_create_file, &h);
    if (e == CIO_OK) {
        e = set_read_only(h, permissions);
        close_handle(h);
    }
    if (e == CIO_E_SHARING_VIOLATION || e == CIO_E_IS_DIR)
        e = CIO_E_ACCESS_DENIED;
    return CIO__IN_SET(dir_set_file_permissions, cio__win_narrow(e, cio_errset_dir_set_file_permissions_contains));
}

cio_err cio__os_dir_set_file_owner(void *ud, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags)
{
    (void)ud, (void)dir, (void)uid, (void)gid;
    if (path == NULL || (flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    return CIO_E_OPERATION_UNSUPPORTED;
}

/* ---- timestamps by path ------------------------------------------------------------------------------ */

cio_err cio__os_dir_set_timestamps(void *ud, cio_dir dir, const char *path, const cio_set_timestamps *ts,
                                   unsigned flags)
{
    if (path == NULL || ts == NULL || (flags & ~CIO_NO_FOLLOW) != 0 || ts->access_action > CIO_TIMESTAMP_SET ||
        ts->modify_action > CIO_TIMESTAMP_SET)
        return CIO_E_INVALID_ARGUMENT;
    void *h = NULL;
    cio_err e = cio__win_open_path(dir, path, CIO_NT_SYNCHRONIZE | CIO_NT_FILE_WRITE_ATTRIBUTES, open_options(flags),
                                   cio__ntstatus_nt_create_file, &h);
    if (e == CIO_OK) {
        cio_file f = {h};
        e = cio__os_file_set_timestamps(ud, f, ts);
        close_handle(h);
    }
    if (e == CIO_E_SHARING_VIOLATION || e == CIO_E_IS_DIR)
        e = CIO_E_ACCESS_DENIED;
    return CIO__IN_SET(dir_set_timestamps, cio__win_narrow(e, cio_errset_dir_set_timestamps_contains));
}

/* ---- hard links ---------------------------------------------------------------------------------------- */

/* Gives the file behind h the name new_path (relative to new_dir). */
static cio_err link_handle(void *h, cio_dir new_dir, const char *new_path)
{
    struct cio__win_path *p;
    cio_err e = cio__win_path_convert(new_dir, new_path, &p);
    if (e != CIO_OK)
        return cio__win_narrow(e, cio_errset_file_hard_link_contains);
    cio_nt_unicode_string *name = cio__win_path_name(p);
    size_t size = cio__win_rename_info_size(name->Length);
    cio_nt_file_rename_information *info = (cio_nt_file_rename_information *)CIO__SYS(calloc, win_link_info)(1,
                                                                                                             size + 2);
    if (info == NULL) {
        e = CIO_E_SYSTEM_RESOURCES;
    } else {
        info->Flags = 0; /* never replace */
        info->RootDirectory = cio__win_path_root(p);
        info->FileNameLength = name->Length;
        memcpy(info->FileName, name->Buffer, name->Length);
        e = cio__win_narrow(cio__win_info(true, h, info, (uint32_t)size, CIO_NT_FileLinkInformation,
                                          cio__ntstatus_nt_link),
                            cio_errset_file_hard_link_contains);
        free(info);
    }
    cio__win_path_free(p);
    return e;
}

cio_err cio__os_dir_hard_link(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path,
                              unsigned flags)
{
    (void)ud;
    if (old_path == NULL || new_path == NULL || (flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    void *h = NULL;
    cio_err e = cio__win_open_path(old_dir, old_path, CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES,
                                   open_options(flags) | CIO_NT_FILE_NON_DIRECTORY_FILE, cio__ntstatus_nt_create_file,
                                   &h);
    if (e == CIO_OK) {
        e = link_handle(h, new_dir, new_path);
        close_handle(h);
    }
    if (e == CIO_E_SHARING_VIOLATION)
        e = CIO_E_ACCESS_DENIED;
    return CIO__IN_SET(file_hard_link, cio__win_narrow(e, cio_errset_file_hard_link_contains));
}

cio_err cio__os_file_hard_link(void *ud, cio_file file, cio_dir new_dir, const char *new_path)
{
    (void)ud;
    if (new_path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_hard_link, link_handle(file.handle, new_dir, new_path));
}

/* ---- symbolic links ------------------------------------------------------------------------------------ */

#define SYMLINK_PATH_AT 20u     /* REPARSE_DATA_BUFFER: a symbolic link's PathBuffer (after Flags) */
#define MOUNT_POINT_PATH_AT 16u /* a mount point's PathBuffer */

/* One FSCTL_SET_REPARSE_POINT (set) or FSCTL_GET_REPARSE_POINT on h in the cancellation bracket;
 * *got the bytes the get wrote. */
static cio_err fs_control(void *h, bool set, void *buf, uint32_t len, uint32_t *got)
{
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return e;
    for (;;) {
        cio_nt_io_status_block iosb;
        memset(&iosb, 0, sizeof iosb);
        int32_t st = set ? CIO__SYS(NtFsControlFile, win_set_reparse)(h, NULL, NULL, NULL, &iosb,
                                                                      CIO_NT_FSCTL_SET_REPARSE_POINT, buf, len, NULL, 0)
                         : CIO__SYS(NtFsControlFile, win_get_reparse)(h, NULL, NULL, NULL, &iosb,
                                                                      CIO_NT_FSCTL_GET_REPARSE_POINT, NULL, 0, buf,
                                                                      len);
        if (st >= 0) { /* NT_SUCCESS */
            cio__t_syscall_end();
            *got = (uint32_t)iosb.Information;
            return CIO_OK;
        }
        if (cio__win_nt_retry(set ? cio__ntstatus_nt_set_reparse(st) : cio__ntstatus_nt_get_reparse(st), &e))
            continue;
        return e == CIO_OK ? CIO_E_UNEXPECTED : e;
    }
}

/* Fills a symbolic link's reparse data into buf (CIO_NT_MAXIMUM_REPARSE_DATA_BUFFER_SIZE bytes,
 * zeroed) and *size, the bytes for FSCTL_SET_REPARSE_POINT. PathBuffer holds the substitute name,
 * then the print name: the target as written with '/' turned to '\'. An absolute DOS target is
 * substituted in NT form ("C:\x" -> "\??\C:\x", "\\server\s" -> "\??\UNC\server\s", "\\?\x" ->
 * "\??\x"); anything else is stored as written, with SYMLINK_FLAG_RELATIVE. */
static cio_err symlink_data(const char *target, unsigned char *buf, uint32_t *size)
{
    static const uint16_t prefix[] = {'\\', '?', '?', '\\', 'U', 'N', 'C', '\\'};
    size_t cap = (CIO_NT_MAXIMUM_REPARSE_DATA_BUFFER_SIZE - SYMLINK_PATH_AT) / 2;
    uint16_t *path = (uint16_t *)(void *)(buf + SYMLINK_PATH_AT);
    size_t len = 0;
    cio_err e = cio__win_utf8_to_wtf16(target, strlen(target), path, cap, &len);
    if (e != CIO_OK)
        return e;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            path[i] = '\\';
    cio__win_path_type t = cio__win_path_type_of(path, len);
    bool relative = !(t == CIO__WIN_PATH_DRIVE_ABSOLUTE || t == CIO__WIN_PATH_UNC_ABSOLUTE ||
                      t == CIO__WIN_PATH_LOCAL_DEVICE);
    size_t skip = t == CIO__WIN_PATH_LOCAL_DEVICE ? 4 : t == CIO__WIN_PATH_UNC_ABSOLUTE ? 2 : 0;
    size_t add = t == CIO__WIN_PATH_UNC_ABSOLUTE ? 8 : 4;
    size_t subst = relative ? len : len - skip + add;
    if (subst + len > cap || (subst + len) * 2 > UINT16_MAX)
        return CIO_E_NAME_TOO_LONG;
    memmove(path + subst, path, len * 2); /* the print name, after the substitute */
    if (relative) {
        memcpy(path, path + subst, len * 2);
    } else {
        memcpy(path, prefix, add * 2);
        memcpy(path + add, path + subst + skip, (len - skip) * 2);
    }
    cio_nt_reparse_data_buffer_prefix h;
    h.ReparseTag = CIO_NT_IO_REPARSE_TAG_SYMLINK;
    h.ReparseDataLength = (uint16_t)(SYMLINK_PATH_AT - 8 + (subst + len) * 2);
    h.Reserved = 0;
    h.SubstituteNameOffset = 0;
    h.SubstituteNameLength = (uint16_t)(subst * 2);
    h.PrintNameOffset = (uint16_t)(subst * 2);
    h.PrintNameLength = (uint16_t)(len * 2);
    memcpy(buf, &h, sizeof h);
    uint32_t flags = relative ? CIO_NT_SYMLINK_FLAG_RELATIVE : 0;
    memcpy(buf + sizeof h, &flags, sizeof flags);
    *size = 8u + h.ReparseDataLength;
    return CIO_OK;
}

cio_err cio__os_dir_sym_link(void *ud, cio_dir dir, const char *target, const char *link_path, unsigned flags)
{
    (void)ud;
    if (target == NULL || link_path == NULL || (flags & ~CIO_SYM_LINK_DIRECTORY) != 0)
        return CIO_E_INVALID_ARGUMENT;
    if (link_path[0] == '\0' || target[0] == '\0')
        return CIO_E_FILE_NOT_FOUND;
    const size_t cap = CIO_NT_MAXIMUM_REPARSE_DATA_BUFFER_SIZE;
    unsigned char *data = (unsigned char *)CIO__SYS(calloc, win_sym_link_data)(1, cap);
    if (data == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    uint32_t size = 0;
    cio_err e = symlink_data(target, data, &size);
    struct cio__win_path *p = NULL;
    if (e == CIO_OK)
        e = cio__win_path_convert(dir, link_path, &p);
    void *h = NULL;
    if (e == CIO_OK) {
        uint32_t kind = (flags & CIO_SYM_LINK_DIRECTORY) ? CIO_NT_FILE_DIRECTORY_FILE : CIO_NT_FILE_NON_DIRECTORY_FILE;
        e = cio__win_open(cio__win_path_root(p), cio__win_path_name(p),
                          CIO_NT_SYNCHRONIZE | CIO_NT_GENERIC_WRITE | CIO_NT_DELETE, CIO_NT_FILE_ATTRIBUTE_NORMAL, 0,
                          CIO_NT_FILE_CREATE,
                          kind | CIO_NT_FILE_OPEN_REPARSE_POINT | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT,
                          cio__ntstatus_nt_create_sym_link, &h);
        cio__win_path_free(p);
    }
    if (e == CIO_OK) {
        uint32_t got = 0;
        e = fs_control(h, true, data, size, &got);
        if (e != CIO_OK) { /* no half-made link: the empty file or directory goes */
            cio_nt_file_disposition_information gone = {1};
            (void)cio__win_info(true, h, &gone, sizeof gone, CIO_NT_FileDispositionInformation,
                                cio__ntstatus_nt_set_disposition);
        }
        close_handle(h);
    }
    free(data);
    return CIO__IN_SET(dir_sym_link, cio__win_narrow(e, cio_errset_dir_sym_link_contains));
}

/* The link's target out of reparse data (got bytes): a symbolic link's substitute name (an absolute
 * one without its "\??\" prefix), a mount point's likewise; WTF-8 with a NUL into buf. */
static cio_err parse_link(const unsigned char *data, uint32_t got, char *buf, size_t len, size_t *out_len)
{
    cio_nt_reparse_data_buffer_prefix h;
    if (got < sizeof h)
        return CIO__BUG("FSCTL_GET_REPARSE_POINT: short reparse data");
    memcpy(&h, data, sizeof h);
    size_t at;
    bool relative = false;
    if (h.ReparseTag == CIO_NT_IO_REPARSE_TAG_SYMLINK) {
        uint32_t flags = 0;
        if (got < SYMLINK_PATH_AT)
            return CIO__BUG("FSCTL_GET_REPARSE_POINT: short symbolic link data");
        memcpy(&flags, data + sizeof h, sizeof flags);
        relative = (flags & CIO_NT_SYMLINK_FLAG_RELATIVE) != 0;
        at = SYMLINK_PATH_AT;
    } else if (h.ReparseTag == CIO_NT_IO_REPARSE_TAG_MOUNT_POINT) {
        at = MOUNT_POINT_PATH_AT;
    } else {
        return CIO_E_UNSUPPORTED_REPARSE_POINT_TYPE;
    }
    size_t off = at + h.SubstituteNameOffset, n = h.SubstituteNameLength / 2u;
    if (off + n * 2 > got || off % 2 != 0)
        return CIO__BUG("FSCTL_GET_REPARSE_POINT: a name past the data");
    const uint16_t *name = (const uint16_t *)(const void *)(data + off);
    size_t skip = 0, lead = 0; /* "\??\C:\x" -> "C:\x"; "\??\UNC\server\x" -> "\\server\x" */
    if (!relative && n >= 4 && name[0] == '\\' && name[1] == '?' && name[2] == '?' && name[3] == '\\')
        skip = 4;
    if (skip == 4 && n >= 8 && name[4] == 'U' && name[5] == 'N' && name[6] == 'C' && name[7] == '\\')
        skip = 8, lead = 2;
    if (len - 1 < lead)
        return CIO_E_NAME_TOO_LONG;
    memset(buf, '\\', lead);
    size_t w = 0;
    cio_err e = cio__win_wtf16_to_wtf8(name + skip, n - skip, buf + lead, len - 1 - lead, &w);
    if (e != CIO_OK)
        return e;
    w += lead;
    buf[w] = '\0';
    *out_len = w;
    return CIO_OK;
}

cio_err cio__os_dir_read_link(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (out_len != NULL)
        *out_len = 0;
    if (path == NULL || buf == NULL || len == 0 || out_len == NULL)
        return CIO_E_INVALID_ARGUMENT;
    buf[0] = '\0';
    void *h = NULL;
    cio_err e = cio__win_open_path(dir, path, CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES,
                                   open_options(CIO_NO_FOLLOW), cio__ntstatus_nt_create_file, &h);
    if (e == CIO_OK) {
        const uint32_t cap = CIO_NT_MAXIMUM_REPARSE_DATA_BUFFER_SIZE;
        unsigned char *data = (unsigned char *)CIO__SYS(malloc, win_read_link_data)(cap);
        uint32_t got = 0;
        e = data == NULL ? CIO_E_SYSTEM_RESOURCES : fs_control(h, false, data, cap, &got);
        if (e == CIO_OK)
            e = parse_link(data, got, buf, len, out_len);
        free(data);
        close_handle(h);
    }
    if (e != CIO_OK) {
        buf[0] = '\0';
        *out_len = 0;
    }
    if (e == CIO_E_SHARING_VIOLATION || e == CIO_E_IS_DIR)
        e = CIO_E_ACCESS_DENIED;
    return CIO__IN_SET(dir_read_link, cio__win_narrow(e, cio_errset_dir_read_link_contains));
}

/* ---- terminals --------------------------------------------------------------------------------------------- */

cio_err cio__os_file_is_tty(void *ud, cio_file file, bool *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    DWORD mode;
    *out = GetFileType(file.handle) == FILE_TYPE_CHAR && GetConsoleMode(file.handle, &mode) != 0;
    return CIO_OK;
}
