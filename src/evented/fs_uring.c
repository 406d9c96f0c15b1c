/*
 * The file and directory slots the io_uring flavour runs as ring operations (Linux): opening files
 * and directories (OPENAT), stat by path and of an open file (STATX), mkdir (MKDIRAT), rename
 * (RENAMEAT) and rename without replace (RENAMEAT with RENAME_NOREPLACE), symbolic and hard links by
 * path (SYMLINKAT, LINKAT), a name for an open file (LINKAT with AT_EMPTY_PATH, else of its
 * /proc/self/fd name), deleting files and directories (UNLINKAT), set_length (FTRUNCATE, 6.9: its
 * opcode comes from spec/syscalls.yaml, cio/sysnum.h) and closing (CLOSE). cio__e_uring_fs_override puts
 * each into the instance's vtable only when the probe found its opcode; the others stay on the
 * helper pool (fs.c), as do the slots no opcode covers (create_dir_path walks, access, dir_read,
 * set_timestamps, the executable).
 *
 * Invariants:
 * - Semantics are the Threaded backend's (fs_posix.c): the same path checks, open(2) flags and
 *   modes (its helpers, fs_posix.h), the same errno map per operation (fstatat/fstat for STATX,
 *   since Threaded reports what those calls would), the same error sets.
 * - Every operation but close is cancelable. An OPENAT whose completion shows a descriptor although
 *   a cancel was requested returns that descriptor (success), and the request stays pending for the
 *   next cancellation point: a Threaded openat that returned before its signal does the same. Only
 *   a completion with -ECANCELED/-EINTR is the cancel (no descriptor exists then), so none leaks.
 * - A caller that is not one of the instance's fibers runs the operation as a fiber (cio__e_run) or,
 *   when no fiber can be had for it, makes the Threaded call itself (fs_direct), as the helper path
 *   does for such callers; close it always makes directly.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cio/errmap.h"
#include "cio/sysnum.h"
#include "evented.h"
#include "fs_posix.h"
#include "internal.h"
#include "os.h"
#include "uring.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1u /* <linux/fs.h> */
#endif

enum fs_kind {
    K_OPEN_FILE,
    K_OPEN_DIR,
    K_MKDIR,
    K_RENAME,
    K_RENAME_PRESERVE,
    K_SYMLINK,
    K_LINK,
    K_LINK_FD,
    K_UNLINK,
    K_RMDIR,
    K_STAT_PATH,
    K_STAT_FD,
    K_TRUNCATE
};

struct fsop {
    struct cio_evented *e;
    enum fs_kind kind;
    int dirfd;
    const char *path;
    int flags; /* open(2) flags; statx flags */
    unsigned mode;
    bool forbid_directory;
    int dirfd2; /* rename's target */
    const char *path2;
    uint64_t length; /* ftruncate's */
    int *fd_out;
    cio_stat *stat_out;
    bool ran;             /* fs_run started (cio__e_run found a fiber for it) */
    const void *options;  /* the slot's own options, for the direct call (fs_direct) */
    unsigned stat_flags;  /* the slot's CIO_STAT_* flags */
    uint32_t permissions; /* dir_create_dir's */
    unsigned link_flags;  /* the slot's CIO_SYM_LINK_DIRECTORY / CIO_NO_FOLLOW (sym_link, hard_link) */
};

static cio_timestamp ts_from_statx(struct statx_timestamp t)
{
    cio_timestamp ts;
    ts.ns = t.tv_sec * INT64_C(1000000000) + (int64_t)t.tv_nsec;
    return ts;
}

static void stat_from_statx(const struct statx *sx, cio_stat *out)
{
    memset(out, 0, sizeof *out);
    out->inode = sx->stx_ino;
    out->size = sx->stx_size;
    out->nlink = sx->stx_nlink;
    out->mode = (uint32_t)(sx->stx_mode & 07777u);
    out->kind = cio__os_fs_kind_from_mode(sx->stx_mode);
    out->has_atime = true;
    out->atime = ts_from_statx(sx->stx_atime);
    out->mtime = ts_from_statx(sx->stx_mtime);
    out->ctime = ts_from_statx(sx->stx_ctime);
}

