/*
 * Sockets (cio/net.h) on every backend, over loopback only (127.0.0.1, ::1, Unix sockets): Zig's
 * Io/net/test.zig socket tests (11-13, 15-20) plus TCP echo, cancel of a blocked accept, read,
 * connect and receive, connect timeout and refusal, BrokenPipe without SIGPIPE, UDP batches, Unix
 * paths and abstract names, AddressInUse, and descriptor leaks (/proc/self/fd counted before and
 * after). The address tests (pure library code) are test_net_addr.c. A backend without networking
 * (NetworkDown, e.g. WASI) skips every test here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "zero_write.h"
#include "null_arg.h"
#include "os_helpers.h"
#if defined(CIO_OS_WINDOWS)
#include <winsock2.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

#include "asserts.h"

/* ---- socket helpers --------------------------------------------------------------------------------- */

/* Open descriptors (sockets included) of this process; -1 where they cannot be counted. */
static int count_fds(void)
{
    return cio_test_count_handles();
}

#if defined(CIO_OS_WINDOWS)
/* Wine's ntdll exports wine_get_version; Windows' does not. */
static bool running_under_wine(void)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}
#endif

/* Whether AF_UNIX sockets exist here: on Windows only since 10 1803, and not under Wine 8, where
 * socket(AF_UNIX) fails with WSAEAFNOSUPPORT and every cio Unix call must say
 * CIO_E_ADDRESS_FAMILY_UNSUPPORTED. Asked of Winsock directly, not of cio. */
static bool have_af_unix(void)
{
#if defined(CIO_OS_WINDOWS)
    WSADATA data;
    if (WSAStartup(MAKEWORD(2, 2), &data) != 0)
        return false;
    SOCKET s = socket(AF_UNIX, SOCK_STREAM, 0);
    bool ok = s != INVALID_SOCKET;
    if (ok)
        closesocket(s);
    else
        assert_int_equal(WSAGetLastError(), WSAEAFNOSUPPORT);
    WSACleanup();
    return ok;
#else
    return true;
#endif
}

/* Where AF_UNIX is missing, listen and connect fail with exactly AddressFamilyUnsupported and
 * leave nothing open; returns true when it checked that (the caller's round trip cannot run). */
static bool unix_unsupported_checked(cio_io io, const cio_unix_address *addr)
{
    if (have_af_unix())
        return false;
    int fds = count_fds();
    cio_server srv;
    cio_stream s;
    cio_err err = cio_unix_listen(io, addr, NULL, &srv);
    if (err != CIO_E_ADDRESS_FAMILY_UNSUPPORTED)
        fail_msg("listen without AF_UNIX: got %s, want AddressFamilyUnsupported", cio_err_name(err));
    err = cio_unix_connect(io, addr, &s);
    if (err != CIO_E_ADDRESS_FAMILY_UNSUPPORTED)
        fail_msg("connect without AF_UNIX: got %s, want AddressFamilyUnsupported", cio_err_name(err));
    assert_int_equal(count_fds(), fds);
    print_message("      no AF_UNIX here: listen and connect are AddressFamilyUnsupported\n");
    return true;
}

static int64_t now_ms(cio_io io)
{
    return cio_now(io, CIO_CLOCK_AWAKE).ns / 1000000;
}

/* A listener on loopback port 0, or a skip when the family has no loopback here. */
static void listen_loopback(cio_io io, cio_ip_family family, const cio_listen_options *opts, cio_server *out)
{
    cio_ip_address a = family == CIO_IP6 ? cio_ip6_loopback(0) : cio_ip4_loopback(0);
    cio_err err = cio_net_listen(io, &a, opts, out);
    if (err == CIO_E_NETWORK_DOWN)
        skip(); /* a backend or target without networking */
    if (family == CIO_IP6 && (err == CIO_E_ADDRESS_UNAVAILABLE || err == CIO_E_ADDRESS_FAMILY_UNSUPPORTED))
        skip(); /* no ::1 on this machine (Zig: "some CI builders have no IPv6 localhost") */
    assert_ok(err);
    assert_int_equal(out->address.family, family);
    assert_int_not_equal(out->address.port, 0);
}

/* A connected pair over 127.0.0.1: client and the accepted server side. */
static void tcp_pair(cio_io io, cio_stream *client, cio_stream *server)
{
    cio_server srv;
    listen_loopback(io, CIO_IP4, NULL, &srv);
    assert_ok(cio_net_connect(io, &srv.address, NULL, client));
    assert_ok(cio_server_accept(io, &srv, server));
    cio_server_close(io, &srv);
}

