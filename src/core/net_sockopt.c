/*
 * The public socket-option, multicast and socket-address calls of cio/net.h (issue 25): argument
 * and range checks, then exactly one slot (net_set_option, net_get_option, net_multicast,
 * net_socket_address), whose result is returned unchanged (checked with CIO__IN_SET in debug
 * builds). A NULL where the API forbids one is CIO__NULL_ARG.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"
#include "cio/net.h"
#include "internal.h"

/* The range of values cio_net_set_option accepts for an option; false for no such option. */
static bool value_range(cio_sockopt option, int64_t *lo, int64_t *hi)
{
    switch (option) {
    CIO__SOCKOPT_FLAG_CASES:
        *lo = 0, *hi = 1;
        return true;
    case CIO_SOCKOPT_KEEPALIVE_IDLE:
    case CIO_SOCKOPT_KEEPALIVE_INTERVAL:
    case CIO_SOCKOPT_KEEPALIVE_COUNT:
    case CIO_SOCKOPT_SEND_BUFFER:
    case CIO_SOCKOPT_RECEIVE_BUFFER: *lo = 1, *hi = INT32_MAX; return true;
    case CIO_SOCKOPT_LINGER: *lo = -1, *hi = 65535; return true;
    case CIO_SOCKOPT_TTL:
    case CIO_SOCKOPT_HOP_LIMIT: *lo = 1, *hi = 255; return true;
    case CIO_SOCKOPT_MULTICAST_TTL:
    case CIO_SOCKOPT_MULTICAST_HOPS: *lo = 0, *hi = 255; return true;
    }
    return false;
}

cio_err cio_net_set_option(cio_io io, cio_handle socket, cio_sockopt option, int64_t value)
{
    int64_t lo, hi;
    if (!value_range(option, &lo, &hi) || value < lo || value > hi)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_socket_option, CIO__VT(io)->net_set_option(io.userdata, socket, (int)option, value));
}

cio_err cio_net_get_option(cio_io io, cio_handle socket, cio_sockopt option, int64_t *value)
{
    int64_t lo, hi;
    CIO__REQUIRE(value);
    if (!value_range(option, &lo, &hi))
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_socket_option, CIO__VT(io)->net_get_option(io.userdata, socket, (int)option, value));
}

static bool is_multicast(const cio_ip_address *a)
{
    if (a->family == CIO_IP4)
        return (a->bytes[0] & 0xf0) == 0xe0; /* 224.0.0.0/4 */
    return a->family == CIO_IP6 && a->bytes[0] == 0xff;
}

static cio_err membership(cio_io io, cio_handle socket, int op, const cio_ip_address *group,
                          const cio_ip_address *iface)
{
    CIO__REQUIRE(group);
    if (!is_multicast(group))
        return CIO_E_INVALID_ARGUMENT;
    if (iface != NULL && iface->family != group->family)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_multicast, CIO__VT(io)->net_multicast(io.userdata, socket, op, group, iface));
}

cio_err cio_net_multicast_join(cio_io io, cio_handle socket, const cio_ip_address *group, const cio_ip_address *iface)
{
    return membership(io, socket, 0, group, iface);
}

cio_err cio_net_multicast_leave(cio_io io, cio_handle socket, const cio_ip_address *group, const cio_ip_address *iface)
{
    return membership(io, socket, 1, group, iface);
}

cio_err cio_net_multicast_interface(cio_io io, cio_handle socket, const cio_ip_address *iface)
{
    CIO__REQUIRE(iface);
    if (iface->family != CIO_IP4 && iface->family != CIO_IP6)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(net_multicast, CIO__VT(io)->net_multicast(io.userdata, socket, 2, NULL, iface));
}

cio_err cio_net_local_address(cio_io io, cio_handle socket, cio_ip_address *out)
{
    CIO__REQUIRE(out);
    return CIO__IN_SET(net_socket_address, CIO__VT(io)->net_socket_address(io.userdata, socket, false, out));
}

cio_err cio_net_peer_address(cio_io io, cio_handle socket, cio_ip_address *out)
{
    CIO__REQUIRE(out);
    return CIO__IN_SET(net_socket_address, CIO__VT(io)->net_socket_address(io.userdata, socket, true, out));
}
