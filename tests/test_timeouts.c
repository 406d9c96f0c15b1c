/*
 * Timeouts on the stream calls (cio/batch.h: the *_timeout variants and cio_operate_timeout), on
 * every backend: each fires within SLACK_MS (10 ms) of its deadline — best of five tries, so a
 * wake-up a loaded machine delays does not fail it, a timeout late every time does — and leaves its
 * handle usable with nothing lost: stream read (and with eight timed reads waiting at once while
 * eight other connections echo: under load), stream write (a full socket: the timed-out write
 * wrote nothing, the peer reads exactly what the earlier ones reported), read_all (the bytes that
 * came are kept and counted), write_all (*nwritten is exactly what the peer then reads), accept,
 * datagram receive (cio_socket_receive_timeout and the operation), datagram send (it completes in
 * time: a UDP send has nothing to wait for), and a streaming file read on a pipe. A backend without
 * networking (NetworkDown: WASI) skips the socket tests; where no task can be had for the wait
 * (ConcurrencyUnavailable) a test skips.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp (os_helpers.h) */
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
#include "os_helpers.h"

#include "asserts.h"
#include "stream_helpers.h"

/* A timeout fires within this of its deadline: 10 ms; under valgrind 250 ms (its run checks memory,
 * not timing: it runs one thread at a time, and checks the whole buffer a sendmsg is given, megabytes
 * for write_all's, before the kernel takes part of it: 70-100 ms late seen there). */
#define SLACK_MS (cio_test_under_valgrind() ? 250 : 10)

/* ---- timeouts on stream calls ------------------------------------------------------------------ */

/* Runs `attempt` (which returns its elapsed ms, having checked its Timeout) up to 5 times: it must
 * take at least `ms`, and at least one run must end within SLACK_MS of the deadline (a loaded
 * machine may delay any one wake-up: Wine under a load average of 7 on 2 cores was seen late three
 * times running, by 21 ms at best; a timeout that fires late every time fails). */
#define CHECK_DEADLINE(ms, attempt)                                                                \
    do {                                                                                           \
        int64_t best_ = INT64_MAX;                                                                 \
        for (int try_ = 0; try_ < 5 && best_ > (ms) + SLACK_MS; try_++) {                          \
            int64_t e_ = (attempt);                                                                \
            assert_true(e_ >= (ms));                                                               \
            if (e_ < best_)                                                                        \
                best_ = e_;                                                                        \
        }                                                                                          \
        if (best_ > (ms) + SLACK_MS)                                                               \
            fail_msg("timeout of %d ms fired after %lld ms at best", (int)(ms), (long long)best_); \
        print_message("      deadline %d ms: fired after %lld ms\n", (int)(ms), (long long)best_); \
    } while (0)

