/*
 * The Evented backend's descriptors (split from test_evented.c): a descriptor number reused after a
 * canceled wait, sockets cio made and closed behind its back or through the Threaded backend (the
 * epoll flavour keeps their registrations without a system call), and a short read then EOF.
 * Registered per backend; what only Evented does skips on Threaded.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "asserts.h"
#include "evented.h" /* cio__e_self: which fiber a task ran as */
#include "evented_helpers.h"

/* ---- descriptors reused and canceled waits (the readiness pollers keep registrations) ------------- */

typedef struct {
    cio_io io;
    int fd;
    char got;
    size_t n;
} read1_ctx;

static cio_err read1(void *ctx)
{
    read1_ctx *c = *(read1_ctx **)ctx;
    return cio_file_read_streaming(c->io, (cio_file){c->fd}, &c->got, 1, &c->n);
}

/* A blocked read on fd, then a byte written: the read returns it. */
static void blocked_read_gets(cio_io io, int rfd, int wfd, char byte)
{
    read1_ctx c = {io, rfd, 0, 0};
    read1_ctx *cp = &c;
    cio_future f;
    assert_int_equal(cio_concurrent(io, read1, &cp, sizeof cp, &f), CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK); /* let it block */
    assert_int_equal(write(wfd, &byte, 1), 1);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.got, byte);
}

/* A descriptor number closed and handed out again still gets its readiness (a poller that keeps a
 * registration per number must notice the old one is gone), and a canceled wait consumes nothing. */
