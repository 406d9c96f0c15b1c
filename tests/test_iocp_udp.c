/*
 * The Evented backend's datagram sockets on Windows (issue 24): cio_socket_send_to* and
 * cio_socket_receive_* as overlapped WSASendTo / WSARecvFrom on the loops' completion ports
 * (src/evented/net_udp_iocp.c), run under Wine.
 *
 * What each test shows:
 * - ping_pong: two fibers on two loops bounce a datagram 500 times (each receive waits on the port:
 *   the reply is not there yet); the round trip's mean is printed.
 * - receive_many: datagrams already queued come in one batch, up to max (the rest in the next);
 *   a receive that waited on the port for the first takes the ones queued behind it.
 * - receive_queued: 200 datagrams already queued, one receive each (the non-blocking try takes
 *   every one, no round through the port); the mean per receive is printed.
 * - truncation: a datagram longer than the buffer is cut to it and says so, whether it was queued
 *   (the non-blocking try), arrived while the receive waited (the overlapped one), or was queued
 *   but missed by the try (the overlapped receive says WSAEMSGSIZE at once, and its packet still
 *   follows).
 * - timeout: nothing arrives: Timeout after the timeout, not before; a zero timeout with a datagram
 *   queued takes it.
 * - cancel_receive: a receive blocked on the port, canceled: Canceled; the socket still works.
 * - port_unreachable: a datagram to a closed port, then a receive: the same answer as the Threaded
 *   backend gives on this system (PortUnreachable where the ICMP error is reported).
 * - many_fibers: 200 pairs of sockets, a receiver and a sender fiber each, on two loops.
 * - faults: every call site of net_udp_iocp.c failing, with the error its map gives, nothing left
 *   open; WSAEWOULDBLOCK from the non-blocking send takes the overlapped one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "cio.h"
#include "cio/evented.h"
#include "internal/cio_oscalls_test.h"

#include "iocp_helpers.h"

static cio_evented *make(unsigned threads)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    cio_evented *e = NULL;
    assert_ok(cio_evented_create(&o, &e));
    return e;
}

static cio_socket bind_local(cio_io io)
{
    cio_socket s;
    cio_ip_address a = cio_ip4_loopback(0);
    assert_ok(cio_net_bind(io, &a, NULL, &s));
    return s;
}

static int64_t now_ms(void)
{
    return (int64_t)GetTickCount64();
}

static void send_str(cio_io io, const cio_socket *from, const cio_socket *to, const char *msg)
{
    size_t n = 0;
    assert_ok(cio_socket_send_to(io, from, &to->address, msg, strlen(msg), &n));
    assert_int_equal(n, strlen(msg));
}

/* ---- ping-pong ------------------------------------------------------------------------------------------- */

#define ROUNDS 500

struct duo {
    cio_io io;
    cio_socket a, b;
};

/* b's side: receives a datagram and sends it back to its sender, ROUNDS times. */
static cio_err echo_b(void *ctx)
{
    struct duo *d = *(struct duo **)ctx;
    char buf[32];
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = 0, sent = 0;
        cio_ip_address from;
        cio_err err = cio_socket_receive_from(d->io, &d->b, buf, sizeof buf, &n, &from);
        if (err == CIO_OK)
            err = cio_socket_send_to(d->io, &d->b, &from, buf, n, &sent);
        if (err != CIO_OK)
            return err;
    }
    return CIO_OK;
}

static cio_err ping_a(void *ctx)
{
    struct duo *d = *(struct duo **)ctx;
    for (int r = 0; r < ROUNDS; r++) {
        char msg[32], back[32];
        int len = snprintf(msg, sizeof msg, "ping %d", r);
        size_t n = 0;
        cio_err err = cio_socket_send_to(d->io, &d->a, &d->b.address, msg, (size_t)len, &n);
        if (err == CIO_OK)
            err = cio_socket_receive_from(d->io, &d->a, back, sizeof back, &n, NULL);
        if (err != CIO_OK)
            return err;
        if (n != (size_t)len || memcmp(msg, back, n) != 0)
            return CIO_E_UNEXPECTED;
    }
    return CIO_OK;
}

