/*
 * Socket pairs and interface names for the Threaded backend on Windows.
 *
 * Invariants:
 * - A pair is a TCP connection over 127.0.0.1 (Wine has no AF_UNIX): a listener on a port the
 *   system picks, a connect to it (completed by the kernel's backlog without an accept), the
 *   accept, and the listener closed again. The accepted side must be the connection just made:
 *   its peer address is compared with the connecting socket's own address (getsockname), and a
 *   stranger that raced onto the port is closed and accepted past (when getsockname cannot say, the
 *   attempt fails with SystemResources rather than accept past its own connection and wait forever). Every socket of a
 * failed attempt is closed: nothing leaks. The ends are this backend's sockets (net_windows.c: not inheritable,
 * non-blocking underneath).
 * - if_nametoindex / if_indextoname (iphlpapi) do not block; one cancellation point before.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <iphlpapi.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_common.h"
#include "os.h"

/* Accepted connections looked at before giving up on finding ours (strangers on the port). */
#define PAIR_ACCEPT_TRIES 8

/* The local address of s; false if Winsock cannot say (then the accepted side cannot be told from
 * a stranger: accepting on would close ours and wait for a connection that never comes). */
static bool own_address(SOCKET s, cio_ip_address *out)
{
    cio__os_sockaddr_any sa;
    int len = cio__os_sockaddr_clear(&sa);
    memset(out, 0, sizeof *out);
    if (CIO__SYS(wsa_getsockname, socket_pair)(s, &sa.sa, &len) != 0)
        return false;
    cio__os_sockaddr_to_ip(&sa.storage, (socklen_t)len, out);
    return true;
}

/* Pair errors outside CreatePairError (the listen/connect/accept sets are wider) become the
 * nearest member. */
static cio_err pair_error(cio_err err)
{
    switch (err) {
    case CIO_E_CANCELED:
    case CIO_E_ADDRESS_FAMILY_UNSUPPORTED:
    case CIO_E_PROTOCOL_UNSUPPORTED_BY_SYSTEM:
    case CIO_E_PROCESS_FD_QUOTA_EXCEEDED:
    case CIO_E_SYSTEM_FD_QUOTA_EXCEEDED:
    case CIO_E_SYSTEM_RESOURCES:
    case CIO_E_ACCESS_DENIED:
    case CIO_E_NETWORK_DOWN:
    case CIO_E_OPERATION_UNSUPPORTED: return err;
    case CIO_E_ADDRESS_IN_USE:
    case CIO_E_ADDRESS_UNAVAILABLE:
    case CIO_E_CONNECTION_REFUSED:
    case CIO_E_CONNECTION_ABORTED:
    case CIO_E_CONNECTION_RESET_BY_PEER:
    case CIO_E_TIMEOUT: return CIO_E_SYSTEM_RESOURCES; /* loopback itself failed us */
    default: return CIO_E_UNEXPECTED;
    }
}

cio_err cio__os_net_socket_pair(void *ud, cio_stream *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_ip_address loop = cio_ip4_loopback(0);
    cio_listen_options lo = {.backlog = 1};
    cio_server server;
    cio_err err = cio__os_net_listen_ip(ud, &loop, &lo, &server);
    if (err != CIO_OK)
        return CIO__IN_SET(net_socket_create_pair, pair_error(err));
    cio_stream client;
    err = cio__os_net_connect_ip(ud, &server.address, NULL, &client);
    if (err != CIO_OK) {
        (void)cio__os_net_close(ud, server.handle);
        return CIO__IN_SET(net_socket_create_pair, pair_error(err));
    }
    cio_ip_address mine;
    bool known = own_address((SOCKET)client.handle, &mine);
    cio_stream accepted;
    bool found = false;
    for (int i = 0; known && i < PAIR_ACCEPT_TRIES && !found; i++) {
        err = cio__os_net_accept(ud, server.handle, &accepted);
        if (err != CIO_OK)
            break;
        found = cio_ip_equal(&accepted.peer, &mine);
        if (!found)
            (void)cio__os_net_close(ud, accepted.handle); /* not ours */
    }
    (void)cio__os_net_close(ud, server.handle);
    if (!found) {
        (void)cio__os_net_close(ud, client.handle);
        return CIO__IN_SET(net_socket_create_pair, err != CIO_OK ? pair_error(err) : CIO_E_SYSTEM_RESOURCES);
    }
    memset(out, 0, 2 * sizeof *out);
    out[0].handle = client.handle;
    out[1].handle = accepted.handle;
    return CIO_OK;
}

cio_err cio__os_net_interface_name_resolve(void *ud, const char *name, uint32_t *index)
{
    (void)ud;
    if (name == NULL || index == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    size_t n = strlen(name);
    if (n == 0 || n > CIO_INTERFACE_NAME_MAX)
        return CIO_E_INTERFACE_NOT_FOUND;
    ULONG i = CIO__SYS(win_if_nametoindex, interface_resolve)(name);
    if (i == 0)
        return CIO_E_INTERFACE_NOT_FOUND; /* if_nametoindex says nothing more */
    *index = (uint32_t)i;
    return CIO_OK;
}

cio_err cio__os_net_interface_name(void *ud, uint32_t index, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (buf == NULL && len > 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    if (index == 0)
        return CIO_E_INTERFACE_NOT_FOUND;
    char name[CIO_INTERFACE_NAME_MAX + 1];
    memset(name, 0, sizeof name);
    if (CIO__SYS(win_if_indextoname, interface_name)((ULONG)index, name) == NULL)
        return CIO_E_INTERFACE_NOT_FOUND;
    name[CIO_INTERFACE_NAME_MAX] = '\0';
    return cio__os_name_out(name, buf, len, out_len);
}