typedef struct echo_ctx {
    cio_io io;
    cio_server server;
    cio_ip_address *peer; /* the accepted client's address */
} echo_ctx;

/* Accepts one connection and echoes it until the client shuts down its side. */
static cio_err echo_task(void *context)
{
    echo_ctx *c = (echo_ctx *)context;
    cio_stream s;
    cio_err err = cio_server_accept(c->io, &c->server, &s);
    if (err != CIO_OK)
        return err;
    *c->peer = s.peer;
    for (;;) {
        char buf[64];
        size_t n = 0;
        err = cio_stream_read(c->io, &s, buf, sizeof buf, &n);
        if (err != CIO_OK || n == 0)
            break;
        err = cio_stream_write_all(c->io, &s, buf, n);
        if (err != CIO_OK)
            break;
    }
    cio_stream_close(c->io, &s);
    return err;
}

static void read_exactly(cio_io io, const cio_stream *s, char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t n = 0;
        assert_ok(cio_stream_read(io, s, buf + done, len - done, &n));
        assert_int_not_equal(n, 0);
        done += n;
    }
}

static void tcp_echo(void **state, cio_ip_family family)
{
    cio_io io = cio_test_io(state);
    int fds = count_fds();
    cio_server srv;
    listen_loopback(io, family, NULL, &srv);
    cio_ip_address peer;
    memset(&peer, 0, sizeof peer);
    echo_ctx ctx = {io, srv, &peer};
    cio_future f;
    cio_err err = cio_concurrent(io, echo_task, &ctx, sizeof ctx, &f);
    if (err != CIO_OK)
        cio_server_close(io, &srv);
    CIO_REQUIRE_CONCURRENT(err);

    cio_stream c;
    assert_ok(cio_net_connect(io, &srv.address, NULL, &c));
    assert_true(cio_ip_equal(&c.peer, &srv.address));
    assert_ok(cio_stream_write_all(io, &c, "Hello world!", 12)); /* Zig test 11 */
    char buf[16];
    read_exactly(io, &c, buf, 12);
    assert_memory_equal(buf, "Hello world!", 12);
    /* vectored both ways */
    cio_const_iovec out[3] = {{"ab", 2}, {"", 0}, {"cdef", 4}};
    size_t n = 0;
    assert_ok(cio_stream_write_v(io, &c, out, 3, &n));
    assert_int_equal(n, 6);
    char six[6];
    size_t got = 0;
    while (got < 6) { /* two iovecs over six[0..2) and six[2..6), minus what arrived already */
        size_t split = got < 2 ? 2 : got;
        cio_iovec in[2] = {{six + got, split - got}, {six + split, 6 - split}};
        assert_ok(cio_stream_read_v(io, &c, in, 2, &n));
        assert_int_not_equal(n, 0);
        got += n;
    }
    assert_memory_equal(six, "abcdef", 6);
    /* half-close: the server sees the end, echoes nothing more and closes; we see the end too */
    assert_ok(cio_stream_shutdown(io, &c, CIO_SHUTDOWN_SEND));
    assert_ok(cio_stream_read(io, &c, buf, sizeof buf, &n));
    assert_int_equal(n, 0);
    assert_ok(cio_await(io, &f));
    assert_int_equal(peer.family, family);
    assert_int_not_equal(peer.port, 0);
    cio_stream_close(io, &c);
    cio_server_close(io, &srv);
    assert_int_equal(count_fds(), fds);
}

static void test_tcp_echo_ip4(void **state)
{
    tcp_echo(state, CIO_IP4);
}

static void test_tcp_echo_ip6(void **state)
{
    tcp_echo(state, CIO_IP6);
}

/* Two listeners on one port: AddressInUse; with reuse_port on both, Zig's test 12 (both succeed). */
/* cio_stream_write_all over a sink that takes nothing (tests/zero_write.h wraps the backend's
 * net_write): one 0-byte write is retried and the peer reads every byte; a sink that keeps taking 0
 * bytes is CIO_E_UNEXPECTED after the second such write, as is one that claims more than it got. */
