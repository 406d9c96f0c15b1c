/*
 * The Evented backend's sockets on Windows (issue 24): stream reads and writes, accept and connect as
 * overlapped operations on the loops' completion ports (src/evented/net_iocp.c, poll_iocp.c), run
 * under Wine by the suites.
 *
 * What each test shows:
 * - echo_1000: a thousand client fibers each connect to one listener and echo 16 messages through a
 *   server fiber of their own, on two loops, with no thread per connection: the process's thread
 *   count during the run stays that of the loops and the helper pool's first workers.
 * - cancel_read: a read blocked with nothing to read, canceled: Canceled, and the stream still
 *   works (a later read gets the data written after the cancel).
 * - cancel_accept: an accept with no client, canceled: Canceled, and the listener still accepts.
 * - connect_refused / connect_timeout: a closed port is ConnectionRefused; an accept queue that is
 *   full makes no promise under Wine, so the timeout is shown by a timeout of zero.
 * - forward: a socket attached to the port of the thread's own (adopted) loop, written by a fiber
 *   of a loop thread: its completion is forwarded between ports.
 * - write_file_no_packet: cio_net_write_file (TransmitFile on a helper thread) on a socket attached
 *   to a loop's port queues no completion packet there.
 * - timed_on_port: timed reads and a timed accept are the overlapped operations with a deadline, with
 *   no helper thread.
 * - faults: every new call site failing, with the error its map gives and no handle left over.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cio.h"
#include "cio/batch.h"
#include "cio/evented.h"
#include "cio/threaded.h"
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

static cio_server listen_local(cio_io io)
{
    cio_server srv;
    cio_ip_address a = cio_ip4_loopback(0);
    cio_listen_options lo = CIO_LISTEN_DEFAULTS;
    lo.backlog = 1024;
    assert_ok(cio_net_listen(io, &a, &lo, &srv));
    return srv;
}

/* ---- echo ------------------------------------------------------------------------------------------------- */

#define CLIENTS 1000
#define ROUNDS 16

struct echo {
    cio_io io;
    cio_server srv;
    _Atomic(int) done, peak_threads;
};

static cio_err serve_one(void *ctx)
{
    struct echo *x = *(struct echo **)ctx;
    cio_stream s;
    cio_err err = cio_server_accept(x->io, &x->srv, &s);
    if (err != CIO_OK)
        return err;
    char buf[64];
    for (;;) {
        size_t n = 0;
        err = cio_stream_read(x->io, &s, buf, sizeof buf, &n);
        if (err != CIO_OK || n == 0)
            break;
        err = cio_stream_write_all(x->io, &s, buf, n);
        if (err != CIO_OK)
            break;
    }
    (void)cio_stream_close(x->io, &s);
    return err;
}

static cio_err client_one(void *ctx)
{
    struct echo *x = *(struct echo **)ctx;
    cio_stream s;
    cio_err err = cio_net_connect(x->io, &x->srv.address, NULL, &s);
    if (err != CIO_OK)
        return err;
    for (int r = 0; r < ROUNDS && err == CIO_OK; r++) {
        char msg[16], back[16];
        int len = snprintf(msg, sizeof msg, "m%04d-%02d", r * 7 % 10000, r);
        err = cio_stream_write_all(x->io, &s, msg, (size_t)len);
        size_t got = 0;
        while (err == CIO_OK && got < (size_t)len) {
            size_t n = 0;
            err = cio_stream_read(x->io, &s, back + got, (size_t)len - got, &n);
            if (err == CIO_OK && n == 0)
                err = CIO_E_UNEXPECTED;
            got += n;
        }
        if (err == CIO_OK && memcmp(msg, back, (size_t)len) != 0)
            err = CIO_E_UNEXPECTED;
    }
    (void)cio_stream_close(x->io, &s);
    int t = cio_test_count_threads();
    if (t > atomic_load(&x->peak_threads))
        atomic_store(&x->peak_threads, t);
    atomic_fetch_add(&x->done, 1);
    return err;
}

static int echo_clients = CLIENTS;

