/*
 * The public networking API of cio/net.h: thin wrappers over the networking vtable slots. (Address
 * parsing, formatting and construction: net_addr.c.)
 *
 * Invariants:
 * - Every socket wrapper calls exactly the slot it is named after (write_all calls net_write
 *   repeatedly, through fs.c's cio__write_all; the receive forms all call net_receive) and returns
 *   its result unchanged: CIO_OK, CIO_E_INVALID_ARGUMENT (bad arguments, checked here before the
 *   slot), or a member of the function's error set, checked with CIO__IN_SET in debug builds. A
 *   NULL where the API forbids one is CIO__NULL_ARG: CIO_E_INVALID_ARGUMENT in every
 *   build (debug builds also print a line; cio/diag.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cio/io.h"
#include "cio/net.h"
#include "internal.h"

/* ---- TCP ---------------------------------------------------------------------------------------------- */

static bool is_ip(const cio_ip_address *a)
{
    return a != NULL && (a->family == CIO_IP4 || a->family == CIO_IP6);
}

/* The checks of a wrapper that makes a socket for an IP address into *out. */
static cio_err check_ip_args(const cio_ip_address *address, const void *out)
{
    CIO__REQUIRE(address, out);
    return is_ip(address) ? CIO_OK : CIO_E_INVALID_ARGUMENT;
}

/* The same for a Unix-domain address: 1..CIO_UNIX_PATH_MAX bytes. */
static cio_err check_unix_args(const cio_unix_address *address, const void *out)
{
    CIO__REQUIRE(address, out);
    return address->len == 0 || address->len > CIO_UNIX_PATH_MAX ? CIO_E_INVALID_ARGUMENT : CIO_OK;
}

cio_err cio_net_listen(cio_io io, const cio_ip_address *address, const cio_listen_options *options, cio_server *out)
{
    CIO__TRY(check_ip_args(address, out));
    return CIO__IN_SET(net_listen, CIO__VT(io)->net_listen_ip(io.userdata, address, options, out));
}

cio_err cio_server_accept(cio_io io, const cio_server *server, cio_stream *out)
{
    CIO__REQUIRE(server, out);
    return CIO__IN_SET(net_accept, CIO__VT(io)->net_accept(io.userdata, server->handle, out));
}

/* The close of any socket, for the three public closes (func: the public name, for the debug line). */
static cio_err net_close(cio_io io, const char *func, cio_handle h)
{
    if (h == CIO_HANDLE_INVALID)
        return cio__close_result(func, (long long)(intptr_t)h, CIO_E_NOT_OPEN);
    cio_err err = CIO__VT(io)->net_close(io.userdata, h);
    return cio__close_result(func, (long long)(intptr_t)h, CIO__IN_SET(close, err));
}

cio_err cio_server_close(cio_io io, const cio_server *server)
{
    if (server == NULL)
        return CIO__NULL_ARG("server");
    return net_close(io, __func__, server->handle);
}

cio_err cio_net_connect(cio_io io, const cio_ip_address *address, const cio_connect_options *options, cio_stream *out)
{
    CIO__TRY(check_ip_args(address, out));
    return CIO__IN_SET(net_connect, CIO__VT(io)->net_connect_ip(io.userdata, address, options, out));
}

cio_err cio_stream_read_v(cio_io io, const cio_stream *stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    CIO__REQUIRE(stream, nread);
    CIO__REQUIRE_BUF(iov, iovcnt);
    return CIO__IN_SET(net_read, CIO__VT(io)->net_read(io.userdata, stream->handle, iov, iovcnt, nread));
}

cio_err cio_stream_read(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_iovec iov = {buf, len};
    return cio_stream_read_v(io, stream, &iov, 1, nread);
}

cio_err cio_stream_write_v(cio_io io, const cio_stream *stream, const cio_const_iovec *iov, size_t iovcnt,
                           size_t *nwritten)
{
    CIO__REQUIRE(stream, nwritten);
    CIO__REQUIRE_BUF(iov, iovcnt);
    return CIO__IN_SET(net_write, CIO__VT(io)->net_write(io.userdata, stream->handle, iov, iovcnt, nwritten));
}

cio_err cio_stream_write(cio_io io, const cio_stream *stream, const void *buf, size_t len, size_t *nwritten)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_const_iovec iov = {buf, len};
    return cio_stream_write_v(io, stream, &iov, 1, nwritten);
}

static cio_err write_stream(cio_io io, const void *target, const void *buf, size_t len, size_t *n)
{
    return cio_stream_write(io, (const cio_stream *)target, buf, len, n);
}

cio_err cio_stream_write_all(cio_io io, const cio_stream *stream, const void *buf, size_t len)
{
    CIO__REQUIRE(stream);
    CIO__REQUIRE_BUF(buf, len);
    return cio__write_all(io, stream, write_stream, buf, len);
}

