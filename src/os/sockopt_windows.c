/*
 * Socket options, multicast membership and socket addresses on Windows (Winsock 2; issue 25): the
 * slots net_set_option, net_get_option, net_multicast, net_socket_address and
 * as sockopt_posix.c does on POSIX (cio__os_sockopts_apply, shared, is in sockopt_apply.c).
 *
 * Invariants:
 * - One setsockopt/getsockopt/getsockname/getpeername per slot call, through its site of the OS call
 *   table, its WSA map and the failure loop of net_windows.c (cio__os_wsa_failure). No raw WSA code
 *   leaves this file.
 * - Where Winsock differs (said in cio/net.h): SO_REUSEADDR is CIO_SOCKOPT_REUSE_PORT (it lets a
 *   second socket bind a port in use); CIO_SOCKOPT_REUSE_ADDRESS is OptionUnsupported (Windows
 *   rebinds over TIME_WAIT without an option; setting SO_EXCLUSIVEADDRUSE would be something
 *   else). Keepalive timing is TCP_KEEPALIVE (idle seconds), TCP_KEEPINTVL and TCP_KEEPCNT at
 *   IPPROTO_TCP (Windows 10 1709 and later; older systems and Wine answer WSAENOPROTOOPT:
 *   OptionUnsupported). struct linger has u_short members; booleans read back as BOOL (or one
 *   byte, which is handled too).
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <stdint.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_common.h"
#include "net_windows.h"
#include "os.h"

/* IPPROTO_TCP options of Windows 10 1709 (ws2ipdef.h; older MinGW headers lack them). */
#ifndef TCP_KEEPALIVE
#define TCP_KEEPALIVE 3
#endif
#ifndef TCP_KEEPCNT
#define TCP_KEEPCNT 16
#endif
#ifndef TCP_KEEPINTVL
#define TCP_KEEPINTVL 17
#endif

enum kind { K_INT, K_LINGER };

static bool describe(int option, int *level, int *name, enum kind *kind)
{
    *kind = K_INT;
    switch (option) {
    case CIO_SOCKOPT_NODELAY: *level = IPPROTO_TCP, *name = TCP_NODELAY; return true;
    case CIO_SOCKOPT_KEEPALIVE: *level = SOL_SOCKET, *name = SO_KEEPALIVE; return true;
    case CIO_SOCKOPT_KEEPALIVE_IDLE: *level = IPPROTO_TCP, *name = TCP_KEEPALIVE; return true;
    case CIO_SOCKOPT_KEEPALIVE_INTERVAL: *level = IPPROTO_TCP, *name = TCP_KEEPINTVL; return true;
    case CIO_SOCKOPT_KEEPALIVE_COUNT: *level = IPPROTO_TCP, *name = TCP_KEEPCNT; return true;
    case CIO_SOCKOPT_REUSE_ADDRESS: return false;
    case CIO_SOCKOPT_REUSE_PORT: *level = SOL_SOCKET, *name = SO_REUSEADDR; return true;
    case CIO_SOCKOPT_SEND_BUFFER: *level = SOL_SOCKET, *name = SO_SNDBUF; return true;
    case CIO_SOCKOPT_RECEIVE_BUFFER: *level = SOL_SOCKET, *name = SO_RCVBUF; return true;
    case CIO_SOCKOPT_LINGER: *level = SOL_SOCKET, *name = SO_LINGER, *kind = K_LINGER; return true;
    case CIO_SOCKOPT_IP6_ONLY: *level = IPPROTO_IPV6, *name = IPV6_V6ONLY; return true;
    case CIO_SOCKOPT_BROADCAST: *level = SOL_SOCKET, *name = SO_BROADCAST; return true;
    case CIO_SOCKOPT_TTL: *level = IPPROTO_IP, *name = IP_TTL; return true;
    case CIO_SOCKOPT_HOP_LIMIT: *level = IPPROTO_IPV6, *name = IPV6_UNICAST_HOPS; return true;
    case CIO_SOCKOPT_MULTICAST_TTL: *level = IPPROTO_IP, *name = IP_MULTICAST_TTL; return true;
    case CIO_SOCKOPT_MULTICAST_HOPS: *level = IPPROTO_IPV6, *name = IPV6_MULTICAST_HOPS; return true;
    case CIO_SOCKOPT_MULTICAST_LOOP: *level = IPPROTO_IP, *name = IP_MULTICAST_LOOP; return true;
    case CIO_SOCKOPT_MULTICAST_LOOP6: *level = IPPROTO_IPV6, *name = IPV6_MULTICAST_LOOP; return true;
    default: return false;
    }
}

static cio_err set_raw(SOCKET s, int level, int name, const void *value, int len)
{
    cio_err err;
    int r;
    CIO__OS_WSA_CALL(err, r, wsa_sockopt,
                     CIO__SYS(wsa_setsockopt, sockopt_set)(s, level, name, (const char *)value, len));
    (void)r;
    return err;
}

