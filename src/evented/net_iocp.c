/*
 * The Evented backend's sockets on Windows (the iocp flavour; net.c is the POSIX readiness core).
 *
 * Stream reads and writes (WSARecv, WSASend), accept (AcceptEx) and TCP connect (ConnectEx, with
 * its timeout as the operation's deadline) are overlapped operations on the fiber's loop's
 * completion port (poll_iocp.c, iocp.h): no thread waits for them, and a cancel or deadline is
 * CancelIoEx on the exact OVERLAPPED, whose packet the fiber still waits for. Their Winsock codes go
 * through the Threaded backend's maps (cio__wsa_wsa_recv, _send, _accept, _connect) and failure step
 * (cio__os_wsa_failure, net_windows.c).
 * - accept: a new overlapped socket of the listener's family, AcceptEx with no data, then
 *   SO_UPDATE_ACCEPT_CONTEXT (so getpeername, shutdown and the options work on it), FIONBIO like
 *   every socket of net_windows.c (the Threaded slots on the helper pool expect it), and its peer
 *   from getpeername. A Unix listener's accept is the Threaded one on the helper pool.
 * - connect: a new overlapped socket, its options (cio__os_sockopts_apply), a bind to the family's
 *   any address (ConnectEx wants a bound socket), ConnectEx, SO_UPDATE_CONNECT_CONTEXT, FIONBIO.
 * - Every socket made here is closed again on any failure after it was made.
 * - A socket attached to a port that is not this instance's (another instance used it first, even one
 *   destroyed since: poll_iocp.c) is read, written and accepted on by the Threaded calls on the helper
 *   pool, whose calls queue no packet: slower, never stuck.
 * - timed operations (cio_operate: a stream read or write, an accept) are the same overlapped
 *   operations with the timeout as their deadline: CancelIoEx when it passes, and what moved before
 *   it counts (a read's data is never lost: it comes with the packet; a write may be short). A timed
 *   call on a socket attached to another port says Unimplemented (nothing started), and the library
 *   runs it as a fiber that a timer cancels.
 * UDP send/receive are overlapped too (net_udp_iocp.c). net_write_file (TransmitFile, overlapped
 * there, waited for on the helper thread: Wine notices a peer's reset of a pending transfer only when
 * the socket is polled, which net_sendfile_windows.c does between waits) and Unix-socket connects (no
 * AF_UNIX under Wine to test them on) run the Threaded implementation on the helper pool; listen,
 * bind, socket pairs, shutdown and close never block and run where they are called.
 * Invariants: a thread that is not one of this instance's fibers runs an overlapped slot as a fiber
 * (cio__e_run) and a helper slot directly (helper.c).
 */
#include "iocp.h"

#include <mswsock.h>
#include <limits.h>
#include <string.h>

#include "cio/errmap.h"
#include "evented.h"
#include "helper_slot.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_common.h"
#include "net_windows.h"
#include "os.h"
#include "slots.h"

#define WSABUF_MAX 64u
#define ADDR_SPACE ((DWORD)sizeof(struct sockaddr_storage) + 16) /* AcceptEx's room per address */

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

CIO__E_HELPER_SLOT(net_connect_unix, 2, const cio_unix_address *, address, cio_stream *, out)
CIO__E_HELPER_SLOT(net_write_file, 5, cio_handle, stream, cio_file, file, uint64_t, offset, uint64_t, len, uint64_t *,
                   nwritten)

/* ---- shared steps ------------------------------------------------------------------------------------------- */

/* A failed Winsock code through map: the error, or *again (RETRY; REINIT once). */
static cio_err failed(int code, cio__mapped (*map)(int), bool *again, bool *reinit)
{
    *again = false;
    cio_err err = cio__os_wsa_failure(map(code), again, reinit);
    return err != CIO_OK || *again ? err : CIO_E_UNEXPECTED;
}