static void body_ping_pong(void)
{
    cio_evented *e = make(2);
    struct duo d;
    d.io = cio_evented_io(e);
    d.a = bind_local(d.io);
    d.b = bind_local(d.io);
    struct duo *dp = &d;
    cio_future fb, fa;
    int64_t t0 = now_ms();
    assert_ok(cio_concurrent(d.io, echo_b, &dp, sizeof dp, &fb));
    assert_ok(cio_concurrent(d.io, ping_a, &dp, sizeof dp, &fa));
    assert_ok(cio_await(d.io, &fa));
    assert_ok(cio_await(d.io, &fb));
    int64_t ms = now_ms() - t0;
    print_message("      %d round trips in %lld ms (%.1f us each)\n", ROUNDS, (long long)ms,
                  1000.0 * (double)ms / ROUNDS);
    assert_ok(cio_socket_close(d.io, &d.a));
    assert_ok(cio_socket_close(d.io, &d.b));
    cio_evented_destroy(e);
}

static void test_iocp_udp_ping_pong(void **state)
{
    (void)state;
    body_ping_pong(); /* first: what Winsock and Wine make once per process (as test_iocp_net.c's echo) */
    run_counted(body_ping_pong, "ping-pong");
}

/* ---- receive many ----------------------------------------------------------------------------------------- */

#define MANY 10

struct batch {
    cio_io io;
    cio_socket *s;
    cio_message msgs[MANY];
    char bufs[MANY][16];
    size_t count;
};

static void batch_init(struct batch *b, cio_io io, cio_socket *s)
{
    memset(b, 0, sizeof *b);
    b->io = io;
    b->s = s;
    for (int i = 0; i < MANY; i++) {
        b->msgs[i].buf = b->bufs[i];
        b->msgs[i].cap = sizeof b->bufs[i];
    }
}

static cio_err receive_batch(void *ctx)
{
    struct batch *b = *(struct batch **)ctx;
    return cio_socket_receive_batch(b->io, b->s, b->msgs, MANY, CIO_TIMEOUT_NONE, &b->count);
}

static void assert_msg(const cio_message *m, int i, const cio_socket *from)
{
    char want[16];
    int len = snprintf(want, sizeof want, "d%d", i);
    assert_int_equal(m->len, (size_t)len);
    assert_memory_equal(m->buf, want, (size_t)len);
    assert_false(m->truncated);
    assert_int_equal(m->from.port, from->address.port);
}