static void test_reused_descriptor_and_canceled_wait(void **state)
{
    cio_io io = cio_test_io(state);
    int p[2], q[2];
    assert_int_equal(pipe(p), 0);
    blocked_read_gets(io, p[0], p[1], 'a');
    int old = p[0];
    close(p[0]);
    close(p[1]);
    assert_int_equal(pipe(q), 0);
    if (q[0] != old && q[1] != old)
        print_message("      note: the new pipe did not reuse descriptor %d\n", old);
    blocked_read_gets(io, q[0], q[1], 'b');
    /* a read canceled while it waits; then the next byte goes to the next read */
    read1_ctx c = {io, q[0], 0, 0};
    read1_ctx *cp = &c;
    cio_future f;
    assert_int_equal(cio_concurrent(io, read1, &cp, sizeof cp, &f), CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_int_equal(c.n, 0);
    blocked_read_gets(io, q[0], q[1], 'c');
    /* two readers of one pipe at once (one direction waited for twice): both get a byte */
    read1_ctx c1 = {io, q[0], 0, 0}, c2 = {io, q[0], 0, 0};
    read1_ctx *c1p = &c1, *c2p = &c2;
    cio_future f1, f2;
    assert_int_equal(cio_concurrent(io, read1, &c1p, sizeof c1p, &f1), CIO_OK);
    assert_int_equal(cio_concurrent(io, read1, &c2p, sizeof c2p, &f2), CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(write(q[1], "de", 2), 2);
    assert_int_equal(cio_await(io, &f1), CIO_OK);
    assert_int_equal(cio_await(io, &f2), CIO_OK);
    assert_int_equal(c1.n + c2.n, 2);
    assert_true((c1.got == 'd' && c2.got == 'e') || (c1.got == 'e' && c2.got == 'd'));
    close(q[0]);
    close(q[1]);
}

/* ---- sockets cio made (the epoll flavour keeps their registrations without a system call) -------- */

typedef struct {
    cio_io io;
    cio_stream s;
    char buf[64];
    size_t n;
    cio_err err;
    _Atomic(int) done;
    /* short_then_eof: */
    size_t n2;
    cio_err err2;
    double second; /* seconds the read after the short one took */
} sread_ctx;

/* Starts fn (sread or alike) as a task reading s, with r as its context. */
static void sread_start(cio_io io, cio_stream s, sread_ctx *r, cio_task_fn fn, cio_future *f)
{
    memset(r, 0, sizeof *r);
    r->io = io;
    r->s = s;
    assert_int_equal(cio_concurrent(io, fn, &r, sizeof r, f), CIO_OK);
}

static cio_err sread(void *ctx)
{
    sread_ctx *c = *(sread_ctx **)ctx;
    c->err = cio_stream_read(c->io, &c->s, c->buf, sizeof c->buf, &c->n);
    atomic_store(&c->done, 1);
    return CIO_OK;
}

/* A connected pair made through io: *client by connect, *server by accept. */
static void tcp_pair(cio_io io, cio_stream *client, cio_stream *server)
{
    cio_ip_address a;
    assert_int_equal(cio_ip_parse("127.0.0.1", 0, &a), CIO_OK);
    cio_server srv;
    assert_int_equal(cio_net_listen(io, &a, NULL, &srv), CIO_OK);
    assert_int_equal(cio_net_connect(io, &srv.address, NULL, client), CIO_OK);
    assert_int_equal(cio_server_accept(io, &srv, server), CIO_OK);
    cio_server_close(io, &srv);
}

/* An instance with one loop thread (so every fiber shares one poller), or the Threaded one. */
static cio_io one_loop(void **state, cio_evented **own)
{
    cio_evented *e = test_evented(state);
    *own = e != NULL ? evented_like(e) : NULL;
    return *own != NULL ? cio_evented_io(*own) : cio_test_io(state);
}

/* A socket made through the Evented backend and closed through the Threaded backend's slot (or a pipe
 * end through its file close): the number no longer counts as a socket cio made, and its generation
 * moved on (any close through either backend's slots renews it, so a reuse of the number is not
 * trusted as that socket). */
static void test_threaded_close_renews_descriptor_table(void **state)
{
    cio_evented *e = test_evented(state);
    if (e == NULL)
        CIO_SKIP("Threaded keeps no descriptor table");
    cio_threaded *t = NULL;
    assert_int_equal(cio_threaded_create(NULL, &t), CIO_OK);
    cio_io eio = cio_evented_io(e), tio = cio_threaded_io(t);
    cio_ip_address a;
    assert_int_equal(cio_ip_parse("127.0.0.1", 0, &a), CIO_OK);
    cio_server srv;
    assert_int_equal(cio_net_listen(eio, &a, NULL, &srv), CIO_OK);
    int fd = (int)srv.handle;
    uint32_t gen = 0, after = 0;
    assert_true(cio__e_fd_owned(fd, &gen));
    cio_server_close(tio, &srv);
    assert_false(cio__e_fd_owned(fd, &after));
    assert_true(after != gen);
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    (void)cio__e_fd_owned(p[0], &gen);
    cio_file_close(tio, (cio_file){p[0]});
    (void)cio__e_fd_owned(p[0], &after);
    assert_true(after != gen);
    close(p[1]);
    cio_threaded_destroy(t);
}

/* A socket cio made, then closed behind its back with close(2): the number, reused by a pipe cio did
 * not make, still gets its readiness (the epoll flavour verifies a registration it trusted once a
 * wait on it has lasted a while), and the read sees the pipe's byte. */
static void test_made_socket_closed_behind_cio(void **state)
{
    if (test_evented(state) == NULL)
        CIO_SKIP("Threaded keeps no registrations (and its reads of a non-blocking pipe say WouldBlock)");
    cio_evented *own;
    cio_io io = one_loop(state, &own);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    sread_ctx r;
    cio_future f;
    sread_start(io, s, &r, sread, &f);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK); /* it waits: s is registered */
    assert_int_equal(cio_stream_write_all(io, &c, "x", 1), CIO_OK);
    assert_int_equal(cio_await(io, &f), CIO_OK);
    assert_int_equal(r.err, CIO_OK);
    assert_int_equal(r.n, 1);
    int old = s.handle;
    close(s.handle); /* behind cio's back */
    int p[2];
    assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    if (p[0] != old) { /* the pipe's read end takes the socket's number (its ends move up first) */
        int rd = fcntl(p[0], F_DUPFD_CLOEXEC, old + 1), wr = fcntl(p[1], F_DUPFD_CLOEXEC, old + 1);
        assert_true(rd > old && wr > old);
        close(p[0]);
        close(p[1]);
        assert_int_equal(dup3(rd, old, O_CLOEXEC), old);
        close(rd);
        p[0] = old;
        p[1] = wr;
    }
    sread_start(io, (cio_stream){.handle = p[0]}, &r, sread, &f);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(20)), CIO_OK);
    assert_int_equal(write(p[1], "y", 1), 1);
    double t0 = now_s();
    while (!atomic_load(&r.done) && now_s() - t0 < 5.0)
        assert_int_equal(cio_sleep(io, cio_timeout_ms(1)), CIO_OK);
    bool done = atomic_load(&r.done) != 0;
    if (!done)
        (void)cio_cancel(io, &f);
    else
        assert_int_equal(cio_await(io, &f), CIO_OK);
    print_message("      the read on the reused number took %.1f ms after the write\n", (now_s() - t0) * 1e3);
    if (!done)
        fail_msg("a read on a reused descriptor number got no readiness in 5 s");
    assert_int_equal(r.err, CIO_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.buf[0], 'y');
    cio_file_close(io, (cio_file){p[0]}); /* through cio: the number is no longer taken for its socket */
    close(p[1]);
    cio_stream_close(io, &c);
    if (own != NULL)
        cio_evented_destroy(own);
}

