/*
 * Sockets for the Threaded backend on Windows (Winsock 2): TCP and UDP over IPv4/IPv6, and
 * AF_UNIX streams where the system has them (Windows 10 1803 and later; not Wine 8, where socket()
 * fails with WSAEAFNOSUPPORT and the Unix slots return CIO_E_ADDRESS_FAMILY_UNSUPPORTED).
 *
 * Invariants:
 * - Every socket this file creates or accepts is non-blocking (FIONBIO) and not inheritable
 *   (WSA_FLAG_NO_HANDLE_INHERIT; accepted ones with SetHandleInformation). A call that would block
 *   (WSAEWOULDBLOCK) waits for the socket's network events with WSAEventSelect on a fresh event
 *   and an alertable WaitForSingleObjectEx inside the cancellation bracket, then calls again. A
 *   cancel's APC (cancel_windows.c) ends the wait with WAIT_IO_COMPLETION: CIO_E_CANCELED. The
 *   event is detached (WSAEventSelect(s, NULL, 0)) and closed before the wait returns, and waits
 *   are sliced to WAIT_SLICE_MS, so an edge-triggered event Winsock did not record (FD_WRITE) only
 *   delays the retry, never hangs it.
 * - Timeouts (connect, receive) are deadlines computed once on entry; a wait never extends them.
 * - Every WSA error goes through the generated map of its operation (cio__wsa_<op>): RETRY (EINTR)
 *   asks the cancel state and calls again; REINIT (WSANOTINITIALISED: the program called
 *   WSACleanup) runs WSAStartup and calls again once; BUG asserts in debug builds. Winsock is
 *   started before the first socket, and again by the next call if that failed. No raw WSA code leaves this file.
 * - No socket leaks on an error path: the slot that created it closes it before returning.
 * - Options: Windows' SO_REUSEADDR lets a second socket bind a port in use (Linux's
 *   SO_REUSEPORT), so reuse_port sets it and reuse_address sets nothing (rebinding over TIME_WAIT
 *   needs no option here); two listeners on one port are then AddressInUse, as on Linux.
 * - A datagram longer than the buffer (WSAEMSGSIZE from recvfrom) is received truncated.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <afunix.h>
#include <windows.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_common.h"
#include "net_windows.h"
#include "os.h"

#define WAIT_SLICE_MS 100u
#define NET_BATCH_MAX 32
#define WSABUF_MAX 64u /* buffers per WSASend/WSARecv */

/* ---- Winsock start-up ------------------------------------------------------------------------------ */

/* Started once it succeeds: a failure (WSASYSNOTREADY while the network stack comes up, say) is
 * returned to that call and WSAStartup is tried again by the next one, not remembered. */
static SRWLOCK wsa_lock = SRWLOCK_INIT;
static volatile LONG wsa_ok; /* 1 once WSAStartup succeeded (written under wsa_lock) */

static int wsa_start(void)
{
    WSADATA data;
    return CIO__SYS(WSAStartup, wsa_start)(MAKEWORD(2, 2), &data);
}

static cio_err wsa_started(void)
{
    if (InterlockedCompareExchange(&wsa_ok, 0, 0) == 1)
        return CIO_OK;
    AcquireSRWLockExclusive(&wsa_lock);
    int error = 0;
    if (wsa_ok == 0) {
        error = wsa_start();
        if (error == 0)
            InterlockedExchange(&wsa_ok, 1);
    }
    ReleaseSRWLockExclusive(&wsa_lock);
    if (error == 0)
        return CIO_OK;
    cio__mapped m = cio__wsa_wsa_startup(error);
    return m.action == CIO__MAP_ERROR ? m.err : CIO_E_NETWORK_DOWN;
}

/* Result of one mapped WSA failure: *again true when the call should be made again (RETRY after the
 * cancel check, REINIT after WSAStartup, the first time only). */
