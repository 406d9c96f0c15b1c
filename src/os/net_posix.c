/*
 * Sockets for the Threaded backend on Linux: TCP and UDP over IPv4/IPv6, Unix-domain streams.
 *
 * Invariants:
 * - Every call that can block (accept4, connect of a Unix socket, poll, recvfrom/read/readv,
 *   sendto/sendmsg, recvmmsg)
 *   runs inside the cancellation bracket: EINTR retries unless a cancel request arrived, which ends
 *   the call with CIO_E_CANCELED. Calls that cannot block (socket, setsockopt, bind, listen,
 *   getsockname, shutdown) use the same bracket for its EINTR handling, which makes them
 *   cancellation points too. Every other errno goes through the generated map of the operation
 *   (cio__errno_<op>): BUG asserts in debug builds and is Unexpected otherwise. No raw errno value
 *   leaves this file.
 * - Every socket is created with SOCK_CLOEXEC and is blocking once a slot returns it. No descriptor
 *   leaks on an error path: the slot that created it closes it before returning the error.
 * - TCP connect is always non-blocking + poll(POLLOUT) + connect again, in the bracket, against a
 *   deadline computed once on entry: so a timeout (CIO_E_TIMEOUT) and a cancel both abandon the
 *   attempt cleanly (a blocking connect interrupted by a signal would keep connecting in the
 *   background and answer the retry with EALREADY). The socket is switched back to blocking
 *   before it is returned.
 * - Writes and sends use sendto/sendmsg with MSG_NOSIGNAL, so a closed peer is EPIPE (BrokenPipe),
 *   never a SIGPIPE, whatever the process's SIGPIPE disposition. A stream read or write of one
 *   buffer is recvfrom (read(2) on a stream that is not a socket)/sendto (sites net_read/net_write),
 *   of several readv/sendmsg (net_readv, net_writev): the one-buffer calls skip the kernel's copies
 *   of the vector and message header, 5-8 % of an epoll echo server's CPU per round trip (B14).
 * - Receive with a timeout polls first (deadline fixed on entry) and then reads only what is
 *   queued (MSG_DONTWAIT); without one it blocks in recvmmsg(MSG_WAITFORONE). Either way the batch
 *   holds what has already arrived after the first datagram and never waits to fill up.
 * - Addresses cross the kernel boundary only through the conversions of net_common.c (ports and
 *   flow labels in network byte order, scope ids in host order); an AF_UNIX peer reads as all-zero.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4, recvmmsg, MSG_WAITFORONE */
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "errno_step.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_posix.h" /* net_common.h, and the accept with flags */
#include "os.h"

/* recvmmsg takes its flags as unsigned int on NetBSD, as int elsewhere. */
#if defined(__NetBSD__)
#define RECVMMSG_FLAGS(f) ((unsigned)(f))
#else
#define RECVMMSG_FLAGS(f) (f)
#endif

/* Datagrams taken by one receive call at most (stack space for their headers and addresses). */
#define NET_BATCH_MAX 32

/* A mapped errno outside the bracket (calls that are never interrupted). */
static cio_err mapped_error(cio__mapped m)
{
    if (m.action == CIO__MAP_BUG)
        return CIO__BUG("net: an errno that means a bug");
    return m.action == CIO__MAP_OK ? (cio_err)CIO_OK : m.err;
}

/* ---- addresses, deadlines and poll (the conversions and deadlines: net_common.c) --------------------- */

typedef cio__os_sockaddr_any sockaddr_any;
typedef cio__os_deadline deadline;