static int64_t timed_read(cio_io io, const cio_stream *s, int ms)
{
    char buf[8];
    size_t n = 99;
    int64_t t0 = now_ms(io);
    cio_err err = cio_stream_read_timeout(io, s, buf, sizeof buf, &n, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return -1;
    assert_err(err, CIO_E_TIMEOUT);
    assert_int_equal(n, 0);
    return e;
}

static void test_read_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a, b;
    int fds = cio_test_count_handles();
    socket_pairs(io, &a, &b, 1);
    if (timed_read(io, &b, 1) < 0) {
        close_pairs(io, &a, &b, 1);
        CIO_SKIP("concurrency unavailable");
    }
    CHECK_DEADLINE(50, timed_read(io, &b, 50));
    /* the stream is usable and nothing was lost */
    assert_ok(cio_stream_write_all(io, &a, "after", 5));
    char buf[8];
    size_t n = 0;
    assert_ok(cio_stream_read_timeout(io, &b, buf, sizeof buf, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "after", 5);
    /* data already there: no wait at all; CIO_TIMEOUT_NONE is the plain read */
    assert_ok(cio_stream_write_all(io, &a, "xyz", 3));
    assert_ok(cio_stream_read_timeout(io, &b, buf, sizeof buf, &n, CIO_TIMEOUT_NONE));
    assert_int_equal(n, 3);
    /* an expired timeout is Timeout at once, having consumed nothing */
    assert_ok(cio_stream_write_all(io, &a, "q", 1));
    cio_err err = cio_stream_read_timeout(io, &b, buf, sizeof buf, &n, cio_timeout_ms(0));
    if (err == CIO_OK) {
        assert_int_equal(n, 1); /* the task got to run first: it read the byte */
    } else {
        assert_err(err, CIO_E_TIMEOUT);
        assert_ok(cio_stream_read(io, &b, buf, sizeof buf, &n));
        assert_int_equal(n, 1);
    }
    assert_int_equal(buf[0], 'q');
#if !defined(CIO_OS_WINDOWS)
    /* Where the read has a native timed form (Threaded on POSIX, Evented), an expired timeout still
     * tries once: a byte that is there is taken, even right after a short read, before the loop
     * has seen the new data's edge (epoll's read-first hint; the http_server example's last look). */
    for (int i = 0; i < 3; i++) {
        assert_ok(cio_stream_write_all(io, &a, "r", 1));
        assert_ok(cio_stream_read_timeout(io, &b, buf, sizeof buf, &n, cio_timeout_ms(0)));
        assert_int_equal(n, 1);
        assert_int_equal(buf[0], 'r');
    }
#endif
    close_pairs(io, &a, &b, 1);
    assert_int_equal(cio_test_count_handles(), fds);
}


/* ---- writes -------------------------------------------------------------------------------------- */

#define BIG (32u << 20) /* more than any loopback socket's buffers hold */

static unsigned char *pattern(size_t len)
{
    unsigned char *p = (unsigned char *)malloc(len);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)(i * 7u + (i >> 13));
    return p;
}

/* Reads exactly `want` bytes from s (the peer stopped writing) and checks them against p. */
static void drain_and_check(cio_io io, const cio_stream *s, const unsigned char *p, size_t want)
{
    unsigned char *got = (unsigned char *)malloc(want > 0 ? want : 1);
    assert_non_null(got);
    size_t total = 0;
    while (total < want) {
        size_t n = 0;
        assert_ok(cio_stream_read_timeout(io, s, got + total, want - total, &n, cio_timeout_ms(10000)));
        assert_true(n > 0);
        total += n;
    }
    assert_memory_equal(got, p, want);
    free(got);
}

/* One timed write of the rest of p into a full socket: Timeout, and what it reports (0 on the
 * readiness paths: a write that times out wrote nothing) added to *total. Returns the elapsed ms,
 * or -1 for ConcurrencyUnavailable. */