static void body_echo(void)
{
    int threads_before = cio_test_count_threads();
    cio_evented *e = make(2);
    struct echo x;
    memset(&x, 0, sizeof x);
    x.io = cio_evented_io(e);
    x.srv = listen_local(x.io);
    struct echo *xp = &x;
    static cio_future servers[CLIENTS], clients[CLIENTS];
    for (int i = 0; i < echo_clients; i++)
        assert_ok(cio_concurrent(x.io, serve_one, &xp, sizeof xp, &servers[i]));
    for (int i = 0; i < echo_clients; i++)
        assert_ok(cio_concurrent(x.io, client_one, &xp, sizeof xp, &clients[i]));
    int failed = 0;
    cio_err first = CIO_OK;
    for (int i = 0; i < echo_clients; i++) {
        cio_err err = cio_await(x.io, &clients[i]);
        if (err != CIO_OK && failed++ == 0)
            first = err;
    }
    for (int i = 0; i < echo_clients; i++) {
        cio_err err = cio_await(x.io, &servers[i]);
        if (err != CIO_OK && failed++ == 0)
            first = err;
    }
    assert_ok(cio_server_close(x.io, &x.srv));
    cio_evented_destroy(e);
    if (failed != 0)
        fail_msg("echo: %d of %d tasks failed, the first with %s", failed, 2 * echo_clients, cio_err_name(first));
    assert_int_equal(atomic_load(&x.done), echo_clients);
    print_message("      threads: %d before, at most %d during the echo\n", threads_before,
                  atomic_load(&x.peak_threads));
    /* two loops, the helper pool's (idle) workers and Wine's own: nowhere near one per connection */
    assert_true(atomic_load(&x.peak_threads) < threads_before + 40);
}

static void test_iocp_echo_1000(void **state)
{
    (void)state;
    echo_clients = 8; /* first: what Winsock and Wine make once per process */
    body_echo();
    echo_clients = CLIENTS;
    run_counted(body_echo, "echo");
}

/* ---- cancel ----------------------------------------------------------------------------------------------- */

struct pair {
    cio_io io;
    cio_server srv;
    cio_stream a, b;
};

static cio_err accept_into(void *ctx)
{
    struct pair *p = *(struct pair **)ctx;
    return cio_server_accept(p->io, &p->srv, &p->b);
}

/* A connected pair through a listener (a: connected, b: accepted), the listener kept. */
static void pair_open(cio_io io, struct pair *p)
{
    memset(p, 0, sizeof *p);
    p->io = io;
    p->srv = listen_local(io);
    struct pair *pp = p;
    cio_future f;
    assert_ok(cio_concurrent(io, accept_into, &pp, sizeof pp, &f));
    assert_ok(cio_net_connect(io, &p->srv.address, NULL, &p->a));
    assert_ok(cio_await(io, &f));
}

static void pair_close(struct pair *p)
{
    assert_ok(cio_stream_close(p->io, &p->a));
    assert_ok(cio_stream_close(p->io, &p->b));
    assert_ok(cio_server_close(p->io, &p->srv));
}

struct reader {
    struct pair *p;
    char buf[16];
    size_t n;
};

static cio_err read_b(void *ctx)
{
    struct reader *r = *(struct reader **)ctx;
    return cio_stream_read(r->p->io, &r->p->b, r->buf, sizeof r->buf, &r->n);
}

static void body_cancel_read(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    struct pair p;
    pair_open(io, &p);
    for (int i = 0; i < 10; i++) {
        struct reader r = {&p, {0}, 0};
        struct reader *rp = &r;
        cio_future f;
        assert_ok(cio_concurrent(io, read_b, &rp, sizeof rp, &f));
        Sleep(i % 2 ? 20 : 0);
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    }
    /* the stream still works */
    struct reader r = {&p, {0}, 0};
    struct reader *rp = &r;
    cio_future f;
    assert_ok(cio_concurrent(io, read_b, &rp, sizeof rp, &f));
    assert_ok(cio_stream_write_all(io, &p.a, "after", 5));
    assert_ok(cio_await(io, &f));
    assert_int_equal(r.n, 5);
    assert_memory_equal(r.buf, "after", 5);
    pair_close(&p);
    cio_evented_destroy(e);
}

static void test_iocp_cancel_read(void **state)
{
    (void)state;
    run_counted(body_cancel_read, "cancel read");
}

