/*
 * The io_uring flavour's zero-copy whole-file slots (issue 21) as IORING_OP_SPLICE ring operations
 * (Linux): file_write_file into a pipe, and net_write_file (file -> a pipe of the call's own -> the
 * socket). cio__e_uring_splice_override puts them into the instance's vtable only when the probe
 * found SPLICE; without it (or CIO_EVENTED_URING_NATIVE=0) both stay on the helper pool (fs_copy.c,
 * net.c), which runs the Threaded backend's calls.
 *
 * Invariants:
 * - Answers are the Threaded backend's. The input is always read at its own offset (off_in), as
 *   fs_copy_linux.c's copy_file_range and net_sendfile_posix.c's sendfile read it. file_write_file
 *   takes the ring only for a streaming write into a pipe (fstat: S_ISFIFO) from a non-pipe: that is
 *   the pair copy_file_range refuses (EINVAL) and the library would copy by hand. File to file stays
 *   on the helper pool's copy_file_range, which can reflink or copy inside the file system and has no
 *   ring opcode; a positional write into a pipe and a pipe read at an offset are Unseekable on every
 *   path, and stay there too.
 * - One SPLICE per chunk (at most 1 GiB; a pipe takes what fits), looping until len is done or the
 *   input ends (a result of 0). *nwritten counts every byte that reached the output, also when an
 *   error or a cancel ends the call.
 * - Any refusal or error of the kernel (EINVAL, ENOSYS, EOPNOTSUPP, ESPIPE, EAGAIN, EPIPE, EIO, ...)
 *   hands the rest of the call, from the first byte not yet written, to the helper-pool slot: it
 *   makes the Threaded call, which gives the Threaded answer (or Unimplemented, and the library copies
 *   the rest, src/core/fs_copy.c, net_pair.c). A first SPLICE that moves nothing does the same
 *   (copy_file_range's and sendfile's 0 on a procfs file). So the caller never sees an error only
 *   the ring has.
 * - net_write_file makes its pipe once per call (pipe2 O_CLOEXEC; failing, the helper pool does the
 *   call) and closes it on every path. Each chunk is two SPLICEs (file -> pipe, then pipe -> socket
 *   until the pipe is empty; a non-blocking socket's EAGAIN waits for POLLOUT and splices again):
 *   two round trips, not one linked pair, since the second's length is the first's result. Only
 *   bytes that reached the socket are counted; bytes left in the pipe when an error or a cancel
 *   ends the drain are dropped with the pipe (the file still has them at offset + *nwritten, where
 *   the fallback or the caller goes on).
 * - Cancellation: every SPLICE is cancelable (ASYNC_CANCEL; poll_uring.c). A canceled one ends the
 *   call with Canceled and the exact count; a SPLICE that completed with bytes although a cancel was
 *   requested counts them, and the next one's cancellation point ends the call. EINTR and
 *   ERESTARTSYS (an io-wq worker's interrupted wait) run the SPLICE again after that point.
 * - A caller that is not one of the instance's fibers, when no fiber can be had for it, takes the
 *   helper-pool slot (which makes the Threaded call on its own thread).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "slots.h"
#include "os.h"
#include "uring.h"

#define CHUNK_MAX ((uint64_t)1 << 30)
#define NO_OFFSET UINT64_MAX /* splice's off_in / off_out: the descriptor's own position (a pipe) */
#define E_RESTARTSYS 512     /* an io-wq worker's wait a cancel interrupted, as the kernel may report it */

static bool is_pipe(cio_file f)
{
    cio_stat st;
    return cio__os_file_stat(NULL, f, &st) == CIO_OK && st.kind == CIO_FILE_KIND_NAMED_PIPE;
}

/* How one SPLICE ended: its result (> 0 bytes, 0 the end of the input, < 0 -errno) or a cancel. */
static int32_t ring_splice(struct cio_evented *e, int fd_in, uint64_t off_in, int fd_out, uint64_t len, bool *canceled)
{
    struct io_uring_sqe sqe;
    for (;;) {
        memset(&sqe, 0, sizeof sqe);
        sqe.opcode = IORING_OP_SPLICE;
        sqe.splice_fd_in = fd_in;
        sqe.splice_off_in = off_in;
        sqe.fd = fd_out;
        sqe.off = NO_OFFSET;
        sqe.len = (uint32_t)(len < CHUNK_MAX ? len : CHUNK_MAX);
        enum cio__e_uring_end end;
        int32_t res = cio__e_uring_op(e, &sqe, -1, true, &end);
        *canceled = end == CIO__E_U_CANCELED;
        if (*canceled || (res != -EINTR && res != -E_RESTARTSYS))
            return res;
    }
}

/* ---- file_write_file: a file into a pipe ------------------------------------------------------------------ */

struct file_splice {
    struct cio_evented *e;
    cio_file out, in;
    uint64_t in_offset, len;
    uint64_t *nwritten;
    bool ran;      /* a fiber ran file_splice_run */
    bool fallback; /* the rest goes to the helper pool */
};

