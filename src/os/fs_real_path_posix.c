/*
 * Real paths for the Threaded backend on Linux, FreeBSD and NetBSD: the three slots over one
 * per-OS question, "what path does the kernel give this descriptor" (cio__os_fs_real_path_of:
 * fs_paths_linux.c reads /proc/self/fd, fs_paths_bsd.c asks fcntl). OpenBSD cannot tell a handle's
 * path (fs_paths_none.c).
 *
 * Invariants:
 * - dir_real_path_file opens the path with the OS's flags (cio__os_fs_path_open_flags: O_PATH on
 *   Linux and FreeBSD, so no read permission is needed and a FIFO or device is not touched;
 *   O_RDONLY | O_NONBLOCK on NetBSD, which has no O_PATH), asks for the descriptor's path and closes
 *   it on every path. A close that fails with EBADF is a bug noted in debug builds; the path's
 *   answer stands.
 * - Every call runs in the cancellation bracket through its generated map (openat_path; close).
 *   On the BSDs CIO__SYS(call, site) is the plain call (they have no OS call table yet).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_real_path(void *ud, cio_file file, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    return CIO__IN_SET(file_real_path, cio__os_fs_real_path_of(file.handle, buf, len, out_len));
}

cio_err cio__os_dir_real_path(void *ud, cio_dir dir, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    return CIO__IN_SET(file_real_path, cio__os_fs_real_path_of(dir.handle, buf, len, out_len));
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
    CIO__OS_SYSCALL(err, fd, openat_path,
                    CIO__SYS(openat, real_path_open)(dir.handle, path, cio__os_fs_path_open_flags, 0));
    if (err != CIO_OK)
        return CIO__IN_SET(dir_real_path_file, err);
    err = cio__os_fs_real_path_of(fd, buf, len, out_len);
    if (CIO__SYS(close, real_path_close)(fd) != 0) {
        cio__mapped m = cio__errno_close(errno);
        if (m.action == CIO__MAP_BUG)
            (void)CIO__BUG("close: bad file descriptor");
    }
    return CIO__IN_SET(dir_real_path_file, err);
}
