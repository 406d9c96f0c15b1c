/*
 * sendfile(2) on FreeBSD for cio_net_write_file's zero-copy path (the loop around it:
 * net_sendfile_posix.c). FreeBSD's form: file first, socket second, the offset by value, the bytes
 * sent in *sbytes, also when the call fails (EINTR, EAGAIN on a non-blocking socket).
 *
 * Invariants:
 * - SIGPIPE is blocked in this thread around the call; when it failed with EPIPE while SIGPIPE was
 *   not blocked before, the SIGPIPE it raised is taken with a zero-timeout sigtimedwait, so the
 *   caller gets BrokenPipe and never the signal (net_sendfile_linux.c does the same).
 * The calls are the BSD build's plain libc calls (spec/libc.yaml; the OS call table is Linux's).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "os.h"

int cio__os_sendfile_chunk(int sock, int fd, uint64_t offset, size_t count, uint64_t *sent)
{
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    bool masked = pthread_sigmask(SIG_BLOCK, &pipe_only, &old) == 0;
    off_t sbytes = 0;
    int r = sendfile(fd, sock, (off_t)offset, count, NULL, &sbytes, 0);
    int err = r < 0 ? errno : 0;
    if (masked) {
        if (err == EPIPE && !sigismember(&old, SIGPIPE)) {
            struct timespec zero = {0, 0};
            while (sigtimedwait(&pipe_only, NULL, &zero) == -1 && errno == EINTR) {
            }
        }
        (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    *sent = sbytes > 0 ? (uint64_t)sbytes : 0;
    return err;
}