static void test_write_all_zero_writes(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    assert_ok(cio_stream_write_all(zero_write_io(io, 1, false), &c, "hello", 5));
    assert_int_equal(zero_write.calls, 2);
    char buf[5];
    read_exactly(io, &s, buf, 5);
    assert_memory_equal(buf, "hello", 5);
    assert_err(cio_stream_write_all(zero_write_io(io, UINT32_MAX, false), &c, "abc", 3), CIO_E_UNEXPECTED);
    assert_int_equal(zero_write.calls, 2);
    assert_err(cio_stream_write_all(zero_write_io(io, 0, true), &c, "abc", 3), CIO_E_UNEXPECTED);
    assert_int_equal(zero_write.calls, 1);
    cio_stream_close(io, &c);
    cio_stream_close(io, &s);
}

static void test_listen_in_use(void **state)
{
    cio_io io = cio_test_io(state);
    cio_server a, b;
    listen_loopback(io, CIO_IP4, NULL, &a);
    assert_err(cio_net_listen(io, &a.address, NULL, &b), CIO_E_ADDRESS_IN_USE);
    cio_listen_options plain = {.backlog = 0};
    assert_err(cio_net_listen(io, &a.address, &plain, &b), CIO_E_ADDRESS_IN_USE);
    cio_server_close(io, &a);

    cio_listen_options shared = CIO_LISTEN_DEFAULTS;
    shared.reuse_port = true;
    listen_loopback(io, CIO_IP4, &shared, &a);
#if defined(CIO_OS_WINDOWS)
    if (running_under_wine()) {
        /* Wine 8 turns Windows' SO_REUSEADDR into Linux's, which lets no second socket listen on
         * the port: the bind is refused (WSAEACCES). */
        assert_err(cio_net_listen(io, &a.address, &shared, &b), CIO_E_ACCESS_DENIED);
        cio_server_close(io, &a);
        CIO_SKIP("Wine 8 cannot bind two listeners to one port (SO_REUSEADDR is Linux's there)");
    }
#endif
    assert_ok(cio_net_listen(io, &a.address, &shared, &b));
    assert_int_equal(b.address.port, a.address.port);
    cio_server_close(io, &b);
    cio_server_close(io, &a);
}

/* ---- cancellation --------------------------------------------------------------------------------------- */

typedef struct blocked_ctx {
    cio_io io;
    cio_handle handle;
    cio_ip_address address;
    int kind; /* 0 accept, 1 read, 2 connect (no timeout), 3 UDP receive, 4 UDP receive with timeout */
} blocked_ctx;

static cio_err blocked_task(void *context)
{
    blocked_ctx *c = (blocked_ctx *)context;
    cio_err err;
    char buf[8];
    size_t n = 0;
    switch (c->kind) {
    case 0: {
        cio_server s = {c->handle, c->address};
        cio_stream out;
        err = cio_server_accept(c->io, &s, &out);
        if (err == CIO_OK)
            cio_stream_close(c->io, &out);
        break;
    }
    case 1: {
        cio_stream s = {c->handle, c->address};
        err = cio_stream_read(c->io, &s, buf, sizeof buf, &n);
        break;
    }
    case 2: {
        cio_stream out;
        err = cio_net_connect(c->io, &c->address, NULL, &out);
        if (err == CIO_OK)
            cio_stream_close(c->io, &out);
        break;
    }
    default: {
        cio_socket s = {c->handle, c->address};
        cio_timeout t = c->kind == 4 ? cio_timeout_ms(100000) : CIO_TIMEOUT_NONE;
        err = cio_socket_receive_timeout(c->io, &s, buf, sizeof buf, &n, NULL, t);
        break;
    }
    }
    return err == CIO_OK ? CIO_E_UNEXPECTED : err; /* it was not blocked */
}

/* Starts the blocked task, sleeps 20 ms, cancels: Canceled within a second. */
static void cancel_blocked(cio_io io, blocked_ctx *ctx)
{
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, blocked_task, ctx, sizeof *ctx, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
    int64_t t0 = now_ms(io);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_in_range(now_ms(io) - t0, 0, 1000);
}

/* Zig test 15, with the brief's timing. */
static void test_cancel_accept(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = count_fds();
    cio_server srv;
    listen_loopback(io, CIO_IP4, NULL, &srv);
    blocked_ctx ctx = {io, srv.handle, srv.address, 0};
    cancel_blocked(io, &ctx);
    /* the listener still works */
    cio_stream c, s;
    assert_ok(cio_net_connect(io, &srv.address, NULL, &c));
    assert_ok(cio_server_accept(io, &srv, &s));
    cio_stream_close(io, &s);
    cio_stream_close(io, &c);
    cio_server_close(io, &srv);
    assert_int_equal(count_fds(), fds);
}