static cio_err file_splice_run(void *p)
{
    struct file_splice *a = (struct file_splice *)p;
    a->ran = true;
    while (*a->nwritten < a->len) {
        bool canceled;
        int32_t res = ring_splice(a->e, a->in.handle, a->in_offset + *a->nwritten, a->out.handle, a->len - *a->nwritten,
                                  &canceled);
        if (canceled)
            return CIO_E_CANCELED;
        if (res > 0) {
            *a->nwritten += (uint64_t)res;
            continue;
        }
        if (res < 0 || *a->nwritten == 0)
            a->fallback = true; /* a refusal, an error, or nothing at all: Threaded's call decides */
        break;
    }
    return CIO_OK;
}

static cio_err u_file_write_file(void *ud, cio_file out, bool positional, uint64_t out_offset, cio_file in,
                                 uint64_t in_offset, uint64_t len, uint64_t *nwritten)
{
    if (nwritten == NULL || positional || in_offset > (uint64_t)INT64_MAX || !is_pipe(out) || is_pipe(in))
        return cio__e_file_write_file(ud, out, positional, out_offset, in, in_offset, len, nwritten);
    *nwritten = 0;
    struct file_splice a = {(struct cio_evented *)ud, out, in, in_offset, len, nwritten, false, false};
    cio_err err = cio__e_run(a.e, file_splice_run, &a);
    if (a.ran && !a.fallback)
        return CIO__IN_SET(file_write_file_slot, err);
    uint64_t done = *nwritten, step = 0;
    err = cio__e_file_write_file(ud, out, false, 0, in, in_offset + done, len - done, &step);
    *nwritten = done + step;
    return err; /* the helper-pool slot's own answer (Unimplemented: the library copies the rest) */
}

/* ---- net_write_file: file -> pipe -> socket --------------------------------------------------------------- */

struct net_splice {
    struct cio_evented *e;
    cio_handle stream;
    cio_file file;
    uint64_t offset, len;
    uint64_t *nwritten;
    bool ran, fallback;
};

/* Everything in the pipe (n bytes) to the socket; *fallback when the kernel will not (the bytes in
 * the pipe are then dropped with it). */
static cio_err drain(struct net_splice *a, int pipe_in, int32_t n)
{
    while (n > 0) {
        bool canceled;
        int32_t res = ring_splice(a->e, pipe_in, NO_OFFSET, a->stream, (uint64_t)n, &canceled);
        if (canceled)
            return CIO_E_CANCELED;
        if (res > 0) {
            *a->nwritten += (uint64_t)res;
            n -= res;
            continue;
        }
        if (res == -EAGAIN) { /* a non-blocking socket's full buffer */
            uint32_t rev;
            cio_err err = cio__e_wait_fd(a->e, a->stream, POLLOUT, -1, true, &rev);
            if (err != CIO_OK)
                return err;
            continue;
        }
        a->fallback = true;
        return CIO_OK;
    }
    return CIO_OK;
}

static cio_err net_splice_run(void *p)
{
    struct net_splice *a = (struct net_splice *)p;
    a->ran = true;
    int fds[2];
    if (CIO__SYS(pipe2, splice_pipe)(fds, O_CLOEXEC) != 0) {
        a->fallback = true; /* no pipe: the helper pool's sendfile needs none */
        return CIO_OK;
    }
    cio_err err = CIO_OK;
    while (err == CIO_OK && !a->fallback && *a->nwritten < a->len) {
        bool canceled;
        int32_t res = ring_splice(a->e, a->file.handle, a->offset + *a->nwritten, fds[1], a->len - *a->nwritten,
                                  &canceled);
        if (canceled)
            err = CIO_E_CANCELED;
        else if (res > 0)
            err = drain(a, fds[0], res);
        else if (res < 0 || *a->nwritten == 0)
            a->fallback = true;
        else
            break; /* the end of the file */
    }
    (void)CIO__SYS(close, splice_pipe_close)(fds[0]);
    (void)CIO__SYS(close, splice_pipe_close)(fds[1]);
    return err;
}

static cio_err u_net_write_file(void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len,
                                uint64_t *nwritten)
{
    if (nwritten == NULL || offset > (uint64_t)INT64_MAX)
        return cio__e_net_write_file(ud, stream, file, offset, len, nwritten);
    *nwritten = 0;
    struct net_splice a = {(struct cio_evented *)ud, stream, file, offset, len, nwritten, false, false};
    cio_err err = cio__e_run(a.e, net_splice_run, &a);
    if (a.ran && !a.fallback)
        return CIO__IN_SET(net_write_file, err);
    uint64_t done = *nwritten, step = 0;
    err = cio__e_net_write_file(ud, stream, file, offset + done, len - done, &step);
    *nwritten = done + step;
    return err; /* the helper-pool slot's own answer (Unimplemented: the library copies the rest) */
}

void cio__e_uring_splice_override(struct cio_evented *e, struct cio_vtable *vt)
{
    if (cio__e_uring_has(e, IORING_OP_SPLICE)) {
        vt->file_write_file = u_file_write_file;
        vt->net_write_file = u_net_write_file;
    }
}