/* A Winsock failure that is not retried here (a RETRY or REINIT answer is Unexpected). */
static cio_err failed_once(int code, cio__mapped (*map)(int))
{
    bool again, reinit = true;
    cio_err err = failed(code, map, &again, &reinit);
    return again ? CIO_E_UNEXPECTED : err;
}

/* The result of op's finished operation on s: CIO_OK and *bytes, or the mapped error. */
static cio_err result_of(SOCKET s, struct cio__e_iocp_op *op, DWORD *bytes, cio__mapped (*map)(int))
{
    DWORD flags = 0;
    *bytes = 0;
    if (CIO__SYS(WSAGetOverlappedResult, iocp_result)(s, (WSAOVERLAPPED *)&op->ov, bytes, FALSE, &flags))
        return CIO_OK;
    int code = WSAGetLastError();
    if (code == WSA_OPERATION_ABORTED && op->ov.InternalHigh > 0) { /* canceled after moving bytes: they count */
        *bytes = (DWORD)op->ov.InternalHigh;
        return CIO_OK;
    }
    return failed_once(code, map);
}

/* Runs the operation `start` on s as the current fiber of e, started again while its start says RETRY.
 * *foreign (NULL: a socket just made, always e's): s belongs to another port, nothing was started
 * (CIO_OK returned); the caller runs the Threaded call on the helper pool. */
static cio_err run_op(struct cio_evented *e, SOCKET s, struct cio__e_iocp_op *op, cio__e_iocp_start start, void *arg,
                      int64_t deadline, cio__mapped (*map)(int), DWORD *bytes, bool *foreign)
{
    bool reinit = false;
    for (;;) {
        int code = 0;
        cio_err err = cio__e_iocp_run(e, op, (HANDLE)s, start, arg, deadline, true, &code);
        if (err != CIO_OK)
            return err;
        if (code == 0)
            return result_of(s, op, bytes, map);
        if (code == CIO__E_IOCP_FOREIGN) {
            if (foreign == NULL)
                return CIO__BUG("a socket made by this instance is attached to another port");
            *foreign = true;
            return CIO_OK;
        }
        bool again;
        err = failed(code, map, &again, &reinit);
        if (!again)
            return err;
    }
}