static struct io_uring_sqe sqe_for(uint8_t opcode, int fd, const char *path)
{
    struct io_uring_sqe sqe;
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = opcode;
    sqe.fd = fd;
    sqe.addr = (uint64_t)(uintptr_t)path;
    return sqe;
}

/* statx by path (flags: AT_SYMLINK_NOFOLLOW or 0) or of an open descriptor (path ""). */
static cio_err ring_statx(struct cio_evented *e, int fd, const char *path, int flags, cio__mapped (*map)(int),
                          cio_stat *out)
{
    struct statx sx;
    memset(&sx, 0, sizeof sx);
    struct io_uring_sqe sqe = sqe_for(IORING_OP_STATX, fd, path);
    sqe.len = STATX_BASIC_STATS;
    sqe.off = (uint64_t)(uintptr_t)&sx; /* addr2 */
    sqe.statx_flags = (uint32_t)(flags | AT_STATX_SYNC_AS_STAT | (path[0] == '\0' ? AT_EMPTY_PATH : 0));
    int32_t res;
    cio_err err = cio__e_uring_call(e, &sqe, -1, true, map, &res);
    if (err == CIO_OK)
        stat_from_statx(&sx, out);
    return err;
}

/* open_file's directory check: a stat of the new descriptor (errors as Threaded's fstat). */
static cio_err is_directory(struct cio_evented *e, int fd, bool *dir)
{
    cio_stat st;
    cio_err err = cio__e_uring_has(e, IORING_OP_STATX) ? ring_statx(e, fd, "", 0, cio__errno_fstat, &st)
                                                       : cio__os_file_stat(NULL, (cio_file){fd}, &st);
    *dir = err == CIO_OK && st.kind == CIO_FILE_KIND_DIRECTORY;
    return err;
}

/* file_hard_link, fs_linkfd_linux.c's two steps as LINKATs: the open file itself (AT_EMPTY_PATH), which needs
 * CAP_DAC_READ_SEARCH and says ENOENT without it; then its /proc/self/fd name with AT_SYMLINK_FOLLOW (the ring's
 * workers are threads of this process: the name is this process's descriptor). */
static cio_err ring_link_fd(struct fsop *a)
{
    struct io_uring_sqe sqe = sqe_for(IORING_OP_LINKAT, a->dirfd, "");
    sqe.len = (uint32_t)a->dirfd2;
    sqe.off = (uint64_t)(uintptr_t)a->path2; /* addr2 */
    sqe.hardlink_flags = (uint32_t)AT_EMPTY_PATH;
    int32_t res;
    cio_err err = cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_linkat, &res);
    if (err != CIO_E_FILE_NOT_FOUND)
        return err;
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->dirfd);
    sqe = sqe_for(IORING_OP_LINKAT, AT_FDCWD, proc);
    sqe.len = (uint32_t)a->dirfd2;
    sqe.off = (uint64_t)(uintptr_t)a->path2;
    sqe.hardlink_flags = (uint32_t)AT_SYMLINK_FOLLOW;
    return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_linkat, &res);
}

