/*
 * Links and metadata for the Threaded backend on Windows, over the NT calls fs_windows.c makes
 * (cio__win_open_path, cio__win_info: NtCreateFile, NtQueryInformationFile, NtSetInformationFile at
 * their existing sites, so the Windows fault suite's cases cover them).
 *
 * Invariants:
 * - Permission bits: Windows keeps one of them, the read-only attribute. Bits with no write bit
 *   (mode & 0222 == 0) set it; any write bit clears it; stat reports it back as the missing write
 *   bits (fs_windows.c). Other attributes are kept.
 * - Owners: NT files have security descriptors, not uids and gids: OperationUnsupported (after the
 *   argument checks).
 * - Hard links: FileLinkInformation (FILE_RENAME_INFORMATION's layout, ReplaceIfExists off) on a
 *   handle to the old file, opened by path (FILE_OPEN_REPARSE_POINT with CIO_NO_FOLLOW) or the open
 *   file itself; the new name is converted like every path (root = new_dir's handle or absolute).
 * - Symbolic links: NT makes them with FSCTL_SET_REPARSE_POINT, which Wine 8 cannot resolve (nothing
 *   follows what it stores; tests/os_helpers.h's cio_test_symlink shows it): dir_sym_link is
 *   OperationUnsupported. dir_read_link reads the reparse tag: a file or directory that is no
 *   symbolic link is NotLink; a link (made outside cio) is UnsupportedReparsePointType, its data not
 *   being read yet (FSCTL_GET_REPARSE_POINT is not routed).
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

/* ---- owners: none on NT ----------------------------------------------------------------------------- */

cio_err cio__os_file_set_owner(void *ud, cio_file file, uint32_t uid, uint32_t gid)
{
    (void)ud, (void)file, (void)uid, (void)gid;
    return CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_dir_set_owner(void *ud, cio_dir dir, uint32_t uid, uint32_t gid)
{
    (void)ud, (void)dir, (void)uid, (void)gid;
    return CIO_E_OPERATION_UNSUPPORTED;
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

cio_err cio__os_dir_sym_link(void *ud, cio_dir dir, const char *target, const char *link_path, unsigned flags)
{
    (void)ud, (void)dir;
    if (target == NULL || link_path == NULL || (flags & ~CIO_SYM_LINK_DIRECTORY) != 0)
        return CIO_E_INVALID_ARGUMENT;
    if (link_path[0] == '\0' || target[0] == '\0')
        return CIO_E_FILE_NOT_FOUND;
    return CIO_E_OPERATION_UNSUPPORTED;
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
        cio_nt_file_attribute_tag_information info;
        e = cio__win_info(false, h, &info, sizeof info, CIO_NT_FileAttributeTagInformation,
                          cio__ntstatus_nt_query_information_file);
        if (e == CIO_OK)
            e = (info.FileAttributes & CIO_NT_FILE_ATTRIBUTE_REPARSE_POINT) ? CIO_E_UNSUPPORTED_REPARSE_POINT_TYPE
                                                                            : CIO_E_NOT_LINK;
        close_handle(h);
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
