/*
 * A descriptor's path on FreeBSD (fs_paths_bsd.c's hook): fcntl(F_KINFO) fills a struct kinfo_file
 * whose kf_structsize the caller sets first (KINFO_FILE_SIZE, 14.0's layout: kf_path[PATH_MAX] at
 * 368, platform/bsd's stand-in <sys/user.h>). An empty kf_path is a handle whose name the kernel
 * could not find (removed, or no vnode): FileNotFound. O_PATH opens what dir_real_path_file asks
 * about without reading it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/user.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal.h"
#include "os.h"

const int cio__os_fs_path_open_flags = O_PATH | O_CLOEXEC;

cio_err cio__os_fs_fd_path(int fd, char path[CIO__OS_FD_PATH_MAX])
{
    struct kinfo_file kf;
    memset(&kf, 0, sizeof kf);
    kf.kf_structsize = KINFO_FILE_SIZE;
    cio_err err;
    int r;
    CIO__OS_SYSCALL(err, r, fcntl_getpath, fcntl(fd, F_KINFO, &kf));
    (void)r;
    if (err != CIO_OK)
        return err;
    _Static_assert(sizeof kf.kf_path == CIO__OS_FD_PATH_MAX, "kf_path is PATH_MAX bytes");
    memcpy(path, kf.kf_path, sizeof kf.kf_path);
    path[CIO__OS_FD_PATH_MAX - 1] = '\0';
    return CIO_OK;
}