static int64_t timed_write(cio_io io, const cio_stream *s, const unsigned char *p, size_t *total, int ms)
{
    size_t n = 99;
    int64_t t0 = now_ms(io);
    cio_err err = cio_stream_write_timeout(io, s, p + *total, 1u << 20, &n, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return -1;
    *total += n;
    if (err == CIO_OK)
        return timed_write(io, s, p, total, ms); /* room was left: fill it and time the next one */
    assert_err(err, CIO_E_TIMEOUT);
    return e;
}

/* A peer that does not read: writes fill its buffers, then a timed write times out on time; the
 * peer reads exactly the bytes the writes reported, and the stream then writes again. */
static void test_write_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a, b;
    int fds = cio_test_count_handles();
    socket_pairs(io, &a, &b, 1);
    unsigned char *p = pattern(BIG);
    size_t total = 0;
    if (timed_write(io, &a, p, &total, 1) < 0) {
        free(p);
        close_pairs(io, &a, &b, 1);
        CIO_SKIP("concurrency unavailable");
    }
    CHECK_DEADLINE(50, timed_write(io, &a, p, &total, 50));
    assert_true(total > 0 && total < BIG - (1u << 20));
    drain_and_check(io, &b, p, total);
    size_t n = 0;
    assert_ok(cio_stream_write_timeout(io, &a, "tail", 4, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 4);
    char buf[8];
    assert_ok(cio_stream_read_timeout(io, &b, buf, sizeof buf, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "tail", 4);
    free(p);
    close_pairs(io, &a, &b, 1);
    assert_int_equal(cio_test_count_handles(), fds);
}

/* write_all into a peer that does not read, on a fresh pair: Timeout within the deadline (one for
 * the whole call), with *nwritten exactly what the peer then reads. Returns the elapsed ms. */
static int64_t timed_write_all(cio_io io, int ms)
{
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    unsigned char *p = pattern(BIG);
    size_t wrote = 0;
    int64_t t0 = now_ms(io);
    cio_err err = cio_stream_write_all_timeout(io, &a, p, BIG, &wrote, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        e = -1;
    } else {
        assert_err(err, CIO_E_TIMEOUT);
        assert_true(wrote < BIG);
#if !defined(CIO_OS_WINDOWS)
        assert_true(wrote > 0); /* a native timed write: what fits goes at once */
#else
        /* Windows runs the write as a task (cio/batch.h): a deadline that passes before the task got
         * to start ends it with nothing written, as a loaded Wine run showed at 20 ms */
#endif
        assert_ok(cio_stream_shutdown(io, &a, CIO_SHUTDOWN_SEND));
        drain_and_check(io, &b, p, wrote);
        size_t n = 9;
        char c;
        assert_ok(cio_stream_read_timeout(io, &b, &c, 1, &n, cio_timeout_ms(5000)));
        assert_int_equal(n, 0); /* nothing more than reported */
    }
    free(p);
    close_pairs(io, &a, &b, 1);
    return e;
}

static void test_write_all_timeout_reports_bytes(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = cio_test_count_handles();
    if (timed_write_all(io, 20) < 0)
        CIO_SKIP("concurrency unavailable");
    CHECK_DEADLINE(100, timed_write_all(io, 100));
    assert_int_equal(cio_test_count_handles(), fds);
}

/* Timed read_all calls that had all three bytes in time (timed_read_all). */
static int full_reads;

/* read_all: three bytes come, ten are asked: Timeout on time with the three kept and counted. On a
 * loaded machine under Wine, loopback bytes can take longer than a short deadline to arrive: then
 * fewer are counted (never more), and the rest is still there, read after — nothing lost. */
static int64_t timed_read_all(cio_io io, const cio_stream *a, const cio_stream *b, int ms)
{
    assert_ok(cio_stream_write_all(io, a, "abc", 3));
    char buf[16];
    size_t n = 0;
    int64_t t0 = now_ms(io);
    cio_err err = cio_stream_read_all_timeout(io, b, buf, 10, &n, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return -1;
    assert_err(err, CIO_E_TIMEOUT);
    assert_true(n <= 3);
    if (n == 3) {
        full_reads++;
    } else {
        print_message("      %u of 3 bytes had arrived by the %d ms deadline\n", (unsigned)n, ms);
        size_t m = 0;
        assert_ok(cio_stream_read_all_timeout(io, b, buf + n, 3 - n, &m, cio_timeout_ms(5000)));
        assert_int_equal(m, 3 - n);
    }
    assert_memory_equal(buf, "abc", 3);
    return e;
}

static void test_read_all_timeout_keeps_bytes(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    if (timed_read_all(io, &a, &b, 1) < 0) {
        close_pairs(io, &a, &b, 1);
        CIO_SKIP("concurrency unavailable");
    }
    full_reads = 0;
    CHECK_DEADLINE(50, timed_read_all(io, &a, &b, 50));
    for (int i = 0; i < 5 && full_reads == 0; i++) /* the bytes were late every time: again */
        (void)timed_read_all(io, &a, &b, 50);
    assert_true(full_reads > 0); /* a 50 ms read counted all three */
    char buf[16];
    size_t n = 0;
    /* the rest comes later: a full read */
    assert_ok(cio_stream_write_all(io, &a, "defghij", 7));
    assert_ok(cio_stream_read_all_timeout(io, &b, buf, 7, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 7);
    assert_memory_equal(buf, "defghij", 7);
    /* the peer's end: fewer bytes, no error */
    assert_ok(cio_stream_write_all(io, &a, "zz", 2));
    assert_ok(cio_stream_shutdown(io, &a, CIO_SHUTDOWN_SEND));
    assert_ok(cio_stream_read_all_timeout(io, &b, buf, 10, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 2);
    close_pairs(io, &a, &b, 1);
}

static int64_t timed_accept(cio_io io, const cio_server *srv, int ms)
{
    cio_stream s;
    int64_t t0 = now_ms(io);
    cio_err err = cio_server_accept_timeout(io, srv, &s, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return -1;
    assert_err(err, CIO_E_TIMEOUT);
    return e;
}

static void test_accept_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = cio_test_count_handles();
    cio_server srv;
    listen_loopback_n(io, 4, &srv);
    if (timed_accept(io, &srv, 1) < 0) {
        cio_server_close(io, &srv);
        CIO_SKIP("concurrency unavailable");
    }
    CHECK_DEADLINE(50, timed_accept(io, &srv, 50));
    /* the listener is usable: a connection is accepted in time */
    cio_stream c, s;
    assert_ok(cio_net_connect(io, &srv.address, NULL, &c));
    assert_ok(cio_server_accept_timeout(io, &srv, &s, cio_timeout_ms(5000)));
    assert_ok(cio_stream_write_all(io, &c, "hi", 2));
    char buf[4];
    size_t n = 0;
    assert_ok(cio_stream_read_timeout(io, &s, buf, sizeof buf, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 2);
    cio_stream_close(io, &c);
    cio_stream_close(io, &s);
    cio_server_close(io, &srv);
    assert_int_equal(cio_test_count_handles(), fds);
}


/* ---- datagrams ------------------------------------------------------------------------------------ */

static void bind_pair(cio_io io, cio_socket *a, cio_socket *b)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_err err = cio_net_bind(io, &lo, NULL, a);
    if (err == CIO_E_NETWORK_DOWN)
        CIO_SKIP("no networking on this backend or target");
    assert_ok(err);
    assert_ok(cio_net_bind(io, &lo, NULL, b));
}

static int64_t timed_receive(cio_io io, const cio_socket *s, int ms)
{
    char buf[16];
    size_t n = 99;
    int64_t t0 = now_ms(io);
    cio_err err = cio_socket_receive_timeout(io, s, buf, sizeof buf, &n, NULL, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    assert_err(err, CIO_E_TIMEOUT);
    assert_int_equal(n, 0);
    return e;
}

/* The same receive as an operation through cio_operate_timeout: the outer Timeout. */
static int64_t timed_receive_op(cio_io io, const cio_socket *s, int ms)
{
    char buf[16];
    cio_message m = {buf, sizeof buf, 0, {0}, false};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_RECEIVE;
    op.u.net_receive.socket = s->handle;
    op.u.net_receive.msgs = &m;
    op.u.net_receive.max = 1;
    int64_t t0 = now_ms(io);
    cio_err err = cio_operate_timeout(io, &op, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return -1;
    assert_err(err, CIO_E_TIMEOUT);
    assert_int_equal(op.count, 0);
    return e;
}

static void test_receive_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = cio_test_count_handles();
    cio_socket a, b;
    bind_pair(io, &a, &b);
    CHECK_DEADLINE(50, timed_receive(io, &b, 50));
    if (timed_receive_op(io, &b, 1) >= 0)
        CHECK_DEADLINE(50, timed_receive_op(io, &b, 50));
    /* usable, nothing lost: the next datagram arrives whole */
    assert_ok(cio_socket_send_to(io, &a, &b.address, "dgram", 5, NULL));
    char buf[16];
    size_t n = 0;
    cio_ip_address from;
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, &from, cio_timeout_ms(5000)));
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "dgram", 5);
    assert_true(cio_ip_equal(&from, &a.address));
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
    assert_int_equal(cio_test_count_handles(), fds);
}

/* A datagram send with a timeout: nothing to wait for on loopback, so it completes in time, whole;
 * as an operation too. The receiver gets both. */
static void test_send_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket a, b;
    bind_pair(io, &a, &b);
    size_t n = 0;
    int64_t t0 = now_ms(io);
    cio_err err = cio_socket_send_to_timeout(io, &a, &b.address, "first", 5, &n, cio_timeout_ms(5000));
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_socket_close(io, &a);
        cio_socket_close(io, &b);
        CIO_SKIP("concurrency unavailable");
    }
    assert_ok(err);
    assert_int_equal(n, 5);
    assert_true(now_ms(io) - t0 < 2000);
    cio_const_iovec iov = {"second", 6};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_SEND;
    op.u.net_send.socket = a.handle;
    op.u.net_send.dest = &b.address;
    op.u.net_send.iov = &iov;
    op.u.net_send.iovcnt = 1;
    assert_ok(cio_operate_timeout(io, &op, cio_timeout_ms(5000)));
    assert_ok(op.err);
    assert_int_equal(op.count, 6);
    char buf[16];
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(5000)));
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "first", 5);
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(5000)));
    assert_int_equal(n, 6);
    assert_memory_equal(buf, "second", 6);
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

