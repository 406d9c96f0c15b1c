/*
 * The Evented backend's sockets: the readiness core shared by every poller (epoll, io_uring's
 * POLL_ADD, and kqueue on the BSDs). Sockets made here are non-blocking; each operation is tried
 * first and, on WouldBlock, the fiber waits for readiness and tries again (libuv's pattern). The
 * system calls, their flags and the errno maps are the Threaded backend's (net_posix.c), called on a
 * non-blocking descriptor. connect runs on the helper pool (one blocking call with its own timeout
 * and cancellation), then its socket is made non-blocking. (The io_uring flavour replaces accept,
 * TCP connect, read/write, send/receive and close with ring operations where the kernel has their
 * opcodes: net_uring.c; this core stays its fallback.)
 * Invariants: descriptors handed in by the user that are not non-blocking are made so before the
 * first attempt of a stream or listener operation (a blocking call would stall the loop thread);
 * a thread that is not one of this instance's fibers runs the operation as a fiber (cio__e_run).
 * The descriptor table (cio__e_fd_*) is fds.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "cio/batch.h"
#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_posix.h"
#include "slots.h"
#include "os.h"

/* Sets O_NONBLOCK on fd, or the error (fcntl fails only on a bug: Unexpected). */
static cio_err set_nonblocking(int fd)
{
    int fl = CIO__SYS(fcntl, nonblocking)(fd, F_GETFL, 0);
    if (fl != -1 && (fl & O_NONBLOCK))
        return CIO_OK;
    if (fl == -1 || CIO__SYS(fcntl, nonblocking)(fd, F_SETFL, fl | O_NONBLOCK) == -1) {
        cio__mapped m = cio__errno_fcntl(errno);
        return m.action == CIO__MAP_BUG ? CIO__BUG("fcntl: an errno that means a bug") : m.err;
    }
    return CIO_OK;
}

/* A socket waited on by readiness must not block the loop thread: non-blocking (nothing to do for
 * one cio made: it is already). */
static cio_err make_nonblocking(int fd)
{
    uint32_t gen;
    if (cio__e_fd_owned(fd, &gen))
        return CIO_OK;
    return set_nonblocking(fd);
}

/* A socket just made (err: how that went; nonblocking: created so): made non-blocking if it is not
 * yet, then owned; closed again when that fails. */
static cio_err made(cio_err err, cio_handle fd, bool nonblocking)
{
    if (err != CIO_OK)
        return err;
    if (!nonblocking) {
        err = set_nonblocking(fd);
        if (err != CIO_OK) {
            (void)cio__os_net_close(NULL, fd);
            return err;
        }
    }
    cio__e_fd_renew(fd, true);
    return CIO_OK;
}

/* ---- sockets that are made at once ------------------------------------------------------------------------ */

cio_err cio__e_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                             cio_server *out)
{
    (void)ud;
    cio_err err = cio__os_net_listen_ip(NULL, address, options, out);
    return made(err, out->handle, false);
}

cio_err cio__e_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out)
{
    (void)ud;
    cio_err err = cio__os_net_bind_ip(NULL, address, options, out);
    return made(err, out->handle, false);
}

cio_err cio__e_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                               cio_server *out)
{
    (void)ud;
    cio_err err = cio__os_net_listen_unix(NULL, address, options, out);
    return made(err, out->handle, false);
}

/* socketpair (net_pair_posix.c), then both ends non-blocking and owned like every socket made here. */
cio_err cio__e_net_socket_pair(void *ud, cio_stream *out)
{
    cio_err err = cio__os_net_socket_pair(NULL, out);
    if (err != CIO_OK)
        return err;
    err = made(CIO_OK, out[0].handle, false);
    if (err != CIO_OK) {
        (void)cio__os_net_close(NULL, out[1].handle);
        return err;
    }
    err = made(CIO_OK, out[1].handle, false);
    if (err != CIO_OK)
        (void)cio__e_net_close(ud, out[0].handle);
    return err;
}

/* cio_net_write_file: the OS's zero-copy call (cio__os_net_write_file: sendfile on Linux) on the
 * helper pool, never on a loop thread (it may read the disk), against the non-blocking socket: it
 * sends until the socket's buffer is full (WouldBlock, with the bytes that went), then the fiber
 * waits for POLLOUT and hands the rest to the helper again. Where the OS has no such call
 * (Unimplemented, nothing sent) the library copies through this backend's positional-read and
 * stream-write slots (src/core/net_pair.c). */
struct write_file_args {
    struct cio_evented *e;
    cio_handle stream;
    cio_file file;
    uint64_t offset, len;
    uint64_t *nwritten; /* the whole call's count */
    uint64_t step;      /* one helper call's */
};

static cio_err h_write_file(void *p)
{
    struct write_file_args *a = (struct write_file_args *)p;
    uint64_t done = *a->nwritten;
    return cio__os_net_write_file(NULL, a->stream, a->file, a->offset + done, a->len - done, &a->step);
}