static void test_cancel_read(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    blocked_ctx ctx = {io, s.handle, s.peer, 1};
    cancel_blocked(io, &ctx);
    /* the stream is intact: data written now is read */
    assert_ok(cio_stream_write_all(io, &c, "x", 1));
    char b;
    size_t n = 0;
    assert_ok(cio_stream_read(io, &s, &b, 1, &n));
    assert_int_equal(n, 1);
    assert_int_equal(b, 'x');
    cio_stream_close(io, &s);
    cio_stream_close(io, &c);
}

/* ---- connect: refused, timeout, canceled ------------------------------------------------------------- */

/* A loopback port nothing listens on: bound by a listener just closed. */
static cio_ip_address closed_port(cio_io io)
{
    cio_server srv;
    listen_loopback(io, CIO_IP4, NULL, &srv);
    cio_ip_address a = srv.address;
    cio_server_close(io, &srv);
    return a;
}

static void test_connect_refused(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = count_fds();
    cio_ip_address a = closed_port(io);
    cio_stream s;
    assert_err(cio_net_connect(io, &a, NULL, &s), CIO_E_CONNECTION_REFUSED);
    cio_connect_options opts = {.timeout = cio_timeout_ms(5000)};
    assert_err(cio_net_connect(io, &a, &opts, &s), CIO_E_CONNECTION_REFUSED);
    assert_int_equal(count_fds(), fds);
}

/*
 * A listener with backlog 1 that never accepts: once its accept queue is full the kernel drops
 * further SYNs, so a connect with a timeout times out (Zig panics on a connect timeout). Every
 * attempt is OK (queued) or Timeout; at least one must be Timeout. A 0 ms timeout is also
 * exercised on a fresh listener, where either answer is right.
 */
static void test_connect_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = count_fds();
    cio_listen_options opts = {.backlog = 1, .reuse_address = true};
    cio_server srv;
    listen_loopback(io, CIO_IP4, &opts, &srv);

    cio_stream zero;
    cio_connect_options now = {.timeout = cio_timeout_ms(0)};
    cio_err err = cio_net_connect(io, &srv.address, &now, &zero);
    if (err != CIO_OK && err != CIO_E_TIMEOUT)
        fail_msg("0 ms connect: %s", cio_err_name(err));
    size_t n = 0;
    cio_stream queued[16];
    if (err == CIO_OK)
        queued[n++] = zero;

    cio_connect_options brief = {.timeout = cio_timeout_ms(100)};
    bool timed_out = false;
    while (n < 16 && !timed_out) {
        int64_t t0 = now_ms(io);
        err = cio_net_connect(io, &srv.address, &brief, &queued[n]);
        if (err == CIO_OK) {
            n++;
        } else if (err == CIO_E_TIMEOUT) {
            int64_t took = now_ms(io) - t0;
            assert_in_range(took, 90, 2000);
            timed_out = true;
        } else {
            fail_msg("connect: %s", cio_err_name(err));
        }
    }
    assert_true(timed_out);

    /* and with the queue still full, a connect without a timeout is canceled promptly */
    blocked_ctx ctx = {io, (cio_handle)(intptr_t)-1, srv.address, 2};
    cancel_blocked(io, &ctx);

    for (size_t i = 0; i < n; i++)
        cio_stream_close(io, &queued[i]);
    cio_server_close(io, &srv);
    assert_int_equal(count_fds(), fds);
}

/* ---- SIGPIPE and shutdown ----------------------------------------------------------------------------- */

/* A write to a closed peer: EPIPE on POSIX; Winsock has no EPIPE and says WSAECONNRESET or
 * WSAECONNABORTED, both ConnectionResetByPeer (spec/errmaps.yaml, wsa_send). */
#if defined(CIO_OS_WINDOWS)
#define PEER_GONE CIO_E_CONNECTION_RESET_BY_PEER
#else
#define PEER_GONE CIO_E_BROKEN_PIPE
#endif

static void test_write_to_closed_peer(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    cio_stream_close(io, &s); /* nothing unread: a FIN, then a RST for what we send */
    static const char chunk[4096] = {0};
    cio_err err = CIO_OK;
    for (int i = 0; i < 1000 && err == CIO_OK; i++) {
        err = cio_stream_write_all(io, &c, chunk, sizeof chunk);
        if (err == CIO_OK)
            (void)cio_sleep(io, cio_timeout_ms(1)); /* let the RST arrive */
    }
    assert_err(err, PEER_GONE); /* and the process is still here: no SIGPIPE */
    size_t n = 0;
    assert_err(cio_stream_write(io, &c, "x", 1, &n), PEER_GONE);
    cio_stream_close(io, &c);
}