static cio_err get_raw(SOCKET s, int level, int name, void *value, int *len)
{
    cio_err err;
    int r;
    CIO__OS_WSA_CALL(err, r, wsa_sockopt, CIO__SYS(wsa_getsockopt, sockopt_get)(s, level, name, (char *)value, len));
    (void)r;
    return err;
}

cio_err cio__os_net_set_option(void *ud, cio_handle socket, int option, int64_t value)
{
    (void)ud;
    SOCKET s = (SOCKET)(uintptr_t)socket;
    int level, name;
    enum kind kind;
    if (!describe(option, &level, &name, &kind))
        return cio__os_sockopt_undescribed(option);
    if (kind == K_LINGER) {
        struct linger l;
        l.l_onoff = (u_short)(value >= 0);
        l.l_linger = (u_short)(value >= 0 ? value : 0);
        return CIO__IN_SET(net_socket_option, set_raw(s, level, name, &l, (int)sizeof l));
    }
    DWORD v = (DWORD)value;
    return CIO__IN_SET(net_socket_option, set_raw(s, level, name, &v, (int)sizeof v));
}

cio_err cio__os_net_get_option(void *ud, cio_handle socket, int option, int64_t *value)
{
    (void)ud;
    SOCKET s = (SOCKET)(uintptr_t)socket;
    int level, name;
    enum kind kind;
    if (value == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (!describe(option, &level, &name, &kind))
        return cio__os_sockopt_undescribed(option);
    union {
        DWORD d;
        unsigned char b;
        struct linger l;
    } u;
    memset(&u, 0, sizeof u);
    int len = kind == K_LINGER ? (int)sizeof u.l : (int)sizeof u.d;
    cio_err err = get_raw(s, level, name, &u, &len);
    if (err != CIO_OK)
        return CIO__IN_SET(net_socket_option, err);
    if (kind == K_LINGER)
        *value = u.l.l_onoff ? (int64_t)u.l.l_linger : -1;
    else if (len == 1)
        *value = u.b;
    else
        *value = (int64_t)u.d;
    *value = cio__os_sockopt_read_back(option, *value);
    return CIO_OK;
}

cio_err cio__os_net_multicast(void *ud, cio_handle socket, int op, const cio_ip_address *group,
                              const cio_ip_address *iface)
{
    (void)ud;
    SOCKET s = (SOCKET)(uintptr_t)socket;
    int level, name, len, r;
    union {
        struct in_addr a;
        DWORD index;
        struct ip_mreq m4;
        struct ipv6_mreq m6;
    } u;
    memset(&u, 0, sizeof u);
    if (op == 2) {
        if (iface == NULL)
            return CIO_E_INVALID_ARGUMENT;
        if (iface->family == CIO_IP4) {
            level = IPPROTO_IP, name = IP_MULTICAST_IF, len = (int)sizeof u.a;
            memcpy(&u.a, iface->bytes, 4);
        } else {
            level = IPPROTO_IPV6, name = IPV6_MULTICAST_IF, len = (int)sizeof u.index;
            u.index = iface->scope_id;
        }
    } else if (group != NULL && (op == 0 || op == 1)) {
        if (group->family == CIO_IP4) {
            level = IPPROTO_IP, name = op == 0 ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP, len = (int)sizeof u.m4;
            memcpy(&u.m4.imr_multiaddr, group->bytes, 4);
            if (iface != NULL)
                memcpy(&u.m4.imr_interface, iface->bytes, 4);
        } else {
            level = IPPROTO_IPV6, name = op == 0 ? IPV6_ADD_MEMBERSHIP : IPV6_DROP_MEMBERSHIP, len = (int)sizeof u.m6;
            memcpy(&u.m6.ipv6mr_multiaddr, group->bytes, 16);
            u.m6.ipv6mr_interface = iface != NULL ? iface->scope_id : group->scope_id;
        }
    } else {
        return CIO_E_INVALID_ARGUMENT;
    }
    cio_err err;
    CIO__OS_WSA_CALL(err, r, wsa_multicast, CIO__SYS(wsa_setsockopt, multicast)(s, level, name, (const char *)&u, len));
    (void)r;
    return CIO__IN_SET(net_multicast, err);
}

cio_err cio__os_net_socket_address(void *ud, cio_handle socket, bool peer, cio_ip_address *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    SOCKET s = (SOCKET)(uintptr_t)socket;
    cio__os_sockaddr_any sa;
    int len = cio__os_sockaddr_clear(&sa);
    cio_err err;
    int r;
    if (peer)
        CIO__OS_WSA_CALL(err, r, wsa_socket_address, CIO__SYS(wsa_getpeername, socket_address)(s, &sa.sa, &len));
    else
        CIO__OS_WSA_CALL(err, r, wsa_socket_address, CIO__SYS(wsa_getsockname, socket_address)(s, &sa.sa, &len));
    (void)r;
    if (err == CIO_OK)
        cio__os_sockaddr_to_ip(&sa.storage, (socklen_t)len, out);
    return CIO__IN_SET(net_socket_address, err);
}
