/*
 * Files and directories for the Threaded backend on Windows, through ntdll (NtCreateFile,
 * NtReadFile, NtWriteFile, NtQueryInformationFile, NtSetInformationFile, NtQueryDirectoryFile,
 * NtFlushBuffersFile), declared in the generated platform/internal/cio/ntapi.h.
 *
 * Invariants:
 * - Paths: UTF-8 (WTF-8) -> WTF-16 -> NT path through path_windows.c. An absolute result ("\??\C:\x",
 *   "\??\UNC\...") opens with no root directory handle; a relative one opens relative to the
 *   directory handle. cio_dir_cwd() is a NULL handle: relative paths are then resolved against the
 *   process's current directory (GetCurrentDirectoryW) into absolute NT paths. The conversion
 *   buffers live in one heap block per call (struct paths), never on a worker's small stack.
 * - "." and ".." as a whole file name open as IsDir before any conversion (the conversion would
 *   turn "." into the directory itself). A component longer than 255 units is NameTooLong before
 *   the OS is asked. Opening a file for writing never opens a directory (IsDir, as POSIX says).
 * - FileNotFound from an open is refined to NotDir when one of the path's parents exists and is
 *   not a directory (NT says OBJECT_PATH_NOT_FOUND for both), by opening the parents, longest
 *   first, on that error path only.
 * - Every NTSTATUS goes through the generated per-operation map (cio__ntstatus_<op>): RETRY
 *   (STATUS_CANCELLED: a cancel's CancelSynchronousIo, or a stray one) asks the cancel state and
 *   calls again; BACKOFF (SHARING_VIOLATION, DELETE_PENDING on open/create) sleeps 1 ms doubling,
 *   cancelably, for BACKOFF_TRIES attempts and then returns the mapped error (SharingViolation); BUG
 *   asserts in debug builds. No raw NTSTATUS leaves this file.
 * - Every blocking call is inside the cancellation bracket (cancel.c); a task blocked in a
 *   synchronous read (a pipe) is knocked out by cancel_windows.c's CancelSynchronousIo.
 * - Handles are opened with FILE_SYNCHRONOUS_IO_NONALERT (the file object keeps the position),
 *   except a file opened with no_follow_symlinks: FILE_OPEN_REPARSE_POINT and no synchronous flag
 *   (Zig's fix; the link itself is opened). Its reparse tag is checked (a symlink is SymLinkLoop)
 *   and it is then reopened through itself (empty name, root = the handle) with the synchronous
 *   flag, so every cio_file handle is synchronous.
 * - Positional I/O passes a byte offset, which on a synchronous handle also moves the position:
 *   the position is saved before and restored after, so positional calls leave it unchanged (not
 *   atomic against a streaming call on the same handle from another thread).
 * - Vectored calls on disk files go buffer by buffer until one is short; on pipes and devices only
 *   the first non-empty buffer is used, so a read never blocks once it has data.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
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

#define BACKOFF_TRIES 9 /* 1 + 2 + ... + 256 ms */
#define NT_SUCCESS(s) ((s) >= 0)
#define UNIX_EPOCH_AS_FILETIME 116444736000000000LL
#define NAME_UNITS_MAX 255u                                /* the longest component NTFS (and Wine) accept */
#define PATH_BYTES_MAX ((size_t)CIO__WIN_NT_PATH_MAX * 3u) /* longest UTF-8 for a path */

/* ---- paths ----------------------------------------------------------------------------------- */

struct cio__win_path {
    uint16_t cwd[CIO__WIN_NT_PATH_MAX];
    uint16_t scratch[CIO__WIN_NT_PATH_MAX];
    uint16_t nt[CIO__WIN_NT_PATH_MAX];
    cio_nt_unicode_string name;
    void *root;
};