static cio_err write_file_run(void *p)
{
    struct write_file_args *a = (struct write_file_args *)p;
    cio_err err = make_nonblocking(a->stream);
    while (err == CIO_OK && *a->nwritten < a->len) {
        a->step = 0;
        err = cio__e_helper(a->e, h_write_file, a, true);
        *a->nwritten += a->step;
        if (err != CIO_E_WOULD_BLOCK)
            break;
        uint32_t rev;
        err = cio__e_wait_fd(a->e, a->stream, POLLOUT, -1, true, &rev);
    }
    return err;
}

cio_err cio__e_net_write_file(void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len,
                              uint64_t *nwritten)
{
    if (nwritten == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    struct write_file_args a = {(struct cio_evented *)ud, stream, file, offset, len, nwritten, 0};
    cio_err err = cio__e_run(a.e, write_file_run, &a);
    return err == CIO_E_UNIMPLEMENTED ? err : CIO__IN_SET(net_write_file, err); /* Unimplemented: the copy */
}

cio_err cio__e_net_shutdown(void *ud, cio_handle socket, int how)
{
    (void)ud;
    return cio__os_net_shutdown(NULL, socket, how);
}

cio_err cio__e_net_close(void *ud, cio_handle socket)
{
    (void)ud;
    return cio__os_net_close(NULL, socket); /* renews the number first (cio__e_fd_forget) */
}

/* ---- connect: on the helper pool ------------------------------------------------------------------------------ */

struct connect_args {
    const cio_ip_address *address;
    const cio_unix_address *unix_address;
    const cio_connect_options *options;
    cio_stream *out;
};

static cio_err connect_blocking(void *p)
{
    struct connect_args *a = (struct connect_args *)p;
    cio_err err = a->unix_address != NULL ? cio__os_net_connect_unix(NULL, a->unix_address, a->out)
                                          : cio__os_net_connect_ip(NULL, a->address, a->options, a->out);
    return made(err, a->out->handle, false);
}

cio_err cio__e_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                              cio_stream *out)
{
    struct connect_args a = {address, NULL, options, out};
    return cio__e_helper((struct cio_evented *)ud, connect_blocking, &a, true);
}

cio_err cio__e_net_connect_unix(void *ud, const cio_unix_address *address, cio_stream *out)
{
    struct connect_args a = {NULL, address, NULL, out};
    return cio__e_helper((struct cio_evented *)ud, connect_blocking, &a, true);
}

/* ---- operations that wait for readiness ---------------------------------------------------------------------- */

enum net_op { OP_ACCEPT, OP_READ, OP_WRITE, OP_SEND, OP_RECEIVE };

struct net_args {
    struct cio_evented *e;
    enum net_op op;
    cio_handle fd;
    const void *iov;
    size_t iovcnt;
    size_t *n;
    cio_stream *stream;
    const cio_ip_address *dest;
    cio_message *msgs;
    size_t max;
    int64_t deadline; /* receive and timed operations: monotonic ns, -1 none */
};

static cio_err attempt(struct net_args *a)
{
    switch (a->op) {
    case OP_ACCEPT: {
        cio_err err = cio__os_net_accept_flags(a->fd, a->stream, SOCK_NONBLOCK);
        return made(err, a->stream->handle, true);
    }
    case OP_READ: return cio__os_net_read(NULL, a->fd, (const cio_iovec *)a->iov, a->iovcnt, a->n);
    case OP_WRITE: return cio__os_net_write(NULL, a->fd, (const cio_const_iovec *)a->iov, a->iovcnt, a->n);
    case OP_SEND: return cio__os_net_send(NULL, a->fd, a->dest, (const cio_const_iovec *)a->iov, a->iovcnt, a->n);
    default: return cio__os_net_receive(NULL, a->fd, a->msgs, a->max, CIO_TIMEOUT_NONE, a->n);
    }
}

/* A stream read where the poller keeps per-descriptor hints (epoll): when this loop's last read of
 * fd came back short and no edge has arrived since, the attempt would only say EAGAIN, so the fiber
 * waits first; a short read tells the poller so. (An EOF is not short: a read after it must not
 * wait for an edge that already came.) A read whose deadline has passed tries all the same. */
static cio_err read_hinted(struct net_args *a)
{
    const struct cio__e_poller_ops *ops = a->e->poller;
    struct cio__e_loop *l = cio__e_self(a->e)->home;
    size_t want = 0, cnt = a->iovcnt < CIO__OS_IOV_MAX ? a->iovcnt : CIO__OS_IOV_MAX; /* what readv is given */
    for (size_t i = 0; i < cnt; i++)
        want += ((const cio_iovec *)a->iov)[i].len;
    bool first = true;
    for (;;) {
        cio_err err = cio__e_cancel_point(a->e);
        if (err != CIO_OK)
            return err;
        uint32_t rev;
        /* A deadline already passed (a zero timeout) always tries: the edge of data that is there
         * may not have reached the loop yet, and the wait would time out at once. */
        if (first && (a->deadline < 0 || a->deadline > cio__e_now_ns()) && ops->read_first(l, a->fd)) {
            err = cio__e_wait_fd(a->e, a->fd, POLLIN, a->deadline, true, &rev);
            if (err != CIO_OK)
                return err;
        }
        first = false;
        err = attempt(a);
        if (err == CIO_OK) {
            ops->read_done(l, a->fd, *a->n > 0 && *a->n < want);
            return CIO_OK;
        }
        if (err != CIO_E_WOULD_BLOCK)
            return err;
        err = cio__e_wait_fd(a->e, a->fd, POLLIN, a->deadline, true, &rev);
        if (err != CIO_OK)
            return err;
    }
}