static void test_shutdown(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    assert_ok(cio_stream_shutdown(io, &c, CIO_SHUTDOWN_SEND));
    char b;
    size_t n = 1;
    assert_ok(cio_stream_read(io, &s, &b, 1, &n));
    assert_int_equal(n, 0); /* the end */
    /* the other direction still works */
    assert_ok(cio_stream_write_all(io, &s, "y", 1));
    assert_ok(cio_stream_read(io, &c, &b, 1, &n));
    assert_int_equal(n, 1);
    assert_ok(cio_stream_shutdown(io, &c, CIO_SHUTDOWN_BOTH));
    assert_err(cio_stream_shutdown(io, &c, (cio_shutdown_how)7), CIO_E_INVALID_ARGUMENT);
    cio_stream_close(io, &s);
    cio_stream_close(io, &c);
}

/* ---- UDP ---------------------------------------------------------------------------------------------- */

static void udp_pair(cio_io io, cio_socket *a, cio_socket *b)
{
    cio_ip_address any = cio_ip4_loopback(0);
    cio_err err = cio_net_bind(io, &any, NULL, a);
    if (err == CIO_E_NETWORK_DOWN)
        skip();
    assert_ok(err);
    assert_ok(cio_net_bind(io, &any, NULL, b));
    assert_int_not_equal(a->address.port, 0);
    assert_int_not_equal(b->address.port, 0);
}

/* Zig test 16 (and 18: two sends, two receives of "123"). */
static void test_udp_send_receive(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket a, b;
    udp_pair(io, &a, &b);
    size_t sent = 0;
    assert_ok(cio_socket_send_to(io, &a, &b.address, "123", 3, &sent));
    assert_int_equal(sent, 3);
    char buf[4];
    size_t n = 0;
    cio_ip_address from;
    assert_ok(cio_socket_receive_from(io, &b, buf, sizeof buf, &n, &from));
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "123", 3);
    assert_true(cio_ip_equal(&from, &a.address));

    cio_const_iovec v[2] = {{"12", 2}, {"3", 1}};
    assert_ok(cio_socket_send_to_v(io, &a, &b.address, v, 2, &sent));
    assert_ok(cio_socket_send_to(io, &a, &b.address, "123", 3, NULL));
    for (int i = 0; i < 2; i++) {
        assert_ok(cio_socket_receive_from(io, &b, buf, sizeof buf, &n, NULL));
        assert_int_equal(n, 3);
        assert_memory_equal(buf, "123", 3);
    }
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

static void test_udp_ip6(void **state)
{
    cio_io io = cio_test_io(state);
    cio_ip_address l6 = cio_ip6_loopback(0);
    cio_bind_options opts = {.ip6_only = true};
    cio_socket a, b;
    cio_err err = cio_net_bind(io, &l6, &opts, &a);
    if (err == CIO_E_NETWORK_DOWN || err == CIO_E_ADDRESS_UNAVAILABLE || err == CIO_E_ADDRESS_FAMILY_UNSUPPORTED)
        skip();
    assert_ok(err);
    assert_ok(cio_net_bind(io, &l6, NULL, &b));
    assert_int_equal(b.address.family, CIO_IP6);
    assert_ok(cio_socket_send_to(io, &a, &b.address, "six", 3, NULL));
    char buf[8];
    size_t n = 0;
    cio_ip_address from;
    assert_ok(cio_socket_receive_from(io, &b, buf, sizeof buf, &n, &from));
    assert_int_equal(n, 3);
    assert_true(cio_ip_equal(&from, &a.address));
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

/* Zig test 17: long timeouts succeed, 123 us on an empty socket is Timeout. */
static void test_udp_receive_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket a, b;
    udp_pair(io, &a, &b);
    assert_ok(cio_socket_send_to(io, &a, &b.address, "123", 3, NULL));
    char buf[4];
    size_t n = 0;
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(6 * 3600 * 1000)));
    assert_int_equal(n, 3);
    int64_t t0 = now_ms(io);
    assert_err(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ns(123000)), CIO_E_TIMEOUT);
    assert_err(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(50)), CIO_E_TIMEOUT);
    int64_t took = now_ms(io) - t0;
    assert_in_range(took, 50, 2000);
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

/* Three datagrams already queued: one batch with room for 8 returns exactly them, at once (Zig 19:
 * it must not wait for the batch to fill). */