/* poll's timeout for what is left: -1 for none, 0 once passed, otherwise rounded up to ms. */
static int remaining_ms(const deadline *d)
{
    if (d->none)
        return -1;
    int64_t left = d->ns - cio__os_now(NULL, d->clock).ns;
    if (left <= 0)
        return 0;
    int64_t ms = left / 1000000 + (left % 1000000 != 0);
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Waits until fd reports one of `events` (or an error/hang-up, which the next call reports):
 * CIO_OK, CIO_E_TIMEOUT, CIO_E_CANCELED or a poll error (SystemResources, Unexpected). */
static cio_err poll_one(int fd, short events, const deadline *d)
{
    cio_err err = cio__t_syscall_begin();
    if (err != CIO_OK)
        return err;
    for (;;) {
        int ms = remaining_ms(d);
        struct pollfd p;
        p.fd = fd;
        p.events = events;
        p.revents = 0;
        int r = CIO__SYS(poll, poll_one)(&p, 1, ms);
        if (r > 0)
            break;
        if (r == 0) {
            if (ms == 0) {
                cio__t_syscall_end();
                return CIO_E_TIMEOUT;
            }
            continue; /* woke a little early: poll again with what is left */
        }
        if (!cio__os_errno_again(cio__errno_poll(errno), "net: an errno that means a bug", &err))
            return err;
    }
    cio__t_syscall_end();
    return CIO_OK;
}

/* poll_one against a timeout, for the timed operations (operate_posix.c). */
cio_err cio__os_poll_ready(int fd, short events, cio_timeout timeout)
{
    deadline d = cio__os_deadline_from(timeout);
    return poll_one(fd, events, &d);
}

/* ---- descriptors -------------------------------------------------------------------------------------- */

/* close(2) never retried: on Linux the descriptor is gone even when it reports EINTR. A descriptor
 * that was not open is NotOpen (the public wrapper's debug line names it). */
static cio_err close_fd(int fd)
{
    if (CIO__SYS(close, net_close_fd)(fd) == 0)
        return CIO_OK;
    cio__mapped m = cio__errno_close_handle(errno);
    return m.action == CIO__MAP_OK ? CIO_OK : m.err;
}

static cio_err set_int_option(int fd, int level, int name, int value)
{
    cio_err err;
    CIO__OS_CALL(err, setsockopt,
                 CIO__SYS(setsockopt, set_int_option)(fd, level, name, &value, (socklen_t)sizeof value));
    return err;
}

static cio_err local_address(int fd, cio_ip_address *out)
{
    sockaddr_any sa;
    socklen_t len = cio__os_sockaddr_clear(&sa);
    cio_err err;
    CIO__OS_CALL(err, getsockname, CIO__SYS(getsockname, local_address)(fd, &sa.sa, &len));
    if (err == CIO_OK)
        cio__os_sockaddr_to_ip(&sa.storage, len, out);
    return err;
}

static size_t clamp_iovcnt(size_t n)
{
    return n > CIO__OS_IOV_MAX ? CIO__OS_IOV_MAX : n;
}

/* ---- TCP ---------------------------------------------------------------------------------------------- */

/* SO_REUSEADDR / SO_REUSEPORT as asked (OptionUnsupported where the OS has no SO_REUSEPORT). */
static cio_err set_reuse(int fd, bool reuse_address, bool reuse_port)
{
    cio_err err = CIO_OK;
    if (reuse_address)
        err = set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, 1);
#ifdef SO_REUSEPORT
    if (err == CIO_OK && reuse_port)
        err = set_int_option(fd, SOL_SOCKET, SO_REUSEPORT, 1);
#else
    if (err == CIO_OK && reuse_port)
        err = CIO_E_OPTION_UNSUPPORTED;
#endif
    return err;
}

cio_err cio__os_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                              cio_server *out)
{
    (void)ud;
    if (options == NULL)
        options = &cio__os_listen_defaults;
    sockaddr_any sa;
    socklen_t salen;
    if (address == NULL || out == NULL || !cio__os_sockaddr_from_ip(address, &sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    int fd, r;
    CIO__OS_SYSCALL(err, fd, socket,
                    CIO__SYS(socket, listen_ip)(sa.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP));
    if (err != CIO_OK)
        return CIO__IN_SET(net_listen, err);
    err = set_reuse(fd, options->reuse_address, options->reuse_port);
    if (err == CIO_OK)
        err = cio__os_sockopts_apply(fd, address->family, true, &options->sockopts);
    if (err == CIO_OK)
        CIO__OS_SYSCALL(err, r, bind, CIO__SYS(bind, listen_ip)(fd, &sa.sa, salen));
    if (err == CIO_OK)
        CIO__OS_SYSCALL(err, r, listen, CIO__SYS(listen, listen_ip)(fd, cio__os_backlog(options, INT_MAX)));
    if (err == CIO_OK)
        err = local_address(fd, &out->address);
    if (err != CIO_OK) {
        close_fd(fd);
        return CIO__IN_SET(net_listen, err);
    }
    out->handle = fd;
    return CIO_OK;
}

cio_err cio__os_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    (void)ud;
    return cio__os_net_accept_flags(listener, out, 0);
}

cio_err cio__os_net_accept_flags(cio_handle listener, cio_stream *out, int flags)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    sockaddr_any sa;
    socklen_t len = cio__os_sockaddr_clear(&sa);
    cio_err err;
    int fd;
    CIO__OS_SYSCALL(err, fd, accept4, CIO__SYS(accept4, accept)(listener, &sa.sa, &len, SOCK_CLOEXEC | flags));
    if (err != CIO_OK)
        return CIO__IN_SET(net_accept, err);
    out->handle = fd;
    cio__os_sockaddr_to_ip(&sa.storage, len, &out->peer);
    return CIO_OK;
}

