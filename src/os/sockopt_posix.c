/*
 * Socket options, multicast membership and socket addresses on Linux and the BSDs (issue 25): the
 * slots net_set_option, net_get_option, net_multicast, net_socket_address (shared by the Evented
 * backend: none of them blocks); cio__os_sockopts_apply (sockopt_apply.c), which listen/connect/bind call on a
 * fresh socket.
 *
 * Invariants:
 * - One setsockopt/getsockopt/getsockname/getpeername per slot call, inside the cancellation
 *   bracket (CIO__OS_SYSCALL: EINTR retries unless canceled), each through its site of the OS call
 *   table and the errno map of the operation. No raw errno leaves this file.
 * - An option this OS does not define is OptionUnsupported, decided here before any call (never a
 *   silent no-op); the wrapper (core/net_sockopt.c) has checked the value's range already.
 * - Values cross as int, except struct linger and, on the BSDs, IP_MULTICAST_TTL/LOOP (u_char
 *   there; Linux takes int).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_posix.h"
#include "os.h"

#if defined(__linux__)
#define MCAST_BYTE 0 /* IP_MULTICAST_TTL/LOOP take an int */
#else
#define MCAST_BYTE 1 /* the BSDs want a u_char */
#endif

enum kind { K_INT, K_LINGER, K_BYTE };

/* Where the option lives on this OS; false when the OS has no such option. */
static bool describe(int option, int *level, int *name, enum kind *kind)
{
    *kind = K_INT;
    switch (option) {
    case CIO_SOCKOPT_NODELAY: *level = IPPROTO_TCP, *name = TCP_NODELAY; return true;
    case CIO_SOCKOPT_KEEPALIVE: *level = SOL_SOCKET, *name = SO_KEEPALIVE; return true;
#if defined(TCP_KEEPIDLE) && defined(TCP_KEEPINTVL) && defined(TCP_KEEPCNT)
    case CIO_SOCKOPT_KEEPALIVE_IDLE: *level = IPPROTO_TCP, *name = TCP_KEEPIDLE; return true;
    case CIO_SOCKOPT_KEEPALIVE_INTERVAL: *level = IPPROTO_TCP, *name = TCP_KEEPINTVL; return true;
    case CIO_SOCKOPT_KEEPALIVE_COUNT: *level = IPPROTO_TCP, *name = TCP_KEEPCNT; return true;
#endif
    case CIO_SOCKOPT_REUSE_ADDRESS: *level = SOL_SOCKET, *name = SO_REUSEADDR; return true;
#ifdef SO_REUSEPORT
    case CIO_SOCKOPT_REUSE_PORT: *level = SOL_SOCKET, *name = SO_REUSEPORT; return true;
#endif
    case CIO_SOCKOPT_SEND_BUFFER: *level = SOL_SOCKET, *name = SO_SNDBUF; return true;
    case CIO_SOCKOPT_RECEIVE_BUFFER: *level = SOL_SOCKET, *name = SO_RCVBUF; return true;
    case CIO_SOCKOPT_LINGER: *level = SOL_SOCKET, *name = SO_LINGER, *kind = K_LINGER; return true;
    case CIO_SOCKOPT_IP6_ONLY: *level = IPPROTO_IPV6, *name = IPV6_V6ONLY; return true;
    case CIO_SOCKOPT_BROADCAST: *level = SOL_SOCKET, *name = SO_BROADCAST; return true;
    case CIO_SOCKOPT_TTL: *level = IPPROTO_IP, *name = IP_TTL; return true;
    case CIO_SOCKOPT_HOP_LIMIT: *level = IPPROTO_IPV6, *name = IPV6_UNICAST_HOPS; return true;
    case CIO_SOCKOPT_MULTICAST_TTL:
        *level = IPPROTO_IP, *name = IP_MULTICAST_TTL, *kind = MCAST_BYTE ? K_BYTE : K_INT;
        return true;
    case CIO_SOCKOPT_MULTICAST_HOPS: *level = IPPROTO_IPV6, *name = IPV6_MULTICAST_HOPS; return true;
    case CIO_SOCKOPT_MULTICAST_LOOP:
        *level = IPPROTO_IP, *name = IP_MULTICAST_LOOP, *kind = MCAST_BYTE ? K_BYTE : K_INT;
        return true;
    case CIO_SOCKOPT_MULTICAST_LOOP6: *level = IPPROTO_IPV6, *name = IPV6_MULTICAST_LOOP; return true;
    default: return false;
    }
}

static cio_err set_raw(int fd, int level, int name, const void *value, socklen_t len)
{
    cio_err err;
    CIO__OS_CALL(err, sockopt_set, CIO__SYS(setsockopt, sockopt_set)(fd, level, name, value, len));
    return err;
}

static cio_err get_raw(int fd, int level, int name, void *value, socklen_t *len)
{
    cio_err err;
    CIO__OS_CALL(err, sockopt_get, CIO__SYS(getsockopt, sockopt_get)(fd, level, name, value, len));
    return err;
}