static void body_cancel_accept(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    struct pair p;
    memset(&p, 0, sizeof p);
    p.io = io;
    p.srv = listen_local(io);
    struct pair *pp = &p;
    for (int i = 0; i < 10; i++) {
        cio_future f;
        assert_ok(cio_concurrent(io, accept_into, &pp, sizeof pp, &f));
        Sleep(i % 2 ? 20 : 0);
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    }
    cio_future f;
    assert_ok(cio_concurrent(io, accept_into, &pp, sizeof pp, &f));
    assert_ok(cio_net_connect(io, &p.srv.address, NULL, &p.a));
    assert_ok(cio_await(io, &f));
    pair_close(&p);
    cio_evented_destroy(e);
}

static void test_iocp_cancel_accept(void **state)
{
    (void)state;
    run_counted(body_cancel_accept, "cancel accept");
}

/* ---- connect ---------------------------------------------------------------------------------------------- */

static void body_connect(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    cio_server srv = listen_local(io);
    cio_ip_address closed = srv.address;
    assert_ok(cio_server_close(io, &srv));
    cio_stream s;
    assert_err(cio_net_connect(io, &closed, NULL, &s), CIO_E_CONNECTION_REFUSED);
    cio_evented_destroy(e);
}

static void test_iocp_connect_refused(void **state)
{
    (void)state;
    run_counted(body_connect, "connect refused");
}

/* ---- forwarding between ports ----------------------------------------------------------------------------- */

static cio_err write_a(void *ctx)
{
    struct pair *p = *(struct pair **)ctx;
    return cio_stream_write_all(p->io, &p->a, "hop", 3);
}

/* The test thread is adopted (a loop of its own) and attaches both sockets to its port; a fiber of
 * a loop thread then writes on one: the packet arrives at the adopted loop's port, which forwards
 * it while the thread awaits. With `post_failures`, the forward's post fails that often first. */
static void forwarded(int post_failures)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    struct pair p;
    pair_open(io, &p);
    char buf[8];
    size_t n = 0;
    assert_ok(cio_stream_write_all(io, &p.b, "x", 1)); /* attaches b and a here, on the thread */
    assert_ok(cio_stream_read(io, &p.a, buf, sizeof buf, &n));
    if (post_failures > 0)
        assert_int_equal(cio__fault_errno("PostQueuedCompletionStatus@iocp_forward", ERROR_NO_SYSTEM_RESOURCES, 0,
                                          post_failures),
                         1);
    struct pair *pp = &p;
    cio_future f;
    assert_ok(cio_concurrent(io, write_a, &pp, sizeof pp, &f));
    assert_ok(cio_await(io, &f));
    assert_ok(cio_stream_read(io, &p.b, buf, sizeof buf, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "hop", 3);
    if (post_failures > 0) {
        unsigned injected = cio__fault_injected("PostQueuedCompletionStatus@iocp_forward");
        cio__fault_reset();
        assert_int_equal(injected, (unsigned)post_failures);
        covered("PostQueuedCompletionStatus@iocp_forward", "ERROR_NO_SYSTEM_RESOURCES");
    }
    pair_close(&p);
    cio_evented_destroy(e);
}

static void body_forward(void)
{
    forwarded(0);
    forwarded(2);
}

static void test_iocp_forward(void **state)
{
    (void)state;
    run_counted(body_forward, "forward");
}

/* ---- a helper thread's overlapped call on an attached socket --------------------------------------------- */

#define FILE_LEN (1u << 20)

unsigned long cio__e_iocp_foreign_packets(void); /* src/evented/poll_iocp.c */

struct sink {
    struct pair *p;
    uint64_t got;
    bool in_order;
};

static cio_err sink_b(void *ctx)
{
    struct sink *k = *(struct sink **)ctx;
    static unsigned char buf[65536];
    for (;;) {
        size_t n = 0;
        cio_err err = cio_stream_read(k->p->io, &k->p->b, buf, sizeof buf, &n);
        if (err != CIO_OK || n == 0)
            return err;
        for (size_t i = 0; i < n; i++)
            k->in_order = k->in_order && buf[i] == (unsigned char)((k->got + i) * 7u);
        k->got += n;
    }
}

