/*
 * cio_net_write_file's zero-copy path on FreeBSD: sendfile(2) from the file straight to the stream
 * socket (FreeBSD's form: file first, socket second, the offset by value, the bytes sent in
 * *sbytes, also when the call fails).
 *
 * Invariants (as net_sendfile_linux.c's):
 * - Each sendfile call is one blocking call in the cancellation bracket; a cancel ends it with
 *   EINTR and the bytes it moved (sbytes) are counted. On a non-blocking socket (the Evented
 *   backend's) a full socket buffer is EAGAIN with sbytes sent: WouldBlock, counted.
 * - SIGPIPE is blocked in this thread around the call; when it failed with EPIPE while SIGPIPE was
 *   not blocked before, the SIGPIPE it raised is taken with a zero-timeout sigtimedwait, so the
 *   caller gets BrokenPipe and never the signal.
 * - EINVAL (not a regular file, or not a stream socket) and EOPNOTSUPP before any byte went mean
 *   sendfile cannot send this file: Unimplemented, and the library copies (src/core/net_pair.c).
 * The calls are the BSD build's plain libc calls (spec/libc.yaml; the OS call table is Linux's).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "os.h"

#define CHUNK_MAX ((uint64_t)1 << 30)

/* One sendfile of up to `count` bytes with SIGPIPE kept from the process: *sent what went, the
 * errno (0: none). */
static int send_chunk(int sock, int fd, off_t off, size_t count, off_t *sent)
{
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    bool masked = pthread_sigmask(SIG_BLOCK, &pipe_only, &old) == 0;
    *sent = 0;
    int r = sendfile(fd, sock, off, count, NULL, sent, 0);
    int err = r < 0 ? errno : 0;
    if (masked) {
        if (err == EPIPE && !sigismember(&old, SIGPIPE)) {
            struct timespec zero = {0, 0};
            while (sigtimedwait(&pipe_only, NULL, &zero) == -1 && errno == EINTR) {
            }
        }
        (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return err;
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
        off_t sent = 0;
        int e = send_chunk(stream, file.handle, (off_t)(offset + *nwritten), count, &sent);
        if (sent > 0)
            *nwritten += (uint64_t)sent;
        if (e == 0) {
            if (sent == 0)
                break; /* the end of the file */
            continue;
        }
        if ((e == EINVAL || e == EOPNOTSUPP) && *nwritten == 0) {
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
