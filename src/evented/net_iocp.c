/*
 * The Evented backend's sockets on Windows (the iocp flavour; net.c is the POSIX readiness core).
 *
 * Step 1 of issue 24: every socket call that can wait runs the Threaded implementation
 * (src/os/net_windows.c) on the helper pool, canceled like any helper call, so the slots are
 * complete and correct but cost a helper thread per call in progress. That is not the design: a
 * thousand fibers in a blocking read would take a thousand helpers. The overlapped form (WSARecv,
 * WSASend, WSARecvFrom, WSASendTo, AcceptEx, ConnectEx on the loop's completion port, canceled with
 * CancelIoEx on the exact OVERLAPPED) replaces these slots in the next step, and until it does the
 * backend is not offered on Windows (CIO_HAVE_EVENTED stays 0: include/cio/evented.h).
 * Calls that never block (listen, bind, socket pairs, shutdown, close) run where they are called.
 * Invariants: as fs_helper.c's (a foreign thread runs a helper call directly, helper.c).
 */
#include "evented.h"
#include "slots.h"
#include "helper_slot.h"
#include "os.h"

/* ---- made at once, never waiting -------------------------------------------------------------------------- */

cio_err cio__e_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                             cio_server *out)
{
    (void)ud;
    return cio__os_net_listen_ip(NULL, address, options, out);
}

cio_err cio__e_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out)
{
    (void)ud;
    return cio__os_net_bind_ip(NULL, address, options, out);
}

cio_err cio__e_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                               cio_server *out)
{
    (void)ud;
    return cio__os_net_listen_unix(NULL, address, options, out);
}

cio_err cio__e_net_socket_pair(void *ud, cio_stream *out)
{
    (void)ud;
    return cio__os_net_socket_pair(NULL, out);
}

cio_err cio__e_net_shutdown(void *ud, cio_handle socket, int how)
{
    (void)ud;
    return cio__os_net_shutdown(NULL, socket, how);
}

cio_err cio__e_net_close(void *ud, cio_handle socket)
{
    (void)ud;
    return cio__os_net_close(NULL, socket);
}

/* ---- on the helper pool ------------------------------------------------------------------------------------- */

CIO__E_HELPER_SLOT(net_accept, 2, cio_handle, listener, cio_stream *, out)
CIO__E_HELPER_SLOT(net_connect_ip, 3, const cio_ip_address *, address, const cio_connect_options *, options,
                   cio_stream *, out)
CIO__E_HELPER_SLOT(net_connect_unix, 2, const cio_unix_address *, address, cio_stream *, out)
CIO__E_HELPER_SLOT(net_read, 4, cio_handle, stream, const cio_iovec *, iov, size_t, iovcnt, size_t *, nread)
CIO__E_HELPER_SLOT(net_write, 4, cio_handle, stream, const cio_const_iovec *, iov, size_t, iovcnt, size_t *, nwritten)
CIO__E_HELPER_SLOT(net_send, 5, cio_handle, socket, const cio_ip_address *, dest, const cio_const_iovec *, iov, size_t,
                   iovcnt, size_t *, nsent)
CIO__E_HELPER_SLOT(net_receive, 5, cio_handle, socket, cio_message *, msgs, size_t, max, cio_timeout, timeout, size_t *,
                   count)
CIO__E_HELPER_SLOT(net_write_file, 5, cio_handle, stream, cio_file, file, uint64_t, offset, uint64_t, len, uint64_t *,
                   nwritten)
CIO__E_HELPER_SLOT(operate, 2, cio_operation *, op, cio_timeout, timeout)