static cio_err fs_run(void *p)
{
    struct fsop *a = (struct fsop *)p;
    a->ran = true;
    struct io_uring_sqe sqe;
    int32_t res = 0;
    cio_err err;
    switch (a->kind) {
    case K_OPEN_FILE:
    case K_OPEN_DIR:
        sqe = sqe_for(IORING_OP_OPENAT, a->dirfd, a->path);
        sqe.len = a->mode;
        sqe.open_flags = (uint32_t)a->flags;
        err = cio__e_uring_call(a->e, &sqe, -1, true, a->kind == K_OPEN_DIR ? cio__errno_openat_dir : cio__errno_openat,
                                &res);
        if (err != CIO_OK)
            return err;
        if (res < 0)
            return CIO_E_UNEXPECTED;
        if (a->forbid_directory) {
            /* Opening a directory for writing is EISDIR already; read-only needs a look. */
            bool dir = false;
            err = is_directory(a->e, res, &dir);
            if (err == CIO_OK && dir)
                err = CIO_E_IS_DIR;
            if (err != CIO_OK) {
                (void)cio__os_file_close(NULL, (cio_file){res});
                return err;
            }
        }
        *a->fd_out = res;
        return CIO_OK;
    case K_MKDIR:
        sqe = sqe_for(IORING_OP_MKDIRAT, a->dirfd, a->path);
        sqe.len = a->mode;
        return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_mkdirat, &res);
    case K_RENAME:
        sqe = sqe_for(IORING_OP_RENAMEAT, a->dirfd, a->path);
        sqe.len = (uint32_t)a->dirfd2;
        sqe.off = (uint64_t)(uintptr_t)a->path2; /* addr2 */
        return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_renameat, &res);
    case K_RENAME_PRESERVE: /* the kernel refuses an existing target atomically, as renameat2 does */
        sqe = sqe_for(IORING_OP_RENAMEAT, a->dirfd, a->path);
        sqe.len = (uint32_t)a->dirfd2;
        sqe.off = (uint64_t)(uintptr_t)a->path2; /* addr2 */
        sqe.rename_flags = RENAME_NOREPLACE;
        return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_renameat2, &res);
    case K_SYMLINK: /* symlinkat(path, dirfd2, path2): the target, then where the link goes */
        sqe = sqe_for(IORING_OP_SYMLINKAT, a->dirfd2, a->path);
        sqe.off = (uint64_t)(uintptr_t)a->path2; /* addr2 */
        return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_symlinkat, &res);
    case K_LINK:
        sqe = sqe_for(IORING_OP_LINKAT, a->dirfd, a->path);
        sqe.len = (uint32_t)a->dirfd2;
        sqe.off = (uint64_t)(uintptr_t)a->path2; /* addr2 */
        sqe.hardlink_flags = (a->link_flags & CIO_NO_FOLLOW) ? 0u : (uint32_t)AT_SYMLINK_FOLLOW;
        return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_linkat, &res);
    case K_LINK_FD: return ring_link_fd(a);
    case K_UNLINK:
    case K_RMDIR:
        sqe = sqe_for(IORING_OP_UNLINKAT, a->dirfd, a->path);
        sqe.unlink_flags = a->kind == K_RMDIR ? (uint32_t)AT_REMOVEDIR : 0u;
        return cio__e_uring_call(a->e, &sqe, -1, true,
                                 a->kind == K_RMDIR ? cio__errno_unlinkat_dir : cio__errno_unlinkat, &res);
    case K_STAT_PATH: return ring_statx(a->e, a->dirfd, a->path, a->flags, cio__errno_fstatat, a->stat_out);
    case K_STAT_FD: return ring_statx(a->e, a->dirfd, "", 0, cio__errno_fstat, a->stat_out);
    case K_TRUNCATE:
        sqe = sqe_for(CIO_IORING_OP_FTRUNCATE, a->dirfd, NULL);
        sqe.off = a->length;
        return cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_ftruncate, &res);
    }
    return CIO_E_UNEXPECTED;
}

/* fd_out is &out->handle, the first member of the slot's cio_file / cio_dir: the same address. */
_Static_assert(offsetof(cio_file, handle) == 0 && offsetof(cio_dir, handle) == 0, "handle first");

/* The Threaded slot, on the calling thread: for a thread that is not a fiber of e when no fiber could
 * be made for it (memory), as the helper path does for such threads. */