static void test_udp_batch(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket a, b;
    udp_pair(io, &a, &b);
    static const char *const text[3] = {"one", "two!", "three"};
    for (int i = 0; i < 3; i++)
        assert_ok(cio_socket_send_to(io, &a, &b.address, text[i], strlen(text[i]), NULL));
    char bufs[8][8];
    cio_message msgs[8];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < 8; i++) {
        msgs[i].buf = bufs[i];
        msgs[i].cap = sizeof bufs[i];
    }
    size_t count = 0;
    int64_t t0 = now_ms(io);
    assert_ok(cio_socket_receive_batch(io, &b, msgs, 8, cio_timeout_ms(10000), &count));
    assert_in_range(now_ms(io) - t0, 0, 1000);
    assert_int_equal(count, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(msgs[i].len, strlen(text[i]));
        assert_memory_equal(msgs[i].buf, text[i], msgs[i].len);
        assert_false(msgs[i].truncated);
        assert_true(cio_ip_equal(&msgs[i].from, &a.address));
    }
    /* without a timeout too: one queued, room for 2, returns 1 at once */
    assert_ok(cio_socket_send_to(io, &a, &b.address, "123", 3, NULL));
    assert_ok(cio_socket_receive_batch(io, &b, msgs, 2, CIO_TIMEOUT_NONE, &count));
    assert_int_equal(count, 1);
    assert_int_equal(msgs[0].len, 3);
    /* a datagram longer than its buffer is cut and flagged */
    assert_ok(cio_socket_send_to(io, &a, &b.address, "0123456789", 10, NULL));
    assert_ok(cio_socket_receive_batch(io, &b, msgs, 1, CIO_TIMEOUT_NONE, &count));
    assert_int_equal(count, 1);
    assert_int_equal(msgs[0].len, 8);
    assert_true(msgs[0].truncated);
    /* an empty socket: Timeout */
    assert_err(cio_socket_receive_batch(io, &b, msgs, 8, cio_timeout_ms(1), &count), CIO_E_TIMEOUT);
    assert_int_equal(count, 0);
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

typedef struct sender_ctx {
    cio_io io;
    cio_socket from;
    cio_ip_address to;
} sender_ctx;

static cio_err udp_sender(void *context)
{
    sender_ctx *c = (sender_ctx *)context;
    cio_err err = cio_sleep(c->io, cio_timeout_duration(CIO_CLOCK_BOOT, 10000000));
    for (int i = 0; i < 2 && err == CIO_OK; i++)
        err = cio_socket_send_to(c->io, &c->from, &c->to, "abc", 3, NULL);
    if (err == CIO_OK)
        err = cio_sleep(c->io, cio_timeout_duration(CIO_CLOCK_BOOT, 10000000));
    if (err == CIO_OK)
        err = cio_socket_send_to(c->io, &c->from, &c->to, "abc", 3, NULL);
    return err;
}

/* Zig test 20: a sender sleeps, sends two, sleeps, sends one; batches of up to 3 collect all 3. */
static void test_udp_concurrency_and_timeouts(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket a, b;
    udp_pair(io, &a, &b);
    sender_ctx ctx = {io, a, b.address};
    cio_future f = cio_async(io, udp_sender, &ctx, sizeof ctx);
    char bufs[3][3];
    cio_message msgs[3];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < 3; i++) {
        msgs[i].buf = bufs[i];
        msgs[i].cap = 3;
    }
    size_t total = 0;
    for (int round = 0; round < 3 && total < 3; round++) {
        size_t count = 0;
        assert_ok(cio_socket_receive_batch(io, &b, msgs, 3 - total, cio_timeout_ms(5000), &count));
        assert_in_range(count, 1, 3 - total);
        for (size_t i = 0; i < count; i++)
            assert_memory_equal(msgs[i].buf, "abc", 3);
        total += count;
    }
    assert_int_equal(total, 3);
    assert_ok(cio_await(io, &f));
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