/* cio_net_write_file on a socket attached to a loop's port: TransmitFile runs on a helper thread
 * with its OVERLAPPED on that thread's stack, so its completion must queue no packet to the port
 * (net_sendfile_windows.c tags the event). Before that, Wine queued one per transfer, which a loop
 * thread then read through the stale OVERLAPPED. */
static void body_write_file_no_packet(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    struct pair p;
    pair_open(io, &p);
    assert_ok(cio_stream_write_all(io, &p.a, "x", 1)); /* attaches a to a loop's port */
    char one;
    size_t n = 0;
    assert_ok(cio_stream_read(io, &p.b, &one, 1, &n));
    assert_int_equal(n, 1);
    const char *name = "iocp_net_write_file.tmp";
    cio_create_file_options o = CIO_CREATE_FILE_DEFAULTS;
    o.read = true;
    o.truncate = true;
    cio_file f;
    assert_ok(cio_dir_create_file(io, cio_dir_cwd(), name, &o, &f));
    static unsigned char data[FILE_LEN];
    for (size_t i = 0; i < FILE_LEN; i++)
        data[i] = (unsigned char)(i * 7u);
    assert_ok(cio_file_write_all(io, f, data, FILE_LEN));
    unsigned long before = cio__e_iocp_foreign_packets();
    struct sink k = {&p, 0, true};
    struct sink *kp = &k;
    cio_future r;
    assert_ok(cio_concurrent(io, sink_b, &kp, sizeof kp, &r));
    uint64_t sent = 0;
    cio_err err = cio_net_write_file(io, &p.a, f, 0, FILE_LEN, &sent);
    assert_ok(cio_stream_shutdown(io, &p.a, CIO_SHUTDOWN_SEND));
    assert_ok(cio_await(io, &r));
    assert_ok(err);
    assert_int_equal(sent, FILE_LEN);
    assert_int_equal(k.got, FILE_LEN);
    assert_true(k.in_order);
    Sleep(50); /* a stray packet would be dequeued by now */
    unsigned long after = cio__e_iocp_foreign_packets();
    assert_ok(cio_file_close(io, f));
    assert_ok(cio_dir_delete_file(io, cio_dir_cwd(), name));
    pair_close(&p);
    cio_evented_destroy(e);
    if (after != before)
        fail_msg("%lu completion packets that were not cio's reached the loops during write_file", after - before);
}

static void test_iocp_write_file_no_packet(void **state)
{
    (void)state;
    run_counted(body_write_file_no_packet, "write_file");
}

/* ---- timed operations on the port ----------------------------------------------------------------------- */

cio_threaded *cio__e_helper_pool(cio_io io); /* src/evented/io.c */

/* Writes "late" on the pair's first end 200 ms from now. */
static cio_err write_later(void *ctx)
{
    struct pair *p = *(struct pair **)ctx;
    (void)cio_sleep(p->io, cio_timeout_ms(200));
    return cio_stream_write_all(p->io, &p->a, "late", 4);
}

/* cio_stream_read_timeout and a timed accept run as the overlapped operation with the timeout as
 * its deadline, no helper thread involved: nothing there is Timeout after the deadline (and the
 * stream still works), data already there is taken even with a zero timeout, data that comes before
 * the deadline is read. */
static void body_timed_on_port(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    struct pair p;
    pair_open(io, &p);
    cio_threaded_stats before, after;
    cio_threaded_get_stats(cio__e_helper_pool(io), &before);
    char buf[16];
    size_t n = 0;
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_stream_read_timeout(io, &p.b, buf, sizeof buf, &n, cio_timeout_ms(50)), CIO_E_TIMEOUT);
    assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns - t0 >= 50 * 1000000LL);
    assert_int_equal(n, 0);
    assert_ok(cio_stream_write_all(io, &p.a, "ab", 2));
    Sleep(20);
    assert_ok(cio_stream_read_timeout(io, &p.b, buf, sizeof buf, &n, cio_timeout_ms(0)));
    assert_int_equal(n, 2);
    assert_memory_equal(buf, "ab", 2);
    struct pair *pp = &p;
    cio_future w;
    assert_ok(cio_concurrent(io, write_later, &pp, sizeof pp, &w));
    assert_ok(cio_stream_read_timeout(io, &p.b, buf, sizeof buf, &n, cio_timeout_ms(5000)));
    assert_ok(cio_await(io, &w));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "late", 4);
    cio_stream none;
    assert_err(cio_server_accept_timeout(io, &p.srv, &none, cio_timeout_ms(30)), CIO_E_TIMEOUT);
    cio_threaded_get_stats(cio__e_helper_pool(io), &after);
    pair_close(&p);
    cio_evented_destroy(e);
    assert_int_equal(after.tasks_on_workers, before.tasks_on_workers); /* no helper thread took part */
}

