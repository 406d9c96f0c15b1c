/*
 * Real paths and rename-without-replace for the Threaded backend on Linux.
 *
 * Invariants:
 * - A handle's real path is what the kernel says /proc/self/fd/N (the current directory:
 *   /proc/self/cwd) links to, read with readlinkat in the cancellation bracket through the
 *   readlinkat_fd map. It is never returned truncated: a path that does not fit buf with its NUL is
 *   NameTooLong (buf then holds ""). /proc not mounted reads as FileNotFound.
 * - The slots over it, and dir_real_path_file's open (O_PATH: cio__os_fs_path_open_flags), are
 *   fs_real_path_posix.c, shared with FreeBSD and NetBSD.
 * - dir_rename_preserve is renameat2(RENAME_NOREPLACE): the kernel refuses an existing target
 *   atomically (PathAlreadyExists); a file system that cannot (EINVAL) or a kernel without the call
 *   is OperationUnsupported. There is no check-then-rename fallback: it would race.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1u /* <linux/fs.h> */
#endif

/* The target of /proc/self/fd/<fd> (AT_FDCWD: /proc/self/cwd) into buf, after the checks of buf.
 * Set: File.RealPathError. */
cio_err cio__os_fs_real_path_of(int fd, char *buf, size_t len, size_t *out_len)
{
    cio_err err = cio__os_path_out_init(buf, len, out_len);
    if (err != CIO_OK)
        return err;
    char proc[40];
    if (fd == AT_FDCWD)
        snprintf(proc, sizeof proc, "/proc/self/cwd");
    else
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n;
    CIO__OS_SYSCALL(err, n, readlinkat_fd, CIO__SYS(readlinkat, real_path)(AT_FDCWD, proc, buf, len));
    if (err != CIO_OK)
        return err;
    if ((size_t)n >= len) { /* cut, or no room for the NUL */
        buf[0] = '\0';
        return CIO_E_NAME_TOO_LONG;
    }
    buf[n] = '\0';
    *out_len = (size_t)n;
    return CIO_OK;
}

const int cio__os_fs_path_open_flags = O_PATH | O_CLOEXEC;

cio_err cio__os_dir_rename_preserve(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir,
                                    const char *new_path)
{
    (void)ud;
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    if (err == CIO_OK) {
        CIO__OS_CALL(err, renameat2,
                     CIO__SYS(renameat2, rename_preserve)(old_dir.handle, old_path, new_dir.handle, new_path,
                                                          RENAME_NOREPLACE));
    }
    return CIO__IN_SET(dir_rename_preserve, err);
}
