/*
 * Timeouts on the stream calls (cio/batch.h): each is one operation through cio_operate_timeout;
 * read_all/write_all loop against one deadline computed on entry. No state of their own.
 */
#include <stdint.h>

#include "cio/batch.h"
#include "internal.h"

/* Runs op against timeout: the outer error if there is one, else the operation's own. */
static cio_err run(cio_io io, cio_operation *op, cio_timeout timeout)
{
    cio_err outer = cio_operate_timeout(io, op, timeout);
    return outer != CIO_OK ? outer : op->err;
}

/* Runs a read of one buffer: *nread is what it read (0 on failure). */
static cio_err run_read(cio_io io, cio_operation *op, size_t *nread, cio_timeout timeout)
{
    *nread = 0;
    cio_err err = run(io, op, timeout);
    if (err == CIO_OK)
        *nread = op->count;
    return err;
}

/* Runs a write of one buffer of len bytes: *nwritten is what it wrote, also on failure (0 from a
 * backend that claims more than it was given). */
static cio_err run_write(cio_io io, cio_operation *op, size_t len, size_t *nwritten, cio_timeout timeout)
{
    *nwritten = 0;
    cio_err err = run(io, op, timeout);
    *nwritten = op->count <= len ? op->count : 0;
    return err;
}

cio_err cio_stream_read_timeout(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread,
                                cio_timeout timeout)
{
    CIO__REQUIRE(stream, nread);
    CIO__REQUIRE_BUF(buf, len);
    cio_iovec iov = {buf, len};
    cio_operation op = {.kind = CIO_OP_NET_READ, .u.net_read = {stream->handle, &iov, 1}};
    return CIO__IN_SET(net_read_timeout, run_read(io, &op, nread, timeout));
}

cio_err cio_stream_read_all_timeout(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread,
                                    cio_timeout timeout)
{
    CIO__REQUIRE(nread);
    *nread = 0;
    CIO__REQUIRE(stream);
    CIO__REQUIRE_BUF(buf, len);
    cio_timeout deadline = cio__timeout_to_deadline(io, timeout);
    size_t done = 0;
    cio_err err = CIO_OK;
    while (done < len) {
        size_t n = 0;
        err = cio_stream_read_timeout(io, stream, (unsigned char *)buf + done, len - done, &n, deadline);
        if (err != CIO_OK || n == 0)
            break;
        done += n;
    }
    *nread = done;
    return CIO__IN_SET(net_read_timeout, err);
}

cio_err cio_stream_write_timeout(cio_io io, const cio_stream *stream, const void *buf, size_t len, size_t *nwritten,
                                 cio_timeout timeout)
{
    CIO__REQUIRE(stream, nwritten);
    CIO__REQUIRE_BUF(buf, len);
    cio_const_iovec iov = {buf, len};
    cio_operation op = {.kind = CIO_OP_NET_WRITE, .u.net_write = {stream->handle, &iov, 1}};
    cio_err err = run_write(io, &op, len, nwritten, timeout);
    if (err == CIO_OK && op.count > len)
        err = CIO_E_UNEXPECTED; /* a backend that claims more than it was given */
    return CIO__IN_SET(net_write_timeout, err);
}

cio_err cio_stream_write_all_timeout(cio_io io, const cio_stream *stream, const void *buf, size_t len, size_t *nwritten,
                                     cio_timeout timeout)
{
    if (nwritten != NULL)
        *nwritten = 0;
    CIO__REQUIRE(stream);
    CIO__REQUIRE_BUF(buf, len);
    cio_timeout deadline = cio__timeout_to_deadline(io, timeout);
    size_t done = 0;
    int zero_writes = 0;
    cio_err err = CIO_OK;
    while (done < len) {
        size_t n = 0;
        err = cio_stream_write_timeout(io, stream, (const unsigned char *)buf + done, len - done, &n, deadline);
        done += n;
        if (err != CIO_OK)
            break;
        if (n == 0 && ++zero_writes >= 2) {
            err = CIO_E_UNEXPECTED; /* as cio_stream_write_all: no progress and no reason */
            break;
        }
        if (n > 0)
            zero_writes = 0;
    }
    if (nwritten != NULL)
        *nwritten = done;
    return CIO__IN_SET(net_write_timeout, err);
}

cio_err cio_server_accept_timeout(cio_io io, const cio_server *server, cio_stream *out, cio_timeout timeout)
{
    CIO__REQUIRE(server, out);
    cio_operation op = {.kind = CIO_OP_NET_ACCEPT, .u.net_accept = {server->handle}};
    cio_err err = run(io, &op, timeout);
    if (err == CIO_OK)
        *out = op.stream;
    return CIO__IN_SET(net_accept_timeout, err);
}

cio_err cio_socket_send_to_timeout(cio_io io, const cio_socket *socket, const cio_ip_address *dest, const void *buf,
                                   size_t len, size_t *nsent, cio_timeout timeout)
{
    CIO__REQUIRE(socket);
    CIO__REQUIRE_BUF(buf, len);
    if (nsent != NULL)
        *nsent = 0;
    cio_const_iovec iov = {buf, len};
    cio_operation op = {.kind = CIO_OP_NET_SEND, .u.net_send = {socket->handle, dest, &iov, 1}};
    cio_err err = run(io, &op, timeout);
    if (err == CIO_OK && nsent != NULL)
        *nsent = op.count;
    return CIO__IN_SET(net_send_timeout, err);
}

cio_err cio_file_read_streaming_timeout(cio_io io, cio_file file, void *buf, size_t len, size_t *nread,
                                        cio_timeout timeout)
{
    CIO__REQUIRE(nread);
    CIO__REQUIRE_BUF(buf, len);
    cio_iovec iov = {buf, len};
    cio_operation op = {.kind = CIO_OP_FILE_READ_STREAMING, .u.file_read_streaming = {file, &iov, 1}};
    return CIO__IN_SET(file_read_streaming_timeout, run_read(io, &op, nread, timeout));
}

cio_err cio_file_write_streaming_timeout(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten,
                                         cio_timeout timeout)
{
    CIO__REQUIRE(nwritten);
    CIO__REQUIRE_BUF(buf, len);
    cio_const_iovec iov = {buf, len};
    cio_operation op = {.kind = CIO_OP_FILE_WRITE_STREAMING, .u.file_write_streaming = {file, &iov, 1}};
    return CIO__IN_SET(file_write_streaming_timeout, run_write(io, &op, len, nwritten, timeout));
}