static cio_err wsa_failure(cio__mapped m, bool *again, bool *reinit_done)
{
    *again = false;
    if (m.action == CIO__MAP_RETRY) {
        cio_err e = cio__t_cancel_point();
        if (e != CIO_OK)
            return e;
        *again = true;
        return CIO_OK;
    }
    if (m.action == CIO__MAP_REINIT && !*reinit_done) {
        WSADATA data;
        *reinit_done = true;
        if (CIO__SYS(WSAStartup, wsa_reinit)(MAKEWORD(2, 2), &data) == 0) {
            *again = true;
            return CIO_OK;
        }
        return CIO_E_NETWORK_DOWN;
    }
    if (m.action == CIO__MAP_BUG)
        return CIO__BUG("net: a WSA error that means a bug");
    if (m.action == CIO__MAP_OK)
        return CIO_OK;
    return m.action == CIO__MAP_REINIT ? CIO_E_NETWORK_DOWN : m.err;
}

/* wsa_failure for sockopt_windows.c (net_windows.h). */
cio_err cio__os_wsa_failure(cio__mapped m, bool *again, bool *reinit_done)
{
    return wsa_failure(m, again, reinit_done);
}

/* ---- addresses and deadlines (net_common.c) --------------------------------------------------------- */

typedef cio__os_sockaddr_any sockaddr_any;
typedef cio__os_deadline deadline;

/* ---- waiting ---------------------------------------------------------------------------------------- */

static const deadline no_deadline = {true, CIO_CLOCK_AWAKE, 0};

/* Waits (alertably, in the bracket) until one of `events` may have happened on s, a slice passed,
 * or the deadline: CIO_OK (call again), CIO_E_TIMEOUT, CIO_E_CANCELED, or an error. */
static cio_err wait_events(SOCKET s, long events, const deadline *d)
{
    DWORD ms = WAIT_SLICE_MS;
    if (!d->none) {
        int64_t left = d->ns - cio__os_now(NULL, d->clock).ns;
        if (left <= 0)
            return CIO_E_TIMEOUT;
        int64_t m = (left + 999999) / 1000000;
        if (m < (int64_t)ms)
            ms = (DWORD)m;
    }
    WSAEVENT ev = CIO__SYS(WSACreateEvent, wait_events)();
    if (ev == WSA_INVALID_EVENT)
        return CIO_E_SYSTEM_RESOURCES;
    cio_err err = CIO_OK;
    if (CIO__SYS(WSAEventSelect, wait_select)(s, ev, events) == SOCKET_ERROR) {
        bool again = false, reinit = true;
        err = wsa_failure(cio__wsa_wsa_recv(WSAGetLastError()), &again, &reinit);
        WSACloseEvent(ev);
        return err != CIO_OK ? err : CIO_E_UNEXPECTED;
    }
    err = cio__t_syscall_begin();
    if (err == CIO_OK) {
        for (;;) {
            DWORD r = CIO__SYS(WaitForSingleObjectEx, wait_events)(ev, ms, TRUE);
            if (r == WAIT_IO_COMPLETION) {
                err = cio__t_syscall_interrupted();
                if (err != CIO_OK)
                    break;
                continue;
            }
            cio__t_syscall_end();
            if (r == WAIT_FAILED)
                err = CIO_E_UNEXPECTED;
            break;
        }
    }
    (void)CIO__SYS(WSAEventSelect, wait_detach)(s, NULL, 0);
    WSACloseEvent(ev);
    if (err == CIO_OK && !d->none && d->ns - cio__os_now(NULL, d->clock).ns <= 0)
        err = CIO_E_TIMEOUT;
    return err;
}

/* After a failed call of a slot that may block (`code` from WSAGetLastError): WSAEWOULDBLOCK waits
 * for `events` (no deadline); another code goes through `map` and wsa_failure. CIO_OK: call again. */
