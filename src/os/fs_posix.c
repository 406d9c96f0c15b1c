/*
 * Files and directories for the Threaded backend on Linux (glibc) and WASI (wasi-libc), written
 * against POSIX-2008 calls (openat, mkdirat, unlinkat, renameat, fstatat, faccessat, readv/writev,
 * preadv/pwritev, lseek, ftruncate, fsync, futimens). The OS half is fs_linux.c / fs_wasi.c:
 * directory reading (getdents64 / fd_readdir) and the few places where the OS differs (faccessat's
 * flags, hosts that ignore O_NOFOLLOW or UTIME_NOW), declared in fs_posix.h.
 *
 * Invariants:
 * - Every blocking syscall runs inside the cancellation bracket (CIO__OS_SYSCALL): EINTR retries the
 *   call unless a cancel request arrived, which ends the call with CIO_E_CANCELED; every other errno
 *   goes through the generated map for that operation (cio__errno_<op>): BUG prints a line in debug builds
 *   and is Unexpected otherwise, ERROR is the mapped error, anything unmapped is Unexpected. No raw
 *   errno value ever leaves this file.
 * - Every slot returns CIO_OK, CIO_E_INVALID_ARGUMENT (a NULL pointer or impossible argument, checked
 *   before any syscall and deliberately not asserted: callers may test it), or a member of the
 *   slot's error set (checked with CIO__IN_SET in debug builds).
 * - Paths are checked before the OS sees them: NULL is InvalidArgument, PATH_MAX bytes or more is
 *   NameTooLong, "" is FileNotFound (Linux's ENOENT for it, decided here because WASI hosts say
 *   EINVAL).
 * - no_follow_symlinks is O_NOFOLLOW, after the OS half's check (cio__os_fs_check_no_follow) for
 *   hosts that ignore it.
 * - Every descriptor is opened with O_CLOEXEC (and files with O_NOCTTY); no descriptor is leaked on
 *   an error path.
 * - Offsets: streaming calls use and move the descriptor's offset; positional calls and
 *   set_length (ftruncate) never move it.
 * - Vectored calls pass at most IOV_MAX buffers per syscall (more are clamped: a partial transfer,
 *   which the callers' loops handle).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* renameat */
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

/* cio_iovec and cio_const_iovec are passed to readv/writev as struct iovec: same layout. */
_Static_assert(sizeof(cio_iovec) == sizeof(struct iovec), "cio_iovec layout");
_Static_assert(offsetof(cio_iovec, base) == offsetof(struct iovec, iov_base), "cio_iovec layout");
_Static_assert(offsetof(cio_iovec, len) == offsetof(struct iovec, iov_len), "cio_iovec layout");
_Static_assert(sizeof(cio_const_iovec) == sizeof(struct iovec), "cio_const_iovec layout");
_Static_assert(offsetof(cio_const_iovec, base) == offsetof(struct iovec, iov_base), "cio_const_iovec layout");
_Static_assert(offsetof(cio_const_iovec, len) == offsetof(struct iovec, iov_len), "cio_const_iovec layout");

/* NULL: InvalidArgument; PATH_MAX bytes or more: NameTooLong (the kernel's limit counts the NUL);
 * "": FileNotFound. */
