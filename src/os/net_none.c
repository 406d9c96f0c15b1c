/*
 * Networking for the Threaded backend where the target has none: WASI preview1 can neither create
 * nor connect a socket (only use ones the host preopened, which cio does not model).
 *
 * Invariants:
 * - Every networking slot fails with NetworkDown (a member of each slot's error set) after the
 *   same argument checks a real backend makes would pass: nothing is created, no handle is written.
 * - net_close has nothing to close: no socket can have come from this backend.
 */
#include "internal.h"
#include "os.h"

cio_err cio__os_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                              cio_server *out)
{
    (void)ud;
    (void)address;
    (void)options;
    (void)out;
    return CIO__IN_SET(net_listen, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    (void)ud;
    (void)listener;
    (void)out;
    return CIO__IN_SET(net_accept, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                               cio_stream *out)
{
    (void)ud;
    (void)address;
    (void)options;
    (void)out;
    return CIO__IN_SET(net_connect, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out)
{
    (void)ud;
    (void)address;
    (void)options;
    (void)out;
    return CIO__IN_SET(net_bind, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                                cio_server *out)
{
    (void)ud;
    (void)address;
    (void)options;
    (void)out;
    return CIO__IN_SET(net_unix_address_listen, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_connect_unix(void *ud, const cio_unix_address *address, cio_stream *out)
{
    (void)ud;
    (void)address;
    (void)out;
    return CIO__IN_SET(net_unix_address_connect, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    (void)ud;
    (void)stream;
    (void)iov;
    (void)iovcnt;
    if (nread != NULL)
        *nread = 0;
    return CIO__IN_SET(net_read, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)
{
    (void)ud;
    (void)stream;
    (void)iov;
    (void)iovcnt;
    if (nwritten != NULL)
        *nwritten = 0;
    return CIO__IN_SET(net_write, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                         size_t iovcnt, size_t *nsent)
{
    (void)ud;
    (void)socket;
    (void)dest;
    (void)iov;
    (void)iovcnt;
    if (nsent != NULL)
        *nsent = 0;
    return CIO__IN_SET(net_send, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                            size_t *count)
{
    (void)ud;
    (void)socket;
    (void)msgs;
    (void)max;
    (void)timeout;
    if (count != NULL)
        *count = 0;
    return CIO__IN_SET(net_receive_timeout, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_shutdown(void *ud, cio_handle socket, int how)
{
    (void)ud;
    (void)socket;
    (void)how;
    return CIO__IN_SET(net_shutdown, CIO_E_NETWORK_DOWN);
}

cio_err cio__os_net_close(void *ud, cio_handle socket)
{
    (void)ud;
    (void)socket;
    return CIO_OK; /* no socket was ever opened here: nothing to close */
}

/* WASI preview1 has no socketpair: a pair cannot be had at all. */
cio_err cio__os_net_socket_pair(void *ud, cio_stream *out)
{
    (void)ud;
    (void)out;
    return CIO__IN_SET(net_socket_create_pair, CIO_E_OPERATION_UNSUPPORTED);
}

/* No network interfaces to name. */
cio_err cio__os_net_interface_name_resolve(void *ud, const char *name, uint32_t *index)
{
    (void)ud;
    (void)name;
    (void)index;
    return CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_net_interface_name(void *ud, uint32_t index, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    (void)index;
    (void)buf;
    (void)len;
    (void)out_len;
    return CIO_E_OPERATION_UNSUPPORTED;
}

/* Nothing to send to; the library's copy reports the stream's NetworkDown. */
cio_err cio__os_net_write_file(void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len,
                               uint64_t *nwritten)
{
    (void)ud, (void)stream, (void)file, (void)offset, (void)len;
    return cio__os_write_file_unimplemented(nwritten);
}