/* NULL: InvalidArgument; "": FileNotFound; too long: NameTooLong; otherwise converts into p. */
cio_err cio__win_path_convert(cio_dir dir, const char *path, struct cio__win_path **out)
{
    *out = NULL;
    if (path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (path[0] == '\0')
        return CIO_E_FILE_NOT_FOUND;
    size_t len = strnlen(path, PATH_BYTES_MAX + 1);
    if (len > PATH_BYTES_MAX)
        return CIO_E_NAME_TOO_LONG;
    struct cio__win_path *p = (struct cio__win_path *)CIO__SYS(malloc, win_path_convert)(sizeof *p);
    if (p == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    DWORD cwd_len = CIO__SYS(GetCurrentDirectoryW, win_path_convert)(CIO__WIN_NT_PATH_MAX, (WCHAR *)p->cwd);
    if (cwd_len >= CIO__WIN_NT_PATH_MAX)
        cwd_len = 0;
    cio__win_nt_path_options opts = {cwd_len ? p->cwd : NULL, cwd_len, dir.handle != NULL};
    size_t nt_len = 0;
    bool absolute = false;
    cio_err e = cio__win_utf8_to_nt_path(path, len, &opts, p->scratch, CIO__WIN_NT_PATH_MAX, p->nt,
                                         CIO__WIN_NT_PATH_MAX, &nt_len, &absolute);
    if (e != CIO_OK) {
        free(p);
        return e;
    }
    size_t component = 0;
    for (size_t i = 0; i < nt_len; i++) {
        component = p->nt[i] == '\\' ? 0 : component + 1;
        if (component > NAME_UNITS_MAX)
            break;
    }
    if (nt_len * 2 > 0xFFFEu || component > NAME_UNITS_MAX) {
        free(p);
        return CIO_E_NAME_TOO_LONG;
    }
    p->name.Length = (uint16_t)(nt_len * 2);
    p->name.MaximumLength = p->name.Length;
    p->name.Buffer = p->nt;
    p->root = absolute ? NULL : dir.handle;
    *out = p;
    return CIO_OK;
}

void cio__win_path_free(struct cio__win_path *p)
{
    free(p);
}

/* ---- the cancellation bracket around one NT call ---------------------------------------------- */

/* Sleeps `ms` milliseconds, cancelably; CIO_OK or CIO_E_CANCELED. */
static cio_err backoff_sleep(unsigned ms)
{
    cio_err e = cio__os_sleep(NULL, cio_timeout_ms((int64_t)ms));
    return e == CIO_E_CANCELED ? e : CIO_OK;
}

cio_err cio__win_open(void *root, cio_nt_unicode_string *name, uint32_t access, uint32_t attributes, uint32_t share,
                      uint32_t disposition, uint32_t options, cio__mapped (*map)(cio_ntstatus), void **out)
{
    cio_nt_object_attributes oa = {sizeof oa, root, name, 0, NULL, NULL};
    unsigned delay = 1;
    int tries = 0;
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return e;
    for (;;) {
        cio_nt_io_status_block iosb;
        void *h = NULL;
        int32_t st = CIO__SYS(NtCreateFile, win_open)(&h, access, &oa, &iosb, NULL, attributes, share, disposition,
                                                      options, NULL, 0);
        if (NT_SUCCESS(st)) {
            cio__t_syscall_end();
            *out = h;
            return CIO_OK;
        }
        cio__mapped m = map(st);
        if (m.action == CIO__MAP_BACKOFF && ++tries < BACKOFF_TRIES) {
            cio__t_syscall_end();
            if (backoff_sleep(delay) != CIO_OK)
                return CIO_E_CANCELED;
            delay *= 2;
            e = cio__t_syscall_begin();
            if (e != CIO_OK)
                return e;
            continue;
        }
        if (cio__win_nt_retry(m, &e))
            continue;
        return e == CIO_OK ? CIO_E_UNEXPECTED : e; /* no success status maps to OK here */
    }
}

bool cio__win_nt_retry(cio__mapped m, cio_err *err)
{
    if (m.action == CIO__MAP_RETRY) {
        *err = cio__t_syscall_interrupted();
        return *err == CIO_OK;
    }
    cio__t_syscall_end();
    if (m.action == CIO__MAP_OK)
        *err = CIO_OK;
    else
        *err = m.action == CIO__MAP_BUG ? CIO__BUG("an NTSTATUS that means a bug") : m.err;
    return false;
}

bool cio__win_nt_again(int32_t st, cio__mapped (*map)(cio_ntstatus), cio_err *err)
{
    if (!NT_SUCCESS(st))
        return cio__win_nt_retry(map(st), err);
    cio__t_syscall_end();
    *err = CIO_OK;
    return false;
}

/* A query/set-information call inside the bracket; STATUS_CANCELLED retries. */
static cio_err info_call(bool set, void *h, void *buf, uint32_t len, uint32_t cls, cio__mapped (*map)(cio_ntstatus))
{
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return e;
    for (;;) {
        cio_nt_io_status_block iosb;
        int32_t st = set ? CIO__SYS(NtSetInformationFile, info_set)(h, &iosb, buf, len, cls)
                         : CIO__SYS(NtQueryInformationFile, info_query)(h, &iosb, buf, len, cls);
        if (!cio__win_nt_again(st, map, &e))
            return e;
    }
}

/* The error if `e` is in the set (or InvalidArgument/OK), Unexpected otherwise: for an open done on
 * behalf of a slot whose set is narrower than File.OpenError. */
static cio_err narrow(cio_err e, bool (*contains)(cio_err))
{
    return (e == CIO_OK || e == CIO_E_INVALID_ARGUMENT || contains(e)) ? e : CIO_E_UNEXPECTED;
}

#define SHARE_ALL (CIO_NT_FILE_SHARE_READ | CIO_NT_FILE_SHARE_WRITE | CIO_NT_FILE_SHARE_DELETE)

/* Opens path in dir with the given access and options (disposition FILE_OPEN), mapped by `map`. */
static cio_err open_path(cio_dir dir, const char *path, uint32_t access, uint32_t options,
                         cio__mapped (*map)(cio_ntstatus), void **out)
{
    struct cio__win_path *p;
    cio_err e = cio__win_path_convert(dir, path, &p);
    if (e != CIO_OK)
        return e;
    e = cio__win_open(p->root, &p->name, access, 0, SHARE_ALL, CIO_NT_FILE_OPEN, options, map, out);
    cio__win_path_free(p);
    return e;
}

/* ---- opening files and directories -------------------------------------------------------------- */

static cio_err is_directory(cio_dir dir, const char *path);

/* After FileNotFound for path: NotDir if a parent exists and is not a directory. */
static cio_err refine_not_found(cio_dir dir, const char *path, cio_err e)
{
    if (e != CIO_E_FILE_NOT_FOUND || path == NULL)
        return e;
    size_t len = strlen(path);
    char *copy = (char *)CIO__SYS(malloc, win_refine_not_found)(len + 1);
    if (copy == NULL)
        return e;
    memcpy(copy, path, len + 1);
    for (;;) {
        while (len > 0 && copy[len - 1] != '/' && copy[len - 1] != '\\')
            len--;
        while (len > 0 && (copy[len - 1] == '/' || copy[len - 1] == '\\'))
            len--;
        if (len == 0 || (len == 2 && copy[1] == ':'))
            break;
        copy[len] = '\0';
        cio_err pe = is_directory(dir, copy);
        if (pe == CIO_E_NOT_DIR) {
            e = CIO_E_NOT_DIR;
            break;
        }
        if (pe != CIO_E_FILE_NOT_FOUND)
            break;
    }
    free(copy);
    return e;
}

static bool is_dot_name(const char *path)
{
    return strcmp(path, ".") == 0 || strcmp(path, "..") == 0;
}

static cio_err reparse_tag(void *h, uint32_t *tag)
{
    cio_nt_file_attribute_tag_information info;
    cio_err e = info_call(false, h, &info, sizeof info, CIO_NT_FileAttributeTagInformation,
                          cio__ntstatus_nt_query_information_file);
    *tag = e == CIO_OK && (info.FileAttributes & CIO_NT_FILE_ATTRIBUTE_REPARSE_POINT) ? info.ReparseTag : 0;
    return e;
}

cio_err cio__win_open_file(void *root, cio_nt_unicode_string *name, const cio_open_file_options *o, void **out)
{
    return cio__win_open_file_io(root, name, o, CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, out);
}

cio_err cio__win_open_file_io(void *root, cio_nt_unicode_string *name, const cio_open_file_options *o, uint32_t io,
                              void **out)
{
    uint32_t access = CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES;
    if (o->mode == CIO_OPEN_READ_ONLY || o->mode == CIO_OPEN_READ_WRITE)
        access |= CIO_NT_GENERIC_READ;
    if (o->mode == CIO_OPEN_WRITE_ONLY || o->mode == CIO_OPEN_READ_WRITE)
        access |= CIO_NT_GENERIC_WRITE;
    uint32_t kind = o->forbid_directory || o->mode != CIO_OPEN_READ_ONLY ? CIO_NT_FILE_NON_DIRECTORY_FILE : 0;
    if (!o->no_follow_symlinks)
        return cio__win_open(root, name, access, CIO_NT_FILE_ATTRIBUTE_NORMAL, SHARE_ALL, CIO_NT_FILE_OPEN, kind | io,
                             cio__ntstatus_nt_create_file, out);
    void *link = NULL;
    cio_err e = cio__win_open(root, name, access, CIO_NT_FILE_ATTRIBUTE_NORMAL, SHARE_ALL, CIO_NT_FILE_OPEN,
                              kind | CIO_NT_FILE_OPEN_REPARSE_POINT, cio__ntstatus_nt_create_file, &link);
    if (e != CIO_OK)
        return e;
    uint32_t tag = 0;
    e = narrow(reparse_tag(link, &tag), cio_errset_file_open_contains);
    if (e == CIO_OK && (tag == CIO_NT_IO_REPARSE_TAG_SYMLINK || tag == CIO_NT_IO_REPARSE_TAG_MOUNT_POINT))
        e = CIO_E_SYM_LINK_LOOP;
    if (e == CIO_OK) {
        cio_nt_unicode_string self = {0, 0, NULL};
        e = cio__win_open(link, &self, access, 0, SHARE_ALL, CIO_NT_FILE_OPEN, kind | io, cio__ntstatus_nt_create_file,
                          out);
    }
    CIO__SYS(NtClose, open_file_link)(link);
    return e;
}

bool cio__win_open_args(const cio_open_file_options *options, const void *out, cio_open_file_options *o)
{
    static const cio_open_file_options read_only = {CIO_OPEN_READ_ONLY, false, false};
    *o = options != NULL ? *options : read_only;
    return out != NULL && o->mode <= CIO_OPEN_READ_WRITE;
}

cio_err cio__os_dir_open_file(void *ud, cio_dir dir, const char *path, const cio_open_file_options *options,
                              cio_file *out)
{
    (void)ud;
    return cio__win_dir_open_file(dir, path, options, CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, out);
}

cio_err cio__win_dir_open_file(cio_dir dir, const char *path, const cio_open_file_options *options, uint32_t io,
                               cio_file *out)
{
    cio_open_file_options o;
    if (!cio__win_open_args(options, out, &o))
        return CIO_E_INVALID_ARGUMENT;
    if (path != NULL && is_dot_name(path))
        return CIO__IN_SET(file_open, CIO_E_IS_DIR);
    struct cio__win_path *p;
    cio_err e = cio__win_path_convert(dir, path, &p);
    if (e != CIO_OK)
        return CIO__IN_SET(file_open, e);
    void *h = NULL;
    e = cio__win_open_file_io(p->root, &p->name, &o, io, &h);
    cio__win_path_free(p);
    if (e == CIO_OK)
        out->handle = h;
    return CIO__IN_SET(file_open, refine_not_found(dir, path, e));
}

cio_err cio__os_dir_create_file(void *ud, cio_dir dir, const char *path, const cio_create_file_options *options,
                                cio_file *out)
{
    (void)ud;
    return cio__win_dir_create_file(dir, path, options, CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, out);
}

cio_err cio__win_dir_create_file(cio_dir dir, const char *path, const cio_create_file_options *options, uint32_t io,
                                 cio_file *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_create_file_options o = CIO_CREATE_FILE_DEFAULTS;
    if (options != NULL)
        o = *options;
    if (path != NULL && is_dot_name(path))
        return CIO__IN_SET(file_open, CIO_E_IS_DIR);
    uint32_t access = CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES | CIO_NT_GENERIC_WRITE;
    if (o.read)
        access |= CIO_NT_GENERIC_READ;
    uint32_t disposition = o.exclusive  ? CIO_NT_FILE_CREATE
                           : o.truncate ? CIO_NT_FILE_OVERWRITE_IF
                                        : CIO_NT_FILE_OPEN_IF;
    uint32_t attrs = CIO_NT_FILE_ATTRIBUTE_NORMAL;
    if (o.permissions != 0 && (o.permissions & 0222u) == 0)
        attrs = CIO_NT_FILE_ATTRIBUTE_READONLY;
    struct cio__win_path *p;
    cio_err e = cio__win_path_convert(dir, path, &p);
    if (e != CIO_OK)
        return CIO__IN_SET(file_open, e);
    void *h = NULL;
    e = cio__win_open(p->root, &p->name, access, attrs, SHARE_ALL, disposition, CIO_NT_FILE_NON_DIRECTORY_FILE | io,
                      cio__ntstatus_nt_create_file, &h);
    cio__win_path_free(p);
    if (e == CIO_OK)
        out->handle = h;
    return CIO__IN_SET(file_open, refine_not_found(dir, path, e));
}

#define DIR_ACCESS \
    (CIO_NT_SYNCHRONIZE | CIO_NT_FILE_LIST_DIRECTORY | CIO_NT_FILE_TRAVERSE | CIO_NT_FILE_READ_ATTRIBUTES)

cio_err cio__os_dir_open_dir(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options, cio_dir *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    bool no_follow = options != NULL && options->no_follow_symlinks;
    uint32_t opts = CIO_NT_FILE_DIRECTORY_FILE | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT |
                    (no_follow ? CIO_NT_FILE_OPEN_REPARSE_POINT : 0);
    void *h = NULL;
    cio_err e = open_path(dir, path, DIR_ACCESS, opts, cio__ntstatus_nt_open_dir, &h);
    if (e == CIO_OK && no_follow) {
        uint32_t tag = 0;
        e = narrow(reparse_tag(h, &tag), cio_errset_dir_open_contains);
        if (e == CIO_OK && tag == CIO_NT_IO_REPARSE_TAG_SYMLINK)
            e = CIO_E_SYM_LINK_LOOP;
        if (e != CIO_OK)
            CIO__SYS(NtClose, open_dir_link)(h);
    }
    if (e == CIO_OK)
        out->handle = h;
    return CIO__IN_SET(dir_open, refine_not_found(dir, path, e));
}

static cio_err create_dir(cio_dir dir, const char *path)
{
    struct cio__win_path *p;
    cio_err e = cio__win_path_convert(dir, path, &p);
    if (e != CIO_OK)
        return e;
    void *h = NULL;
    e = cio__win_open(p->root, &p->name, DIR_ACCESS, CIO_NT_FILE_ATTRIBUTE_NORMAL, SHARE_ALL, CIO_NT_FILE_CREATE,
                      CIO_NT_FILE_DIRECTORY_FILE | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, cio__ntstatus_nt_create_dir,
                      &h);
    cio__win_path_free(p);
    if (e == CIO_OK)
        CIO__SYS(NtClose, create_dir)(h);
    return e;
}

cio_err cio__os_dir_create_dir(void *ud, cio_dir dir, const char *path, uint32_t permissions)
{
    (void)ud;
    (void)permissions; /* Windows has no permission bits to give a directory */
    return CIO__IN_SET(dir_create_dir, create_dir(dir, path));
}

/* Is path (in dir) an existing directory? CIO_OK yes, NotDir no, other errors as opening it. */
static cio_err is_directory(cio_dir dir, const char *path)
{
    void *h = NULL;
    cio_err e = open_path(dir, path, DIR_ACCESS, CIO_NT_FILE_DIRECTORY_FILE | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT,
                          cio__ntstatus_nt_open_dir, &h);
    if (e == CIO_OK)
        CIO__SYS(NtClose, is_directory)(h);
    return e;
}

/* Index of the separator before the last component of path[0..len), ignoring trailing separators;
 * 0 when there is none (a single component). */
static size_t parent_end(const char *path, size_t len)
{
    while (len > 0 && (path[len - 1] == '/' || path[len - 1] == '\\'))
        len--;
    while (len > 0 && path[len - 1] != '/' && path[len - 1] != '\\')
        len--;
    while (len > 0 && (path[len - 1] == '/' || path[len - 1] == '\\'))
        len--;
    return len;
}

static cio_err make_path(cio_dir dir, char *path, bool *created, int depth)
{
    cio_err e = create_dir(dir, path);
    if (e == CIO_OK) {
        *created = true;
        return CIO_OK;
    }
    if (e == CIO_E_PATH_ALREADY_EXISTS) {
        *created = false;
        return is_directory(dir, path) == CIO_OK ? CIO_OK : CIO_E_NOT_DIR;
    }
    if (e != CIO_E_FILE_NOT_FOUND || depth > 4096)
        return e;
    size_t len = strlen(path), cut = parent_end(path, len);
    if (cut == 0 || (cut == 2 && path[1] == ':'))
        return e; /* no parent to make: the root or a drive is missing */
    char saved = path[cut];
    path[cut] = '\0';
    bool parent_created = false;
    e = make_path(dir, path, &parent_created, depth + 1);
    path[cut] = saved;
    if (e != CIO_OK)
        return e;
    e = create_dir(dir, path);
    if (e == CIO_E_PATH_ALREADY_EXISTS) { /* made meanwhile by someone else */
        *created = false;
        return is_directory(dir, path) == CIO_OK ? CIO_OK : CIO_E_NOT_DIR;
    }
    *created = e == CIO_OK;
    return e;
}

static cio_err create_dir_path(cio_dir dir, const char *path, bool *created)
{
    bool made = false;
    if (path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    size_t len = strnlen(path, PATH_BYTES_MAX + 1);
    if (len > PATH_BYTES_MAX)
        return CIO_E_NAME_TOO_LONG;
    char *copy = (char *)CIO__SYS(malloc, win_create_dir_path)(len + 1);
    if (copy == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    memcpy(copy, path, len + 1);
    cio_err e = len == 0 ? CIO_E_FILE_NOT_FOUND : make_path(dir, copy, &made, 0);
    free(copy);
    if (created != NULL)
        *created = made;
    return e;
}

cio_err cio__os_dir_create_dir_path(void *ud, cio_dir dir, const char *path, uint32_t permissions, bool *created)
{
    (void)ud;
    (void)permissions;
    return CIO__IN_SET(dir_make_path, create_dir_path(dir, path, created));
}

cio_err cio__os_dir_create_dir_path_open(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options,
                                         cio_dir *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err e = create_dir_path(dir, path, NULL);
    if (e == CIO_OK)
        e = cio__os_dir_open_dir(ud, dir, path, options, out);
    return CIO__IN_SET(dir_make_open_path, e);
}

/* ---- rename and delete ------------------------------------------------------------------------- */

/* The first steps of both renames: InvalidArgument for a NULL path, then old_path itself (a symbolic
 * link, not its target) opened for DELETE into *h; the open's errors unnarrowed. */
static cio_err rename_source(cio_dir old_dir, const char *old_path, const char *new_path, void **h)
{
    if (old_path == NULL || new_path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return open_path(old_dir, old_path, CIO_NT_DELETE | CIO_NT_SYNCHRONIZE,
                     CIO_NT_FILE_OPEN_REPARSE_POINT | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, cio__ntstatus_nt_create_file,
                     h);
}

static cio_err delete_path(cio_dir dir, const char *path, bool directory)
{
    void *h = NULL;
    uint32_t kind = directory ? CIO_NT_FILE_DIRECTORY_FILE : CIO_NT_FILE_NON_DIRECTORY_FILE;
    cio_err e = open_path(dir, path,
                          CIO_NT_DELETE | CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES |
                              CIO_NT_FILE_WRITE_ATTRIBUTES,
                          kind | CIO_NT_FILE_OPEN_REPARSE_POINT | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT,
                          directory ? cio__ntstatus_nt_delete_dir_open : cio__ntstatus_nt_delete_file_open, &h);
    if (e != CIO_OK)
        return e;
    cio_nt_file_disposition_information info = {1};
    e = info_call(true, h, &info, sizeof info, CIO_NT_FileDispositionInformation, cio__ntstatus_nt_set_disposition);
    if (e == CIO_E_ACCESS_DENIED && !directory) {
        /* STATUS_CANNOT_DELETE: a read-only file. POSIX unlinks it regardless (the directory's
         * permissions decide), so the attribute is cleared and the delete tried once more. */
        cio_nt_file_basic_information basic;
        if (info_call(false, h, &basic, sizeof basic, CIO_NT_FileBasicInformation,
                      cio__ntstatus_nt_query_information_file) == CIO_OK &&
            (basic.FileAttributes & CIO_NT_FILE_ATTRIBUTE_READONLY)) {
            uint32_t attrs = basic.FileAttributes & ~(uint32_t)CIO_NT_FILE_ATTRIBUTE_READONLY;
            memset(&basic, 0, sizeof basic);
            basic.FileAttributes = attrs != 0 ? attrs : CIO_NT_FILE_ATTRIBUTE_NORMAL;
            if (info_call(true, h, &basic, sizeof basic, CIO_NT_FileBasicInformation,
                          cio__ntstatus_nt_set_basic_information) == CIO_OK)
                e = info_call(true, h, &info, sizeof info, CIO_NT_FileDispositionInformation,
                              cio__ntstatus_nt_set_disposition);
        }
    }
    CIO__SYS(NtClose, delete_path)(h);
    return e;
}

cio_err cio__os_dir_delete_file(void *ud, cio_dir dir, const char *path)
{
    (void)ud;
    return CIO__IN_SET(dir_delete_file, narrow(delete_path(dir, path, false), cio_errset_dir_delete_file_contains));
}

cio_err cio__os_dir_delete_dir(void *ud, cio_dir dir, const char *path)
{
    (void)ud;
    return CIO__IN_SET(dir_delete_dir, delete_path(dir, path, true));
}

/* ---- stat and access ------------------------------------------------------------------------------ */

static int64_t nt_time_to_unix_ns(int64_t t)
{
    return (t - UNIX_EPOCH_AS_FILETIME) * 100;
}

static cio_err stat_handle(void *h, cio_stat *out)
{
    cio_nt_file_basic_information basic;
    cio_nt_file_standard_information std;
    cio_nt_file_internal_information internal;
    cio__mapped (*map)(cio_ntstatus) = cio__ntstatus_nt_query_information_file;
    cio_err e = info_call(false, h, &basic, sizeof basic, CIO_NT_FileBasicInformation, map);
    if (e == CIO_OK)
        e = info_call(false, h, &std, sizeof std, CIO_NT_FileStandardInformation, map);
    if (e == CIO_OK)
        e = info_call(false, h, &internal, sizeof internal, CIO_NT_FileInternalInformation, map);
    uint32_t tag = 0;
    if (e == CIO_OK && (basic.FileAttributes & CIO_NT_FILE_ATTRIBUTE_REPARSE_POINT))
        e = reparse_tag(h, &tag);
    if (e != CIO_OK)
        return e;
    memset(out, 0, sizeof *out);
    out->inode = (uint64_t)internal.IndexNumber;
    out->size = (uint64_t)std.EndOfFile;
    out->nlink = std.NumberOfLinks;
    DWORD type = GetFileType(h);
    if (tag == CIO_NT_IO_REPARSE_TAG_SYMLINK)
        out->kind = CIO_FILE_KIND_SYM_LINK;
    else if (std.Directory)
        out->kind = CIO_FILE_KIND_DIRECTORY;
    else if (type == FILE_TYPE_PIPE)
        out->kind = CIO_FILE_KIND_NAMED_PIPE;
    else if (type == FILE_TYPE_CHAR)
        out->kind = CIO_FILE_KIND_CHARACTER_DEVICE;
    else
        out->kind = CIO_FILE_KIND_FILE;
    uint32_t mode = out->kind == CIO_FILE_KIND_DIRECTORY ? 0777u : 0666u;
    if (basic.FileAttributes & CIO_NT_FILE_ATTRIBUTE_READONLY)
        mode &= ~0222u;
    out->mode = mode;
    out->has_atime = true;
    out->atime.ns = nt_time_to_unix_ns(basic.LastAccessTime);
    out->mtime.ns = nt_time_to_unix_ns(basic.LastWriteTime);
    out->ctime.ns = nt_time_to_unix_ns(basic.ChangeTime);
    return CIO_OK;
}

cio_err cio__os_file_stat(void *ud, cio_file file, cio_stat *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_stat, stat_handle(file.handle, out));
}

cio_err cio__os_dir_stat_file(void *ud, cio_dir dir, const char *path, unsigned flags, cio_stat *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    uint32_t opts = CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT | CIO_NT_FILE_OPEN_FOR_BACKUP_INTENT;
    if (flags & CIO_STAT_NO_FOLLOW)
        opts |= CIO_NT_FILE_OPEN_REPARSE_POINT;
    void *h = NULL;
    cio_err e = open_path(dir, path, CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES, opts,
                          cio__ntstatus_nt_create_file, &h);
    if (e == CIO_OK) {
        e = stat_handle(h, out);
        CIO__SYS(NtClose, stat_file)(h);
    }
    return CIO__IN_SET(dir_stat_file, e);
}

cio_err cio__os_dir_access(void *ud, cio_dir dir, const char *path, unsigned mode)
{
    (void)ud;
    if (mode > (CIO_ACCESS_READ | CIO_ACCESS_WRITE | CIO_ACCESS_EXECUTE))
        return CIO_E_INVALID_ARGUMENT;
    uint32_t access = CIO_NT_SYNCHRONIZE | CIO_NT_FILE_READ_ATTRIBUTES;
    if (mode & CIO_ACCESS_READ)
        access |= CIO_NT_GENERIC_READ;
    if (mode & CIO_ACCESS_WRITE)
        access |= CIO_NT_GENERIC_WRITE;
    void *h = NULL;
    cio_err e = open_path(dir, path, access, CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT | CIO_NT_FILE_OPEN_FOR_BACKUP_INTENT,
                          cio__ntstatus_nt_create_file, &h);
    if (e == CIO_OK) {
        /* The read-only attribute denies writing to every user (as the CRT's _access says), even
         * where the open was allowed (Wine run by root). */
        cio_nt_file_basic_information basic;
        e = info_call(false, h, &basic, sizeof basic, CIO_NT_FileBasicInformation,
                      cio__ntstatus_nt_query_information_file);
        if (e == CIO_OK && (mode & CIO_ACCESS_WRITE) &&
            (basic.FileAttributes & (CIO_NT_FILE_ATTRIBUTE_READONLY | CIO_NT_FILE_ATTRIBUTE_DIRECTORY)) ==
                CIO_NT_FILE_ATTRIBUTE_READONLY)
            e = CIO_E_ACCESS_DENIED;
        CIO__SYS(NtClose, access)(h);
    }
    if (e == CIO_E_IS_DIR || e == CIO_E_SHARING_VIOLATION)
        e = CIO_E_ACCESS_DENIED;
    return CIO__IN_SET(dir_access, narrow(e, cio_errset_dir_access_contains));
}

/* NtClose is never retried: the handle is gone whatever it reports. STATUS_INVALID_HANDLE is NotOpen
 * (closed twice or never opened; the public wrapper's debug line names it). A NULL handle (the
 * current directory) has nothing to close. */
static cio_err close_result(cio_ntstatus st)
{
    if (NT_SUCCESS(st))
        return CIO_OK;
    cio__mapped m = cio__ntstatus_nt_close(st);
    return m.action == CIO__MAP_OK ? CIO_OK : m.err;
}

cio_err cio__os_dir_close(void *ud, cio_dir dir)
{
    (void)ud;
    if (dir.handle == NULL)
        return CIO_OK;
    return close_result(CIO__SYS(NtClose, dir_close)(dir.handle));
}

cio_err cio__os_file_close(void *ud, cio_file file)
{
    (void)ud;
    if (file.handle == NULL)
        return CIO_OK;
    cio__os_before_handle_close(file.handle);
    return close_result(CIO__SYS(NtClose, file_close)(file.handle));
}

/* ---- for fs_windows_links.c: the helpers above, under their shared names ------------------------- */

cio_err cio__win_info(bool set, void *h, void *buf, uint32_t len, uint32_t cls, cio__mapped (*map)(cio_ntstatus))
{
    return info_call(set, h, buf, len, cls, map);
}

cio_err cio__win_open_path(cio_dir dir, const char *path, uint32_t access, uint32_t options,
                           cio__mapped (*map)(cio_ntstatus), void **out)
{
    return open_path(dir, path, access, options, map, out);
}

cio_err cio__win_rename_source(cio_dir old_dir, const char *old_path, const char *new_path, void **h)
{
    return rename_source(old_dir, old_path, new_path, h);
}

cio_err cio__win_narrow(cio_err e, bool (*contains)(cio_err))
{
    return narrow(e, contains);
}

cio_nt_unicode_string *cio__win_path_name(struct cio__win_path *p)
{
    return &p->name;
}

void *cio__win_path_root(struct cio__win_path *p)
{
    return p->root;
}
