/*
 * Handles that another Evented instance attached to its completion port (issue 24). A Windows handle
 * belongs to one port for life, so one that an instance used keeps sending its completions there
 * after that instance is destroyed, or while it lives. The iocp flavour knows which handles it
 * attached (src/evented/poll_iocp.c) and runs the calls on any other handle as Threaded does, on its
 * helper pool: they work, slowly, where they used to wait forever for a packet that went elsewhere.
 *
 * Each test makes an Evented instance of its own (the first user), has it read and write the handles
 * (which attaches them to its port), and then uses them with the test's backend (the second user):
 * - after the first user is destroyed: a stream both ways, a listener's accept, a datagram socket
 *   (with a receive timeout that still ends), a file positionally and streaming;
 * - while the first user lives: the same stream, and the first user still works afterwards (no
 *   packet of the second user's calls reached its port).
 * On the Threaded backend these show that Threaded calls on attached handles were always fine.
 * - the record cannot grow (calloc@iocp_owners fails): the handles it could not record are taken for
 *   another port's, and their calls run on the helper pool and still succeed.
 * A watchdog ends the program with a message if a call waits for more than 60 s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "cio/evented.h"
#include "internal/cio_oscalls_test.h"

#define assert_ok(x) assert_int_equal((int)(x), (int)CIO_OK)
#define assert_err(x, e) assert_int_equal((int)(x), (int)(e))

static volatile LONG watch_armed;
static const char *volatile watch_what;

static DWORD WINAPI watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        LONG seen = watch_armed;
        Sleep(60000);
        if (seen != 0 && seen == watch_armed) {
            fprintf(stderr, "test_iocp_owner: %s waited for more than 60 s (a packet went to another port)\n",
                    watch_what != NULL ? watch_what : "a call");
            fflush(stderr);
            _exit(3);
        }
    }
}

/* Marks the start of a step the watchdog times (each step is new: the counter moves); NULL: none. */
static void step(const char *what)
{
    static LONG n;
    watch_what = what;
    InterlockedExchange(&watch_armed, what != NULL ? ++n : 0);
}

static cio_evented *first_user(void)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = 2;
    cio_evented *e = NULL;
    assert_ok(cio_evented_create(&o, &e));
    return e;
}

struct streams {
    cio_io io; /* who runs the tasks below */
    cio_server srv;
    cio_stream a, b; /* a: the client end, b: the accepted one */
    const cio_stream *w;
    const char *out;
    size_t len;
};

static cio_err accept_task(void *p)
{
    struct streams *s = *(struct streams **)p;
    return cio_server_accept(s->io, &s->srv, &s->b);
}

static cio_err write_task(void *p)
{
    struct streams *s = *(struct streams **)p;
    return cio_stream_write_all(s->io, s->w, s->out, s->len);
}

/* Accepts one client of the listener into s->b while io connects it as *client. */
static void connect_accept(cio_io io, struct streams *s, cio_stream *client)
{
    struct streams *sp = s;
    cio_future f;
    s->io = io;
    assert_ok(cio_concurrent(io, accept_task, &sp, sizeof sp, &f));
    assert_ok(cio_net_connect(io, &s->srv.address, NULL, client));
    assert_ok(cio_await(io, &f));
}

/* A listener and a connected pair made by io, each end written and read once by it. */
static void make_streams(cio_io io, struct streams *s)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_listen(io, &lo, NULL, &s->srv));
    connect_accept(io, s, &s->a);
    char c = 0;
    size_t n = 0;
    assert_ok(cio_stream_write_all(io, &s->a, "x", 1));
    assert_ok(cio_stream_read(io, &s->b, &c, 1, &n));
    assert_ok(cio_stream_write_all(io, &s->b, "y", 1));
    assert_ok(cio_stream_read(io, &s->a, &c, 1, &n));
    assert_int_equal(c, 'y');
}

