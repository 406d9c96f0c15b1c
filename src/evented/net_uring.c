/*
 * The socket slots the io_uring flavour runs as ring operations (Linux): accept (ACCEPT), TCP
 * connect (SOCKET where the kernel has it, then CONNECT), stream reads and writes (RECVMSG /
 * SENDMSG), datagram send and receive (SENDMSG / RECVMSG), and close (CLOSE).
 * cio__e_uring_net_override puts each into the instance's vtable only when the probe found its
 * opcodes; the rest keep the readiness core (net.c). Unix-domain connect stays on the helper pool:
 * a non-blocking Unix connect to a full backlog answers EAGAIN, and the ring would re-poll a socket
 * that is always writable, spinning until room appears; the blocking call waits in the kernel.
 *
 * Invariants:
 * - The system calls, flags and errno maps are the Threaded backend's (net_posix.c): sendmsg with
 *   MSG_NOSIGNAL for writes and sends (net_write / sendmsg maps), recvmsg for reads (net_read map,
 *   Threaded's readv on a socket), accept4 with SOCK_CLOEXEC, socket and connect maps. Sockets made
 *   here are non-blocking as everywhere in Evented (so the readiness core can take them too).
 * - Deadlines (connect's timeout, receive's, a timed read's or accept's) are a timer of the loop
 *   (poll_uring.c): a timed read is one RECVMSG, like a plain one; only a deadline that fires costs
 *   an ASYNC_CANCEL, and the operation it ended is CIO_E_TIMEOUT.
 * - Cancellation is ASYNC_CANCEL (poll_uring.c). An ACCEPT or SOCKET that completes with a
 *   descriptor although a cancel was requested returns it (success; the request stays pending for
 *   the next cancellation point, as in Threaded); a connect that then sees the request closes its
 *   socket. No descriptor leaks.
 * - A ring operation that answers EAGAIN anyway (a kernel that hands it back for a non-blocking
 *   descriptor) waits for readiness and runs again; ENOTSOCK on a stream read/write (a pipe handed
 *   in as a stream) goes to the readiness core, which uses readv/sendmsg like Threaded.
 * - Receive takes its first datagram on the ring, then what else is already queued without waiting
 *   (Threaded's non-blocking batch receive), so a batch never waits to fill up. An error the kernel
 *   reports on that second, non-blocking call is dropped (the batch already has a datagram); Threaded's
 *   single recvmmsg would keep it for the next call instead.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "cio/errmap.h"
#include "cio/batch.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_posix.h"
#include "slots.h"
#include "os.h"
#include "uring.h"

enum net_kind { N_ACCEPT, N_CONNECT, N_READ, N_WRITE, N_SEND, N_RECEIVE };

struct netop {
    struct cio_evented *e;
    enum net_kind kind;
    int fd;
    const void *iov;
    size_t iovcnt;
    size_t *n;
    cio_stream *stream;
    const cio_ip_address *addr;         /* connect's peer, send's destination */
    const cio_connect_options *options; /* connect's (sockopts), or NULL */
    cio_message *msgs;
    size_t max;
    int64_t deadline; /* CLOCK_MONOTONIC ns, -1: none */
    bool not_socket;  /* a stream op met ENOTSOCK: the readiness core takes it */
};

static struct io_uring_sqe sqe_for(uint8_t opcode, int fd)
{
    struct io_uring_sqe sqe;
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = opcode;
    sqe.fd = fd;
    return sqe;
}

/* The ring operation, mapped; a WouldBlock answer waits for readiness (events) and runs it again. */
/* The deadline to submit a message operation (RECV/SEND/RECVMSG/SENDMSG) with: one already passed
 * (a zero timeout) takes what is there now, MSG_DONTWAIT and no timer (a timer would fire before the
 * ring had even seen the operation); EAGAIN then ends in the readiness wait, which times out at once. */
