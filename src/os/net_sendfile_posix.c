/*
 * cio_net_write_file's zero-copy path where the OS has a sendfile (Linux, FreeBSD): the loop over
 * the OS's own call (cio__os_sendfile_chunk: net_sendfile_linux.c, net_sendfile_freebsd.c), for the
 * Threaded backend and for the Evented one (which runs it on the helper pool against its
 * non-blocking socket: a full socket buffer is WouldBlock with the bytes that went).
 *
 * Invariants:
 * - The whole loop is one cancellation bracket: each sendfile is a blocking call a cancel ends with
 *   EINTR; the bytes it moved are counted. Chunks are at most 1 GiB.
 * - EINVAL, ENOSYS and EOPNOTSUPP before any byte went mean the kernel cannot send this file (a pipe,
 *   a socket, a file system without the support): Unimplemented, and the library copies
 *   (src/core/net_pair.c). After some bytes went they cannot happen for the same file; they are
 *   reported as mapped.
 */
#include <errno.h>
#include <stdint.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "errno_step.h"
#include "internal.h"
#include "os.h"

#define CHUNK_MAX ((uint64_t)1 << 30)

cio_err cio__os_net_write_file(void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len,
                               uint64_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    if (offset > (uint64_t)INT64_MAX)
        return CIO_E_UNIMPLEMENTED; /* past what off_t holds: the copy says what the file says */
    cio_err err = cio__t_syscall_begin();
    if (err != CIO_OK)
        return err;
    while (*nwritten < len) {
        uint64_t left = len - *nwritten;
        uint64_t sent = 0;
        int e = cio__os_sendfile_chunk(stream, file.handle, offset + *nwritten,
                                       (size_t)(left < CHUNK_MAX ? left : CHUNK_MAX), &sent);
        *nwritten += sent;
        if (e == 0) {
            if (sent == 0)
                break; /* the end of the file */
            continue;
        }
        if ((e == EINVAL || e == ENOSYS || e == EOPNOTSUPP) && *nwritten == 0) {
            cio__t_syscall_end();
            return CIO_E_UNIMPLEMENTED;
        }
        if (cio__os_errno_again(cio__errno_sendfile(e), "sendfile: an errno that means a bug", &err))
            continue;
        return CIO__IN_SET(net_write_file, err);
    }
    cio__t_syscall_end();
    return CIO_OK;
}