static void body_receive_many(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    cio_socket a = bind_local(io), b = bind_local(io);
    char msg[16];
    /* queued: one batch of 4 (max), then the other 6 */
    for (int i = 0; i < MANY; i++) {
        snprintf(msg, sizeof msg, "d%d", i);
        send_str(io, &a, &b, msg);
    }
    Sleep(20);
    cio_message m[MANY];
    char bufs[MANY][16];
    for (int i = 0; i < MANY; i++) {
        m[i].buf = bufs[i];
        m[i].cap = sizeof bufs[i];
    }
    size_t count = 0;
    assert_ok(cio_socket_receive_batch(io, &b, m, 4, CIO_TIMEOUT_NONE, &count));
    assert_int_equal(count, 4);
    for (int i = 0; i < 4; i++)
        assert_msg(&m[i], i, &a);
    assert_ok(cio_socket_receive_batch(io, &b, m, MANY, cio_timeout_ms(1000), &count));
    assert_int_equal(count, MANY - 4);
    for (int i = 0; i < MANY - 4; i++)
        assert_msg(&m[i], i + 4, &a);
    /* waited for: the first wakes the receive, the ones behind it (already queued) come along */
    struct batch bt;
    batch_init(&bt, io, &b);
    struct batch *bp = &bt;
    cio_future f;
    assert_ok(cio_concurrent(io, receive_batch, &bp, sizeof bp, &f));
    Sleep(50); /* the receive waits on the port */
    size_t got = 0;
    int next = 0;
    for (int i = 0; i < MANY; i++) {
        snprintf(msg, sizeof msg, "d%d", i);
        send_str(io, &a, &b, msg);
    }
    assert_ok(cio_await(io, &f));
    assert_true(bt.count >= 1 && bt.count <= MANY);
    for (size_t i = 0; i < bt.count; i++)
        assert_msg(&bt.msgs[i], next++, &a);
    got = bt.count;
    while (got < MANY) {
        assert_ok(cio_socket_receive_batch(io, &b, m, MANY, cio_timeout_ms(1000), &count));
        for (size_t i = 0; i < count; i++)
            assert_msg(&m[i], next++, &a);
        got += count;
    }
    assert_int_equal(got, MANY);
    print_message("      the waiting receive took %d of %d datagrams in its batch\n", (int)bt.count, MANY);
    assert_ok(cio_socket_close(io, &a));
    assert_ok(cio_socket_close(io, &b));
    cio_evented_destroy(e);
}

static void test_iocp_udp_receive_many(void **state)
{
    (void)state;
    run_counted(body_receive_many, "receive many");
}

/* Datagrams already queued, taken one receive each (the non-blocking try finds every one): the
 * mean per receive is printed. */
#define QUEUED 200

static void body_receive_queued(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    cio_socket a = bind_local(io), b = bind_local(io);
    char msg[16], buf[16];
    for (int i = 0; i < QUEUED; i++) {
        snprintf(msg, sizeof msg, "d%d", i);
        send_str(io, &a, &b, msg);
    }
    Sleep(20);
    int64_t t0 = now_ms();
    for (int i = 0; i < QUEUED; i++) {
        size_t n = 0;
        int len = snprintf(msg, sizeof msg, "d%d", i);
        assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(1000)));
        assert_int_equal(n, (size_t)len);
        assert_memory_equal(buf, msg, n);
    }
    int64_t ms = now_ms() - t0;
    print_message("      %d queued datagrams received one at a time in %lld ms (%.1f us each)\n", QUEUED, (long long)ms,
                  1000.0 * (double)ms / QUEUED);
    assert_ok(cio_socket_close(io, &a));
    assert_ok(cio_socket_close(io, &b));
    cio_evented_destroy(e);
}

static void test_iocp_udp_receive_queued(void **state)
{
    (void)state;
    run_counted(body_receive_queued, "receive queued");
}

/* ---- truncation ------------------------------------------------------------------------------------------- */

struct small {
    cio_io io;
    cio_socket *s;
    char buf[10];
    size_t count;
    cio_message m;
};

static cio_err receive_small(void *ctx)
{
    struct small *x = *(struct small **)ctx;
    x->m.buf = x->buf;
    x->m.cap = sizeof x->buf;
    return cio_socket_receive_batch(x->io, x->s, &x->m, 1, CIO_TIMEOUT_NONE, &x->count);
}

static const char LONG_MSG[] = "0123456789abcdefghijklmnopqrstuvwxyz";

static void assert_truncated(const struct small *x, const cio_socket *from)
{
    assert_int_equal(x->count, 1);
    assert_true(x->m.truncated);
    assert_int_equal(x->m.len, sizeof x->buf);
    assert_memory_equal(x->buf, LONG_MSG, sizeof x->buf);
    assert_int_equal(x->m.from.port, from->address.port);
}