static int64_t msg_deadline(const struct netop *a, struct io_uring_sqe *sqe)
{
    if (a->deadline >= 0 && cio__e_deadline_passed(a->deadline)) {
        sqe->msg_flags |= (uint32_t)MSG_DONTWAIT;
        return -1;
    }
    return a->deadline;
}

/* sqe on the ring until it is not WouldBlock, waiting for `events` in between; `message`: a message
 * operation (msg_deadline). */
static cio_err call(struct netop *a, const struct io_uring_sqe *sqe, bool message, cio__mapped (*map)(int),
                    uint32_t events, int32_t *res)
{
    for (;;) {
        struct io_uring_sqe s = *sqe;
        int64_t deadline = message ? msg_deadline(a, &s) : a->deadline;
        cio_err err = cio__e_uring_call(a->e, &s, deadline, true, map, res);
        if (err != CIO_E_WOULD_BLOCK)
            return err;
        uint32_t rev;
        err = cio__e_wait_fd(a->e, sqe->fd, events, a->deadline, true, &rev);
        if (err != CIO_OK)
            return err;
    }
}

static void close_quietly(int fd)
{
    cio__e_fd_renew(fd, false);
    (void)cio__os_net_close(NULL, fd);
}

/* socket(2) on the ring where the kernel has IORING_OP_SOCKET, directly otherwise (it never blocks). */
static cio_err make_socket(struct netop *a, int domain, int type, int protocol, cio__mapped (*map)(int), int *fd)
{
    if (cio__e_uring_has(a->e, IORING_OP_SOCKET)) {
        struct io_uring_sqe sqe = sqe_for(IORING_OP_SOCKET, domain);
        sqe.off = (uint64_t)(unsigned)type;
        sqe.len = (uint32_t)protocol;
        int32_t res = -1;
        cio_err err = cio__e_uring_call(a->e, &sqe, -1, true, map, &res);
        if (err == CIO_OK && res < 0)
            err = CIO_E_UNEXPECTED;
        if (err == CIO_OK)
            *fd = res;
        return err;
    }
    cio_err err = cio__e_cancel_point(a->e);
    while (err == CIO_OK) {
        int s = CIO__SYS(socket, uring_socket)(domain, type, protocol);
        if (s >= 0) {
            *fd = s;
            return CIO_OK;
        }
        cio__mapped m = map(errno);
        if (m.action == CIO__MAP_RETRY) {
            err = cio__e_cancel_point(a->e);
            continue;
        }
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG("socket: an errno that means a bug");
        err = m.action == CIO__MAP_OK ? (cio_err)CIO_E_UNEXPECTED : m.err;
    }
    return err;
}

/* TCP connect: CONNECT on a fresh non-blocking socket, the deadline on the loop's timers. The ring waits for a
 * connection in progress itself; should it answer EINPROGRESS/EALREADY anyway, the socket is waited
 * on (POLLOUT) and asked again, where EISCONN is success (Threaded's connect_nonblocking). */