static cio_err net_run(void *p)
{
    struct net_args *a = (struct net_args *)p;
    if (a->op != OP_SEND && a->op != OP_RECEIVE) {
        cio_err err = make_nonblocking(a->fd);
        if (err != CIO_OK)
            return err;
    }
    if (a->op == OP_READ && a->e->poller->read_first != NULL)
        return read_hinted(a);
    uint32_t events = (a->op == OP_WRITE || a->op == OP_SEND) ? POLLOUT : POLLIN;
    for (;;) {
        cio_err err = cio__e_cancel_point(a->e);
        if (err != CIO_OK)
            return err;
        err = attempt(a);
        if (err != CIO_E_WOULD_BLOCK)
            return err;
        uint32_t rev;
        err = cio__e_wait_fd(a->e, a->fd, events, a->deadline, true, &rev);
        if (err != CIO_OK)
            return err;
    }
}

static cio_err net_slot(struct net_args *a)
{
    a->deadline = a->op == OP_RECEIVE ? a->deadline : -1;
    return cio__e_run(a->e, net_run, a);
}

cio_err cio__e_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    struct net_args a = {.e = (struct cio_evented *)ud, .op = OP_ACCEPT, .fd = listener, .stream = out};
    return CIO__IN_SET(net_accept, net_slot(&a));
}

/* A read, write or send (to dest) of iov on fd, waiting for readiness up to deadline (-1: none): *n
 * counts what moved. */
static cio_err run_io(void *ud, enum net_op op, cio_handle fd, const void *iov, size_t iovcnt, size_t *n,
                      const cio_ip_address *dest, int64_t deadline)
{
    if (n == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *n = 0;
    struct net_args a = {.e = (struct cio_evented *)ud, .op = op, .fd = fd, .iov = iov, .iovcnt = iovcnt, .n = n};
    a.dest = dest;
    a.deadline = deadline;
    return cio__e_run(a.e, net_run, &a);
}

cio_err cio__e_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    return CIO__IN_SET(net_read, run_io(ud, OP_READ, stream, iov, iovcnt, nread, NULL, -1));
}

cio_err cio__e_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)
{
    return CIO__IN_SET(net_write, run_io(ud, OP_WRITE, stream, iov, iovcnt, nwritten, NULL, -1));
}

cio_err cio__e_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                        size_t iovcnt, size_t *nsent)
{
    return CIO__IN_SET(net_send, run_io(ud, OP_SEND, socket, iov, iovcnt, nsent, dest, -1));
}

cio_err cio__e_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                           size_t *count)
{
    if (msgs == NULL || max == 0 || count == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    int64_t deadline = cio__e_mono_deadline(timeout);
    struct net_args a = {.e = (struct cio_evented *)ud,
                         .op = OP_RECEIVE,
                         .fd = socket,
                         .msgs = msgs,
                         .max = max,
                         .n = count,
                         .deadline = deadline};
    return CIO__IN_SET(net_receive_timeout, net_slot(&a));
}

/* A timed operation (cio/batch.h): a stream read, a stream write or an accept waits for readiness
 * up to the deadline (a timeout ends only the wait: nothing was taken, or written, by the attempt
 * that timed out; a write sends what fits and may be short); a datagram receive has its own
 * timeout; every other kind is CIO_E_UNIMPLEMENTED (cio_operate_timeout runs it as a fiber). */
cio_err cio__e_operate(void *ud, cio_operation *op, cio_timeout timeout)
{
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    op->count = 0;
    struct net_args a = {.e = (struct cio_evented *)ud, .deadline = cio__e_mono_deadline(timeout)};
    switch (op->kind) {
    case CIO_OP_NET_READ:
        return run_io(ud, OP_READ, op->u.net_read.stream, op->u.net_read.iov, op->u.net_read.iovcnt, &op->count, NULL,
                      a.deadline);
    case CIO_OP_NET_ACCEPT:
        a.op = OP_ACCEPT;
        a.fd = op->u.net_accept.listener;
        a.stream = &op->stream;
        break;
    case CIO_OP_NET_WRITE: /* what fits now, else wait for room up to the deadline (may be short) */
        return run_io(ud, OP_WRITE, op->u.net_write.stream, op->u.net_write.iov, op->u.net_write.iovcnt, &op->count,
                      NULL, a.deadline);
    case CIO_OP_NET_RECEIVE:
        return cio__e_net_receive(ud, op->u.net_receive.socket, op->u.net_receive.msgs, op->u.net_receive.max, timeout,
                                  &op->count);
    default: return CIO_E_UNIMPLEMENTED;
    }
    return cio__e_run(a.e, net_run, &a);
}
