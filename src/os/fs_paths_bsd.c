/*
 * Real paths for the Threaded backend on FreeBSD and NetBSD: the kernel tells a descriptor's path
 * (fs_fdpath_freebsd.c: fcntl(F_KINFO); fs_fdpath_netbsd.c: fcntl(F_GETPATH)), and this file
 * checks the caller's buffer, opens the path of dir_real_path_file and asks for the current
 * directory. OpenBSD cannot tell a handle's path (fs_paths_none.c); rename without replace is
 * OperationUnsupported on every BSD (fs_noreplace_none.c).
 *
 * Invariants:
 * - The kernel's answer lands in a PATH_MAX buffer of this file first, so the caller's buffer is
 *   never written past its length and a path is never returned truncated: one that does not fit buf
 *   with its NUL is NameTooLong (buf then holds "").
 * - The current directory (AT_FDCWD, cio_dir_cwd()) has no descriptor to ask: its path is getcwd's,
 *   through the getcwd_real_path map.
 * - dir_real_path_file opens the path with the OS's flags (cio__os_fs_path_open_flags: O_PATH on
 *   FreeBSD; O_RDONLY | O_NONBLOCK on NetBSD, which has no O_PATH, so a file that cannot be read is
 *   AccessDenied there), asks for the descriptor's path and closes it on every path.
 * - Every call runs in the cancellation bracket and its errno goes through its generated map. The
 *   BSDs have no OS call table (spec/oscalls.yaml), so the calls are made directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal.h"
#include "os.h"

_Static_assert(PATH_MAX == CIO__OS_FD_PATH_MAX, "the BSDs' PATH_MAX");

/* The path of fd (AT_FDCWD: the current directory) into buf after the checks of buf.
 * Set: File.RealPathError. */
static cio_err real_path_of(int fd, char *buf, size_t len, size_t *out_len)
{
    cio_err err = cio__os_path_out_init(buf, len, out_len);
    if (err != CIO_OK)
        return err;
    char path[CIO__OS_FD_PATH_MAX];
    path[0] = '\0';
    if (fd == AT_FDCWD) {
        err = cio__t_cancel_point();
        if (err == CIO_OK && getcwd(path, sizeof path) == NULL) {
            cio__mapped m = cio__errno_getcwd_real_path(errno);
            err = m.action == CIO__MAP_BUG ? CIO__BUG("getcwd: a bad buffer") : m.err;
        }
    } else {
        err = cio__os_fs_fd_path(fd, path);
    }
    if (err != CIO_OK)
        return err;
    size_t n = strnlen(path, sizeof path);
    if (n == 0 || n == sizeof path)
        return n == 0 ? CIO_E_FILE_NOT_FOUND : CIO_E_NAME_TOO_LONG;
    if (n >= len)
        return CIO_E_NAME_TOO_LONG; /* buf holds "" (cio__os_path_out_init) */
    memcpy(buf, path, n + 1);
    *out_len = n;
    return CIO_OK;
}

cio_err cio__os_file_real_path(void *ud, cio_file file, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    return CIO__IN_SET(file_real_path, real_path_of(file.handle, buf, len, out_len));
}

cio_err cio__os_dir_real_path(void *ud, cio_dir dir, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    return CIO__IN_SET(file_real_path, real_path_of(dir.handle, buf, len, out_len));
}

cio_err cio__os_dir_real_path_file(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    cio_err err = cio__os_path_out_init(buf, len, out_len);
    if (err == CIO_OK)
        err = cio__os_fs_check_path(path);
    if (err != CIO_OK)
        return CIO__IN_SET(dir_real_path_file, err);
    int fd;
    CIO__OS_SYSCALL(err, fd, openat_path, openat(dir.handle, path, cio__os_fs_path_open_flags, 0));
    if (err != CIO_OK)
        return CIO__IN_SET(dir_real_path_file, err);
    err = real_path_of(fd, buf, len, out_len);
    if (close(fd) != 0) {
        cio__mapped m = cio__errno_close(errno);
        if (m.action == CIO__MAP_BUG)
            (void)CIO__BUG("close: bad file descriptor");
    }
    return CIO__IN_SET(dir_real_path_file, err);
}