cio_err cio__os_fs_check_path(const char *path)
{
    if (path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (path[0] == '\0')
        return CIO_E_FILE_NOT_FOUND;
    if (strnlen(path, PATH_MAX) >= PATH_MAX)
        return CIO_E_NAME_TOO_LONG;
    return CIO_OK;
}


static cio_timestamp ts_from_timespec(struct timespec t)
{
    cio_timestamp ts;
    ts.ns = (int64_t)t.tv_sec * INT64_C(1000000000) + (int64_t)t.tv_nsec;
    return ts;
}

cio_file_kind cio__os_fs_kind_from_mode(unsigned mode)
{
    switch ((mode_t)mode & S_IFMT) {
    case S_IFREG: return CIO_FILE_KIND_FILE;
    case S_IFDIR: return CIO_FILE_KIND_DIRECTORY;
    case S_IFLNK: return CIO_FILE_KIND_SYM_LINK;
#if S_IFIFO != S_IFSOCK /* WASI: one value, a socket stream */
    case S_IFIFO: return CIO_FILE_KIND_NAMED_PIPE;
#endif
    case S_IFSOCK: return CIO_FILE_KIND_UNIX_DOMAIN_SOCKET;
    case S_IFBLK: return CIO_FILE_KIND_BLOCK_DEVICE;
    case S_IFCHR: return CIO_FILE_KIND_CHARACTER_DEVICE;
    default: return CIO_FILE_KIND_UNKNOWN;
    }
}

void cio__os_fs_stat_from_os(const struct stat *st, cio_stat *out)
{
    memset(out, 0, sizeof *out);
    out->inode = (uint64_t)st->st_ino;
    out->size = st->st_size < 0 ? 0 : (uint64_t)st->st_size;
    out->nlink = (uint64_t)st->st_nlink;
    out->mode = (uint32_t)(st->st_mode & 07777);
    out->kind = cio__os_fs_kind_from_mode((unsigned)st->st_mode);
    out->has_atime = true;
    out->atime = ts_from_timespec(st->st_atim);
    out->mtime = ts_from_timespec(st->st_mtim);
    out->ctime = ts_from_timespec(st->st_ctim);
}

/* close(2) never retried: on Linux the descriptor is gone even when it reports EINTR. A descriptor
 * that was not open is NotOpen (the public wrapper's debug line names it). */
static cio_err close_fd(int fd)
{
    if (CIO__SYS(close, fs_close_fd)(fd) == 0)
        return CIO_OK;
    cio__mapped m = cio__errno_close_handle(errno);
    return m.action == CIO__MAP_OK ? CIO_OK : m.err;
}

/* fstat inside the bracket (used by file_stat and by open_file's directory check). */
static cio_err fstat_fd(int fd, struct stat *st)
{
    cio_err err;
    CIO__OS_CALL(err, fstat, CIO__SYS(fstat, fstat_fd)(fd, st));
    return err;
}

/* ---- flags and modes (fs_posix.h: shared with the Evented backend's ring operations) ----------- */

cio_err cio__os_fs_open_file_flags(const cio_open_file_options *options, int *flags, bool *forbid_directory)
{
    static const cio_open_file_options defaults = {CIO_OPEN_READ_ONLY, false, false};
    if (options == NULL)
        options = &defaults;
    int f = O_CLOEXEC | O_NOCTTY;
    switch (options->mode) {
    case CIO_OPEN_READ_ONLY: f |= O_RDONLY; break;
    case CIO_OPEN_WRITE_ONLY: f |= O_WRONLY; break;
    case CIO_OPEN_READ_WRITE: f |= O_RDWR; break;
    default: return CIO_E_INVALID_ARGUMENT;
    }
    if (options->no_follow_symlinks)
        f |= O_NOFOLLOW;
    *flags = f;
    *forbid_directory = options->forbid_directory;
    return CIO_OK;
}

void cio__os_fs_create_file_flags(const cio_create_file_options *options, int *flags, unsigned *mode)
{
    static const cio_create_file_options defaults = {false, true, false, 0};
    if (options == NULL)
        options = &defaults;
    int f = O_CREAT | O_CLOEXEC | O_NOCTTY | (options->read ? O_RDWR : O_WRONLY);
    if (options->truncate)
        f |= O_TRUNC;
    if (options->exclusive)
        f |= O_EXCL;
    *flags = f;
    *mode = options->permissions == 0 ? 0666u : (options->permissions & 07777u);
}

int cio__os_fs_open_dir_flags(const cio_open_dir_options *options)
{
    int f = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    if (options != NULL && options->no_follow_symlinks)
        f |= O_NOFOLLOW;
    return f;
}

unsigned cio__os_fs_dir_mode(uint32_t permissions)
{
    return permissions == 0 ? 0777u : (permissions & 07777u);
}

/* ---- directories ------------------------------------------------------------------------------ */

/* The first checks of a slot that opens `path` into *out: InvalidArgument for no out, then the path's. */
static cio_err check_out_path(const void *out, const char *path)
{
    return out == NULL ? CIO_E_INVALID_ARGUMENT : cio__os_fs_check_path(path);
}

cio_err cio__os_dir_open_file(void *ud, cio_dir dir, const char *path, const cio_open_file_options *options,
                              cio_file *out)
{
    (void)ud;
    cio_err err = check_out_path(out, path);
    if (err != CIO_OK)
        return CIO__IN_SET(file_open, err);
    int flags;
    bool forbid_directory;
    if (cio__os_fs_open_file_flags(options, &flags, &forbid_directory) != CIO_OK)
        return CIO_E_INVALID_ARGUMENT;
    if (flags & O_NOFOLLOW) {
        err = cio__os_fs_check_no_follow(dir, path);
        if (err != CIO_OK)
            return CIO__IN_SET(file_open, err);
    }

    int fd;
    CIO__OS_SYSCALL(err, fd, openat, CIO__SYS(openat, open_file)(dir.handle, path, flags, 0));
    if (err != CIO_OK)
        return CIO__IN_SET(file_open, err);
    if (forbid_directory) {
        /* Opening a directory for writing is EISDIR already; read-only needs a look. */
        struct stat st;
        err = fstat_fd(fd, &st);
        if (err == CIO_OK && S_ISDIR(st.st_mode))
            err = CIO_E_IS_DIR;
        if (err != CIO_OK) {
            close_fd(fd);
            return CIO__IN_SET(file_open, err);
        }
    }
    out->handle = fd;
    return CIO_OK;
}

cio_err cio__os_dir_create_file(void *ud, cio_dir dir, const char *path, const cio_create_file_options *options,
                                cio_file *out)
{
    (void)ud;
    int flags, fd = -1;
    unsigned mode;
    cio__os_fs_create_file_flags(options, &flags, &mode); /* options has no invalid value */
    cio_err err = check_out_path(out, path);
    if (err == CIO_OK)
        CIO__OS_SYSCALL(err, fd, openat, CIO__SYS(openat, create_file)(dir.handle, path, flags, (mode_t)mode));
    if (err == CIO_OK)
        out->handle = fd;
    return CIO__IN_SET(file_open, err);
}

/* The open behind open_dir and create_dir_path_open; errors unchecked (the callers' sets differ). */
static cio_err open_dir(cio_dir dir, const char *path, const cio_open_dir_options *options, cio_dir *out)
{
    int flags = cio__os_fs_open_dir_flags(options);
    cio_err err;
    if (flags & O_NOFOLLOW) {
        err = cio__os_fs_check_no_follow(dir, path);
        if (err != CIO_OK)
            return err;
    }
    int fd;
    CIO__OS_SYSCALL(err, fd, openat_dir, CIO__SYS(openat, open_dir)(dir.handle, path, flags, 0));
    if (err == CIO_OK)
        out->handle = fd;
    return err;
}

cio_err cio__os_dir_open_dir(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options, cio_dir *out)
{
    (void)ud;
    cio_err err = check_out_path(out, path);
    if (err == CIO_OK)
        err = open_dir(dir, path, options, out);
    return CIO__IN_SET(dir_open, err);
}

static cio_err mkdir_at(cio_dir dir, const char *path, uint32_t permissions)
{
    mode_t mode = (mode_t)cio__os_fs_dir_mode(permissions);
    cio_err err;
    CIO__OS_CALL(err, mkdirat, CIO__SYS(mkdirat, mkdir_at)(dir.handle, path, mode));
    return err;
}

cio_err cio__os_dir_create_dir(void *ud, cio_dir dir, const char *path, uint32_t permissions)
{
    (void)ud;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK)
        err = mkdir_at(dir, path, permissions);
    return CIO__IN_SET(dir_create_dir, err);
}