static cio_err fs_direct(struct fsop *a)
{
    cio_dir dir = {a->dirfd};
    switch (a->kind) {
    case K_OPEN_FILE:
        return (a->flags & O_CREAT)
                   ? cio__os_dir_create_file(NULL, dir, a->path, (const cio_create_file_options *)a->options,
                                             (cio_file *)(void *)a->fd_out)
                   : cio__os_dir_open_file(NULL, dir, a->path, (const cio_open_file_options *)a->options,
                                           (cio_file *)(void *)a->fd_out);
    case K_OPEN_DIR:
        return cio__os_dir_open_dir(NULL, dir, a->path, (const cio_open_dir_options *)a->options,
                                    (cio_dir *)(void *)a->fd_out);
    case K_MKDIR: return cio__os_dir_create_dir(NULL, dir, a->path, a->permissions);
    case K_RENAME: return cio__os_dir_rename(NULL, dir, a->path, (cio_dir){a->dirfd2}, a->path2);
    case K_RENAME_PRESERVE: return cio__os_dir_rename_preserve(NULL, dir, a->path, (cio_dir){a->dirfd2}, a->path2);
    case K_SYMLINK: return cio__os_dir_sym_link(NULL, (cio_dir){a->dirfd2}, a->path, a->path2, a->link_flags);
    case K_LINK: return cio__os_dir_hard_link(NULL, dir, a->path, (cio_dir){a->dirfd2}, a->path2, a->link_flags);
    case K_LINK_FD: return cio__os_file_hard_link(NULL, (cio_file){a->dirfd}, (cio_dir){a->dirfd2}, a->path2);
    case K_UNLINK: return cio__os_dir_delete_file(NULL, dir, a->path);
    case K_RMDIR: return cio__os_dir_delete_dir(NULL, dir, a->path);
    case K_STAT_PATH: return cio__os_dir_stat_file(NULL, dir, a->path, a->stat_flags, a->stat_out);
    case K_STAT_FD: return cio__os_file_stat(NULL, (cio_file){a->dirfd}, a->stat_out);
    case K_TRUNCATE: return cio__os_file_set_length(NULL, (cio_file){a->dirfd}, a->length);
    }
    return CIO_E_UNEXPECTED;
}

static cio_err fs_op(void *ud, struct fsop *a)
{
    a->e = (struct cio_evented *)ud;
    a->ran = false;
    cio_err err = cio__e_run(a->e, fs_run, a);
    return a->ran ? err : fs_direct(a);
}

/* ---- the slots --------------------------------------------------------------------------------------------- */

/* What opening and creating a file share: the out and path checks, then the options' verdict
 * (bad_options: they were invalid), then the operation (a->flags and a->mode set by the caller). */
static cio_err file_open_op(void *ud, cio_dir dir, const char *path, cio_file *out, struct fsop *a, bool bad_options)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    if (err != CIO_OK)
        return CIO__IN_SET(file_open, err);
    if (bad_options)
        return CIO_E_INVALID_ARGUMENT;
    a->kind = K_OPEN_FILE;
    a->dirfd = dir.handle;
    a->path = path;
    a->fd_out = &out->handle;
    if (a->flags & O_NOFOLLOW) {
        err = cio__os_fs_check_no_follow(dir, path);
        if (err != CIO_OK)
            return CIO__IN_SET(file_open, err);
    }
    return CIO__IN_SET(file_open, fs_op(ud, a));
}

static cio_err u_dir_open_file(void *ud, cio_dir dir, const char *path, const cio_open_file_options *options,
                               cio_file *out)
{
    struct fsop a = {.options = options};
    bool bad = cio__os_fs_open_file_flags(options, &a.flags, &a.forbid_directory) != CIO_OK;
    return file_open_op(ud, dir, path, out, &a, bad);
}

static cio_err u_dir_create_file(void *ud, cio_dir dir, const char *path, const cio_create_file_options *options,
                                 cio_file *out)
{
    struct fsop a = {.options = options};
    cio__os_fs_create_file_flags(options, &a.flags, &a.mode);
    return file_open_op(ud, dir, path, out, &a, false);
}

