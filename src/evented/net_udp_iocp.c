/*
 * The Evented backend's datagram sockets on Windows (the iocp flavour): cio_socket_send_to* and
 * cio_socket_receive_* as overlapped WSASendTo / WSARecvFrom on the fiber's loop's completion port
 * (poll_iocp.c, iocp.h), with the Threaded backend's semantics (src/os/net_windows.c):
 * - send: one datagram, all of it or an error. A non-blocking WSASendTo first (the socket is
 *   FIONBIO, net_windows.c): a datagram socket almost always has room, and then the send is done
 *   without a round through the port; only WSAEWOULDBLOCK starts the overlapped WSASendTo, which
 *   waits on the port (cancelable, no deadline, as Threaded's send).
 * - receive: waits up to the timeout for the first datagram, then takes those already queued, up to
 *   max (at most NET_BATCH_MAX, as Threaded), without waiting; an error after the first ends the
 *   batch early (the call succeeds; the error comes again next time). The first is a non-blocking
 *   recvfrom (data already queued: no round through the port), then, if nothing was queued, an
 *   overlapped WSARecvFrom whose deadline is the timeout's and which a cancel stops (CancelIoEx on
 *   its OVERLAPPED, iocp.h); the rest are non-blocking recvfrom calls.
 * - a datagram longer than its buffer (WSAEMSGSIZE, from recvfrom or the overlapped result) is
 *   received truncated: len = cap, truncated = true, as Threaded. An overlapped WSARecvFrom that
 *   says WSAEMSGSIZE at once (the datagram came after the try) has completed with a warning status
 *   (STATUS_BUFFER_OVERFLOW), not failed: its packet follows, and it is waited for like a pending
 *   one (returning at once would leave a packet for an OVERLAPPED whose frame is gone).
 * - Winsock codes go through the Threaded maps (cio__wsa_wsa_sendto, cio__wsa_wsa_recvfrom) and its
 *   failure step (cio__os_wsa_failure): on UDP, WSAECONNRESET (an ICMP port unreachable for an
 *   earlier datagram) is PortUnreachable and WSAENETRESET ConnectionResetByPeer (spec/errmaps.yaml);
 *   RETRY calls again, REINIT starts Winsock again once.
 * - A socket attached to a port that is not this instance's (poll_iocp.c) sends and receives through
 *   the Threaded calls on the helper pool once the non-blocking try would block.
 * Invariants: everything runs as a fiber of the instance (cio__e_run makes one for a foreign thread);
 * the OVERLAPPED, the buffers' WSABUFs, the flags and the sender's address of an overlapped call live
 * in the fiber's frame until its packet is dequeued (cio__e_iocp_run returns only then).
 */
#include "iocp.h"

#include <limits.h>
#include <string.h>

#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_common.h"
#include "net_windows.h"
#include "os.h"
#include "slots.h"

#define WSABUF_MAX 64u   /* buffers per WSASendTo, as net_windows.c */
#define NET_BATCH_MAX 32 /* datagrams per receive, as net_windows.c */

/* A failed Winsock code through map: the error, or *again (RETRY; REINIT once). */
static cio_err failed(int code, cio__mapped (*map)(int), bool *again, bool *reinit)
{
    *again = false;
    cio_err err = cio__os_wsa_failure(map(code), again, reinit);
    return err != CIO_OK || *again ? err : CIO_E_UNEXPECTED;
}

/* Runs op's overlapped start on s as the current fiber of e, started again while its start says
 * RETRY: CIO_OK (the packet is in; WSAGetOverlappedResult reads it) or the error; or *foreign, with
 * nothing started: s is attached to a port that is not e's (poll_iocp.c), and the caller runs the
 * Threaded call on the helper pool instead. */
static cio_err run_op(struct cio_evented *e, SOCKET s, struct cio__e_iocp_op *op, cio__e_iocp_start start, void *arg,
                      int64_t deadline, cio__mapped (*map)(int), bool *foreign)
{
    bool reinit = false;
    for (;;) {
        int code = 0;
        cio_err err = cio__e_iocp_run(e, op, (HANDLE)s, start, arg, deadline, true, &code);
        if (err != CIO_OK || code == 0)
            return err;
        if (code == CIO__E_IOCP_FOREIGN) {
            *foreign = true;
            return CIO_OK;
        }
        bool again;
        err = failed(code, map, &again, &reinit);
        if (!again)
            return err;
    }
}

/* The finished operation's result: CIO_OK and *bytes, or *code (the Winsock code). */
static bool result_of(SOCKET s, struct cio__e_iocp_op *op, DWORD *bytes, int *code)
{
    DWORD flags = 0;
    *bytes = 0;
    *code = 0;
    if (CIO__SYS(WSAGetOverlappedResult, iocp_udp_result)(s, (WSAOVERLAPPED *)&op->ov, bytes, FALSE, &flags))
        return true;
    *code = WSAGetLastError();
    return false;
}

/* ---- send --------------------------------------------------------------------------------------------------- */