/* A new overlapped, non-inheritable TCP socket of family af. */
static cio_err tcp_socket(int af, SOCKET *out)
{
    *out = CIO__SYS(WSASocketW, iocp_socket)(af, SOCK_STREAM, IPPROTO_TCP, NULL, 0,
                                             WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    return *out != INVALID_SOCKET ? CIO_OK : failed_once(WSAGetLastError(), cio__wsa_wsa_socket);
}

static void undo(SOCKET s)
{
    (void)CIO__SYS(closesocket, iocp_undo)(s); /* the socket is gone even when it says otherwise */
}

/* The Winsock extension `id` (AcceptEx, ConnectEx) of s's provider, or NULL. */
static void *extension(SOCKET s, GUID id)
{
    void *fn = NULL;
    DWORD got = 0;
    if (CIO__SYS(wsa_ioctl, iocp_extension)(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &id, sizeof id, &fn, sizeof fn, &got,
                                            NULL, NULL) == SOCKET_ERROR)
        return NULL;
    return fn;
}

/* After AcceptEx or ConnectEx: the socket's context (opt, with value), and FIONBIO. */
static cio_err settle(SOCKET s, int opt, const char *value, int len)
{
    u_long on = 1;
    if (CIO__SYS(wsa_setsockopt, iocp_context)(s, SOL_SOCKET, opt, value, len) == SOCKET_ERROR ||
        CIO__SYS(ioctlsocket, iocp_nonblocking)(s, (long)FIONBIO, &on) == SOCKET_ERROR)
        return failed_once(WSAGetLastError(), cio__wsa_wsa_setsockopt);
    return CIO_OK;
}

/* ---- stream reads and writes -------------------------------------------------------------------------------- */

struct rw_args {
    struct cio_evented *e;
    SOCKET s;
    WSABUF bufs[WSABUF_MAX];
    DWORD nb;
    bool writing;
    size_t *n;
    const cio_iovec *iov; /* the caller's, for the Threaded call */
    size_t iovcnt;
    int64_t deadline; /* -1: none */
    bool timed;       /* cio_operate's: no helper pool (Unimplemented) */
};

static int rw_start(struct cio__e_iocp_op *op, void *arg)
{
    struct rw_args *a = (struct rw_args *)arg;
    DWORD flags = 0;
    int rc = a->writing
                 ? CIO__SYS(WSASend, iocp_write)(a->s, a->bufs, a->nb, NULL, 0, (WSAOVERLAPPED *)&op->ov, NULL)
                 : CIO__SYS(WSARecv, iocp_read)(a->s, a->bufs, a->nb, NULL, &flags, (WSAOVERLAPPED *)&op->ov, NULL);
    if (rc == 0)
        return 0;
    int code = WSAGetLastError();
    return code == WSA_IO_PENDING ? 0 : code;
}

/* The Threaded read or write, on the helper pool (a socket attached to another port). */
static cio_err h_rw(void *p)
{
    struct rw_args *a = (struct rw_args *)p;
    cio_handle h = (cio_handle)(uintptr_t)a->s;
    return a->writing ? cio__os_net_write(NULL, h, (const cio_const_iovec *)(const void *)a->iov, a->iovcnt, a->n)
                      : cio__os_net_read(NULL, h, a->iov, a->iovcnt, a->n);
}

static cio_err rw_run(void *p)
{
    struct rw_args *a = (struct rw_args *)p;
    struct cio__e_iocp_op op;
    DWORD bytes = 0;
    bool foreign = false;
    cio_err err = run_op(a->e, a->s, &op, rw_start, a, a->deadline, a->writing ? cio__wsa_wsa_send : cio__wsa_wsa_recv,
                         &bytes, &foreign);
    if (foreign)
        return a->timed ? CIO_E_UNIMPLEMENTED : cio__e_helper(a->e, h_rw, a, true);
    if (err == CIO_OK)
        *a->n = bytes;
    return err;
}

static cio_err rw_slot(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, bool writing, size_t *n,
                       int64_t deadline, bool timed)
{
    if (n == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *n = 0;
    struct rw_args a;
    a.e = (struct cio_evented *)ud;
    a.s = (SOCKET)(uintptr_t)stream;
    a.nb = 0;
    for (size_t i = 0; i < iovcnt && a.nb < WSABUF_MAX; i++) {
        a.bufs[a.nb].len = iov[i].len > ULONG_MAX ? ULONG_MAX : (ULONG)iov[i].len;
        a.bufs[a.nb].buf = (char *)iov[i].base;
        a.nb++;
    }
    a.writing = writing;
    a.n = n;
    a.iov = iov;
    a.iovcnt = iovcnt;
    a.deadline = deadline;
    a.timed = timed;
    return cio__e_run(a.e, rw_run, &a);
}

cio_err cio__e_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    return CIO__IN_SET(net_read, rw_slot(ud, stream, iov, iovcnt, false, nread, -1, false));
}

cio_err cio__e_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)
{
    return CIO__IN_SET(net_write,
                       rw_slot(ud, stream, (const cio_iovec *)(const void *)iov, iovcnt, true, nwritten, -1, false));
}

/* ---- accept ------------------------------------------------------------------------------------------------- */

struct accept_args {
    struct cio_evented *e;
    SOCKET listener, s;
    LPFN_ACCEPTEX fn;
    char addrs[2 * ADDR_SPACE];
    cio_stream *out;
    int64_t deadline; /* -1: none */
    bool timed;       /* cio_operate's: no helper pool (Unimplemented) */
};

