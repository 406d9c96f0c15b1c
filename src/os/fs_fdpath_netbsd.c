/*
 * A descriptor's path on NetBSD (fs_paths_bsd.c's hook): fcntl(F_GETPATH) writes it, NUL-terminated,
 * into a buffer of MAXPATHLEN (PATH_MAX) bytes from the kernel's name cache (ENOENT: a name the cache
 * no longer holds). NetBSD has no O_PATH: dir_real_path_file opens read-only and non-blocking (a
 * FIFO does not wait for a writer), so a file that cannot be read is AccessDenied there.
 */
#include <errno.h>
#include <fcntl.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal.h"
#include "os.h"

const int cio__os_fs_path_open_flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;

cio_err cio__os_fs_fd_path(int fd, char path[CIO__OS_FD_PATH_MAX])
{
    cio_err err;
    int r;
    path[0] = '\0';
    CIO__OS_SYSCALL(err, r, fcntl_getpath, fcntl(fd, F_GETPATH, path));
    (void)r;
    if (err == CIO_OK)
        path[CIO__OS_FD_PATH_MAX - 1] = '\0';
    return err;
}