static cio_err set_blocking(int fd)
{
    int flags = CIO__SYS(fcntl, set_blocking)(fd, F_GETFL, 0);
    if (flags == -1 || CIO__SYS(fcntl, set_blocking)(fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
        return mapped_error(cio__errno_fcntl(errno));
    return CIO_OK;
}

/*
 * The non-blocking connect of a fresh socket and the wait for it (see the invariants). The result
 * is asked of connect itself once poll reports the socket writable: connect again answers 0 or
 * EISCONN when the connection is up, EALREADY while it is still pending, and the failure otherwise
 * (Linux and the BSDs; SO_ERROR would do as well, but QEMU's user mode hands the guest the host's
 * errno number there).
 */
static cio_err connect_nonblocking(int fd, const sockaddr_any *sa, socklen_t salen, const deadline *d)
{
    bool started = false;
    for (;;) {
        cio_err err = cio__t_syscall_begin();
        if (err != CIO_OK)
            return err;
        int r = CIO__SYS(connect, connect_nonblocking)(fd, &sa->sa, salen);
        int e = r == 0 ? 0 : errno;
        if (r == 0 || (started && e == EISCONN)) {
            cio__t_syscall_end();
            return CIO_OK;
        }
        if (e == EINPROGRESS || (started && e == EALREADY)) {
            cio__t_syscall_end();
        } else {
            cio__mapped m = cio__errno_connect(e);
            if (m.action != CIO__MAP_RETRY) {
                cio__t_syscall_end();
                return mapped_error(m);
            }
            /* EINTR, not expected of a non-blocking connect: unless canceled, the attempt may be
             * under way, so ask again after the wait. */
            err = cio__t_syscall_interrupted();
            if (err != CIO_OK)
                return err;
            cio__t_syscall_end();
        }
        started = true;
        err = poll_one(fd, POLLOUT, d);
        if (err != CIO_OK)
            return err;
    }
}

cio_err cio__os_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                               cio_stream *out)
{
    (void)ud;
    sockaddr_any sa;
    socklen_t salen;
    if (address == NULL || out == NULL || !cio__os_sockaddr_from_ip(address, &sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    deadline d = cio__os_deadline_from(options != NULL ? options->timeout : CIO_TIMEOUT_NONE);
    cio_err err;
    int fd;
    CIO__OS_SYSCALL(err, fd, socket,
                    CIO__SYS(socket, connect_ip)(sa.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                                 IPPROTO_TCP));
    if (err != CIO_OK)
        return CIO__IN_SET(net_connect, err);
    err = options != NULL ? cio__os_sockopts_apply(fd, address->family, true, &options->sockopts) : CIO_OK;
    if (err == CIO_OK)
        err = connect_nonblocking(fd, &sa, salen, &d);
    if (err == CIO_OK)
        err = set_blocking(fd);
    if (err != CIO_OK) {
        close_fd(fd);
        return CIO__IN_SET(net_connect, err);
    }
    out->handle = fd;
    out->peer = *address;
    return CIO_OK;
}

/* ---- streams ------------------------------------------------------------------------------------------ */

/* One buffer: recvfrom, whose path in the kernel skips readv's copy of the vector and read's file
 * layers (B14's epoll echo server: 5.84 against read's 6.07 and readv's 6.14 us of CPU per round
 * trip). A stream that is not a socket (a pipe or a terminal handed to cio as a stream) answers
 * ENOTSOCK, and is read with read(2). */
static ssize_t read_one(int fd, void *buf, size_t len)
{
    ssize_t n = CIO__SYS(recvfrom, net_read)(fd, buf, len, 0, NULL, NULL);
    if (n == -1 && errno == ENOTSOCK)
        n = CIO__SYS(read, net_read_pipe)(fd, buf, len);
    return n;
}

cio_err cio__os_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    (void)ud;
    if (nread == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nread = 0;
    cio_err err;
    ssize_t n;
    if (iovcnt == 1)
        CIO__OS_SYSCALL(err, n, net_read, read_one(stream, iov[0].base, iov[0].len));
    else
        CIO__OS_SYSCALL(err, n, net_read,
                        CIO__SYS(readv, net_readv)(stream, (const struct iovec *)(const void *)iov,
                                                   (int)clamp_iovcnt(iovcnt)));
    if (err == CIO_OK)
        *nread = (size_t)n;
    return CIO__IN_SET(net_read, err);
}

cio_err cio__os_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    cio_err err;
    ssize_t n;
    if (iovcnt == 1) { /* one buffer: send's path skips sendmsg's copies of the header and the vector */
        CIO__OS_SYSCALL(err, n, net_write,
                        CIO__SYS(sendto, net_write)(stream, iov[0].base, iov[0].len, MSG_NOSIGNAL, NULL, 0));
    } else {
        struct msghdr msg;
        memset(&msg, 0, sizeof msg);
        msg.msg_iov = (struct iovec *)(uintptr_t)(const void *)iov;        /* sendmsg does not write it */
        msg.msg_iovlen = (__typeof__(msg.msg_iovlen))clamp_iovcnt(iovcnt); /* size_t (Linux) or int (BSDs) */
        CIO__OS_SYSCALL(err, n, net_write, CIO__SYS(sendmsg, net_writev)(stream, &msg, MSG_NOSIGNAL));
    }
    if (err == CIO_OK)
        *nwritten = (size_t)n;
    return CIO__IN_SET(net_write, err);
}

cio_err cio__os_net_shutdown(void *ud, cio_handle socket, int how)
{
    (void)ud;
    int os_how = cio__os_shutdown_how(how);
    if (os_how < 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    CIO__OS_CALL(err, shutdown, CIO__SYS(shutdown, net_shutdown)(socket, os_how));
    return CIO__IN_SET(net_shutdown, err);
}

cio_err cio__os_net_close(void *ud, cio_handle socket)
{
    (void)ud;
    cio__os_before_close(socket);
    return close_fd(socket);
}

/* ---- UDP ---------------------------------------------------------------------------------------------- */

cio_err cio__os_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out)
{
    (void)ud;
    if (options == NULL)
        options = &cio__os_bind_defaults;
    sockaddr_any sa;
    socklen_t salen;
    if (address == NULL || out == NULL || !cio__os_sockaddr_from_ip(address, &sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    int fd, r;
    CIO__OS_SYSCALL(err, fd, socket,
                    CIO__SYS(socket, bind_ip)(sa.sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
    if (err != CIO_OK)
        return CIO__IN_SET(net_bind, err);
    err = set_reuse(fd, options->reuse_address, options->reuse_port);
    if (err == CIO_OK && options->ip6_only && address->family == CIO_IP6)
        err = set_int_option(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    if (err == CIO_OK && options->allow_broadcast)
        err = set_int_option(fd, SOL_SOCKET, SO_BROADCAST, 1);
    if (err == CIO_OK)
        err = cio__os_sockopts_apply(fd, address->family, false, &options->sockopts);
    if (err == CIO_OK)
        CIO__OS_SYSCALL(err, r, bind, CIO__SYS(bind, bind_ip)(fd, &sa.sa, salen));
    if (err == CIO_OK)
        err = local_address(fd, &out->address); /* SystemResources: in BindError too */
    if (err != CIO_OK) {
        close_fd(fd);
        return CIO__IN_SET(net_bind, err);
    }
    out->handle = fd;
    return CIO_OK;
}

cio_err cio__os_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                         size_t iovcnt, size_t *nsent)
{
    (void)ud;
    if (nsent == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nsent = 0;
    sockaddr_any sa;
    socklen_t salen = 0;
    if (dest != NULL && !cio__os_sockaddr_from_ip(dest, &sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_name = dest != NULL ? &sa : NULL;
    msg.msg_namelen = salen;
    msg.msg_iov = (struct iovec *)(uintptr_t)(const void *)iov;
    msg.msg_iovlen = (__typeof__(msg.msg_iovlen))clamp_iovcnt(iovcnt); /* size_t (Linux) or int (BSDs) */
    cio_err err;
    ssize_t n;
    CIO__OS_SYSCALL(err, n, sendmsg, CIO__SYS(sendmsg, net_send)(socket, &msg, MSG_NOSIGNAL));
    if (err == CIO_OK)
        *nsent = (size_t)n;
    return CIO__IN_SET(net_send, err);
}

cio_err cio__os_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                            size_t *count)
{
    (void)ud;
    if (msgs == NULL || max == 0 || count == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    if (max > NET_BATCH_MAX)
        max = NET_BATCH_MAX;
    deadline d = cio__os_deadline_from(timeout);
    struct mmsghdr hdr[NET_BATCH_MAX];
    struct iovec iov[NET_BATCH_MAX];
    sockaddr_any from[NET_BATCH_MAX];
    cio_err err;
    int n;
    for (;;) {
        int flags = MSG_WAITFORONE;
        if (!d.none) {
            err = poll_one(socket, POLLIN, &d);
            if (err != CIO_OK)
                return CIO__IN_SET(net_receive_timeout, err);
            flags = MSG_DONTWAIT;
        }
        memset(hdr, 0, max * sizeof hdr[0]);
        for (size_t i = 0; i < max; i++) {
            iov[i].iov_base = msgs[i].buf;
            iov[i].iov_len = msgs[i].cap;
            hdr[i].msg_hdr.msg_name = &from[i];
            hdr[i].msg_hdr.msg_namelen = (socklen_t)sizeof from[i];
            hdr[i].msg_hdr.msg_iov = &iov[i];
            hdr[i].msg_hdr.msg_iovlen = 1;
        }
        CIO__OS_SYSCALL(err, n, recvmsg,
                        (int)CIO__SYS(recvmmsg, net_receive)(socket, hdr, (unsigned)max, RECVMMSG_FLAGS(flags), NULL));
        if (err == CIO_E_WOULD_BLOCK && !d.none)
            continue; /* readable, yet nothing to take (another reader, a bad checksum): wait again */
        break;
    }
    if (err != CIO_OK)
        return CIO__IN_SET(net_receive_timeout, err);
    for (size_t i = 0; i < (size_t)n; i++) {
        msgs[i].len = (size_t)hdr[i].msg_len; /* unsigned int, or ssize_t on FreeBSD */
        msgs[i].truncated = (hdr[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
        cio__os_sockaddr_to_ip(&from[i].storage, hdr[i].msg_hdr.msg_namelen, &msgs[i].from);
    }
    *count = (size_t)n;
    return CIO_OK;
}

/* ---- Unix-domain streams ------------------------------------------------------------------------------ */

cio_err cio__os_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                                cio_server *out)
{
    (void)ud;
    if (options == NULL)
        options = &cio__os_listen_defaults;
    if (!cio__os_unix_address_ok(address) || out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    sockaddr_any sa;
    socklen_t salen = cio__os_sockaddr_from_unix(address, &sa.storage);
    cio_err err;
    int fd, r;
    CIO__OS_SYSCALL(err, fd, socket_unix, CIO__SYS(socket, listen_unix)(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (err != CIO_OK)
        return CIO__IN_SET(net_unix_address_listen, err);
    CIO__OS_SYSCALL(err, r, bind_unix, CIO__SYS(bind, listen_unix)(fd, &sa.sa, salen));
    if (err == CIO_OK)
        CIO__OS_SYSCALL(err, r, listen_unix, CIO__SYS(listen, listen_unix)(fd, cio__os_backlog(options, INT_MAX)));
    if (err != CIO_OK) {
        close_fd(fd);
        return CIO__IN_SET(net_unix_address_listen, err);
    }
    out->handle = fd;
    memset(&out->address, 0, sizeof out->address);
    return CIO_OK;
}

cio_err cio__os_net_connect_unix(void *ud, const cio_unix_address *address, cio_stream *out)
{
    (void)ud;
    if (!cio__os_unix_address_ok(address) || out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    sockaddr_any sa;
    socklen_t salen = cio__os_sockaddr_from_unix(address, &sa.storage);
    cio_err err;
    int fd, r;
    CIO__OS_SYSCALL(err, fd, socket_unix, CIO__SYS(socket, connect_unix)(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (err != CIO_OK) /* socket_unix's set is ListenError: its errors here are all ConnectError's */
        return CIO__IN_SET(net_unix_address_connect, err);
    /* A Unix connect waits only for room in the listener's backlog; interrupted, it leaves the
     * socket unconnected, so calling again is right. */
    CIO__OS_SYSCALL(err, r, connect_unix, CIO__SYS(connect, connect_unix)(fd, &sa.sa, salen));
    (void)r;
    if (err != CIO_OK) {
        close_fd(fd);
        return CIO__IN_SET(net_unix_address_connect, err);
    }
    out->handle = fd;
    memset(&out->peer, 0, sizeof out->peer);
    return CIO_OK;
}