static int accept_start(struct cio__e_iocp_op *op, void *arg)
{
    struct accept_args *a = (struct accept_args *)arg;
    DWORD got = 0;
    if (CIO__SYS(AcceptEx, iocp_accept)(a->fn, a->listener, a->s, a->addrs, 0, ADDR_SPACE, ADDR_SPACE, &got, &op->ov))
        return 0;
    int code = WSAGetLastError();
    return code == ERROR_IO_PENDING ? 0 : code;
}

static cio_err h_accept(void *p)
{
    struct accept_args *a = (struct accept_args *)p;
    return cio__os_net_accept(NULL, (cio_handle)(uintptr_t)a->listener, a->out);
}

static cio_err accept_run(void *p)
{
    struct accept_args *a = (struct accept_args *)p;
    cio__os_sockaddr_any sa;
    int len = (int)cio__os_sockaddr_clear(&sa);
    if (CIO__SYS(wsa_getsockname, iocp_accept_family)(a->listener, &sa.sa, &len) == SOCKET_ERROR)
        return failed_once(WSAGetLastError(), cio__wsa_wsa_accept);
    if (sa.sa.sa_family != AF_INET && sa.sa.sa_family != AF_INET6) /* a Unix listener: the Threaded accept */
        return a->timed ? CIO_E_UNIMPLEMENTED : cio__e_helper(a->e, h_accept, a, true);
    cio_err err = tcp_socket(sa.sa.sa_family, &a->s);
    if (err != CIO_OK)
        return err;
    a->fn = (LPFN_ACCEPTEX)extension(a->listener, (GUID)WSAID_ACCEPTEX);
    struct cio__e_iocp_op op;
    DWORD bytes;
    bool foreign = false;
    err = a->fn != NULL
              ? run_op(a->e, a->listener, &op, accept_start, a, a->deadline, cio__wsa_wsa_accept, &bytes, &foreign)
              : CIO_E_SYSTEM_RESOURCES;
    if (foreign) { /* a listener attached to another port: the Threaded accept */
        undo(a->s);
        return a->timed ? CIO_E_UNIMPLEMENTED : cio__e_helper(a->e, h_accept, a, true);
    }
    if (err == CIO_OK)
        err = settle(a->s, SO_UPDATE_ACCEPT_CONTEXT, (const char *)&a->listener, (int)sizeof a->listener);
    len = (int)cio__os_sockaddr_clear(&sa);
    if (err == CIO_OK && CIO__SYS(wsa_getpeername, iocp_accept_peer)(a->s, &sa.sa, &len) == SOCKET_ERROR)
        err = failed_once(WSAGetLastError(), cio__wsa_wsa_accept);
    if (err != CIO_OK) {
        undo(a->s);
        return err;
    }
    a->out->handle = (cio_handle)(uintptr_t)a->s;
    cio__os_sockaddr_to_ip(&sa.storage, (socklen_t)len, &a->out->peer);
    return CIO_OK;
}

static cio_err accept_slot(void *ud, cio_handle listener, cio_stream *out, int64_t deadline, bool timed)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    struct accept_args a;
    memset(&a, 0, sizeof a);
    a.e = (struct cio_evented *)ud;
    a.listener = (SOCKET)(uintptr_t)listener;
    a.out = out;
    a.deadline = deadline;
    a.timed = timed;
    return cio__e_run(a.e, accept_run, &a);
}

cio_err cio__e_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    return CIO__IN_SET(net_accept, accept_slot(ud, listener, out, -1, false));
}

/* ---- timed operations (cio/batch.h) ------------------------------------------------------------------------ */

/* A stream read or write or an accept as its overlapped operation with the timeout as its deadline, a
 * datagram receive with its own timeout (net_udp_iocp.c); every other kind is CIO_E_UNIMPLEMENTED
 * (cio_operate_timeout runs it as a fiber), as is a socket attached to another instance's port. */
