/*
 * Socket options and addresses where the target has no sockets (WASI preview1, as net_none.c):
 * every slot is OperationUnsupported after the argument checks a real backend makes. No socket
 * can have come from this backend, so there is nothing to set or read.
 */
#include "internal.h"
#include "os.h"

cio_err cio__os_net_set_option(void *ud, cio_handle socket, int option, int64_t value)
{
    (void)ud, (void)socket, (void)option, (void)value;
    return CIO__IN_SET(net_socket_option, CIO_E_OPERATION_UNSUPPORTED);
}

cio_err cio__os_net_get_option(void *ud, cio_handle socket, int option, int64_t *value)
{
    (void)ud, (void)socket, (void)option;
    if (value == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_socket_option, CIO_E_OPERATION_UNSUPPORTED);
}

cio_err cio__os_net_multicast(void *ud, cio_handle socket, int op, const cio_ip_address *group,
                              const cio_ip_address *iface)
{
    (void)ud, (void)socket, (void)op, (void)group, (void)iface;
    return CIO__IN_SET(net_multicast, CIO_E_OPERATION_UNSUPPORTED);
}

cio_err cio__os_net_socket_address(void *ud, cio_handle socket, bool peer, cio_ip_address *out)
{
    (void)ud, (void)socket, (void)peer;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_socket_address, CIO_E_OPERATION_UNSUPPORTED);
}
