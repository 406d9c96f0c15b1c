/*
 * sendfile(2) on Linux for cio_net_write_file's zero-copy path (the loop around it:
 * net_sendfile_posix.c).
 *
 * Invariants:
 * - sendfile has no MSG_NOSIGNAL: SIGPIPE is blocked in this thread around the call, and when the
 *   call failed with EPIPE while SIGPIPE was not blocked before, the SIGPIPE it raised (pending on
 *   this thread) is taken with a zero-timeout sigtimedwait, so the caller gets BrokenPipe and never
 *   the signal. A thread that had SIGPIPE blocked itself keeps its pending signal.
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

int cio__os_sendfile_chunk(int sock, int fd, uint64_t offset, size_t count, uint64_t *sent)
{
    off_t off = (off_t)offset;
    int e = 0;
    ssize_t n = send_chunk(sock, fd, &off, count, &e);
    *sent = n > 0 ? (uint64_t)n : 0;
    return n < 0 ? e : 0;
}
