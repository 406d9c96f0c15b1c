/*
 * Linux's fast paths for whole files (issue 21): the atomic file's unnamed temporary and the
 * in-kernel copy between two files.
 *
 * Invariants:
 * - dir_create_tmp_file: one openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC) in the cancellation
 *   bracket; a kernel or file system without O_TMPFILE is OperationUnsupported (the openat_tmpfile
 *   map), and the caller (src/core/fs_atomic.c) names a random temporary instead. The file has no
 *   name until file_hard_link gives it one: a process that dies first leaves nothing behind.
 * - file_write_file: copy_file_range in chunks of at most 1 GiB, each one blocking call in the
 *   bracket (a cancel ends it with EINTR; the bytes already moved are counted in *nwritten). The
 *   input is always read at its own offset (off_in), never at its file position; the output at
 *   out_offset (positional) or at its file position (streaming, off_out NULL, which the kernel
 *   advances). A copy the kernel refuses (the map's Unimplemented: EXDEV, EINVAL, ENOSYS,
 *   EOPNOTSUPP, EBADF) and a first call that moves nothing (procfs and sysfs files say 0 though they
 *   have bytes) end the slot with Unimplemented and *nwritten what went: the library copies the
 *   rest (src/core/fs_copy.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

#define CHUNK_MAX ((uint64_t)1 << 30)

cio_err cio__os_dir_create_tmp_file(void *ud, cio_dir dir, uint32_t permissions, cio_file *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    mode_t mode = (mode_t)(permissions == 0 ? 0666u : (permissions & 07777u));
    cio_err err;
    int fd;
    CIO__OS_SYSCALL(err, fd, openat_tmpfile,
                    CIO__SYS(openat, create_tmp_file)(dir.handle, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode));
    if (err == CIO_OK)
        out->handle = fd;
    return CIO__IN_SET(dir_create_tmp_file, err);
}

cio_err cio__os_file_write_file(void *ud, cio_file out, bool positional, uint64_t out_offset, cio_file in,
                                uint64_t in_offset, uint64_t len, uint64_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    if (in_offset > (uint64_t)INT64_MAX || (positional && out_offset > (uint64_t)INT64_MAX))
        return CIO_E_UNIMPLEMENTED; /* past what off_t holds: the library's copy says what the file says */
    cio_err err = cio__t_syscall_begin();
    while (err == CIO_OK && *nwritten < len) {
        uint64_t left = len - *nwritten;
        size_t count = (size_t)(left < CHUNK_MAX ? left : CHUNK_MAX);
        off_t off_in = (off_t)(in_offset + *nwritten);
        off_t off_out = (off_t)(out_offset + *nwritten);
        ssize_t n = CIO__SYS(copy_file_range, write_file_copy)(in.handle, &off_in, out.handle,
                                                               positional ? &off_out : NULL, count, 0);
        if (n > 0) {
            *nwritten += (uint64_t)n;
            continue;
        }
        if (n == 0) {
            /* The end of the input, or a file whose size the kernel does not know (procfs). */
            cio__t_syscall_end();
            return *nwritten == 0 ? CIO_E_UNIMPLEMENTED : CIO_OK;
        }
        cio__mapped m = cio__errno_copy_file_range(errno);
        if (m.action == CIO__MAP_RETRY) {
            err = cio__t_syscall_interrupted();
            continue;
        }
        cio__t_syscall_end();
        err = m.action == CIO__MAP_BUG ? CIO__BUG("copy_file_range: an errno that means a bug") : m.err;
        return CIO__IN_SET(file_write_file_slot, err);
    }
    if (err == CIO_OK)
        cio__t_syscall_end();
    return CIO__IN_SET(file_write_file_slot, err);
}