/* fstatat inside the bracket; flags as fstatat's. */
static cio_err stat_at(cio_dir dir, const char *path, int flags, struct stat *st)
{
    cio_err err;
    CIO__OS_CALL(err, fstatat, CIO__SYS(fstatat, stat_at)(dir.handle, path, st, flags));
    return err;
}

/*
 * mkdir -p. `buf` holds a copy of the path, cut at `end` (the end of the component being created)
 * by a NUL; putting the saved byte back undoes the cut. Starting with the full path, a missing
 * parent (FileNotFound) steps back one component, a created or existing directory steps forward;
 * an existing non-directory is NotDir. Zig's makePath does the same walk.
 */
static cio_err make_path(cio_dir dir, const char *path, uint32_t permissions, bool *created)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    memcpy(buf, path, len + 1);
    while (len > 1 && buf[len - 1] == '/') /* "a/b/" is "a/b"; "/" stays */
        buf[--len] = '\0';
    size_t end = len;
    for (;;) {
        char cut_char = buf[end];
        buf[end] = '\0';
        cio_err err = mkdir_at(dir, buf, permissions);
        bool made = err == CIO_OK;
        if (err == CIO_E_PATH_ALREADY_EXISTS) {
            struct stat st;
            err = stat_at(dir, buf, 0, &st); /* follows: a symlink to a directory is fine */
            if (err == CIO_OK && !S_ISDIR(st.st_mode))
                err = CIO_E_NOT_DIR;
        } else if (err == CIO_E_FILE_NOT_FOUND) {
            /* Step back to the previous component, if there is one. */
            size_t p = end;
            while (p > 0 && buf[p - 1] != '/')
                p--;
            while (p > 0 && buf[p - 1] == '/')
                p--;
            buf[end] = cut_char;
            if (p == 0)
                return err;
            end = p;
            continue;
        }
        buf[end] = cut_char;
        if (err != CIO_OK)
            return err;
        if (end == len) {
            if (created != NULL)
                *created = made;
            return CIO_OK;
        }
        /* Forward to the end of the next component. */
        while (end < len && buf[end] == '/')
            end++;
        while (end < len && buf[end] != '/')
            end++;
    }
}