static void test_iocp_timed_on_port(void **state)
{
    (void)state;
    run_counted(body_timed_on_port, "timed operations");
}

/* ---- faults ----------------------------------------------------------------------------------------------- */

enum op { OP_READ, OP_WRITE, OP_ACCEPT, OP_CONNECT };

struct fault_case {
    const char *site;
    int code;
    const char *fault;
    enum op op;
    cio_err want;
};

static const struct fault_case cases[] = {
    {"WSARecv@iocp_read", WSAECONNRESET, "WSAECONNRESET", OP_READ, CIO_E_CONNECTION_RESET_BY_PEER},
    {"WSASend@iocp_write", WSAECONNRESET, "WSAECONNRESET", OP_WRITE, CIO_E_CONNECTION_RESET_BY_PEER},
    {"WSAGetOverlappedResult@iocp_result", WSAENETDOWN, "WSAENETDOWN", OP_READ, CIO_E_NETWORK_DOWN},
    {"CreateIoCompletionPort@iocp_attach", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", OP_READ,
     CIO_E_SYSTEM_RESOURCES},
    {"WSASocketW@iocp_socket", WSAEMFILE, "WSAEMFILE", OP_ACCEPT, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
    {"wsa_ioctl@iocp_extension", WSAENOBUFS, "WSAENOBUFS", OP_CONNECT, CIO_E_SYSTEM_RESOURCES},
    {"wsa_setsockopt@iocp_context", WSAENOBUFS, "WSAENOBUFS", OP_ACCEPT, CIO_E_SYSTEM_RESOURCES},
    {"ioctlsocket@iocp_nonblocking", WSAENOBUFS, "WSAENOBUFS", OP_CONNECT, CIO_E_SYSTEM_RESOURCES},
    {"AcceptEx@iocp_accept", WSAENOBUFS, "WSAENOBUFS", OP_ACCEPT, CIO_E_SYSTEM_RESOURCES},
    {"wsa_getsockname@iocp_accept_family", WSAENETDOWN, "WSAENETDOWN", OP_ACCEPT, CIO_E_NETWORK_DOWN},
    {"wsa_getpeername@iocp_accept_peer", WSAENOBUFS, "WSAENOBUFS", OP_ACCEPT, CIO_E_SYSTEM_RESOURCES},
    {"ConnectEx@iocp_connect", WSAECONNREFUSED, "WSAECONNREFUSED", OP_CONNECT, CIO_E_CONNECTION_REFUSED},
    {"wsa_bind@iocp_connect_bind", WSAENOBUFS, "WSAENOBUFS", OP_CONNECT, CIO_E_SYSTEM_RESOURCES},
};

/* Runs c's operation on a fiber with c's site failing once: c's error, nothing left open. */
static void run_case(const struct fault_case *c)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    struct pair p;
    pair_open(io, &p);
    char buf[8];
    size_t n = 0;
    cio_err got = CIO_OK;
    cio_stream client;
    memset(&client, 0, sizeof client);
    if (c->op == OP_READ)
        assert_ok(cio_stream_write_all(io, &p.a, "r", 1)); /* data waiting: the read is not blocked */
    if (c->op == OP_ACCEPT) /* connected (in the listener's queue) before the site fails */
        assert_ok(cio_net_connect(io, &p.srv.address, NULL, &client));
    assert_int_equal(cio__fault_errno(c->site, c->code, 0, 1), 1);
    switch (c->op) {
    case OP_READ: got = cio_stream_read(io, &p.b, buf, sizeof buf, &n); break;
    case OP_WRITE: got = cio_stream_write(io, &p.b, "w", 1, &n); break;
    case OP_ACCEPT: {
        cio_stream extra;
        memset(&extra, 0, sizeof extra);
        got = cio_server_accept(io, &p.srv, &extra);
        if (got == CIO_OK)
            assert_ok(cio_stream_close(io, &extra));
        assert_ok(cio_stream_close(io, &client));
        break;
    }
    case OP_CONNECT: {
        cio_stream s;
        got = cio_net_connect(io, &p.srv.address, NULL, &s);
        if (got == CIO_OK)
            assert_ok(cio_stream_close(io, &s));
        break;
    }
    }
    unsigned injected = cio__fault_injected(c->site);
    cio__fault_reset();
    if (injected != 1)
        fail_msg("%s: %u faults injected, 1 armed", c->site, injected);
    if (got != c->want)
        fail_msg("%s with %s: %s, not %s", c->site, c->fault, cio_err_name(got), cio_err_name(c->want));
    pair_close(&p);
    cio_evented_destroy(e);
    covered(c->site, c->fault);
}