static cio_err u_dir_open_dir(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options,
                              cio_dir *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    struct fsop a = {.kind = K_OPEN_DIR, .dirfd = dir.handle, .path = path, .fd_out = &out->handle, .options = options};
    a.flags = cio__os_fs_open_dir_flags(options);
    if (err == CIO_OK && (a.flags & O_NOFOLLOW))
        err = cio__os_fs_check_no_follow(dir, path);
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(dir_open, err);
}

static cio_err u_dir_create_dir(void *ud, cio_dir dir, const char *path, uint32_t permissions)
{
    cio_err err = cio__os_fs_check_path(path);
    struct fsop a = {.kind = K_MKDIR,
                     .dirfd = dir.handle,
                     .path = path,
                     .mode = cio__os_fs_dir_mode(permissions),
                     .permissions = permissions};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(dir_create_dir, err);
}

static cio_err u_dir_rename(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    cio_err err = cio__os_fs_check_path(old_path);
    if (err == CIO_OK)
        err = cio__os_fs_check_path(new_path);
    struct fsop a = {
        .kind = K_RENAME, .dirfd = old_dir.handle, .path = old_path, .dirfd2 = new_dir.handle, .path2 = new_path};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(dir_rename, err);
}

/* The links by path (cio/fs.h's contracts, fs_links_posix.c's checks in its order): rename without
 * replace, a symbolic link (the target is the path of the SQE, the link the second one) and a hard
 * link (CIO_NO_FOLLOW: the link is to a symbolic link itself). */
static cio_err u_dir_rename_preserve(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir,
                                     const char *new_path)
{
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    struct fsop a = {.kind = K_RENAME_PRESERVE,
                     .dirfd = old_dir.handle,
                     .path = old_path,
                     .dirfd2 = new_dir.handle,
                     .path2 = new_path};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(dir_rename_preserve, err);
}