cio_err cio__os_dir_create_dir_path(void *ud, cio_dir dir, const char *path, uint32_t permissions, bool *created)
{
    (void)ud;
    if (created != NULL)
        *created = false;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK)
        err = make_path(dir, path, permissions, created);
    return CIO__IN_SET(dir_make_path, err);
}

cio_err cio__os_dir_create_dir_path_open(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options,
                                         cio_dir *out)
{
    (void)ud;
    cio_err err = check_out_path(out, path);
    /* Open first (the common case: it exists); on FileNotFound create the path and open again. A
     * concurrent rmdir between the two can make the second open miss as well: try a few times.
     * make_path itself tolerates a concurrent mkdir of the same path. */
    for (int attempt = 0; err == CIO_OK; attempt++) {
        err = open_dir(dir, path, options, out);
        if (err != CIO_E_FILE_NOT_FOUND || attempt == 3)
            break;
        err = make_path(dir, path, 0, NULL);
    }
    return CIO__IN_SET(dir_make_open_path, err);
}

cio_err cio__os_dir_rename(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    (void)ud;
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    if (err == CIO_OK) {
        CIO__OS_CALL(err, renameat, CIO__SYS(renameat, rename)(old_dir.handle, old_path, new_dir.handle, new_path));
    }
    return CIO__IN_SET(dir_rename, err);
}

cio_err cio__os_dir_delete_file(void *ud, cio_dir dir, const char *path)
{
    (void)ud;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        CIO__OS_CALL(err, unlinkat, CIO__SYS(unlinkat, delete_file)(dir.handle, path, 0));
    }
    return CIO__IN_SET(dir_delete_file, err);
}

cio_err cio__os_dir_delete_dir(void *ud, cio_dir dir, const char *path)
{
    (void)ud;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        CIO__OS_CALL(err, unlinkat_dir, CIO__SYS(unlinkat, delete_dir)(dir.handle, path, AT_REMOVEDIR));
    }
    return CIO__IN_SET(dir_delete_dir, err);
}

