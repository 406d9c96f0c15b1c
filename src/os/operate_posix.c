/*
 * The Threaded backend's timed operations on POSIX (the `operate` slot, cio/batch.h): a read-type
 * operation waits for readability with poll(2) against the deadline (in the cancellation bracket,
 * net_posix.c's poll_one), then makes its plain call, which then finds data (or a connection, or
 * the end) waiting and returns at once. No task, no thread hop: the caller's own thread waits.
 *
 * Invariants:
 * - A timeout ends only the poll: nothing has been read, so nothing is lost, and the descriptor is
 *   untouched. Once poll reported readiness the call runs to its end; if another thread took the
 *   data in between (several readers of one descriptor), the call blocks like the plain one, past
 *   the deadline (still cancelable).
 * - Writes (whose blocking call may wait for the peer long after poll said "some room") and every
 *   other kind are CIO_E_UNIMPLEMENTED: the library runs them as a concurrent task, whose cancel
 *   ends the blocked call and keeps what it had written.
 * - Datagram receive already takes a timeout: its slot gets it.
 */
#include <poll.h>
#include <stddef.h>

#include "cio/batch.h"
#include "internal.h"
#include "net_posix.h"
#include "os.h"

cio_err cio__os_operate(void *ud, cio_operation *op, cio_timeout timeout)
{
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    op->count = 0;
    int fd;
    switch (op->kind) {
    case CIO_OP_NET_RECEIVE:
        return cio__os_net_receive(ud, op->u.net_receive.socket, op->u.net_receive.msgs, op->u.net_receive.max,
                                  timeout, &op->count);
    case CIO_OP_NET_READ: fd = op->u.net_read.stream; break;
    case CIO_OP_NET_ACCEPT: fd = op->u.net_accept.listener; break;
    case CIO_OP_FILE_READ_STREAMING: fd = op->u.file_read_streaming.file.handle; break;
    default: return CIO_E_UNIMPLEMENTED;
    }
    cio_err err = cio__os_poll_ready(fd, POLLIN, timeout);
    if (err != CIO_OK)
        return err;
    switch (op->kind) {
    case CIO_OP_NET_READ:
        return cio__os_net_read(ud, fd, op->u.net_read.iov, op->u.net_read.iovcnt, &op->count);
    case CIO_OP_NET_ACCEPT:
        return cio__os_net_accept(ud, fd, &op->stream);
    default:
        return cio__os_file_read_streaming(ud, op->u.file_read_streaming.file, op->u.file_read_streaming.iov,
                                          op->u.file_read_streaming.iovcnt, &op->count);
    }
}