static cio_err wsa_blocked(SOCKET s, int code, long events, cio__mapped (*map)(int), bool *reinit)
{
    if (code == WSAEWOULDBLOCK)
        return wait_events(s, events, &no_deadline);
    bool again = false;
    cio_err err = wsa_failure(map(code), &again, reinit);
    return !again && err == CIO_OK ? CIO_E_UNEXPECTED : err;
}

/* ---- sockets ------------------------------------------------------------------------------------------ */

/* closesocket, never retried (the socket is gone whatever it reports): WSAENOTSOCK is NotOpen. */
static cio_err close_socket(SOCKET s)
{
    if (CIO__SYS(closesocket, close_socket)(s) == 0)
        return CIO_OK;
    cio__mapped m = cio__wsa_closesocket(WSAGetLastError());
    return m.action == CIO__MAP_OK ? CIO_OK : m.err;
}

/* A fresh non-blocking, non-inheritable socket. `op_unix` picks the Unix socket map. */
static cio_err new_socket(int family, int type, int protocol, bool op_unix, SOCKET *out)
{
    cio_err err = wsa_started();
    if (err != CIO_OK)
        return err;
    bool reinit = false, again = true;
    SOCKET s = INVALID_SOCKET;
    while (again) {
        again = false;
        s = CIO__SYS(WSASocketW, new_socket)(family, type, protocol, NULL, 0,
                                             WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
        if (s != INVALID_SOCKET)
            break;
        int code = WSAGetLastError();
        err = wsa_failure(op_unix ? cio__wsa_wsa_socket_unix(code) : cio__wsa_wsa_socket(code), &again, &reinit);
        if (err != CIO_OK)
            return err;
    }
    if (s == INVALID_SOCKET)
        return CIO_E_UNEXPECTED;
    u_long on = 1;
    if (CIO__SYS(ioctlsocket, new_socket)(s, (long)FIONBIO, &on) == SOCKET_ERROR) {
        close_socket(s);
        return CIO_E_UNEXPECTED;
    }
    *out = s;
    return CIO_OK;
}

static cio_err set_int_option(SOCKET s, int level, int name, int value)
{
    cio_err err;
    int r;
    CIO__OS_WSA_CALL(err, r, wsa_setsockopt,
                     CIO__SYS(wsa_setsockopt, set_int_option)(s, level, name, (const char *)&value, (int)sizeof value));
    (void)r;
    return err;
}

static cio_err local_address(SOCKET s, cio_ip_address *out)
{
    sockaddr_any sa;
    int len = cio__os_sockaddr_clear(&sa);
    if (CIO__SYS(wsa_getsockname, local_address)(s, &sa.sa, &len) == SOCKET_ERROR)
        return CIO_E_SYSTEM_RESOURCES;
    cio__os_sockaddr_to_ip(&sa.storage, len, out);
    return CIO_OK;
}

static cio_err check_cancel_point(void)
{
    return cio__t_cancel_point();
}

/* The socket of a listen or bind: InvalidArgument for an address that is none of IPv4/IPv6, then
 * the cancellation point, then a fresh socket of the address's family; its sockaddr in *sa. */
static cio_err ip_socket(const cio_ip_address *address, int type, int protocol, sockaddr_any *sa, int *salen,
                         SOCKET *out)
{
    if (address == NULL || !cio__os_sockaddr_from_ip(address, &sa->storage, salen))
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = check_cancel_point();
    if (err != CIO_OK)
        return err;
    return new_socket(sa->sa.sa_family, type, protocol, false, out);
}

/* ---- TCP ---------------------------------------------------------------------------------------------- */

cio_err cio__os_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                              cio_server *out)
{
    (void)ud;
    if (options == NULL)
        options = &cio__os_listen_defaults;
    sockaddr_any sa;
    int salen;
    SOCKET s;
    cio_err err = out == NULL ? CIO_E_INVALID_ARGUMENT : ip_socket(address, SOCK_STREAM, IPPROTO_TCP, &sa, &salen, &s);
    if (err != CIO_OK)
        return CIO__IN_SET(net_listen, err);
    int r;
    if (options->reuse_port)
        err = set_int_option(s, SOL_SOCKET, SO_REUSEADDR, 1);
    if (err == CIO_OK)
        err = cio__os_sockopts_apply((cio_handle)(uintptr_t)s, address->family, true, &options->sockopts);
    if (err == CIO_OK)
        CIO__OS_WSA_CALL(err, r, wsa_bind, CIO__SYS(wsa_bind, listen_ip)(s, &sa.sa, salen));
    if (err == CIO_OK)
        CIO__OS_WSA_CALL(err, r, wsa_listen, CIO__SYS(wsa_listen, listen_ip)(s, cio__os_backlog(options, SOMAXCONN)));
    if (err == CIO_OK)
        err = local_address(s, &out->address);
    if (err != CIO_OK) {
        close_socket(s);
        return CIO__IN_SET(net_listen, err);
    }
    out->handle = (cio_handle)(uintptr_t)s;
    return CIO_OK;
}