typedef struct {
    sread_ctx *r;
    _Atomic(int) spinning;
} spin_ctx;

/* Keeps its loop thread busy for 30 ms (no yield), so that what arrives meanwhile is reported in one
 * epoll_wait. */
static cio_err spin30(void *ctx)
{
    spin_ctx *c = *(spin_ctx **)ctx;
    double t0 = now_s();
    atomic_store(&c->spinning, 1);
    while (now_s() - t0 < 0.030) {
    }
    return CIO_OK;
}

static cio_err short_then_eof(void *ctx)
{
    sread_ctx *c = *(sread_ctx **)ctx;
    c->err = cio_stream_read(c->io, &c->s, c->buf, sizeof c->buf, &c->n);
    double t0 = now_s();
    c->err2 = cio_stream_read(c->io, &c->s, c->buf, sizeof c->buf, &c->n2);
    c->second = now_s() - t0;
    return CIO_OK;
}

/* A read that waits, then the peer's 3 bytes and end of stream reported together (its loop was busy
 * meanwhile): the short read returns the bytes, and the next read returns 0 at once. (An
 * edge-triggered poller reports that hang-up once; a read that waited for another edge after the
 * short read would take until the registration is verified, 10-20 ms.) */
static void test_short_read_then_eof(void **state)
{
    cio_evented *own;
    cio_io io = one_loop(state, &own);
    cio_stream c, s;
    tcp_pair(io, &c, &s);
    sread_ctx r;
    spin_ctx sp;
    memset(&sp, 0, sizeof sp);
    spin_ctx *spp = &sp;
    cio_future fr, fs;
    sread_start(io, s, &r, short_then_eof, &fr);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(10)), CIO_OK); /* it waits */
    assert_int_equal(cio_concurrent(io, spin30, &spp, sizeof spp, &fs), CIO_OK);
    while (!atomic_load(&sp.spinning))
        assert_int_equal(cio_sleep(io, cio_timeout_ms(1)), CIO_OK);
    assert_int_equal(write(c.handle, "abc", 3), 3);
    assert_int_equal(shutdown(c.handle, SHUT_WR), 0);
    assert_int_equal(cio_await(io, &fs), CIO_OK);
    assert_int_equal(cio_await(io, &fr), CIO_OK);
    assert_int_equal(r.err, CIO_OK);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.err2, CIO_OK);
    assert_int_equal(r.n2, 0);
    print_message("      the read after the short one took %.3f ms\n", r.second * 1e3);
    if (cio_test_under_valgrind())
        print_message("      note: under valgrind the time is not checked\n");
    else
        assert_true(r.second < 0.008);
    cio_stream_close(io, &c);
    cio_stream_close(io, &s);
    if (own != NULL)
        cio_evented_destroy(own);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_reused_descriptor_and_canceled_wait),
        CIO_TESTS(test_made_socket_closed_behind_cio),
        CIO_TESTS(test_threaded_close_renews_descriptor_table),
        CIO_TESTS(test_short_read_then_eof),
    };
    return cmocka_run_group_tests_name("evented descriptors", tests, NULL, NULL);
}