static cio_err u_dir_sym_link(void *ud, cio_dir dir, const char *target, const char *link_path, unsigned flags)
{
    if (target == NULL || (flags & ~CIO_SYM_LINK_DIRECTORY) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(link_path);
    if (err == CIO_OK)
        err = cio__os_fs_check_path(target); /* "" is FileNotFound, as Threaded says */
    struct fsop a = {.kind = K_SYMLINK, .path = target, .dirfd2 = dir.handle, .path2 = link_path, .link_flags = flags};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(dir_sym_link, err);
}

static cio_err u_dir_hard_link(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path,
                               unsigned flags)
{
    if ((flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    struct fsop a = {.kind = K_LINK,
                     .dirfd = old_dir.handle,
                     .path = old_path,
                     .dirfd2 = new_dir.handle,
                     .path2 = new_path,
                     .link_flags = flags};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(file_hard_link, err); /* Zig's Dir.HardLinkError is File.HardLinkError: one set */
}

/* A name for an open file (cio_file_hard_link): the path checked as Threaded does, then ring_link_fd. */
static cio_err u_file_hard_link(void *ud, cio_file file, cio_dir new_dir, const char *new_path)
{
    cio_err err = cio__os_fs_check_path(new_path);
    struct fsop a = {.kind = K_LINK_FD, .dirfd = file.handle, .dirfd2 = new_dir.handle, .path2 = new_path};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(file_hard_link, err);
}

/* An operation on `path` in `dir` that takes nothing else (K_UNLINK, K_RMDIR). */
static cio_err path_op(void *ud, enum fs_kind kind, cio_dir dir, const char *path)
{
    cio_err err = cio__os_fs_check_path(path);
    struct fsop a = {.kind = kind, .dirfd = dir.handle, .path = path};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return err;
}

static cio_err u_dir_delete_file(void *ud, cio_dir dir, const char *path)
{
    return CIO__IN_SET(dir_delete_file, path_op(ud, K_UNLINK, dir, path));
}

static cio_err u_dir_delete_dir(void *ud, cio_dir dir, const char *path)
{
    return CIO__IN_SET(dir_delete_dir, path_op(ud, K_RMDIR, dir, path));
}

static cio_err u_dir_stat_file(void *ud, cio_dir dir, const char *path, unsigned flags, cio_stat *out)
{
    if (out == NULL || (flags & ~CIO_STAT_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    struct fsop a = {.kind = K_STAT_PATH,
                     .dirfd = dir.handle,
                     .path = path,
                     .flags = (flags & CIO_STAT_NO_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0,
                     .stat_out = out,
                     .stat_flags = flags};
    if (err == CIO_OK)
        err = fs_op(ud, &a);
    return CIO__IN_SET(dir_stat_file, err);
}

static cio_err u_file_stat(void *ud, cio_file file, cio_stat *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    struct fsop a = {.kind = K_STAT_FD, .dirfd = file.handle, .stat_out = out};
    return CIO__IN_SET(file_stat, fs_op(ud, &a));
}

static cio_err u_file_set_length(void *ud, cio_file file, uint64_t length)
{
    if (length > (uint64_t)INT64_MAX)
        return CIO__IN_SET(file_set_length, CIO_E_FILE_TOO_BIG);
    struct fsop a = {.kind = K_TRUNCATE, .dirfd = file.handle, .length = length};
    return CIO__IN_SET(file_set_length, fs_op(ud, &a)); /* never moves the offset */
}

/* close: on the ring from one of the instance's fibers (not cancelable: the descriptor is always
 * gone afterwards, as with close(2)); directly from any other thread. */
static cio_err ring_close(void *ud, int fd)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    cio__e_fd_renew(fd, false);
    if (cio__e_self(e) == NULL)
        return cio__os_file_close(NULL, (cio_file){fd});
    CIO__E_URING_CLOSE_HOOK(fd);
    struct io_uring_sqe sqe = sqe_for(IORING_OP_CLOSE, fd, NULL);
    int32_t res;
    /* EBADF: NotOpen; EINTR never retried (the descriptor is gone) */
    return cio__e_uring_call(e, &sqe, -1, false, cio__errno_close_handle, &res);
}

static cio_err u_file_close(void *ud, cio_file file)
{
    return ring_close(ud, file.handle);
}

static cio_err u_dir_close(void *ud, cio_dir dir)
{
    return ring_close(ud, dir.handle);
}

void cio__e_uring_fs_override(struct cio_evented *e, struct cio_vtable *vt)
{
    if (cio__e_uring_has(e, IORING_OP_OPENAT)) {
        vt->dir_open_file = u_dir_open_file;
        vt->dir_create_file = u_dir_create_file;
        vt->dir_open_dir = u_dir_open_dir;
    }
    if (cio__e_uring_has(e, IORING_OP_MKDIRAT))
        vt->dir_create_dir = u_dir_create_dir;
    if (cio__e_uring_has(e, IORING_OP_RENAMEAT)) {
        vt->dir_rename = u_dir_rename;
        vt->dir_rename_preserve = u_dir_rename_preserve;
    }
    if (cio__e_uring_has(e, IORING_OP_SYMLINKAT))
        vt->dir_sym_link = u_dir_sym_link;
    if (cio__e_uring_has(e, IORING_OP_LINKAT)) {
        vt->dir_hard_link = u_dir_hard_link;
        vt->file_hard_link = u_file_hard_link;
    }
    if (cio__e_uring_has(e, IORING_OP_UNLINKAT)) {
        vt->dir_delete_file = u_dir_delete_file;
        vt->dir_delete_dir = u_dir_delete_dir;
    }
    if (cio__e_uring_has(e, IORING_OP_STATX)) {
        vt->dir_stat_file = u_dir_stat_file;
        vt->file_stat = u_file_stat;
    }
    if (cio__e_uring_has(e, CIO_IORING_OP_FTRUNCATE))
        vt->file_set_length = u_file_set_length;
    if (cio__e_uring_has(e, IORING_OP_CLOSE)) {
        vt->file_close = u_file_close;
        vt->dir_close = u_dir_close;
    }
}