static void test_cancel_receive(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket a, b;
    udp_pair(io, &a, &b);
    blocked_ctx plain = {io, b.handle, b.address, 3};
    cancel_blocked(io, &plain);
    blocked_ctx timed = {io, b.handle, b.address, 4};
    cancel_blocked(io, &timed);
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

/* A stream read on a descriptor that is not a socket (a pipe) reads it, as read(2) would: each
 * backend's socket read falls back to the plain read when the socket call says ENOTSOCK. */
static void test_stream_read_on_pipe(void **state)
{
#if defined(CIO_OS_WINDOWS)
    (void)cio_test_io(state);
    CIO_SKIP("a Windows pipe is not a socket handle");
#else
    cio_io io = cio_test_io(state);
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    assert_int_equal(write(fds[1], "pipe", 4), 4);
    cio_stream s;
    memset(&s, 0, sizeof s);
    s.handle = fds[0];
    char buf[8];
    size_t n = 0;
    assert_ok(cio_stream_read(io, &s, buf, sizeof buf, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "pipe", 4);
    close(fds[1]);
    assert_ok(cio_stream_read(io, &s, buf, sizeof buf, &n));
    assert_int_equal(n, 0);
    close(fds[0]);
#endif
}

/* ---- Unix-domain sockets ------------------------------------------------------------------------------- */

typedef struct unix_client_ctx {
    cio_io io;
    cio_unix_address address;
} unix_client_ctx;

static cio_err unix_client(void *context)
{
    unix_client_ctx *c = (unix_client_ctx *)context;
    cio_stream s;
    cio_err err = cio_unix_connect(c->io, &c->address, &s);
    if (err != CIO_OK)
        return err;
    err = cio_stream_write_all(c->io, &s, "Hello world!", 12);
    cio_stream_close(c->io, &s);
    return err;
}

/* Zig test 13: concurrent client sends "Hello world!"; accept + read gets 12 bytes. */
static void unix_round_trip(cio_io io, const cio_unix_address *addr)
{
    cio_server srv;
    cio_err err = cio_unix_listen(io, addr, NULL, &srv);
    assert_ok(err);
    assert_int_equal(srv.address.family, CIO_IP_NONE);
    unix_client_ctx ctx = {io, *addr};
    cio_future f = cio_async(io, unix_client, &ctx, sizeof ctx); /* inline is fine: the backlog holds it */
    cio_stream s;
    assert_ok(cio_server_accept(io, &srv, &s));
    assert_int_equal(s.peer.family, CIO_IP_NONE);
    char buf[16];
    size_t got = 0, n = 1;
    while (n != 0) {
        assert_ok(cio_stream_read(io, &s, buf + got, sizeof buf - got, &n));
        got += n;
    }
    assert_int_equal(got, 12);
    assert_memory_equal(buf, "Hello world!", 12);
    assert_ok(cio_await(io, &f));
    cio_stream_close(io, &s);
    cio_server_close(io, &srv);
}

static void test_unix_path(void **state)
{
    cio_io io = cio_test_io(state);
#if defined(CIO_OS_WASI)
    (void)io;
    skip(); /* no sockets, no mkdtemp */
#else
    int fds = count_fds();
    char dir[300];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-test-net"));
    char path[340];
    snprintf(path, sizeof path, "%s/socket.unix", dir);
    cio_unix_address addr;
    assert_ok(cio_unix_address_from_path(path, &addr));
    if (unix_unsupported_checked(io, &addr)) {
        assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), dir));
        return;
    }
    unix_round_trip(io, &addr);
    /* the file stays after close: a second listen is AddressInUse until it is deleted */
    cio_server srv;
    assert_err(cio_unix_listen(io, &addr, NULL, &srv), CIO_E_ADDRESS_IN_USE);
    cio_stream s;
    assert_err(cio_unix_connect(io, &addr, &s), CIO_E_CONNECTION_REFUSED);
    assert_ok(cio_dir_delete_file(io, cio_dir_cwd(), path));
    assert_err(cio_unix_connect(io, &addr, &s), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), dir));
    assert_int_equal(count_fds(), fds);
#endif
}

static void test_unix_abstract(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = count_fds();
    char name[64];
    unsigned r[2] = {0, 0};
    cio_random(io, r, sizeof r);
    int len = snprintf(name, sizeof name, "%ccio-test-net-%08x%08x", 0, r[0], r[1]);
    cio_unix_address addr;
    assert_ok(cio_unix_address_init(name, (size_t)len, &addr));
    if (unix_unsupported_checked(io, &addr))
        return;
#if defined(CIO_OS_WINDOWS)
    CIO_SKIP("abstract AF_UNIX names are Linux's: Windows has only file system paths");
#endif
    unix_round_trip(io, &addr);
    /* gone with its socket */
    cio_stream s;
    assert_err(cio_unix_connect(io, &addr, &s), CIO_E_CONNECTION_REFUSED);
    /* the length is exact: a name that is a prefix of another is a different name */
    cio_server srv, srv2, srv3;
    assert_ok(cio_unix_listen(io, &addr, NULL, &srv));
    cio_unix_address shorter = addr;
    shorter.len--;
    assert_ok(cio_unix_listen(io, &shorter, NULL, &srv2));
    assert_err(cio_unix_listen(io, &addr, NULL, &srv3), CIO_E_ADDRESS_IN_USE);
    cio_server_close(io, &srv2);
    cio_server_close(io, &srv);
    assert_int_equal(count_fds(), fds);
}