cio_err cio__os_dir_stat_file(void *ud, cio_dir dir, const char *path, unsigned flags, cio_stat *out)
{
    (void)ud;
    if (out == NULL || (flags & ~CIO_STAT_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        struct stat st;
        err = stat_at(dir, path, (flags & CIO_STAT_NO_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0, &st);
        if (err == CIO_OK)
            cio__os_fs_stat_from_os(&st, out);
    }
    return CIO__IN_SET(dir_stat_file, err);
}

cio_err cio__os_dir_access(void *ud, cio_dir dir, const char *path, unsigned mode)
{
    (void)ud;
    if ((mode & ~(CIO_ACCESS_READ | CIO_ACCESS_WRITE | CIO_ACCESS_EXECUTE)) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        int how = mode == 0 ? F_OK : 0;
        if (mode & CIO_ACCESS_READ)
            how |= R_OK;
        if (mode & CIO_ACCESS_WRITE)
            how |= W_OK;
        if (mode & CIO_ACCESS_EXECUTE)
            how |= X_OK;
        /* The question is "would open work", which the effective ids decide (the OS half's
         * flags: AT_EACCESS in set-id programs). */
        int at = cio__os_fs_access_flags();
        CIO__OS_CALL(err, faccessat, CIO__SYS(faccessat, access)(dir.handle, path, how, at));
    }
    return CIO__IN_SET(dir_access, err);
}

cio_err cio__os_dir_close(void *ud, cio_dir dir)
{
    (void)ud;
    return close_fd(dir.handle);
}

/* ---- files ------------------------------------------------------------------------------------ */

static int clamp_iovcnt(size_t iovcnt)
{
    return (int)(iovcnt > CIO__OS_IOV_MAX ? CIO__OS_IOV_MAX : iovcnt);
}

/* The four vectored transfers of a file. */
enum transfer_op { READ_STREAMING, WRITE_STREAMING, READ_POSITIONAL, WRITE_POSITIONAL };

/* One transfer: the argument checks (the offset matters only to the positional ones, which the
 * streaming ones pass as 0), the call in the bracket through its own errno map, the count. */
static cio_err transfer(enum transfer_op op, int fd, const void *iov, size_t iovcnt, uint64_t offset, size_t *count)
{
    if (count == NULL || (iov == NULL && iovcnt > 0) || offset > (uint64_t)INT64_MAX)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    const struct iovec *v = (const struct iovec *)iov;
    int cnt = clamp_iovcnt(iovcnt);
    off_t at = (off_t)offset;
    cio_err err;
    ssize_t n;
    if (op == READ_STREAMING)
        CIO__OS_SYSCALL(err, n, readv, CIO__SYS(readv, file_read_streaming)(fd, v, cnt));
    else if (op == WRITE_STREAMING)
        CIO__OS_SYSCALL(err, n, writev, CIO__SYS(writev, file_write_streaming)(fd, v, cnt));
    else if (op == READ_POSITIONAL)
        CIO__OS_SYSCALL(err, n, preadv, CIO__SYS(preadv, file_read_positional)(fd, v, cnt, at));
    else
        CIO__OS_SYSCALL(err, n, pwritev, CIO__SYS(pwritev, file_write_positional)(fd, v, cnt, at));
    if (err == CIO_OK)
        *count = (size_t)n;
    return err;
}

cio_err cio__os_file_read_streaming(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    (void)ud;
    return CIO__IN_SET(file_reader, transfer(READ_STREAMING, file.handle, iov, iovcnt, 0, nread));
}

cio_err cio__os_file_write_streaming(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                     size_t *nwritten)
{
    (void)ud;
    return CIO__IN_SET(file_write_streaming, transfer(WRITE_STREAMING, file.handle, iov, iovcnt, 0, nwritten));
}

cio_err cio__os_file_read_positional(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                     size_t *nread)
{
    (void)ud;
    return CIO__IN_SET(file_read_positional, transfer(READ_POSITIONAL, file.handle, iov, iovcnt, offset, nread));
}

cio_err cio__os_file_write_positional(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                      uint64_t offset, size_t *nwritten)
{
    (void)ud;
    return CIO__IN_SET(file_write_positional, transfer(WRITE_POSITIONAL, file.handle, iov, iovcnt, offset, nwritten));
}

cio_err cio__os_file_seek(void *ud, cio_file file, int whence, int64_t offset, uint64_t *pos)
{
    (void)ud;
    int how;
    switch (whence) {
    case 0: how = SEEK_SET; break;
    case 1: how = SEEK_CUR; break;
    default: return CIO_E_INVALID_ARGUMENT;
    }
    cio_err err;
    off_t r;
    /* whence 0 carries a uint64 offset: one past INT64_MAX arrives negative and lseek says EINVAL,
     * which the map calls Unseekable. */
    CIO__OS_SYSCALL(err, r, lseek, CIO__SYS(lseek, file_seek)(file.handle, (off_t)offset, how));
    if (err == CIO_OK && pos != NULL)
        *pos = (uint64_t)r;
    return CIO__IN_SET(file_seek, err);
}

cio_err cio__os_file_stat(void *ud, cio_file file, cio_stat *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    struct stat st;
    cio_err err = fstat_fd(file.handle, &st);
    if (err == CIO_OK)
        cio__os_fs_stat_from_os(&st, out);
    return CIO__IN_SET(file_stat, err);
}

cio_err cio__os_file_set_length(void *ud, cio_file file, uint64_t length)
{
    (void)ud;
    if (length > (uint64_t)INT64_MAX)
        return CIO__IN_SET(file_set_length, CIO_E_FILE_TOO_BIG);
    cio_err err;
    CIO__OS_CALL(err, ftruncate,
                 CIO__SYS(ftruncate, file_set_length)(file.handle, (off_t)length)); /* never moves the offset */
    return CIO__IN_SET(file_set_length, err);
}

cio_err cio__os_file_sync(void *ud, cio_file file)
{
    (void)ud;
    cio_err err;
    CIO__OS_CALL(err, fsync, CIO__SYS(fsync, file_sync)(file.handle));
    return CIO__IN_SET(file_sync, err);
}

bool cio__os_fs_timespec_for(cio_timestamp_action action, cio_timestamp t, struct timespec *out)
{
    switch (action) {
    case CIO_TIMESTAMP_UNCHANGED:
        out->tv_sec = 0;
        out->tv_nsec = UTIME_OMIT;
        return true;
    case CIO_TIMESTAMP_NOW:
        out->tv_sec = 0;
        out->tv_nsec = UTIME_NOW;
        return true;
    case CIO_TIMESTAMP_SET: {
        int64_t sec = t.ns / INT64_C(1000000000);
        int64_t nsec = t.ns % INT64_C(1000000000);
        if (nsec < 0) { /* floor: -1 ns is 1969-12-31T23:59:59.999999999 */
            sec -= 1;
            nsec += INT64_C(1000000000);
        }
        if ((int64_t)(time_t)sec != sec) /* a 32-bit time_t cannot hold it */
            return false;
        out->tv_sec = (time_t)sec;
        out->tv_nsec = (long)nsec;
        return true;
    }
    default: return false;
    }
}

cio_err cio__os_file_set_timestamps(void *ud, cio_file file, const cio_set_timestamps *ts)
{
    (void)ud;
    struct timespec times[2];
    if (ts == NULL || !cio__os_fs_timespec_for(ts->access_action, ts->access, &times[0]) ||
        !cio__os_fs_timespec_for(ts->modify_action, ts->modify, &times[1]))
        return CIO_E_INVALID_ARGUMENT;
    if (!cio__os_fs_adjust_times(times))
        return CIO_OK;
    cio_err err;
    CIO__OS_CALL(err, futimens, CIO__SYS(futimens, file_set_timestamps)(file.handle, times));
    return CIO__IN_SET(file_set_timestamps, err);
}

cio_err cio__os_file_close(void *ud, cio_file file)
{
    (void)ud;
    cio__os_before_close(file.handle);
    return close_fd(file.handle);
}