static void body_truncation(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    cio_socket a = bind_local(io), b = bind_local(io);
    struct small x;
    memset(&x, 0, sizeof x);
    x.io = io;
    x.s = &b;
    struct small *xp = &x;
    /* queued before the receive */
    send_str(io, &a, &b, LONG_MSG);
    Sleep(20);
    assert_ok(receive_small(&xp));
    assert_truncated(&x, &a);
    /* arriving while the receive waits on the port */
    memset(&x.buf, 0, sizeof x.buf);
    x.count = 0;
    cio_future f;
    assert_ok(cio_concurrent(io, receive_small, &xp, sizeof xp, &f));
    Sleep(50);
    send_str(io, &a, &b, LONG_MSG);
    assert_ok(cio_await(io, &f));
    assert_truncated(&x, &a);
    /* queued, but the non-blocking try does not see it (it came just after: WSAEWOULDBLOCK
     * injected): the overlapped receive finds it at once, WSAEMSGSIZE, and still waits for its
     * packet (a warning, not an error: the packet follows) */
    memset(&x.buf, 0, sizeof x.buf);
    x.count = 0;
    send_str(io, &a, &b, LONG_MSG);
    Sleep(20);
    assert_int_equal(cio__fault_errno("wsa_recvfrom@iocp_receive_now", WSAEWOULDBLOCK, 0, 1), 1);
    assert_ok(receive_small(&xp));
    unsigned injected = cio__fault_injected("wsa_recvfrom@iocp_receive_now");
    cio__fault_reset();
    assert_int_equal(injected, 1u);
    assert_truncated(&x, &a);
    /* the next datagram is whole */
    char buf[64];
    size_t n = 0;
    send_str(io, &a, &b, "whole");
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(1000)));
    assert_int_equal(n, 5);
    assert_ok(cio_socket_close(io, &a));
    assert_ok(cio_socket_close(io, &b));
    cio_evented_destroy(e);
}

static void test_iocp_udp_truncation(void **state)
{
    (void)state;
    run_counted(body_truncation, "truncation");
}

/* ---- timeout ---------------------------------------------------------------------------------------------- */

static void body_timeout(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    cio_socket a = bind_local(io), b = bind_local(io);
    char buf[16];
    size_t n = 0;
    for (int ms = 0; ms <= 100; ms += 50) {
        int64_t t0 = now_ms();
        assert_err(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(ms)), CIO_E_TIMEOUT);
        int64_t took = now_ms() - t0;
        if (took + 16 < ms) /* GetTickCount64 moves in steps of up to 16 ms */
            fail_msg("a %d ms timeout after %lld ms", ms, (long long)took);
        assert_true(took < ms + 2000);
    }
    /* a zero timeout takes what is queued */
    send_str(io, &a, &b, "now");
    Sleep(20);
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(0)));
    assert_int_equal(n, 3);
    /* a datagram within the timeout */
    send_str(io, &a, &b, "soon");
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(5000)));
    assert_int_equal(n, 4);
    assert_ok(cio_socket_close(io, &a));
    assert_ok(cio_socket_close(io, &b));
    cio_evented_destroy(e);
}

static void test_iocp_udp_timeout(void **state)
{
    (void)state;
    run_counted(body_timeout, "timeout");
}

/* ---- cancel ----------------------------------------------------------------------------------------------- */

static void body_cancel_receive(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    cio_socket a = bind_local(io), b = bind_local(io);
    struct small x;
    memset(&x, 0, sizeof x);
    x.io = io;
    x.s = &b;
    struct small *xp = &x;
    for (int i = 0; i < 10; i++) {
        cio_future f;
        assert_ok(cio_concurrent(io, receive_small, &xp, sizeof xp, &f));
        Sleep(i % 2 ? 20 : 0);
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    }
    /* the socket still works: the next datagram goes to the next receive */
    cio_future f;
    assert_ok(cio_concurrent(io, receive_small, &xp, sizeof xp, &f));
    Sleep(20);
    send_str(io, &a, &b, "after");
    assert_ok(cio_await(io, &f));
    assert_int_equal(x.count, 1);
    assert_int_equal(x.m.len, 5);
    assert_memory_equal(x.buf, "after", 5);
    assert_ok(cio_socket_close(io, &a));
    assert_ok(cio_socket_close(io, &b));
    cio_evented_destroy(e);
}