/* ---- under load ------------------------------------------------------------------------------------ */

#define WAITERS 8
#define ECHOERS 8

typedef struct waiter_ctx {
    cio_io io;
    const cio_stream *s;
    int ms;
    int64_t *elapsed;
} waiter_ctx;

static cio_err waiter(void *context)
{
    waiter_ctx *c = (waiter_ctx *)context;
    char buf[8];
    size_t n = 0;
    int64_t t0 = now_ms(c->io);
    cio_err err = cio_stream_read_timeout(c->io, c->s, buf, sizeof buf, &n, cio_timeout_ms(c->ms));
    *c->elapsed = err == CIO_E_TIMEOUT && n == 0 ? now_ms(c->io) - t0 : -1;
    return CIO_OK;
}

typedef struct echo_ctx {
    cio_io io;
    const cio_stream *s;
} echo_ctx;

static cio_err echoer(void *context)
{
    echo_ctx *c = (echo_ctx *)context;
    char buf[64];
    for (;;) {
        size_t n = 0;
        if (cio_stream_read(c->io, c->s, buf, sizeof buf, &n) != CIO_OK || n == 0)
            return CIO_OK;
        if (cio_stream_write_all(c->io, c->s, buf, n) != CIO_OK)
            return CIO_OK;
    }
}