cio_err cio_stream_shutdown(cio_io io, const cio_stream *stream, cio_shutdown_how how)
{
    CIO__REQUIRE(stream);
    if ((how != CIO_SHUTDOWN_RECEIVE && how != CIO_SHUTDOWN_SEND && how != CIO_SHUTDOWN_BOTH))
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_shutdown, CIO__VT(io)->net_shutdown(io.userdata, stream->handle, (int)how));
}

cio_err cio_stream_close(cio_io io, const cio_stream *stream)
{
    if (stream == NULL)
        return CIO__NULL_ARG("stream");
    return net_close(io, __func__, stream->handle);
}

/* ---- UDP ---------------------------------------------------------------------------------------------- */

cio_err cio_net_bind(cio_io io, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out)
{
    CIO__TRY(check_ip_args(address, out));
    return CIO__IN_SET(net_bind, CIO__VT(io)->net_bind_ip(io.userdata, address, options, out));
}

cio_err cio_socket_send_to_v(cio_io io, const cio_socket *socket, const cio_ip_address *dest,
                             const cio_const_iovec *iov, size_t iovcnt, size_t *nsent)
{
    CIO__REQUIRE(socket, dest);
    CIO__REQUIRE_BUF(iov, iovcnt);
    if (!is_ip(dest))
        return CIO_E_INVALID_ARGUMENT;
    size_t ignored = 0;
    return CIO__IN_SET(net_send, CIO__VT(io)->net_send(io.userdata, socket->handle, dest, iov, iovcnt,
                                                       nsent != NULL ? nsent : &ignored));
}

cio_err cio_socket_send_to(cio_io io, const cio_socket *socket, const cio_ip_address *dest, const void *buf, size_t len,
                           size_t *nsent)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_const_iovec iov = {buf, len};
    return cio_socket_send_to_v(io, socket, dest, &iov, 1, nsent);
}

/* One datagram through net_receive; the set check is the caller's. */
static cio_err receive_one(cio_io io, const cio_socket *socket, void *buf, size_t len, size_t *nread,
                           cio_ip_address *from, cio_timeout timeout)
{
    CIO__REQUIRE(socket, nread);
    CIO__REQUIRE_BUF(buf, len);
    *nread = 0;
    cio_message m;
    memset(&m, 0, sizeof m);
    m.buf = buf;
    m.cap = len;
    size_t count = 0;
    cio_err err = CIO__VT(io)->net_receive(io.userdata, socket->handle, &m, 1, timeout, &count);
    if (err == CIO_OK) {
        *nread = m.len;
        if (from != NULL)
            *from = m.from;
    }
    return err;
}

cio_err cio_socket_receive_from(cio_io io, const cio_socket *socket, void *buf, size_t len, size_t *nread,
                                cio_ip_address *from)
{
    return CIO__IN_SET(net_receive, receive_one(io, socket, buf, len, nread, from, CIO_TIMEOUT_NONE));
}

cio_err cio_socket_receive_timeout(cio_io io, const cio_socket *socket, void *buf, size_t len, size_t *nread,
                                   cio_ip_address *from, cio_timeout timeout)
{
    return CIO__IN_SET(net_receive_timeout, receive_one(io, socket, buf, len, nread, from, timeout));
}

cio_err cio_socket_receive_batch(cio_io io, const cio_socket *socket, cio_message *msgs, size_t max,
                                 cio_timeout timeout, size_t *count)
{
    CIO__REQUIRE(socket, msgs, count);
    if (max == 0)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    for (size_t i = 0; i < max; i++)
        if (msgs[i].buf == NULL && msgs[i].cap > 0)
            return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_receive_timeout,
                       CIO__VT(io)->net_receive(io.userdata, socket->handle, msgs, max, timeout, count));
}

cio_err cio_socket_close(cio_io io, const cio_socket *socket)
{
    if (socket == NULL)
        return CIO__NULL_ARG("socket");
    return net_close(io, __func__, socket->handle);
}

/* ---- Unix-domain streams ------------------------------------------------------------------------------ */

cio_err cio_unix_listen(cio_io io, const cio_unix_address *address, const cio_listen_options *options, cio_server *out)
{
    CIO__TRY(check_unix_args(address, out));
    return CIO__IN_SET(net_unix_address_listen, CIO__VT(io)->net_listen_unix(io.userdata, address, options, out));
}

cio_err cio_unix_connect(cio_io io, const cio_unix_address *address, cio_stream *out)
{
    CIO__TRY(check_unix_args(address, out));
    return CIO__IN_SET(net_unix_address_connect, CIO__VT(io)->net_connect_unix(io.userdata, address, out));
}
