/*
 * Real paths for the Threaded backend on FreeBSD and NetBSD: the kernel tells a descriptor's path
 * (fs_fdpath_freebsd.c: fcntl(F_KINFO); fs_fdpath_netbsd.c: fcntl(F_GETPATH)), and this file
 * checks the caller's buffer and asks for the current directory's. The slots over it (and
 * dir_real_path_file's open) are fs_real_path_posix.c, shared with Linux. OpenBSD cannot tell a handle's path
 * (fs_paths_none.c); rename without replace is OperationUnsupported on every BSD (fs_noreplace_none.c).
 *
 * Invariants:
 * - The kernel's answer lands in a PATH_MAX buffer of this file first, so the caller's buffer is
 *   never written past its length and a path is never returned truncated: one that does not fit buf
 *   with its NUL is NameTooLong (buf then holds "").
 * - The current directory (AT_FDCWD, cio_dir_cwd()) has no descriptor to ask: its path is getcwd's,
 *   through the getcwd_real_path map.
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
cio_err cio__os_fs_real_path_of(int fd, char *buf, size_t len, size_t *out_len)
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