/* WAITERS timed reads of `ms` on idle streams wait at once while the caller keeps ECHOERS other
 * connections busy (round trips through echo tasks). Returns the latest waiter's elapsed ms. */
static int64_t timed_reads_under_load(cio_io io, cio_stream *idle, cio_stream *busy_c, int ms)
{
    int64_t elapsed[WAITERS];
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < WAITERS; i++) {
        waiter_ctx c = {io, &idle[i], ms, &elapsed[i]};
        assert_ok(cio_group_concurrent(io, &g, waiter, &c, sizeof c));
    }
    int64_t t0 = now_ms(io);
    while (now_ms(io) - t0 < ms + 2 * SLACK_MS) {
        for (int i = 0; i < ECHOERS; i++) {
            char buf[64];
            memset(buf, 'a' + i, sizeof buf);
            assert_ok(cio_stream_write_all(io, &busy_c[i], buf, sizeof buf));
            size_t n = 0;
            assert_ok(cio_stream_read_all_timeout(io, &busy_c[i], buf, sizeof buf, &n, cio_timeout_ms(10000)));
            assert_int_equal(n, sizeof buf);
            assert_int_equal(buf[63], 'a' + i);
        }
    }
    assert_ok(cio_group_await(io, &g));
    int64_t latest = 0;
    for (int i = 0; i < WAITERS; i++) {
        assert_true(elapsed[i] >= 0); /* Timeout, nothing read */
        if (elapsed[i] > latest)
            latest = elapsed[i];
    }
    return latest;
}