static void test_iocp_udp_cancel_receive(void **state)
{
    (void)state;
    run_counted(body_cancel_receive, "cancel receive");
}

/* ---- port unreachable ------------------------------------------------------------------------------------- */

/* A datagram from a fresh socket to a closed port, then a receive on it (`waiting`: the receive
 * starts right after the send, before the error can be in). (Under Wine neither an unconnected nor
 * a connected socket hears of the ICMP error: tried, both Timeout on both backends.) */
static cio_err unreachable_on(cio_io io, bool waiting)
{
    cio_socket closed = bind_local(io);
    cio_ip_address to = closed.address;
    assert_ok(cio_socket_close(io, &closed));
    cio_socket a = bind_local(io);
    char buf[16];
    size_t n = 0;
    assert_ok(cio_socket_send_to(io, &a, &to, "x", 1, &n));
    if (!waiting)
        Sleep(50);
    cio_err err = cio_socket_receive_timeout(io, &a, buf, sizeof buf, &n, NULL, cio_timeout_ms(500));
    assert_ok(cio_socket_close(io, &a));
    return err;
}

static cio_err unreachable_threaded; /* what the Threaded backend answered in the last run */

static void body_port_unreachable(void)
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    cio_err threaded = unreachable_on(cio_threaded_io(t), false);
    cio_threaded_destroy(t);
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    cio_err queued = unreachable_on(io, false), waiting = unreachable_on(io, true);
    cio_evented_destroy(e);
    print_message("      Threaded: %s; Evented: %s (queued), %s (waiting)\n", cio_err_name(threaded),
                  cio_err_name(queued), cio_err_name(waiting));
    assert_err(queued, threaded);
    assert_err(waiting, threaded);
    unreachable_threaded = threaded;
}

static void test_iocp_udp_port_unreachable(void **state)
{
    (void)state;
    run_counted(body_port_unreachable, "port unreachable");
    if (unreachable_threaded != CIO_E_PORT_UNREACHABLE) { /* both backends agree, but on no error */
        print_message("      skip: this system reports no ICMP port unreachable to the socket (Threaded: %s); the "
                      "mapping is shown by the fault cases' WSAECONNRESET\n",
                      cio_err_name(unreachable_threaded));
        skip();
    }
}

/* ---- many fibers ------------------------------------------------------------------------------------------ */

#define PAIRS 200

struct many {
    cio_io io;
    cio_socket rx[PAIRS], tx[PAIRS];
};

struct slot {
    struct many *m;
    int i;
};

static cio_err many_receive(void *ctx)
{
    struct slot *sl = (struct slot *)ctx;
    char buf[16], want[16];
    int len = snprintf(want, sizeof want, "p%d", sl->i);
    size_t n = 0;
    cio_ip_address from;
    cio_err err = cio_socket_receive_from(sl->m->io, &sl->m->rx[sl->i], buf, sizeof buf, &n, &from);
    if (err == CIO_OK && (n != (size_t)len || memcmp(buf, want, n) != 0 || from.port != sl->m->tx[sl->i].address.port))
        err = CIO_E_UNEXPECTED;
    return err;
}

static cio_err many_send(void *ctx)
{
    struct slot *sl = (struct slot *)ctx;
    char msg[16];
    int len = snprintf(msg, sizeof msg, "p%d", sl->i);
    size_t n = 0;
    (void)cio_sleep(sl->m->io, cio_timeout_ms(sl->i % 20));
    return cio_socket_send_to(sl->m->io, &sl->m->tx[sl->i], &sl->m->rx[sl->i].address, msg, (size_t)len, &n);
}

