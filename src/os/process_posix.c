/*
 * The program's own executable for the Threaded backend (Zig's processExecutablePath and
 * openSelfExe). Linux reads the /proc/self/exe link; other POSIX systems report
 * OperationUnsupported until someone writes their way (sysctl on the BSDs, _NSGetExecutablePath on
 * macOS).
 *
 * Invariants:
 * - executable_path writes the path and a NUL, or fails: a buffer too small for both is NameTooLong,
 *   never a silently truncated path.
 * - readlink runs inside the cancellation bracket like every other syscall here; errno goes through
 *   the readlinkat map. executable_open is dir_open_file on /proc/self/exe (O_CLOEXEC, the given
 *   options).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

#if defined(__linux__)
#define CIO__OS_SELF_EXE "/proc/self/exe"
#endif

cio_err cio__os_process_executable_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (out_len != NULL)
        *out_len = 0;
#if defined(CIO__OS_SELF_EXE)
    if (len < 2) /* not even one byte and the NUL */
        return CIO__IN_SET(process_executable_path, CIO_E_NAME_TOO_LONG);
    cio_err err = cio__t_syscall_begin();
    ssize_t n = -1;
    while (err == CIO_OK) {
        n = CIO__SYS(readlinkat, executable_path)(AT_FDCWD, CIO__OS_SELF_EXE, buf, len);
        if (n != -1) {
            cio__t_syscall_end();
            break;
        }
        cio__mapped m = cio__errno_readlinkat(errno);
        if (m.action == CIO__MAP_RETRY) {
            err = cio__t_syscall_interrupted();
            continue;
        }
        cio__t_syscall_end();
        err = m.action == CIO__MAP_BUG  ? CIO__BUG("readlinkat failed with an errno that means a bug")
              : m.action == CIO__MAP_OK ? CIO_E_UNEXPECTED
                                        : m.err;
    }
    if (err != CIO_OK)
        return CIO__IN_SET(process_executable_path, err);
    if ((size_t)n >= len) /* readlink truncates silently: no room for the NUL means it may have */
        return CIO__IN_SET(process_executable_path, CIO_E_NAME_TOO_LONG);
    buf[n] = '\0';
    if (out_len != NULL)
        *out_len = (size_t)n;
    return CIO_OK;
#else
    (void)len;
    return CIO__IN_SET(process_executable_path, CIO_E_OPERATION_UNSUPPORTED);
#endif
}

cio_err cio__os_process_executable_open(void *ud, const cio_open_file_options *options, cio_file *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
#if defined(CIO__OS_SELF_EXE)
    cio_dir cwd = {AT_FDCWD};
    cio_err err = cio__os_dir_open_file(ud, cwd, CIO__OS_SELF_EXE, options, out);
    if (err == CIO_E_INVALID_ARGUMENT)
        return err;
    return CIO__IN_SET(process_executable_open, err);
#else
    (void)ud;
    (void)options;
    return CIO__IN_SET(process_executable_open, CIO_E_OPERATION_UNSUPPORTED);
#endif
}
