/*
 * cio_net_write_file's zero-copy path for the Threaded backend on Linux: sendfile(2) from the file
 * straight to the stream socket.
 *
 * Invariants:
 * - Each sendfile call is one blocking syscall in the cancellation bracket (a cancel ends it with
 *   EINTR, the bytes it moved are counted); chunks are at most 1 GiB (sendfile moves at most
 *   0x7ffff000 bytes a call anyway).
 * - sendfile has no MSG_NOSIGNAL: SIGPIPE is blocked in this thread around the call, and when the
 *   call failed with EPIPE while SIGPIPE was not blocked before, the SIGPIPE it raised (pending on
 *   this thread) is taken with a zero-timeout sigtimedwait, so the caller gets BrokenPipe and never
 *   the signal. A thread that had SIGPIPE blocked itself keeps its pending signal.
 * - EINVAL, ENOSYS and EOPNOTSUPP before any byte went mean the kernel cannot send this file (a pipe,
 *   a socket, a file system without splice support): Unimplemented, and the library copies
 *   (src/core/net_pair.c). After some bytes went they cannot happen for the same file; they are
 *   reported as mapped.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <time.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

#define CHUNK_MAX ((uint64_t)1 << 30)

/* One sendfile of up to `count` bytes with SIGPIPE kept from the process; -1 and *err on failure. */
static ssize_t send_chunk(int sock, int fd, off_t *off, size_t count, int *err)
{
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    bool masked = CIO__SYS(pthread_sigmask, sendfile_block)(SIG_BLOCK, &pipe_only, &old) == 0;
    ssize_t n = CIO__SYS(sendfile, write_file)(sock, fd, off, count);
    *err = n < 0 ? errno : 0;
    if (masked) {
        if (n < 0 && *err == EPIPE && !sigismember(&old, SIGPIPE)) {
            struct timespec zero = {0, 0};
            while (CIO__SYS(sigtimedwait, sendfile_sigpipe)(&pipe_only, NULL, &zero) == -1 && errno == EINTR) {
            }
        }
        (void)CIO__SYS(pthread_sigmask, sendfile_block)(SIG_SETMASK, &old, NULL);
    }
    return n;
}

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
        size_t count = (size_t)(left < CHUNK_MAX ? left : CHUNK_MAX);
        off_t off = (off_t)(offset + *nwritten);
        int e;
        ssize_t n = send_chunk(stream, file.handle, &off, count, &e);
        if (n > 0) {
            *nwritten += (uint64_t)n;
            continue;
        }
        if (n == 0)
            break; /* the end of the file */
        if ((e == EINVAL || e == ENOSYS || e == EOPNOTSUPP) && *nwritten == 0) {
            cio__t_syscall_end();
            return CIO_E_UNIMPLEMENTED;
        }
        cio__mapped m = cio__errno_sendfile(e);
        if (m.action == CIO__MAP_RETRY) {
            err = cio__t_syscall_interrupted();
            if (err != CIO_OK)
                return err;
            continue;
        }
        cio__t_syscall_end();
        return CIO__IN_SET(net_write_file, m.action == CIO__MAP_BUG ? CIO__BUG("sendfile: an errno that means a bug")
                                                                  : m.err);
    }
    cio__t_syscall_end();
    return CIO_OK;
}