static void body_many_fibers(void)
{
    cio_evented *e = make(2);
    static struct many m;
    m.io = cio_evented_io(e);
    for (int i = 0; i < PAIRS; i++) {
        m.rx[i] = bind_local(m.io);
        m.tx[i] = bind_local(m.io);
    }
    static cio_future rf[PAIRS], sf[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        struct slot sl = {&m, i};
        assert_ok(cio_concurrent(m.io, many_receive, &sl, sizeof sl, &rf[i]));
    }
    for (int i = 0; i < PAIRS; i++) {
        struct slot sl = {&m, i};
        assert_ok(cio_concurrent(m.io, many_send, &sl, sizeof sl, &sf[i]));
    }
    int failed = 0;
    cio_err first = CIO_OK;
    for (int i = 0; i < PAIRS; i++) {
        cio_err r = cio_await(m.io, &sf[i]), w = cio_await(m.io, &rf[i]);
        if ((r != CIO_OK || w != CIO_OK) && failed++ == 0)
            first = r != CIO_OK ? r : w;
    }
    for (int i = 0; i < PAIRS; i++) {
        assert_ok(cio_socket_close(m.io, &m.rx[i]));
        assert_ok(cio_socket_close(m.io, &m.tx[i]));
    }
    cio_evented_destroy(e);
    if (failed != 0)
        fail_msg("many fibers: %d of %d pairs failed, the first with %s", failed, PAIRS, cio_err_name(first));
}

static void test_iocp_udp_many_fibers(void **state)
{
    (void)state;
    run_counted(body_many_fibers, "many fibers");
}

/* ---- faults ----------------------------------------------------------------------------------------------- */

enum op { OP_SEND, OP_SEND_WAITED, OP_RECEIVE_QUEUED, OP_RECEIVE_WAITED };

struct fault_case {
    const char *site;
    int code;
    const char *fault;
    enum op op;
    cio_err want;
};

/* OP_SEND_WAITED: the non-blocking send says WSAEWOULDBLOCK first (injected), so the overlapped one
 * runs; OP_RECEIVE_WAITED: nothing is queued, so the receive waits on the port (a datagram follows
 * 50 ms later). */
static const struct fault_case cases[] = {
    {"WSASendTo@iocp_send_now", WSAENETUNREACH, "WSAENETUNREACH", OP_SEND, CIO_E_NETWORK_UNREACHABLE},
    {"WSASendTo@iocp_send_now", WSAEINTR, "WSAEINTR", OP_SEND, CIO_OK},
    {"WSASendTo@iocp_send_now", WSAEWOULDBLOCK, "WSAEWOULDBLOCK", OP_SEND, CIO_OK},
    {"WSASendTo@iocp_send", WSAEMSGSIZE, "WSAEMSGSIZE", OP_SEND_WAITED, CIO_E_MESSAGE_OVERSIZE},
    {"WSAGetOverlappedResult@iocp_udp_result", WSAEHOSTUNREACH, "WSAEHOSTUNREACH", OP_SEND_WAITED,
     CIO_E_HOST_UNREACHABLE},
    {"WSAGetOverlappedResult@iocp_udp_result", WSAECONNRESET, "WSAECONNRESET", OP_RECEIVE_WAITED,
     CIO_E_PORT_UNREACHABLE},
    {"wsa_recvfrom@iocp_receive_now", WSAECONNRESET, "WSAECONNRESET", OP_RECEIVE_QUEUED, CIO_E_PORT_UNREACHABLE},
    {"wsa_recvfrom@iocp_receive_now", WSAENETRESET, "WSAENETRESET", OP_RECEIVE_QUEUED, CIO_E_CONNECTION_RESET_BY_PEER},
    {"wsa_recvfrom@iocp_receive_now", WSAEINTR, "WSAEINTR", OP_RECEIVE_QUEUED, CIO_OK},
    {"WSARecvFrom@iocp_receive", WSAENOBUFS, "WSAENOBUFS", OP_RECEIVE_WAITED, CIO_E_SYSTEM_RESOURCES},
    {"WSARecvFrom@iocp_receive", WSAEINTR, "WSAEINTR", OP_RECEIVE_WAITED, CIO_OK},
    {"CreateIoCompletionPort@iocp_attach", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", OP_RECEIVE_WAITED,
     CIO_E_SYSTEM_RESOURCES},
};

