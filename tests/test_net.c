/*
 * Sockets (cio/net.h) on every backend, TCP over loopback only (127.0.0.1, ::1): Zig's
 * Io/net/test.zig socket tests (11-13, 15-20) plus TCP echo, cancel of a blocked accept and read,
 * connect timeout and refusal, BrokenPipe without SIGPIPE, shutdown, AddressInUse, and descriptor
 * leaks (/proc/self/fd counted before and after). UDP and Unix-domain sockets are
 * test_net_udp_unix.c; the address tests (pure library code) are test_net_addr.c. A backend without
 * networking (NetworkDown, e.g. WASI) skips every test here.
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
#include "net_helpers.h"

/* ---- socket helpers --------------------------------------------------------------------------------- */

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
        CIO_TESTS(test_tcp_echo_ip4),         CIO_TESTS(test_tcp_echo_ip6),
        CIO_TESTS(test_listen_in_use),        CIO_TESTS(test_write_all_zero_writes),
        CIO_TESTS(test_cancel_accept),        CIO_TESTS(test_cancel_read),
        CIO_TESTS(test_connect_refused),      CIO_TESTS(test_connect_timeout),
        CIO_TESTS(test_write_to_closed_peer), CIO_TESTS(test_shutdown),
        CIO_TESTS(test_no_fd_leaks),          CIO_TESTS(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