static cio_err run_connect(struct netop *a)
{
    struct sockaddr_storage sa;
    socklen_t salen;
    if (!cio__os_sockaddr_from_ip(a->addr, &sa, &salen))
        return CIO_E_INVALID_ARGUMENT;
    int fd = -1;
    cio_err err = make_socket(a, sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP,
                              cio__errno_socket, &fd);
    if (err != CIO_OK)
        return err;
    if (a->options != NULL) {
        err = cio__os_sockopts_apply(fd, a->addr->family, true, &a->options->sockopts);
        if (err != CIO_OK) {
            close_quietly(fd);
            return err;
        }
    }
    struct io_uring_sqe sqe = sqe_for(IORING_OP_CONNECT, fd);
    sqe.addr = (uint64_t)(uintptr_t)&sa;
    sqe.off = salen; /* addr2: the length */
    bool started = false;
    for (;;) {
        enum cio__e_uring_end end;
        int32_t res = cio__e_uring_op(a->e, &sqe, a->deadline, true, &end);
        if (end == CIO__E_U_CANCELED) {
            err = CIO_E_CANCELED;
            break;
        }
        if (end == CIO__E_U_TIMED_OUT) {
            err = CIO_E_TIMEOUT;
            break;
        }
        if (res == 0 || (started && res == -EISCONN)) {
            err = CIO_OK;
            break;
        }
        if (res == -EINPROGRESS || res == -EALREADY || res == -EAGAIN) {
            uint32_t rev;
            err = cio__e_wait_fd(a->e, fd, POLLOUT, a->deadline, true, &rev);
            if (err != CIO_OK)
                break;
            started = true;
            continue;
        }
        cio__mapped m = cio__errno_connect(-res);
        if (m.action == CIO__MAP_RETRY) {
            started = true; /* the attempt may be under way: ask again */
            continue;
        }
        err = m.action == CIO__MAP_BUG ? CIO__BUG("connect: an errno that means a bug")
                                       : (m.action == CIO__MAP_OK ? (cio_err)CIO_OK : m.err);
        break;
    }
    if (err != CIO_OK) {
        close_quietly(fd);
        return err;
    }
    a->stream->handle = fd;
    cio__e_fd_renew(fd, true); /* SOCK_NONBLOCK */
    a->stream->peer = *a->addr;
    return CIO_OK;
}

/* A listener this backend knows to be non-blocking (cio__e_fd_owned): what is already queued is
 * taken with one accept4 on the loop thread. On the ring each accept is a round trip that resumes
 * the acceptor behind every ready fiber, so a burst of connections to a busy loop was accepted one
 * per pass through its run queue (B17, 1,000 connections on one CPU: first answers up to 2.4 s
 * late). CIO_E_WOULD_BLOCK: nothing queued, the ring waits. */
static cio_err accept_queued(struct netop *a)
{
    uint32_t gen;
    if (!cio__e_fd_owned(a->fd, &gen))
        return CIO_E_WOULD_BLOCK;
    cio_err err = cio__e_cancel_point(a->e);
    if (err != CIO_OK)
        return err;
    err = cio__os_net_accept_flags(a->fd, a->stream, SOCK_NONBLOCK);
    if (err == CIO_OK)
        cio__e_fd_renew(a->stream->handle, true); /* SOCK_NONBLOCK */
    return err;
}

static cio_err run_accept(struct netop *a)
{
    cio_err direct = accept_queued(a);
    if (direct != CIO_E_WOULD_BLOCK)
        return direct;
    struct sockaddr_storage sa;
    socklen_t len = (socklen_t)sizeof sa;
    memset(&sa, 0, sizeof sa);
    struct io_uring_sqe sqe = sqe_for(IORING_OP_ACCEPT, a->fd);
    sqe.addr = (uint64_t)(uintptr_t)&sa;
    sqe.off = (uint64_t)(uintptr_t)&len; /* addr2 */
    sqe.accept_flags = SOCK_CLOEXEC | SOCK_NONBLOCK;
    int32_t res = -1;
    cio_err err = call(a, &sqe, false, cio__errno_accept4, POLLIN, &res);
    if (err != CIO_OK)
        return err;
    if (res < 0)
        return CIO_E_UNEXPECTED;
    a->stream->handle = res;
    cio__e_fd_renew(res, true); /* SOCK_NONBLOCK */
    cio__os_sockaddr_to_ip(&sa, len, &a->stream->peer);
    return CIO_OK;
}