static cio_err send_later(void *ctx)
{
    struct duo *d = *(struct duo **)ctx;
    size_t n = 0;
    (void)cio_sleep(d->io, cio_timeout_ms(50));
    return cio_socket_send_to(d->io, &d->a, &d->b.address, "late", 4, &n);
}

/* Runs c's operation with c's site failing once: c's error (a success: the datagram whole), nothing
 * left open. */
static void run_case(const struct fault_case *c)
{
    cio_evented *e = make(2);
    struct duo d;
    d.io = cio_evented_io(e);
    d.a = bind_local(d.io);
    d.b = bind_local(d.io);
    struct duo *dp = &d;
    char buf[16];
    size_t n = 0;
    cio_err got = CIO_OK;
    cio_future later;
    if (c->op == OP_RECEIVE_QUEUED) {
        send_str(d.io, &d.a, &d.b, "late");
        Sleep(20);
    }
    if (c->op == OP_SEND_WAITED)
        assert_int_equal(cio__fault_errno("WSASendTo@iocp_send_now", WSAEWOULDBLOCK, 0, 1), 1);
    assert_int_equal(cio__fault_errno(c->site, c->code, 0, 1), 1);
    if (c->op == OP_RECEIVE_WAITED)
        assert_ok(cio_concurrent(d.io, send_later, &dp, sizeof dp, &later));
    if (c->op == OP_SEND || c->op == OP_SEND_WAITED) {
        got = cio_socket_send_to(d.io, &d.a, &d.b.address, "late", 4, &n);
        if (got == CIO_OK)
            assert_int_equal(n, 4);
        if (got == CIO_OK) /* it went: b has it */
            assert_ok(cio_socket_receive_timeout(d.io, &d.b, buf, sizeof buf, &n, NULL, cio_timeout_ms(2000)));
    } else
        got = cio_socket_receive_timeout(d.io, &d.b, buf, sizeof buf, &n, NULL, cio_timeout_ms(2000));
    unsigned injected = cio__fault_injected(c->site);
    cio__fault_reset();
    if (c->op == OP_RECEIVE_WAITED)
        assert_ok(cio_await(d.io, &later));
    if (injected != 1)
        fail_msg("%s: %u faults injected, 1 armed", c->site, injected);
    if (got != c->want)
        fail_msg("%s with %s: %s, not %s", c->site, c->fault, cio_err_name(got), cio_err_name(c->want));
    if (got == CIO_OK) {
        assert_int_equal(n, 4);
        assert_memory_equal(buf, "late", 4);
    }
    assert_ok(cio_socket_close(d.io, &d.a));
    assert_ok(cio_socket_close(d.io, &d.b));
    cio_evented_destroy(e);
    covered(c->site, c->fault);
}

static void body_faults(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

static void test_iocp_udp_faults(void **state)
{
    (void)state;
    run_counted(body_faults, "udp faults");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iocp_udp_ping_pong),        cmocka_unit_test(test_iocp_udp_receive_many),
        cmocka_unit_test(test_iocp_udp_receive_queued),   cmocka_unit_test(test_iocp_udp_truncation),
        cmocka_unit_test(test_iocp_udp_timeout),          cmocka_unit_test(test_iocp_udp_cancel_receive),
        cmocka_unit_test(test_iocp_udp_port_unreachable), cmocka_unit_test(test_iocp_udp_many_fibers),
        cmocka_unit_test(test_iocp_udp_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
