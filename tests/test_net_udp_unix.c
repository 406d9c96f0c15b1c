/*
 * Sockets (cio/net.h) on every backend, datagrams and local sockets over loopback only: UDP
 * send/receive on 127.0.0.1 and ::1, receive timeouts, batches, concurrent senders, cancel of a
 * blocked receive, a stream read on a pipe, and Unix-domain sockets (paths and abstract names, or
 * the exact errors where AF_UNIX is missing). TCP is test_net.c. A backend without networking
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_udp_send_receive),
        CIO_TESTS(test_udp_ip6),
        CIO_TESTS(test_udp_receive_timeout),
        CIO_TESTS(test_udp_batch),
        CIO_TESTS(test_udp_concurrency_and_timeouts),
        CIO_TESTS(test_cancel_receive),
        CIO_TESTS(test_stream_read_on_pipe),
        CIO_TESTS(test_unix_path),
        CIO_TESTS(test_unix_abstract),
    };
    return cmocka_run_group_tests_name("net_udp_unix", tests, NULL, NULL);
}