/* accept (either family) until a connection, a cancel or an error. */
static cio_err accept_one(SOCKET listener, sockaddr_any *sa, int *len, SOCKET *out)
{
    cio_err err = check_cancel_point();
    if (err != CIO_OK)
        return err;
    bool reinit = false;
    for (;;) {
        *len = cio__os_sockaddr_clear(sa);
        SOCKET s = CIO__SYS(wsa_accept, accept_one)(listener, &sa->sa, len);
        if (s != INVALID_SOCKET) {
            u_long on = 1;
            (void)SetHandleInformation((HANDLE)s, HANDLE_FLAG_INHERIT, 0);
            (void)CIO__SYS(ioctlsocket, accept_one)(s, (long)FIONBIO, &on);
            *out = s;
            return CIO_OK;
        }
        err = wsa_blocked(listener, WSAGetLastError(), FD_ACCEPT | FD_CLOSE, cio__wsa_wsa_accept, &reinit);
        if (err != CIO_OK)
            return err;
    }
}

cio_err cio__os_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    (void)ud;
    sockaddr_any sa;
    int len;
    SOCKET s;
    cio_err err = out == NULL ? CIO_E_INVALID_ARGUMENT : accept_one((SOCKET)(uintptr_t)listener, &sa, &len, &s);
    if (err != CIO_OK)
        return CIO__IN_SET(net_accept, err);
    out->handle = (cio_handle)(uintptr_t)s;
    cio__os_sockaddr_to_ip(&sa.storage, len, &out->peer);
    return CIO_OK;
}

/* The non-blocking connect and the wait for it; the result is SO_ERROR once the socket reports
 * FD_CONNECT (or writability). */
static cio_err connect_wait(SOCKET s, const sockaddr_any *sa, int salen, const deadline *d, cio__mapped (*map)(int))
{
    cio_err err = check_cancel_point();
    if (err != CIO_OK)
        return err;
    bool reinit = false;
    for (;;) {
        if (CIO__SYS(wsa_connect, connect_wait)(s, &sa->sa, salen) == 0)
            return CIO_OK;
        int code = WSAGetLastError();
        if (code == WSAEWOULDBLOCK)
            break;
        bool again = false;
        err = wsa_failure(map(code), &again, &reinit);
        if (!again)
            return err != CIO_OK ? err : CIO_E_UNEXPECTED;
    }
    for (;;) {
        err = wait_events(s, FD_CONNECT | FD_WRITE | FD_CLOSE, d);
        if (err != CIO_OK)
            return err;
        int so_error = 0, optlen = (int)sizeof so_error;
        if (CIO__SYS(wsa_getsockopt, connect_wait)(s, SOL_SOCKET, SO_ERROR, (char *)&so_error, &optlen) == SOCKET_ERROR)
            return CIO_E_UNEXPECTED;
        if (so_error != 0) {
            bool again = false;
            err = wsa_failure(map(so_error), &again, &reinit);
            return err != CIO_OK ? err : CIO_E_UNEXPECTED;
        }
        /* connected once the peer's address is known */
        sockaddr_any peer;
        int plen = (int)sizeof peer;
        if (CIO__SYS(wsa_getpeername, connect_wait)(s, &peer.sa, &plen) == 0)
            return CIO_OK;
    }
}