/* ---- descriptors, failing io, bad arguments ------------------------------------------------------------- */

/* Every path that creates a descriptor, success and failure, then the count is back where it was. */
static void test_no_fd_leaks(void **state)
{
    cio_io io = cio_test_io(state);
    int before = count_fds();
    assert_true(before > 0);
    for (int round = 0; round < 3; round++) {
        cio_stream c, s;
        tcp_pair(io, &c, &s);
        cio_stream_close(io, &c);
        cio_stream_close(io, &s);
        cio_ip_address closed = closed_port(io);
        assert_err(cio_net_connect(io, &closed, NULL, &c), CIO_E_CONNECTION_REFUSED);
        cio_server a, b;
        listen_loopback(io, CIO_IP4, NULL, &a);
        assert_err(cio_net_listen(io, &a.address, NULL, &b), CIO_E_ADDRESS_IN_USE);
        cio_socket u;
        assert_ok(cio_net_bind(io, &a.address, NULL, &u)); /* UDP and TCP ports are apart */
        cio_socket u2;
        assert_err(cio_net_bind(io, &u.address, NULL, &u2), CIO_E_ADDRESS_IN_USE);
        cio_socket_close(io, &u);
        cio_server_close(io, &a);
        cio_unix_address missing;
        assert_ok(cio_unix_address_from_path("/nonexistent-dir/cio.sock", &missing));
        cio_err want = have_af_unix() ? CIO_E_FILE_NOT_FOUND : CIO_E_ADDRESS_FAMILY_UNSUPPORTED;
        assert_err(cio_unix_connect(io, &missing, &c), want);
        assert_err(cio_unix_listen(io, &missing, NULL, &a), want);
    }
    assert_int_equal(count_fds(), before);
}

static void test_bad_arguments(void **state)
{
    cio_io io = cio_test_io(state);
    cio_ip_address none;
    memset(&none, 0, sizeof none);
    cio_server srv;
    cio_stream st;
    cio_socket so;
    assert_err(cio_net_listen(io, &none, NULL, &srv), CIO_E_INVALID_ARGUMENT);
    assert_null_arg(cio_net_listen(io, NULL, NULL, &srv));
    assert_err(cio_net_connect(io, &none, NULL, &st), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_net_bind(io, &none, NULL, &so), CIO_E_INVALID_ARGUMENT);
    assert_null_arg(cio_server_accept(io, NULL, &st));
    cio_message m;
    memset(&m, 0, sizeof m);
    size_t n;
    so.handle = (cio_handle)(intptr_t)-1;
    assert_err(cio_socket_receive_batch(io, &so, &m, 0, CIO_TIMEOUT_NONE, &n), CIO_E_INVALID_ARGUMENT);
    m.cap = 4; /* buf NULL */
    assert_err(cio_socket_receive_batch(io, &so, &m, 1, CIO_TIMEOUT_NONE, &n), CIO_E_INVALID_ARGUMENT);
    cio_unix_address u;
    memset(&u, 0, sizeof u);
    assert_err(cio_unix_listen(io, &u, NULL, &srv), CIO_E_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_tcp_echo_ip4),
        CIO_TESTS(test_tcp_echo_ip6),
        CIO_TESTS(test_listen_in_use),
        CIO_TESTS(test_write_all_zero_writes),
        CIO_TESTS(test_cancel_accept),
        CIO_TESTS(test_cancel_read),
        CIO_TESTS(test_connect_refused),
        CIO_TESTS(test_connect_timeout),
        CIO_TESTS(test_write_to_closed_peer),
        CIO_TESTS(test_shutdown),
        CIO_TESTS(test_udp_send_receive),
        CIO_TESTS(test_udp_ip6),
        CIO_TESTS(test_udp_receive_timeout),
        CIO_TESTS(test_udp_batch),
        CIO_TESTS(test_udp_concurrency_and_timeouts),
        CIO_TESTS(test_cancel_receive),
        CIO_TESTS(test_stream_read_on_pipe),
        CIO_TESTS(test_unix_path),
        CIO_TESTS(test_unix_abstract),
        CIO_TESTS(test_no_fd_leaks),
        CIO_TESTS(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
