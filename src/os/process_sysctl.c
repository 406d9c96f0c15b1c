/*
 * The program's own executable for the Threaded backend on FreeBSD and NetBSD (Zig's
 * processExecutablePath and openSelfExe): the kernel reports the path the program was executed
 * from through sysctl KERN_PROC_PATHNAME. FreeBSD names it {CTL_KERN, KERN_PROC, KERN_PROC_PATHNAME,
 * -1}, NetBSD {CTL_KERN, KERN_PROC_ARGS, -1, KERN_PROC_PATHNAME} (-1: the calling process); that
 * MIB is the only difference between the two, and the one #if here. (OpenBSD has no such query and
 * uses process_posix.c, which reports OperationUnsupported.)
 *
 * Invariants:
 * - executable_path writes the path and a NUL, or fails: a buffer too small for both is NameTooLong
 *   (the kernel says ENOMEM), never a silently truncated path.
 * - sysctl runs inside the cancellation bracket; errno goes through the sysctl map.
 * - executable_open asks for the path into a PATH_MAX buffer, then is dir_open_file on it with the
 *   caller's options (O_CLOEXEC as every open).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/sysctl.h>

#include "cio/errmap.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_process_executable_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (out_len != NULL)
        *out_len = 0;
    if (len < 2) /* not even one byte and the NUL */
        return CIO__IN_SET(process_executable_path, CIO_E_NAME_TOO_LONG);
#if defined(__NetBSD__)
    const int mib[4] = {CTL_KERN, KERN_PROC_ARGS, -1, KERN_PROC_PATHNAME};
#else
    const int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PATHNAME, -1};
#endif
    size_t n = len;
    cio_err err;
    int rc;
    CIO__OS_SYSCALL(err, rc, sysctl, sysctl(mib, 4, buf, &n, NULL, 0));
    if (err == CIO_OK && rc == -1) /* an errno the map treats as success: none should */
        err = CIO_E_UNEXPECTED;
    if (err != CIO_OK)
        return CIO__IN_SET(process_executable_path, err);
    /* n counts the NUL the kernel wrote; a result that fills the buffer without one is not a path */
    if (n == 0 || n > len || buf[n - 1] != '\0')
        return CIO__IN_SET(process_executable_path, n >= len ? CIO_E_NAME_TOO_LONG : CIO_E_UNEXPECTED);
    if (out_len != NULL)
        *out_len = n - 1;
    return CIO_OK;
}

cio_err cio__os_process_executable_open(void *ud, const cio_open_file_options *options, cio_file *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    char path[PATH_MAX];
    cio_err err = cio__os_process_executable_path(ud, path, sizeof path, NULL);
    if (err == CIO_OK) {
        cio_dir cwd = {AT_FDCWD};
        err = cio__os_dir_open_file(ud, cwd, path, options, out);
        if (err == CIO_E_INVALID_ARGUMENT)
            return err;
    } else if (err == CIO_E_NAME_TOO_LONG) {
        err = CIO_E_UNEXPECTED; /* a path longer than PATH_MAX cannot be opened by name anyway */
    }
    return CIO__IN_SET(process_executable_open, err);
}