/* Stream read/write and datagram send: one RECVMSG/SENDMSG. */
static cio_err run_msg(struct netop *a)
{
    bool reading = a->kind == N_READ;
    uint8_t single = reading ? IORING_OP_RECV : IORING_OP_SEND;
    struct sockaddr_storage sa;
    struct msghdr msg;
    struct io_uring_sqe sqe;
    if (a->kind != N_SEND && a->iovcnt == 1 && cio__e_uring_has(a->e, single)) {
        /* One buffer: RECV/SEND skip the kernel's copies of the message header and the vector,
         * as recvfrom/sendto do for the epoll flavour (net_posix.c); on the ring (B10) the saving
         * measured within noise. */
        sqe = sqe_for(single, a->fd);
        const struct iovec *one = (const struct iovec *)a->iov;
        sqe.addr = (uint64_t)(uintptr_t)one->iov_base;
        sqe.len = (uint32_t)(one->iov_len > UINT32_MAX ? UINT32_MAX : one->iov_len);
    } else {
        socklen_t salen = 0;
        if (a->kind == N_SEND && a->addr != NULL && !cio__os_sockaddr_from_ip(a->addr, &sa, &salen))
            return CIO_E_INVALID_ARGUMENT;
        memset(&msg, 0, sizeof msg);
        msg.msg_name = salen > 0 ? &sa : NULL;
        msg.msg_namelen = salen;
        msg.msg_iov = (struct iovec *)(uintptr_t)a->iov; /* sendmsg does not write it */
        msg.msg_iovlen = a->iovcnt > CIO__OS_IOV_MAX ? CIO__OS_IOV_MAX : a->iovcnt;
        sqe = sqe_for(reading ? IORING_OP_RECVMSG : IORING_OP_SENDMSG, a->fd);
        sqe.addr = (uint64_t)(uintptr_t)&msg;
        sqe.len = 1;
    }
    sqe.msg_flags = reading ? 0u : (uint32_t)MSG_NOSIGNAL;
    cio__mapped (*map)(int) = reading ? cio__errno_net_read
                                      : (a->kind == N_WRITE ? cio__errno_net_write : cio__errno_sendmsg);
    if (a->kind != N_SEND) {
        /* A descriptor that is not a socket (a pipe used as a stream) is the readiness core's. */
        enum cio__e_uring_end end;
        struct io_uring_sqe first = sqe;
        int32_t res = cio__e_uring_op(a->e, &first, msg_deadline(a, &first), true, &end);
        if (end == CIO__E_U_CANCELED)
            return CIO_E_CANCELED;
        if (end == CIO__E_U_TIMED_OUT)
            return CIO_E_TIMEOUT; /* a timed read (cio_operate_timeout): the deadline ended it */
        if (res == -ENOTSOCK) {
            a->not_socket = true;
            return CIO_OK;
        }
        if (res >= 0) {
            *a->n = (size_t)res;
            return CIO_OK;
        }
        cio__mapped m = map(-res);
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG("net: an errno that means a bug");
        if (m.action == CIO__MAP_ERROR && m.err != CIO_E_WOULD_BLOCK)
            return m.err;
        /* EINTR or EAGAIN: the general path below */
    }
    int32_t res = 0;
    cio_err err = call(a, &sqe, true, map, reading ? POLLIN : POLLOUT, &res);
    if (err == CIO_OK && res >= 0)
        *a->n = (size_t)res;
    return err;
}

static cio_err run_receive(struct netop *a)
{
    struct sockaddr_storage from;
    memset(&from, 0, sizeof from);
    struct iovec iov = {a->msgs[0].buf, a->msgs[0].cap};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_name = &from;
    msg.msg_namelen = (socklen_t)sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    struct io_uring_sqe sqe = sqe_for(IORING_OP_RECVMSG, a->fd);
    sqe.addr = (uint64_t)(uintptr_t)&msg;
    sqe.len = 1;
    int32_t res = 0;
    cio_err err = call(a, &sqe, true, cio__errno_recvmsg, POLLIN, &res);
    if (err != CIO_OK)
        return err;
    if (res < 0)
        return CIO_E_UNEXPECTED;
    a->msgs[0].len = (size_t)res;
    a->msgs[0].truncated = (msg.msg_flags & MSG_TRUNC) != 0;
    cio__os_sockaddr_to_ip(&from, msg.msg_namelen, &a->msgs[0].from);
    size_t count = 1;
    if (a->max > 1) {
        /* What else is queued, without waiting: Threaded's receive with a deadline already passed. Not
         * a cancellation point (its bracket would take a request this receive then cannot report). */
        size_t more = 0;
        cio_cancel_protection was = cio__e_swap_cancel_protection(a->e, CIO_CANCEL_BLOCKED);
        if (cio__os_net_receive(NULL, a->fd, a->msgs + 1, a->max - 1, cio_timeout_duration(CIO_CLOCK_AWAKE, 0),
                                &more) == CIO_OK)
            count += more;
        (void)cio__e_swap_cancel_protection(a->e, was);
    }
    *a->n = count;
    return CIO_OK;
}