static void body_faults(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

static void test_iocp_net_faults(void **state)
{
    (void)state;
    run_counted(body_faults, "net faults");
}

/* An accept whose socket cannot be settled closes it, even when that close reports a failure (the
 * injector closes first: spec `after`); a cancel whose CancelIoEx fails leaves the read to end by
 * itself (here: with the data written after it). */
static cio_err read_then(void *ctx)
{
    struct reader *r = *(struct reader **)ctx;
    return cio_stream_read(r->p->io, &r->p->b, r->buf, sizeof r->buf, &r->n);
}

static void body_faults_undo_cancel(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    struct pair p;
    pair_open(io, &p);
    struct pair *pp = &p;
    /* closesocket@iocp_undo */
    assert_int_equal(cio__fault_errno("wsa_bind@iocp_connect_bind", WSAENOBUFS, 0, 1), 1);
    assert_int_equal(cio__fault_errno("closesocket@iocp_undo", WSAENETDOWN, 0, 1), 1);
    cio_stream s;
    assert_err(cio_net_connect(io, &p.srv.address, NULL, &s), CIO_E_SYSTEM_RESOURCES);
    unsigned injected = cio__fault_injected("closesocket@iocp_undo");
    cio__fault_reset();
    assert_int_equal(injected, 1u);
    covered("closesocket@iocp_undo", "WSAENETDOWN");
    /* CancelIoEx@iocp_cancel */
    struct reader r = {&p, {0}, 0};
    struct reader *rp = &r;
    cio_future f, w;
    assert_ok(cio_concurrent(io, read_then, &rp, sizeof rp, &f));
    Sleep(30);
    assert_int_equal(cio__fault_errno("CancelIoEx@iocp_cancel", ERROR_NOT_FOUND, 0, 1), 1);
    assert_ok(cio_concurrent(io, write_later, &pp, sizeof pp, &w));
    cio_err got = cio_cancel(io, &f);
    injected = cio__fault_injected("CancelIoEx@iocp_cancel");
    cio__fault_reset();
    assert_ok(cio_await(io, &w));
    assert_int_equal(injected, 1u);
    assert_ok(got);
    assert_int_equal(r.n, 4);
    assert_memory_equal(r.buf, "late", 4);
    covered("CancelIoEx@iocp_cancel", "ERROR_NOT_FOUND");
    pair_close(&p);
    cio_evented_destroy(e);
}

static void test_iocp_net_faults_undo_cancel(void **state)
{
    (void)state;
    run_counted(body_faults_undo_cancel, "undo and cancel faults");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iocp_echo_1000),     cmocka_unit_test(test_iocp_cancel_read),
        cmocka_unit_test(test_iocp_cancel_accept), cmocka_unit_test(test_iocp_connect_refused),
        cmocka_unit_test(test_iocp_forward),       cmocka_unit_test(test_iocp_write_file_no_packet),
        cmocka_unit_test(test_iocp_net_faults),    cmocka_unit_test(test_iocp_net_faults_undo_cancel),
        cmocka_unit_test(test_iocp_timed_on_port),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