/* io writes on each end (a task) and reads on the other, 64 KiB each way, then accepts a new client. */
static void use_streams(cio_io io, struct streams *s)
{
    enum { LEN = 65536 };
    char *out = malloc(LEN), *in = malloc(LEN);
    assert_non_null(out);
    assert_non_null(in);
    for (int i = 0; i < LEN; i++)
        out[i] = (char)(i * 7);
    for (int dir = 0; dir < 2; dir++) {
        const cio_stream *r = dir == 0 ? &s->b : &s->a;
        struct streams *sp = s;
        s->io = io;
        s->w = dir == 0 ? &s->a : &s->b;
        s->out = out;
        s->len = LEN;
        step(dir == 0 ? "a stream write and read (client to server)" : "a stream write and read (server to client)");
        cio_future f;
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, write_task, &sp, sizeof sp, &f));
        size_t got = 0;
        while (got < LEN) {
            size_t n = 0;
            assert_ok(cio_stream_read(io, r, in + got, LEN - got, &n));
            assert_true(n > 0);
            got += n;
        }
        assert_ok(cio_await(io, &f));
        assert_memory_equal(in, out, LEN);
    }
    free(out);
    free(in);
    step("an accept on the listener");
    cio_stream accepted = s->b, client;
    connect_accept(io, s, &client);
    assert_ok(cio_stream_close(io, &s->b));
    assert_ok(cio_stream_close(io, &client));
    s->b = accepted;
    step(NULL);
}

static void close_streams(cio_io io, struct streams *s)
{
    assert_ok(cio_stream_close(io, &s->a));
    assert_ok(cio_stream_close(io, &s->b));
    assert_ok(cio_server_close(io, &s->srv));
}

static void test_stream_after_its_first_instance(void **state)
{
    cio_io io = cio_test_io(state);
    cio_evented *e = first_user();
    struct streams s;
    memset(&s, 0, sizeof s);
    make_streams(cio_evented_io(e), &s);
    cio_evented_destroy(e);
    use_streams(io, &s);
    close_streams(io, &s);
}

static void test_stream_beside_its_first_instance(void **state)
{
    cio_io io = cio_test_io(state);
    cio_evented *e = first_user();
    struct streams s;
    memset(&s, 0, sizeof s);
    make_streams(cio_evented_io(e), &s);
    use_streams(io, &s);
    use_streams(cio_evented_io(e), &s); /* the first user still has its port to itself */
    close_streams(cio_evented_io(e), &s);
    cio_evented_destroy(e);
}

static void test_datagrams_after_their_first_instance(void **state)
{
    cio_io io = cio_test_io(state);
    cio_evented *e = first_user();
    cio_io first = cio_evented_io(e);
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_socket a, b;
    assert_ok(cio_net_bind(first, &lo, NULL, &a));
    assert_ok(cio_net_bind(first, &lo, NULL, &b));
    char buf[64];
    size_t n = 0;
    /* a receive that waits (overlapped: attaches b) and one that times out (attaches a) */
    assert_err(cio_socket_receive_timeout(first, &a, buf, sizeof buf, &n, NULL, cio_timeout_ms(20)), CIO_E_TIMEOUT);
    assert_ok(cio_socket_send_to(first, &a, &b.address, "one", 3, &n));
    assert_ok(cio_socket_receive_timeout(first, &b, buf, sizeof buf, &n, NULL, cio_timeout_ms(5000)));
    cio_evented_destroy(e);

    step("a receive that times out");
    assert_err(cio_socket_receive_timeout(io, &a, buf, sizeof buf, &n, NULL, cio_timeout_ms(50)), CIO_E_TIMEOUT);
    step("a datagram each way");
    assert_ok(cio_socket_send_to(io, &a, &b.address, "two", 3, &n));
    cio_ip_address from;
    assert_ok(cio_socket_receive_timeout(io, &b, buf, sizeof buf, &n, &from, cio_timeout_ms(5000)));
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "two", 3);
    assert_ok(cio_socket_send_to(io, &b, &from, "three", 5, &n));
    assert_ok(cio_socket_receive_timeout(io, &a, buf, sizeof buf, &n, NULL, cio_timeout_ms(5000)));
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "three", 5);
    step(NULL);
    assert_ok(cio_socket_close(io, &a));
    assert_ok(cio_socket_close(io, &b));
}