static cio_err net_run(void *p)
{
    struct netop *a = (struct netop *)p;
    switch (a->kind) {
    case N_ACCEPT: return run_accept(a);
    case N_CONNECT: return run_connect(a);
    case N_RECEIVE: return run_receive(a);
    default: return run_msg(a);
    }
}

static cio_err net_op(void *ud, struct netop *a)
{
    a->e = (struct cio_evented *)ud;
    return cio__e_run(a->e, net_run, a);
}

/* ---- the slots --------------------------------------------------------------------------------------------- */

static cio_err u_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    struct netop a = {.kind = N_ACCEPT, .fd = listener, .stream = out, .deadline = -1};
    return CIO__IN_SET(net_accept, net_op(ud, &a));
}

static cio_err u_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                                cio_stream *out)
{
    struct sockaddr_storage sa;
    socklen_t salen;
    if (address == NULL || out == NULL || !cio__os_sockaddr_from_ip(address, &sa, &salen))
        return CIO_E_INVALID_ARGUMENT;
    struct netop a = {.kind = N_CONNECT,
                      .stream = out,
                      .addr = address,
                      .options = options,
                      .deadline = cio__e_mono_deadline(options != NULL ? options->timeout : CIO_TIMEOUT_NONE)};
    return CIO__IN_SET(net_connect, net_op(ud, &a));
}

/* A stream read or write of iov on fd on the ring up to deadline (-1: none): *n counts what moved;
 * *not_socket says the descriptor is not a socket (nothing was done: the readiness core takes it). */
static cio_err stream_io(void *ud, enum net_kind kind, cio_handle fd, const void *iov, size_t iovcnt, size_t *n,
                         int64_t deadline, bool *not_socket)
{
    *not_socket = false;
    if (n == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *n = 0;
    struct netop a = {.kind = kind, .fd = fd, .iov = iov, .iovcnt = iovcnt, .n = n, .deadline = deadline};
    cio_err err = net_op(ud, &a);
    *not_socket = err == CIO_OK && a.not_socket;
    return err;
}

/* net_read and net_write: a descriptor that is not a socket goes to the readiness core's slot. */
static cio_err stream_slot(void *ud, enum net_kind kind, cio_handle fd, const void *iov, size_t iovcnt, size_t *n)
{
    bool not_socket;
    cio_err err = stream_io(ud, kind, fd, iov, iovcnt, n, -1, &not_socket);
    if (!not_socket)
        return err;
    return kind == N_READ ? cio__e_net_read(ud, fd, (const cio_iovec *)iov, iovcnt, n)
                          : cio__e_net_write(ud, fd, (const cio_const_iovec *)iov, iovcnt, n);
}

static cio_err u_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    return CIO__IN_SET(net_read, stream_slot(ud, N_READ, stream, iov, iovcnt, nread));
}

static cio_err u_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)
{
    return CIO__IN_SET(net_write, stream_slot(ud, N_WRITE, stream, iov, iovcnt, nwritten));
}

