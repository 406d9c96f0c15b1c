/*
 * Links and metadata for the Threaded backend on POSIX systems (Linux, the BSDs, WASI): the
 * directory's own stat, symbolic links (symlinkat, readlinkat), hard links by path (linkat),
 * timestamps by path (utimensat) and the terminal question (isatty). Permission bits and owners are
 * fs_perms_posix.c / fs_perms_wasi.c (WASI has neither); linking an open file is fs_linkfd_linux.c /
 * fs_linkfd_none.c.
 *
 * Invariants (as fs_posix.c's):
 * - Every blocking call runs inside the cancellation bracket (CIO__OS_SYSCALL) and its errno goes
 *   through the operation's generated map; no raw errno leaves this file.
 * - Paths are checked first (cio__os_fs_check_path): NULL InvalidArgument, too long NameTooLong, ""
 *   FileNotFound. Flags other than CIO_NO_FOLLOW (CIO_SYM_LINK_DIRECTORY for sym_link) are
 *   InvalidArgument.
 * - read_link never returns a truncated target: a target that does not fit with its NUL is
 *   NameTooLong, and buf then holds "" (when it has room for one byte).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_dir_stat(void *ud, cio_dir dir, cio_stat *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_file f = {dir.handle};
    return CIO__IN_SET(file_stat, cio__os_file_stat(ud, f, out));
}

cio_err cio__os_dir_sym_link(void *ud, cio_dir dir, const char *target, const char *link_path, unsigned flags)
{
    (void)ud;
    if (target == NULL || (flags & ~CIO_SYM_LINK_DIRECTORY) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(link_path);
    if (err == CIO_OK)
        err = cio__os_fs_check_path(target); /* "" is ENOENT on Linux: FileNotFound here everywhere */
    if (err == CIO_OK) {
        CIO__OS_CALL(err, symlinkat, CIO__SYS(symlinkat, sym_link)(target, dir.handle, link_path));
    }
    return CIO__IN_SET(dir_sym_link, err);
}

cio_err cio__os_dir_read_link(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (out_len != NULL)
        *out_len = 0;
    if (buf == NULL || len == 0 || out_len == NULL)
        return CIO_E_INVALID_ARGUMENT;
    buf[0] = '\0';
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        ssize_t n;
        CIO__OS_SYSCALL(err, n, readlinkat, CIO__SYS(readlinkat, read_link)(dir.handle, path, buf, len));
        if (err == CIO_OK) {
            /* A target never holds a NUL; some readlinks count a terminating one (Node 18's WASI). */
            while (n > 0 && buf[n - 1] == '\0')
                n--;
            /* readlinkat truncates silently: a result that fills buf may have been cut, and leaves
             * no room for the NUL. */
            if ((size_t)n >= len) {
                buf[0] = '\0';
                err = CIO_E_NAME_TOO_LONG;
            } else {
                buf[n] = '\0';
                *out_len = (size_t)n;
            }
        }
    }
    return CIO__IN_SET(dir_read_link, err);
}

cio_err cio__os_dir_hard_link(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path,
                              unsigned flags)
{
    (void)ud;
    if ((flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    if (err == CIO_OK) {
        int at = (flags & CIO_NO_FOLLOW) ? 0 : AT_SYMLINK_FOLLOW;
        CIO__OS_CALL(err, linkat, CIO__SYS(linkat, hard_link)(old_dir.handle, old_path, new_dir.handle, new_path, at));
    }
    return CIO__IN_SET(file_hard_link, err);
}

cio_err cio__os_dir_set_timestamps(void *ud, cio_dir dir, const char *path, const cio_set_timestamps *ts,
                                   unsigned flags)
{
    (void)ud;
    struct timespec times[2];
    if (ts == NULL || (flags & ~CIO_NO_FOLLOW) != 0 ||
        !cio__os_fs_timespec_for(ts->access_action, ts->access, &times[0]) ||
        !cio__os_fs_timespec_for(ts->modify_action, ts->modify, &times[1]))
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK && cio__os_fs_adjust_times(times)) {
        int at = (flags & CIO_NO_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
        CIO__OS_CALL(err, utimensat, CIO__SYS(utimensat, set_timestamps)(dir.handle, path, times, at));
    }
    return CIO__IN_SET(dir_set_timestamps, err);
}

cio_err cio__os_file_is_tty(void *ud, cio_file file, bool *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    /* isatty cannot block; 0 with ENOTTY (or EINVAL) is "not a terminal", with EBADF a handle
     * that is not open: the caller's mistake. */
    errno = 0;
    *out = CIO__SYS(isatty, is_tty)(file.handle) == 1;
    return !*out && errno == EBADF ? CIO_E_INVALID_ARGUMENT : CIO_OK;
}