struct send_args {
    struct cio_evented *e;
    SOCKET s;
    WSABUF bufs[WSABUF_MAX];
    DWORD nb;
    cio__os_sockaddr_any sa;
    int salen; /* 0: no destination (the connected peer) */
    size_t *nsent;
    const cio_ip_address *dest; /* the caller's, for the Threaded call */
    const cio_const_iovec *iov;
    size_t iovcnt;
};

static const struct sockaddr *dest_of(const struct send_args *a)
{
    return a->salen > 0 ? &a->sa.sa : NULL;
}

static int send_start(struct cio__e_iocp_op *op, void *arg)
{
    struct send_args *a = (struct send_args *)arg;
    if (CIO__SYS(WSASendTo, iocp_send)(a->s, a->bufs, a->nb, NULL, 0, dest_of(a), a->salen, (WSAOVERLAPPED *)&op->ov,
                                       NULL) == 0)
        return 0;
    int code = WSAGetLastError();
    return code == WSA_IO_PENDING ? 0 : code;
}

/* The Threaded send, on the helper pool (a socket attached to another port). */
static cio_err h_send(void *p)
{
    struct send_args *a = (struct send_args *)p;
    return cio__os_net_send(NULL, (cio_handle)(uintptr_t)a->s, a->dest, a->iov, a->iovcnt, a->nsent);
}

/* The overlapped send, after the non-blocking one would have blocked. */
static cio_err send_overlapped(struct send_args *a)
{
    struct cio__e_iocp_op op;
    bool foreign = false;
    cio_err err = run_op(a->e, a->s, &op, send_start, a, -1, cio__wsa_wsa_sendto, &foreign);
    if (foreign)
        return cio__e_helper(a->e, h_send, a, true);
    if (err != CIO_OK)
        return err;
    DWORD bytes;
    int code;
    if (result_of(a->s, &op, &bytes, &code)) {
        *a->nsent = bytes;
        return CIO_OK;
    }
    bool again, reinit = true;
    err = failed(code, cio__wsa_wsa_sendto, &again, &reinit);
    return again ? CIO_E_UNEXPECTED : err;
}

static cio_err send_run(void *p)
{
    struct send_args *a = (struct send_args *)p;
    cio_err err = cio__e_cancel_point(a->e);
    bool reinit = false;
    while (err == CIO_OK) {
        DWORD sent = 0;
        if (CIO__SYS(WSASendTo, iocp_send_now)(a->s, a->bufs, a->nb, &sent, 0, dest_of(a), a->salen, NULL, NULL) == 0) {
            *a->nsent = sent;
            return CIO_OK;
        }
        int code = WSAGetLastError();
        if (code == WSAEWOULDBLOCK)
            return send_overlapped(a);
        bool again;
        err = failed(code, cio__wsa_wsa_sendto, &again, &reinit);
        if (!again)
            return err;
    }
    return err;
}