static cio_err u_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                          size_t iovcnt, size_t *nsent)
{
    if (nsent == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nsent = 0;
    struct sockaddr_storage sa;
    socklen_t salen;
    if (dest != NULL && !cio__os_sockaddr_from_ip(dest, &sa, &salen))
        return CIO_E_INVALID_ARGUMENT;
    struct netop a = {
        .kind = N_SEND, .fd = socket, .iov = iov, .iovcnt = iovcnt, .n = nsent, .addr = dest, .deadline = -1};
    return CIO__IN_SET(net_send, net_op(ud, &a));
}

static cio_err u_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                             size_t *count)
{
    if (msgs == NULL || max == 0 || count == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    struct netop a = {.kind = N_RECEIVE,
                      .fd = socket,
                      .msgs = msgs,
                      .max = max,
                      .n = count,
                      .deadline = cio__e_mono_deadline(timeout)};
    return CIO__IN_SET(net_receive_timeout, net_op(ud, &a));
}

/* A timed operation (cio/batch.h): a read or accept with the deadline on the loop's timers, a datagram
 * receive with its own timeout; every other kind is the readiness core's (cio__e_operate). A read of
 * a descriptor that is not a socket goes to the readiness core with the same deadline. */
static cio_err u_operate(void *ud, cio_operation *op, cio_timeout timeout)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    op->count = 0;
    int64_t deadline = cio__e_mono_deadline(timeout);
    if (op->kind == CIO_OP_NET_READ && cio__e_uring_has(e, IORING_OP_RECVMSG)) {
        bool not_socket;
        cio_err err = stream_io(ud, N_READ, op->u.net_read.stream, op->u.net_read.iov, op->u.net_read.iovcnt,
                                &op->count, deadline, &not_socket);
        if (not_socket)
            return cio__e_operate(ud, op, cio_timeout_deadline(CIO_CLOCK_AWAKE, (cio_timestamp){deadline}));
        return err;
    }
    if (op->kind == CIO_OP_NET_ACCEPT && cio__e_uring_has(e, IORING_OP_ACCEPT)) {
        struct netop a = {.kind = N_ACCEPT,
                          .fd = op->u.net_accept.listener,
                          .stream = &op->stream,
                          .deadline = deadline};
        return net_op(ud, &a);
    }
    if (op->kind == CIO_OP_NET_RECEIVE && cio__e_uring_has(e, IORING_OP_RECVMSG))
        return u_net_receive(ud, op->u.net_receive.socket, op->u.net_receive.msgs, op->u.net_receive.max, timeout,
                             &op->count);
    return cio__e_operate(ud, op, timeout);
}

static cio_err u_net_close(void *ud, cio_handle socket)
{
    struct cio_evented *e = (struct cio_evented *)ud;
    cio__e_fd_renew(socket, false);
    if (cio__e_self(e) == NULL)
        return cio__os_net_close(NULL, socket);
    CIO__E_URING_CLOSE_HOOK(socket);
    struct io_uring_sqe sqe = sqe_for(IORING_OP_CLOSE, socket);
    int32_t res;
    /* EBADF: NotOpen; EINTR never retried (the descriptor is gone) */
    return cio__e_uring_call(e, &sqe, -1, false, cio__errno_close_handle, &res);
}

void cio__e_uring_net_override(struct cio_evented *e, struct cio_vtable *vt)
{
    if (cio__e_uring_has(e, IORING_OP_ACCEPT))
        vt->net_accept = u_net_accept;
    if (cio__e_uring_has(e, IORING_OP_CONNECT))
        vt->net_connect_ip = u_net_connect_ip;
    if (cio__e_uring_has(e, IORING_OP_RECVMSG)) {
        vt->net_read = u_net_read;
        vt->net_receive = u_net_receive;
    }
    if (cio__e_uring_has(e, IORING_OP_SENDMSG)) {
        vt->net_write = u_net_write;
        vt->net_send = u_net_send;
    }
    if (cio__e_uring_has(e, IORING_OP_CLOSE))
        vt->net_close = u_net_close;
    vt->operate = u_operate;
}