cio_err cio__e_operate(void *ud, cio_operation *op, cio_timeout timeout)
{
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    op->count = 0;
    int64_t deadline = cio__e_mono_deadline(timeout);
    switch (op->kind) {
    case CIO_OP_NET_READ:
        return rw_slot(ud, op->u.net_read.stream, op->u.net_read.iov, op->u.net_read.iovcnt, false, &op->count,
                       deadline, true);
    case CIO_OP_NET_WRITE:
        return rw_slot(ud, op->u.net_write.stream, (const cio_iovec *)(const void *)op->u.net_write.iov,
                       op->u.net_write.iovcnt, true, &op->count, deadline, true);
    case CIO_OP_NET_ACCEPT: return accept_slot(ud, op->u.net_accept.listener, &op->stream, deadline, true);
    case CIO_OP_NET_RECEIVE:
        return cio__e_net_receive(ud, op->u.net_receive.socket, op->u.net_receive.msgs, op->u.net_receive.max, timeout,
                                  &op->count);
    default: return CIO_E_UNIMPLEMENTED;
    }
}

/* ---- connect ------------------------------------------------------------------------------------------------ */

struct connect_args {
    struct cio_evented *e;
    const cio_ip_address *address;
    const cio_connect_options *options;
    cio_stream *out;
    SOCKET s;
    LPFN_CONNECTEX fn;
    cio__os_sockaddr_any sa;
    int salen;
};

static int connect_start(struct cio__e_iocp_op *op, void *arg)
{
    struct connect_args *a = (struct connect_args *)arg;
    if (CIO__SYS(ConnectEx, iocp_connect)(a->fn, a->s, &a->sa.sa, a->salen, NULL, 0, NULL, &op->ov))
        return 0;
    int code = WSAGetLastError();
    return code == ERROR_IO_PENDING ? 0 : code;
}

static cio_err connect_run(void *p)
{
    struct connect_args *a = (struct connect_args *)p;
    int64_t deadline = cio__e_mono_deadline(a->options != NULL ? a->options->timeout : CIO_TIMEOUT_NONE);
    cio_err err = tcp_socket(a->sa.sa.sa_family, &a->s);
    if (err != CIO_OK)
        return err;
    if (a->options != NULL)
        err = cio__os_sockopts_apply((cio_handle)(uintptr_t)a->s, a->address->family, true, &a->options->sockopts);
    cio__os_sockaddr_any any;
    memset(&any, 0, sizeof any);
    any.sa.sa_family = a->sa.sa.sa_family;
    int anylen = any.sa.sa_family == AF_INET6 ? (int)sizeof any.in6 : (int)sizeof any.in4;
    if (err == CIO_OK && CIO__SYS(wsa_bind, iocp_connect_bind)(a->s, &any.sa, anylen) == SOCKET_ERROR)
        err = failed_once(WSAGetLastError(), cio__wsa_wsa_connect);
    if (err == CIO_OK) {
        a->fn = (LPFN_CONNECTEX)extension(a->s, (GUID)WSAID_CONNECTEX);
        if (a->fn == NULL)
            err = CIO_E_SYSTEM_RESOURCES;
    }
    struct cio__e_iocp_op op;
    DWORD bytes;
    if (err == CIO_OK)
        err = run_op(a->e, a->s, &op, connect_start, a, deadline, cio__wsa_wsa_connect, &bytes, NULL);
    if (err == CIO_OK)
        err = settle(a->s, SO_UPDATE_CONNECT_CONTEXT, NULL, 0);
    if (err != CIO_OK) {
        undo(a->s);
        return err;
    }
    a->out->handle = (cio_handle)(uintptr_t)a->s;
    a->out->peer = *a->address;
    return CIO_OK;
}

cio_err cio__e_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                              cio_stream *out)
{
    struct connect_args a;
    memset(&a, 0, sizeof a);
    socklen_t salen = 0;
    if (address == NULL || out == NULL || !cio__os_sockaddr_from_ip(address, &a.sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    a.e = (struct cio_evented *)ud;
    a.address = address;
    a.options = options;
    a.out = out;
    a.salen = (int)salen;
    return CIO__IN_SET(net_connect, cio__e_run(a.e, connect_run, &a));
}