static void test_file_after_its_first_instance(void **state)
{
    cio_io io = cio_test_io(state);
    cio_evented *e = first_user();
    cio_io first = cio_evented_io(e);
    char name[64];
    snprintf(name, sizeof name, "iocp_owner_%lu.tmp", (unsigned long)GetCurrentProcessId());
    cio_file f;
    cio_create_file_options o = CIO_CREATE_FILE_DEFAULTS;
    o.read = true;
    assert_ok(cio_dir_create_file(first, cio_dir_cwd(), name, &o, &f));
    size_t n = 0;
    assert_ok(cio_file_write_positional(first, f, "0123456789", 10, 0, &n)); /* attaches f */
    cio_evented_destroy(e);

    step("a positional read and write");
    char buf[16];
    assert_ok(cio_file_read_positional(io, f, buf, 4, 3, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "3456", 4);
    assert_ok(cio_file_write_positional(io, f, "ab", 2, 10, &n));
    step("streaming reads and writes from the stored position");
    assert_ok(cio_file_seek_to(io, f, 8));
    assert_ok(cio_file_read_streaming(io, f, buf, 2, &n));
    assert_int_equal(n, 2);
    assert_memory_equal(buf, "89", 2);
    assert_ok(cio_file_write_all(io, f, "cd", 2)); /* at 10, over "ab" */
    uint64_t pos = 0;
    assert_ok(cio_file_position(io, f, &pos));
    assert_int_equal(pos, 12);
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 0, &n));
    assert_int_equal(n, 12);
    assert_memory_equal(buf, "0123456789cd", 12);
    step(NULL);
    assert_ok(cio_file_close(io, f));
    assert_ok(cio_dir_delete_file(io, cio_dir_cwd(), name));
}

/* Sockets attached while the record of owners cannot grow: each still receives. */
static void test_owner_record_cannot_grow(void **state)
{
    (void)state;
    enum { MAX = 300 };
    cio_evented *e = first_user();
    cio_io io = cio_evented_io(e);
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_socket *s = calloc(MAX, sizeof *s);
    assert_non_null(s);
    char buf[8];
    size_t n = 0, made = 0;
    assert_int_equal(cio__fault_errno("calloc@iocp_owners", ENOMEM, 0, -1), 1);
    step("receives that attach their sockets");
    while (made < MAX && (made < 40 || cio__fault_injected("calloc@iocp_owners") == 0)) {
        assert_ok(cio_net_bind(io, &lo, NULL, &s[made]));
        assert_err(cio_socket_receive_timeout(io, &s[made], buf, sizeof buf, &n, NULL, cio_timeout_ms(1)),
                   CIO_E_TIMEOUT);
        made++;
    }
    unsigned injected = cio__fault_injected("calloc@iocp_owners");
    print_message("      %u sockets attached, %u failed growths of the record\n", (unsigned)made, injected);
    assert_true(injected > 0);
    step("a datagram to each");
    for (size_t i = 0; i < made; i++) {
        assert_ok(cio_socket_send_to(io, &s[i], &s[i].address, "ok", 2, &n));
        assert_ok(cio_socket_receive_timeout(io, &s[i], buf, sizeof buf, &n, NULL, cio_timeout_ms(5000)));
        assert_int_equal(n, 2);
    }
    cio__fault_reset();
    step(NULL);
    for (size_t i = 0; i < made; i++)
        assert_ok(cio_socket_close(io, &s[i]));
    free(s);
    cio_evented_destroy(e);
    print_message("fault-covered: calloc@iocp_owners ENOMEM\n");
}

int main(void)
{
    HANDLE w = CreateThread(NULL, 0, watchdog, NULL, 0, NULL);
    if (w != NULL)
        CloseHandle(w);
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_stream_after_its_first_instance),      CIO_TESTS(test_stream_beside_its_first_instance),
        CIO_TESTS(test_datagrams_after_their_first_instance), CIO_TESTS(test_file_after_its_first_instance),
        cmocka_unit_test(test_owner_record_cannot_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
