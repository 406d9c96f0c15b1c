/*
 * Timeouts on the stream calls (cio/batch.h): each is one operation through cio_operate_timeout;
 * read_all/write_all loop against one deadline computed on entry. No state of their own.
 */
#include <stdint.h>
#include <string.h>

#include "cio/batch.h"
#include "internal.h"

/* The outer error if there is one, else the operation's own. */
static cio_err result_of(cio_err outer, const cio_operation *op)
{
    return outer != CIO_OK ? outer : op->err;
}

cio_err cio_stream_read_timeout(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread,
                                cio_timeout timeout)
{
    if (stream == NULL)
        return CIO__NULL_ARG("stream");
    if (nread == NULL)
        return CIO__NULL_ARG("nread");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    *nread = 0;
    cio_iovec iov = {buf, len};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_READ;
    op.u.net_read.stream = stream->handle;
    op.u.net_read.iov = &iov;
    op.u.net_read.iovcnt = 1;
    cio_err err = result_of(cio_operate_timeout(io, &op, timeout), &op);
    if (err == CIO_OK)
        *nread = op.count;
    return CIO__IN_SET(net_read_timeout, err);
}

cio_err cio_stream_read_all_timeout(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread,
                                    cio_timeout timeout)
{
    if (nread == NULL)
        return CIO__NULL_ARG("nread");
    *nread = 0;
    if (stream == NULL)
        return CIO__NULL_ARG("stream");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
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

cio_err cio_stream_write_timeout(cio_io io, const cio_stream *stream, const void *buf, size_t len,
                                 size_t *nwritten, cio_timeout timeout)
{
    if (stream == NULL)
        return CIO__NULL_ARG("stream");
    if (nwritten == NULL)
        return CIO__NULL_ARG("nwritten");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    *nwritten = 0;
    cio_const_iovec iov = {buf, len};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_WRITE;
    op.u.net_write.stream = stream->handle;
    op.u.net_write.iov = &iov;
    op.u.net_write.iovcnt = 1;
    cio_err err = result_of(cio_operate_timeout(io, &op, timeout), &op);
    *nwritten = op.count <= len ? op.count : 0;
    if (err == CIO_OK && op.count > len)
        err = CIO_E_UNEXPECTED; /* a backend that claims more than it was given */
    return CIO__IN_SET(net_write_timeout, err);
}

cio_err cio_stream_write_all_timeout(cio_io io, const cio_stream *stream, const void *buf, size_t len,
                                     size_t *nwritten, cio_timeout timeout)
{
    if (nwritten != NULL)
        *nwritten = 0;
    if (stream == NULL)
        return CIO__NULL_ARG("stream");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
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
    if (server == NULL)
        return CIO__NULL_ARG("server");
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_ACCEPT;
    op.u.net_accept.listener = server->handle;
    cio_err err = result_of(cio_operate_timeout(io, &op, timeout), &op);
    if (err == CIO_OK)
        *out = op.stream;
    return CIO__IN_SET(net_accept_timeout, err);
}

cio_err cio_socket_send_to_timeout(cio_io io, const cio_socket *socket, const cio_ip_address *dest,
                                   const void *buf, size_t len, size_t *nsent, cio_timeout timeout)
{
    if (socket == NULL)
        return CIO__NULL_ARG("socket");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    if (nsent != NULL)
        *nsent = 0;
    cio_const_iovec iov = {buf, len};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_SEND;
    op.u.net_send.socket = socket->handle;
    op.u.net_send.dest = dest;
    op.u.net_send.iov = &iov;
    op.u.net_send.iovcnt = 1;
    cio_err err = result_of(cio_operate_timeout(io, &op, timeout), &op);
    if (err == CIO_OK && nsent != NULL)
        *nsent = op.count;
    return CIO__IN_SET(net_send_timeout, err);
}

cio_err cio_file_read_streaming_timeout(cio_io io, cio_file file, void *buf, size_t len, size_t *nread,
                                        cio_timeout timeout)
{
    if (nread == NULL)
        return CIO__NULL_ARG("nread");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    *nread = 0;
    cio_iovec iov = {buf, len};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_FILE_READ_STREAMING;
    op.u.file_read_streaming.file = file;
    op.u.file_read_streaming.iov = &iov;
    op.u.file_read_streaming.iovcnt = 1;
    cio_err err = result_of(cio_operate_timeout(io, &op, timeout), &op);
    if (err == CIO_OK)
        *nread = op.count;
    return CIO__IN_SET(file_read_streaming_timeout, err);
}

cio_err cio_file_write_streaming_timeout(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten,
                                         cio_timeout timeout)
{
    if (nwritten == NULL)
        return CIO__NULL_ARG("nwritten");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    *nwritten = 0;
    cio_const_iovec iov = {buf, len};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_FILE_WRITE_STREAMING;
    op.u.file_write_streaming.file = file;
    op.u.file_write_streaming.iov = &iov;
    op.u.file_write_streaming.iovcnt = 1;
    cio_err err = result_of(cio_operate_timeout(io, &op, timeout), &op);
    *nwritten = op.count <= len ? op.count : 0;
    return CIO__IN_SET(file_write_streaming_timeout, err);
}