static void test_read_timeouts_under_load(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = cio_test_count_handles();
    cio_stream ia[WAITERS], ib[WAITERS], ba[ECHOERS], bb[ECHOERS];
    socket_pairs(io, ia, ib, WAITERS);
    socket_pairs(io, ba, bb, ECHOERS);
    if (timed_read(io, &ib[0], 1) < 0) {
        close_pairs(io, ia, ib, WAITERS);
        close_pairs(io, ba, bb, ECHOERS);
        CIO_SKIP("concurrency unavailable");
    }
    cio_group echoes = CIO_GROUP_INIT;
    for (int i = 0; i < ECHOERS; i++) {
        echo_ctx c = {io, &bb[i]};
        cio_err err = cio_group_concurrent(io, &echoes, echoer, &c, sizeof c);
        if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
            cio_group_cancel(io, &echoes);
            close_pairs(io, ia, ib, WAITERS);
            close_pairs(io, ba, bb, ECHOERS);
            CIO_SKIP("concurrency unavailable");
        }
        assert_ok(err);
    }
    CHECK_DEADLINE(50, timed_reads_under_load(io, ib, ba, 50));
    /* every waited-on stream is usable and lost nothing */
    for (int i = 0; i < WAITERS; i++) {
        char msg[8] = {'w', (char)('0' + i)};
        assert_ok(cio_stream_write_all(io, &ia[i], msg, 2));
        size_t n = 0;
        assert_ok(cio_stream_read_all_timeout(io, &ib[i], msg + 2, 2, &n, cio_timeout_ms(5000)));
        assert_int_equal(n, 2);
        assert_int_equal(msg[3], '0' + i);
    }
    for (int i = 0; i < ECHOERS; i++)
        assert_ok(cio_stream_shutdown(io, &ba[i], CIO_SHUTDOWN_SEND)); /* the echo tasks see the end */
    assert_ok(cio_group_await(io, &echoes));
    close_pairs(io, ia, ib, WAITERS);
    close_pairs(io, ba, bb, ECHOERS);
    assert_int_equal(cio_test_count_handles(), fds);
}

/* ---- pipes ------------------------------------------------------------------------------------- */

static int64_t timed_pipe_read(cio_io io, cio_file r, int ms)
{
    char buf[8];
    size_t n = 99;
    int64_t t0 = now_ms(io);
    cio_err err = cio_file_read_streaming_timeout(io, r, buf, sizeof buf, &n, cio_timeout_ms(ms));
    int64_t e = now_ms(io) - t0;
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return -1;
    assert_err(err, CIO_E_TIMEOUT);
    assert_int_equal(n, 0);
    return e;
}

static void test_pipe_read_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    cio_file r, w;
    if (!make_pipe(&r, &w))
        CIO_SKIP("no pipes on this target");
    if (timed_pipe_read(io, r, 1) < 0) {
        cio_file_close(io, r);
        cio_file_close(io, w);
        CIO_SKIP("concurrency unavailable");
    }
    CHECK_DEADLINE(50, timed_pipe_read(io, r, 50));
    size_t n = 0;
    assert_ok(cio_file_write_streaming_timeout(io, w, "pipe", 4, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 4);
    char buf[8];
    assert_ok(cio_file_read_streaming_timeout(io, r, buf, sizeof buf, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "pipe", 4);
    cio_file_close(io, w);
    assert_ok(cio_file_read_streaming_timeout(io, r, buf, sizeof buf, &n, cio_timeout_ms(5000)));
    assert_int_equal(n, 0); /* the end */
    cio_file_close(io, r);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_read_timeout),
        CIO_TESTS(test_read_timeouts_under_load),
        CIO_TESTS(test_write_timeout),
        CIO_TESTS(test_read_all_timeout_keeps_bytes),
        CIO_TESTS(test_write_all_timeout_reports_bytes),
        CIO_TESTS(test_accept_timeout),
        CIO_TESTS(test_receive_timeout),
        CIO_TESTS(test_send_timeout),
        CIO_TESTS(test_pipe_read_timeout),
    };
    return cmocka_run_group_tests_name("timeouts", tests, NULL, NULL);
}