cio_err cio__e_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                        size_t iovcnt, size_t *nsent)
{
    if (nsent == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *nsent = 0;
    struct send_args a;
    memset(&a, 0, sizeof a);
    socklen_t salen = 0;
    if (dest != NULL && !cio__os_sockaddr_from_ip(dest, &a.sa.storage, &salen))
        return CIO_E_INVALID_ARGUMENT;
    a.e = (struct cio_evented *)ud;
    a.s = (SOCKET)(uintptr_t)socket;
    a.salen = (int)salen;
    for (size_t i = 0; i < iovcnt && a.nb < WSABUF_MAX; i++) {
        a.bufs[a.nb].len = iov[i].len > ULONG_MAX ? ULONG_MAX : (ULONG)iov[i].len;
        a.bufs[a.nb].buf = (char *)(uintptr_t)iov[i].base;
        a.nb++;
    }
    a.nsent = nsent;
    a.dest = dest;
    a.iov = iov;
    a.iovcnt = iovcnt;
    return CIO__IN_SET(net_send, cio__e_run(a.e, send_run, &a));
}

/* ---- receive ------------------------------------------------------------------------------------------------ */

struct receive_args {
    struct cio_evented *e;
    SOCKET s;
    cio_message *msgs;
    size_t max;
    int64_t deadline; /* -1: none */
    size_t *count;
    /* the overlapped receive's, alive until its packet */
    WSABUF buf;
    DWORD flags;
    cio__os_sockaddr_any from;
    int fromlen;
    bool foreign; /* the Threaded receive on the helper pool did the whole call */
};

static int clamp_cap(size_t cap)
{
    return cap > (size_t)INT_MAX ? INT_MAX : (int)cap;
}

/* One non-blocking recvfrom into m: CIO_OK (got one, maybe truncated), CIO_E_WOULD_BLOCK (nothing
 * queued), or an error. */
static cio_err receive_now(SOCKET s, cio_message *m)
{
    bool reinit = false;
    for (;;) {
        cio__os_sockaddr_any from;
        int flen = (int)cio__os_sockaddr_clear(&from);
        int cap = clamp_cap(m->cap);
        int n = CIO__SYS(wsa_recvfrom, iocp_receive_now)(s, (char *)m->buf, cap, 0, &from.sa, &flen);
        int code = n == SOCKET_ERROR ? WSAGetLastError() : 0;
        if (n != SOCKET_ERROR || code == WSAEMSGSIZE) {
            m->len = n == SOCKET_ERROR ? (size_t)cap : (size_t)n;
            m->truncated = n == SOCKET_ERROR;
            cio__os_sockaddr_to_ip(&from.storage, (socklen_t)flen, &m->from);
            return CIO_OK;
        }
        if (code == WSAEWOULDBLOCK)
            return CIO_E_WOULD_BLOCK;
        bool again;
        cio_err err = failed(code, cio__wsa_wsa_recvfrom, &again, &reinit);
        if (!again)
            return err;
    }
}

static int receive_start(struct cio__e_iocp_op *op, void *arg)
{
    struct receive_args *a = (struct receive_args *)arg;
    cio_message *m = &a->msgs[0];
    a->buf.buf = (char *)m->buf;
    a->buf.len = (ULONG)clamp_cap(m->cap);
    a->flags = 0;
    a->fromlen = (int)cio__os_sockaddr_clear(&a->from);
    if (CIO__SYS(WSARecvFrom, iocp_receive)(a->s, &a->buf, 1, NULL, &a->flags, &a->from.sa, &a->fromlen,
                                            (WSAOVERLAPPED *)&op->ov, NULL) == 0)
        return 0;
    int code = WSAGetLastError();
    /* WSAEMSGSIZE at once: a datagram was queued and did not fit, STATUS_BUFFER_OVERFLOW, which is a
     * warning, not an error: the operation completed (truncated) and its packet follows, as for a
     * success; WSAGetOverlappedResult says WSAEMSGSIZE again */
    return code == WSA_IO_PENDING || code == WSAEMSGSIZE ? 0 : code;
}

/* The Threaded receive, on the helper pool (a socket attached to another port), up to the deadline. */
static cio_err h_receive(void *p)
{
    struct receive_args *a = (struct receive_args *)p;
    cio_timeout t = a->deadline < 0 ? CIO_TIMEOUT_NONE : cio_timeout_ns(a->deadline - cio__e_now_ns());
    return cio__os_net_receive(NULL, (cio_handle)(uintptr_t)a->s, a->msgs, a->max, t, a->count);
}

/* The first datagram, waited for on the port up to the deadline. */
static cio_err receive_overlapped(struct receive_args *a)
{
    struct cio__e_iocp_op op;
    cio_err err = run_op(a->e, a->s, &op, receive_start, a, a->deadline, cio__wsa_wsa_recvfrom, &a->foreign);
    if (a->foreign)
        return cio__e_helper(a->e, h_receive, a, true);
    if (err != CIO_OK)
        return err;
    DWORD bytes;
    int code;
    bool ok = result_of(a->s, &op, &bytes, &code);
    cio_message *m = &a->msgs[0];
    if (ok || code == WSAEMSGSIZE) {
        m->len = ok ? (size_t)bytes : (size_t)a->buf.len;
        m->truncated = !ok;
        cio__os_sockaddr_to_ip(&a->from.storage, (socklen_t)a->fromlen, &m->from);
        return CIO_OK;
    }
    bool again, reinit = true;
    err = failed(code, cio__wsa_wsa_recvfrom, &again, &reinit);
    return again ? CIO_E_UNEXPECTED : err;
}

static cio_err receive_run(void *p)
{
    struct receive_args *a = (struct receive_args *)p;
    cio_err err = cio__e_cancel_point(a->e);
    if (err == CIO_OK)
        err = receive_now(a->s, &a->msgs[0]);
    if (err == CIO_E_WOULD_BLOCK)
        err = a->deadline >= 0 && cio__e_deadline_passed(a->deadline) ? CIO_E_TIMEOUT : receive_overlapped(a);
    if (err != CIO_OK || a->foreign)
        return err;
    size_t n = 1;
    while (n < a->max && receive_now(a->s, &a->msgs[n]) == CIO_OK)
        n++;
    *a->count = n;
    return CIO_OK;
}

cio_err cio__e_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                           size_t *count)
{
    if (msgs == NULL || max == 0 || count == NULL)
        return CIO_E_INVALID_ARGUMENT;
    for (size_t i = 0; i < max && i < NET_BATCH_MAX; i++)
        if (msgs[i].buf == NULL && msgs[i].cap > 0)
            return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    struct receive_args a;
    memset(&a, 0, sizeof a);
    a.e = (struct cio_evented *)ud;
    a.s = (SOCKET)(uintptr_t)socket;
    a.msgs = msgs;
    a.max = max > NET_BATCH_MAX ? NET_BATCH_MAX : max;
    a.deadline = cio__e_mono_deadline(timeout);
    a.count = count;
    return CIO__IN_SET(net_receive_timeout, cio__e_run(a.e, receive_run, &a));
}