cio_err cio__os_net_set_option(void *ud, cio_handle socket, int option, int64_t value)
{
    (void)ud;
    int level, name;
    enum kind kind;
    if (!describe(option, &level, &name, &kind))
        return cio__os_sockopt_undescribed(option);
    if (kind == K_LINGER) {
        struct linger l;
        l.l_onoff = value >= 0;
        l.l_linger = value >= 0 ? (int)value : 0;
        return CIO__IN_SET(net_socket_option, set_raw(socket, level, name, &l, (socklen_t)sizeof l));
    }
    if (kind == K_BYTE) {
        unsigned char b = (unsigned char)value;
        return CIO__IN_SET(net_socket_option, set_raw(socket, level, name, &b, (socklen_t)sizeof b));
    }
    int v = (int)value;
    return CIO__IN_SET(net_socket_option, set_raw(socket, level, name, &v, (socklen_t)sizeof v));
}

cio_err cio__os_net_get_option(void *ud, cio_handle socket, int option, int64_t *value)
{
    (void)ud;
    int level, name;
    enum kind kind;
    if (value == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (!describe(option, &level, &name, &kind))
        return cio__os_sockopt_undescribed(option);
    union {
        int i;
        unsigned char b;
        struct linger l;
    } u;
    memset(&u, 0, sizeof u);
    socklen_t len = kind == K_LINGER ? (socklen_t)sizeof u.l
                    : kind == K_BYTE ? (socklen_t)sizeof u.b
                                     : (socklen_t)sizeof u.i;
    cio_err err = get_raw(socket, level, name, &u, &len);
    if (err != CIO_OK)
        return CIO__IN_SET(net_socket_option, err);
    if (kind == K_LINGER)
        *value = u.l.l_onoff ? (int64_t)u.l.l_linger : -1;
    else if (kind == K_BYTE || len == 1)
        *value = u.b; /* Linux answers IP_MULTICAST_* in one byte when asked for less than an int */
    else
        *value = u.i;
    *value = cio__os_sockopt_read_back(option, *value);
    return CIO_OK;
}

cio_err cio__os_net_multicast(void *ud, cio_handle socket, int op, const cio_ip_address *group,
                              const cio_ip_address *iface)
{
    (void)ud;
    cio_err err;
    if (op == 2) { /* the outgoing interface */
        if (iface == NULL)
            return CIO_E_INVALID_ARGUMENT;
        if (iface->family == CIO_IP4) {
            struct in_addr a;
            memcpy(&a.s_addr, iface->bytes, 4);
            CIO__OS_CALL(err, multicast,
                         CIO__SYS(setsockopt, multicast)(socket, IPPROTO_IP, IP_MULTICAST_IF, &a, (socklen_t)sizeof a));
        } else {
            unsigned int index = iface->scope_id;
            CIO__OS_CALL(err, multicast,
                         CIO__SYS(setsockopt, multicast)(socket, IPPROTO_IPV6, IPV6_MULTICAST_IF, &index,
                                                         (socklen_t)sizeof index));
        }
        return CIO__IN_SET(net_multicast, err);
    }
    if (group == NULL || (op != 0 && op != 1))
        return CIO_E_INVALID_ARGUMENT;
    if (group->family == CIO_IP4) {
        struct ip_mreq m;
        memset(&m, 0, sizeof m);
        memcpy(&m.imr_multiaddr.s_addr, group->bytes, 4);
        if (iface != NULL)
            memcpy(&m.imr_interface.s_addr, iface->bytes, 4);
        CIO__OS_CALL(err, multicast,
                     CIO__SYS(setsockopt, multicast)(socket, IPPROTO_IP,
                                                     op == 0 ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP, &m,
                                                     (socklen_t)sizeof m));
    } else {
        struct ipv6_mreq m;
        memset(&m, 0, sizeof m);
        memcpy(&m.ipv6mr_multiaddr, group->bytes, 16);
        m.ipv6mr_interface = iface != NULL ? iface->scope_id : group->scope_id;
        CIO__OS_CALL(err, multicast,
                     CIO__SYS(setsockopt, multicast)(socket, IPPROTO_IPV6, op == 0 ? IPV6_JOIN_GROUP : IPV6_LEAVE_GROUP,
                                                     &m, (socklen_t)sizeof m));
    }
    return CIO__IN_SET(net_multicast, err);
}

cio_err cio__os_net_socket_address(void *ud, cio_handle socket, bool peer, cio_ip_address *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio__os_sockaddr_any sa;
    socklen_t len = cio__os_sockaddr_clear(&sa);
    cio_err err;
    if (peer)
        CIO__OS_CALL(err, socket_address, CIO__SYS(getpeername, socket_address)(socket, &sa.sa, &len));
    else
        CIO__OS_CALL(err, socket_address, CIO__SYS(getsockname, socket_address)(socket, &sa.sa, &len));
    if (err == CIO_OK)
        cio__os_sockaddr_to_ip(&sa.storage, len, out);
    return CIO__IN_SET(net_socket_address, err);
}