cio_err cio__os_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                               cio_stream *out)
{
    (void)ud;
    sockaddr_any sa;
    int salen;
    if (address == NULL || out == NULL || !cio__os_sockaddr_from_ip(address, &sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    deadline d = cio__os_deadline_from(options != NULL ? options->timeout : CIO_TIMEOUT_NONE);
    SOCKET s;
    cio_err err = new_socket(sa.sa.sa_family, SOCK_STREAM, IPPROTO_TCP, false, &s);
    if (err != CIO_OK)
        return CIO__IN_SET(net_connect, err);
    err = options != NULL ? cio__os_sockopts_apply((cio_handle)(uintptr_t)s, address->family, true, &options->sockopts)
                          : CIO_OK;
    if (err == CIO_OK)
        err = connect_wait(s, &sa, salen, &d, cio__wsa_wsa_connect);
    if (err != CIO_OK) {
        close_socket(s);
        return CIO__IN_SET(net_connect, err);
    }
    out->handle = (cio_handle)(uintptr_t)s;
    out->peer = *address;
    return CIO_OK;
}

/* ---- streams ------------------------------------------------------------------------------------------ */

static DWORD to_wsabufs(const cio_iovec *iov, size_t iovcnt, WSABUF *bufs)
{
    DWORD n = 0;
    for (size_t i = 0; i < iovcnt && n < WSABUF_MAX; i++) {
        size_t len = iov[i].len > ULONG_MAX ? ULONG_MAX : iov[i].len;
        bufs[n].len = (ULONG)len;
        bufs[n].buf = (char *)iov[i].base;
        n++;
    }
    return n;
}

cio_err cio__os_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    (void)ud;
    if (nread == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nread = 0;
    SOCKET s = (SOCKET)(uintptr_t)stream;
    WSABUF bufs[WSABUF_MAX];
    DWORD nb = to_wsabufs(iov, iovcnt, bufs);
    cio_err err = check_cancel_point();
    bool reinit = false;
    while (err == CIO_OK) {
        DWORD got = 0, flags = 0;
        if (CIO__SYS(WSARecv, net_read)(s, bufs, nb, &got, &flags, NULL, NULL) == 0) {
            *nread = got;
            break;
        }
        err = wsa_blocked(s, WSAGetLastError(), FD_READ | FD_CLOSE, cio__wsa_wsa_recv, &reinit);
    }
    return CIO__IN_SET(net_read, err);
}

cio_err cio__os_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    SOCKET s = (SOCKET)(uintptr_t)stream;
    WSABUF bufs[WSABUF_MAX];
    DWORD nb = to_wsabufs((const cio_iovec *)(const void *)iov, iovcnt, bufs);
    cio_err err = check_cancel_point();
    bool reinit = false;
    while (err == CIO_OK) {
        DWORD sent = 0;
        if (CIO__SYS(WSASend, net_write)(s, bufs, nb, &sent, 0, NULL, NULL) == 0) {
            *nwritten = sent;
            break;
        }
        err = wsa_blocked(s, WSAGetLastError(), FD_WRITE | FD_CLOSE, cio__wsa_wsa_send, &reinit);
    }
    return CIO__IN_SET(net_write, err);
}

cio_err cio__os_net_shutdown(void *ud, cio_handle socket, int how)
{
    (void)ud;
    int os_how = cio__os_shutdown_how(how);
    if (os_how < 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = check_cancel_point();
    if (err != CIO_OK)
        return CIO__IN_SET(net_shutdown, err);
    int r;
    CIO__OS_WSA_CALL(err, r, wsa_shutdown, CIO__SYS(wsa_shutdown, net_shutdown)((SOCKET)(uintptr_t)socket, os_how));
    (void)r;
    return CIO__IN_SET(net_shutdown, err);
}

cio_err cio__os_net_close(void *ud, cio_handle socket)
{
    (void)ud;
    cio__os_before_handle_close((void *)(uintptr_t)socket);
    return close_socket((SOCKET)(uintptr_t)socket);
}

/* ---- UDP ---------------------------------------------------------------------------------------------- */

cio_err cio__os_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out)
{
    (void)ud;
    if (options == NULL)
        options = &cio__os_bind_defaults;
    sockaddr_any sa;
    int salen;
    SOCKET s;
    cio_err err = out == NULL ? CIO_E_INVALID_ARGUMENT : ip_socket(address, SOCK_DGRAM, IPPROTO_UDP, &sa, &salen, &s);
    if (err != CIO_OK)
        return CIO__IN_SET(net_bind, err);
    if (options->reuse_port)
        err = set_int_option(s, SOL_SOCKET, SO_REUSEADDR, 1);
    if (err == CIO_OK && address->family == CIO_IP6)
        err = set_int_option(s, IPPROTO_IPV6, IPV6_V6ONLY, options->ip6_only ? 1 : 0);
    if (err == CIO_OK && options->allow_broadcast)
        err = set_int_option(s, SOL_SOCKET, SO_BROADCAST, 1);
    if (err == CIO_OK)
        err = cio__os_sockopts_apply((cio_handle)(uintptr_t)s, address->family, false, &options->sockopts);
    int r;
    if (err == CIO_OK)
        CIO__OS_WSA_CALL(err, r, wsa_bind, CIO__SYS(wsa_bind, bind_ip)(s, &sa.sa, salen));
    if (err == CIO_OK)
        err = local_address(s, &out->address);
    if (err != CIO_OK) {
        close_socket(s);
        return CIO__IN_SET(net_bind, err);
    }
    out->handle = (cio_handle)(uintptr_t)s;
    return CIO_OK;
}

cio_err cio__os_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                         size_t iovcnt, size_t *nsent)
{
    (void)ud;
    if (nsent == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nsent = 0;
    sockaddr_any sa;
    int salen = 0;
    if (dest != NULL && !cio__os_sockaddr_from_ip(dest, &sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    SOCKET s = (SOCKET)(uintptr_t)socket;
    WSABUF bufs[WSABUF_MAX];
    DWORD nb = to_wsabufs((const cio_iovec *)(const void *)iov, iovcnt, bufs);
    cio_err err = check_cancel_point();
    bool reinit = false;
    while (err == CIO_OK) {
        DWORD sent = 0;
        if (CIO__SYS(WSASendTo, net_send)(s, bufs, nb, &sent, 0, dest != NULL ? &sa.sa : NULL, salen, NULL, NULL) ==
            0) {
            *nsent = sent;
            break;
        }
        err = wsa_blocked(s, WSAGetLastError(), FD_WRITE, cio__wsa_wsa_sendto, &reinit);
    }
    return CIO__IN_SET(net_send, err);
}

/* One recvfrom into m: CIO_OK (got one), CIO_E_WOULD_BLOCK (nothing queued), or an error. */
static cio_err receive_one(SOCKET s, cio_message *m)
{
    bool reinit = false;
    for (;;) {
        sockaddr_any from;
        int flen = cio__os_sockaddr_clear(&from);
        int cap = m->cap > (size_t)INT_MAX ? INT_MAX : (int)m->cap;
        int n = CIO__SYS(wsa_recvfrom, receive_one)(s, (char *)m->buf, cap, 0, &from.sa, &flen);
        int code = n == SOCKET_ERROR ? WSAGetLastError() : 0;
        if (n != SOCKET_ERROR || code == WSAEMSGSIZE) {
            m->len = n == SOCKET_ERROR ? (size_t)cap : (size_t)n;
            m->truncated = n == SOCKET_ERROR;
            cio__os_sockaddr_to_ip(&from.storage, flen, &m->from);
            return CIO_OK;
        }
        if (code == WSAEWOULDBLOCK)
            return CIO_E_WOULD_BLOCK;
        bool again = false;
        cio_err err = wsa_failure(cio__wsa_wsa_recvfrom(code), &again, &reinit);
        if (!again)
            return err != CIO_OK ? err : CIO_E_UNEXPECTED;
    }
}

cio_err cio__os_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                            size_t *count)
{
    (void)ud;
    if (msgs == NULL || max == 0 || count == NULL)
        return CIO_E_INVALID_ARGUMENT;
    for (size_t i = 0; i < max && i < NET_BATCH_MAX; i++)
        if (msgs[i].buf == NULL && msgs[i].cap > 0)
            return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    if (max > NET_BATCH_MAX)
        max = NET_BATCH_MAX;
    SOCKET s = (SOCKET)(uintptr_t)socket;
    deadline d = cio__os_deadline_from(timeout);
    cio_err err = check_cancel_point();
    while (err == CIO_OK) {
        err = receive_one(s, &msgs[0]);
        if (err != CIO_E_WOULD_BLOCK)
            break;
        err = wait_events(s, FD_READ, &d);
    }
    if (err != CIO_OK)
        return CIO__IN_SET(net_receive_timeout, err);
    size_t n = 1;
    while (n < max && receive_one(s, &msgs[n]) == CIO_OK)
        n++;
    *count = n;
    return CIO_OK;
}

/* ---- Unix-domain streams ------------------------------------------------------------------------------ */

cio_err cio__os_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                                cio_server *out)
{
    (void)ud;
    if (options == NULL)
        options = &cio__os_listen_defaults;
    if (!cio__os_unix_address_ok(address) || out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = check_cancel_point();
    if (err != CIO_OK)
        return CIO__IN_SET(net_unix_address_listen, err);
    sockaddr_any sa;
    int salen = cio__os_sockaddr_from_unix(address, &sa.storage);
    SOCKET s;
    err = new_socket(AF_UNIX, SOCK_STREAM, 0, true, &s);
    if (err != CIO_OK)
        return CIO__IN_SET(net_unix_address_listen, err);
    int r;
    CIO__OS_WSA_CALL(err, r, wsa_bind_unix, CIO__SYS(wsa_bind, listen_unix)(s, &sa.sa, salen));
    if (err == CIO_OK)
        CIO__OS_WSA_CALL(err, r, wsa_listen_unix,
                         CIO__SYS(wsa_listen, listen_unix)(s, cio__os_backlog(options, SOMAXCONN)));
    if (err != CIO_OK) {
        close_socket(s);
        return CIO__IN_SET(net_unix_address_listen, err);
    }
    out->handle = (cio_handle)(uintptr_t)s;
    memset(&out->address, 0, sizeof out->address);
    return CIO_OK;
}

cio_err cio__os_net_connect_unix(void *ud, const cio_unix_address *address, cio_stream *out)
{
    (void)ud;
    if (!cio__os_unix_address_ok(address) || out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    sockaddr_any sa;
    int salen = cio__os_sockaddr_from_unix(address, &sa.storage);
    SOCKET s;
    cio_err err = new_socket(AF_UNIX, SOCK_STREAM, 0, true, &s);
    if (err != CIO_OK) /* the socket map's set is ListenError: its errors here are ConnectError's too */
        return CIO__IN_SET(net_unix_address_connect, err);
    err = connect_wait(s, &sa, salen, &no_deadline, cio__wsa_wsa_connect_unix);
    if (err != CIO_OK) {
        close_socket(s);
        return CIO__IN_SET(net_unix_address_connect, err);
    }
    out->handle = (cio_handle)(uintptr_t)s;
    memset(&out->peer, 0, sizeof out->peer);
    return CIO_OK;
}
