/*
 * An idle-timeout line server: every connection is a task that reads lines with
 * cio_stream_read_timeout and answers each with "echo: <line>"; a connection that sends nothing for
 * --idle-ms (default 200) is closed. The timeout is per read, so a client that keeps talking stays
 * as long as it likes; the read that times out consumed nothing, and the stream is still usable (this
 * server chooses to say goodbye on it, then close it).
 *
 * It runs its own clients, so it can be run as it is (on Threaded; --evented: on Evented):
 *   - a talker sends 5 lines, one every idle/4 ms (longer in all than --idle-ms), reading each answer;
 *   - a sleeper connects and sends nothing: the server closes it after --idle-ms.
 *
 *     ./idle_server [--evented] [--idle-ms N]
 *
 * and prints what happened, ending with "summary: 5 lines echoed, 1 idle connection closed".
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cio.h>

#define LINES 5

typedef struct server {
    cio_io io;
    cio_server listener;
    cio_group conns;
    int idle_ms;
    CIO_ATOMIC(unsigned) echoed; /* lines answered */
    CIO_ATOMIC(unsigned) idle;   /* connections closed for idleness */
} server;

typedef struct conn {
    server *srv;
    cio_stream stream; /* owned by the connection's task */
} conn;

/* Answers every complete line in buf[0..*have); keeps the unfinished rest at the front. */
static cio_err answer_lines(conn *c, char *buf, size_t *have)
{
    size_t start = 0;
    for (size_t i = 0; i < *have; i++) {
        if (buf[i] != '\n')
            continue;
        char out[300];
        int len = snprintf(out, sizeof out, "echo: %.*s\n", (int)(i - start), buf + start);
        size_t wrote = 0;
        /* A client that does not read its answers cannot hold the task either. */
        cio_err err = cio_stream_write_all_timeout(c->srv->io, &c->stream, out, (size_t)len, &wrote,
                                                   cio_timeout_ms(c->srv->idle_ms));
        if (err != CIO_OK)
            return err;
        atomic_fetch_add(&c->srv->echoed, 1);
        start = i + 1;
    }
    memmove(buf, buf + start, *have - start);
    *have -= start;
    return CIO_OK;
}

static cio_err connection(void *context)
{
    conn *c = (conn *)context;
    cio_io io = c->srv->io;
    char buf[256];
    size_t have = 0;
    for (;;) {
        size_t n = 0;
        cio_err err = cio_stream_read_timeout(io, &c->stream, buf + have, sizeof buf - have, &n,
                                              cio_timeout_ms(c->srv->idle_ms));
        if (err == CIO_E_TIMEOUT) {
            /* Nothing was consumed and the stream still works: say why, then close. */
            static const char bye[] = "idle: closing\n";
            size_t wrote = 0;
            (void)cio_stream_write_all_timeout(io, &c->stream, bye, sizeof bye - 1, &wrote, cio_timeout_ms(100));
            atomic_fetch_add(&c->srv->idle, 1);
            break;
        }
        if (err != CIO_OK || n == 0) /* an error, or the client closed its side */
            break;
        have += n;
        if (answer_lines(c, buf, &have) != CIO_OK || have == sizeof buf) /* a line too long: drop it */
            break;
    }
    cio_stream_close(io, &c->stream);
    return CIO_OK;
}

static cio_err acceptor(void *context)
{
    server *srv = *(server **)context;
    for (;;) {
        conn c = {srv, {0}};
        cio_err err = cio_server_accept(srv->io, &srv->listener, &c.stream);
        if (err == CIO_E_CANCELED)
            return err;
        if (err == CIO_OK && cio_group_concurrent(srv->io, &srv->conns, connection, &c, sizeof c) != CIO_OK)
            cio_stream_close(srv->io, &c.stream);
    }
}

/* ---- the clients ------------------------------------------------------------------------------- */

/* Reads one line (up to '\n') into line; false at the end of the stream or on an error. */
static bool read_line(cio_io io, const cio_stream *s, char *line, size_t cap)
{
    size_t len = 0;
    while (len + 1 < cap) {
        size_t n = 0;
        if (cio_stream_read_timeout(io, s, line + len, 1, &n, cio_timeout_ms(5000)) != CIO_OK || n == 0)
            return false;
        if (line[len++] == '\n')
            break;
    }
    line[len] = '\0';
    return true;
}

static cio_err talker(void *context)
{
    server *srv = *(server **)context;
    cio_io io = srv->io;
    cio_stream s;
    cio_err err = cio_net_connect(io, &srv->listener.address, NULL, &s);
    if (err != CIO_OK)
        return err;
    for (int i = 0; i < LINES && err == CIO_OK; i++) {
        char line[64], reply[128];
        int len = snprintf(line, sizeof line, "line %d\n", i);
        err = cio_stream_write_all(io, &s, line, (size_t)len);
        if (err == CIO_OK && !read_line(io, &s, reply, sizeof reply))
            err = CIO_E_UNEXPECTED;
        if (err == CIO_OK)
            printf("talker: %s", reply);
        if (err == CIO_OK)
            err = cio_sleep(io, cio_timeout_ms(srv->idle_ms / 4));
    }
    cio_stream_close(io, &s);
    return err;
}

static cio_err sleeper(void *context)
{
    server *srv = *(server **)context;
    cio_io io = srv->io;
    cio_stream s;
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns; /* before connect: the server's idle clock starts at accept */
    cio_err err = cio_net_connect(io, &srv->listener.address, NULL, &s);
    if (err != CIO_OK)
        return err;
    char reply[64];
    bool said = read_line(io, &s, reply, sizeof reply); /* sends nothing: waits for the server */
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
    printf("sleeper: the server said \"%.*s\" after %lld ms\n", said ? (int)strcspn(reply, "\n") : 0, said ? reply : "",
           (long long)ms);
    size_t n = 0;
    char c;
    err = cio_stream_read_timeout(io, &s, &c, 1, &n, cio_timeout_ms(5000));
    if (err == CIO_OK && n == 0)
        printf("sleeper: then closed the connection\n");
    cio_stream_close(io, &s);
    return said && ms >= srv->idle_ms ? CIO_OK : CIO_E_UNEXPECTED;
}

static int run(cio_io io, int idle_ms)
{
    server *srv = (server *)calloc(1, sizeof *srv);
    if (srv == NULL)
        return 2;
    srv->io = io;
    srv->idle_ms = idle_ms;                    /* conns: all-zero is the empty group (CIO_GROUP_INIT) */
    cio_ip_address addr = cio_ip4_loopback(0); /* port 0: the OS picks one; listener.address has it */
    cio_err err = cio_net_listen(io, &addr, NULL, &srv->listener);
    if (err != CIO_OK) {
        fprintf(stderr, "listen: %s\n", cio_err_name(err));
        free(srv);
        return 2;
    }
    cio_future accepting = {NULL, CIO_OK, 0};
    cio_future clients[2] = {{NULL, CIO_OK, 0}, {NULL, CIO_OK, 0}};
    err = cio_concurrent(io, acceptor, &srv, sizeof srv, &accepting);
    if (err == CIO_OK)
        err = cio_concurrent(io, talker, &srv, sizeof srv, &clients[0]);
    if (err == CIO_OK)
        err = cio_concurrent(io, sleeper, &srv, sizeof srv, &clients[1]);
    cio_err talked = clients[0].any != NULL ? cio_await(io, &clients[0]) : err;
    cio_err slept = clients[1].any != NULL ? cio_await(io, &clients[1]) : err;
    if (accepting.any != NULL)
        (void)cio_cancel(io, &accepting); /* stop accepting */
    cio_server_close(io, &srv->listener);
    (void)cio_group_await(io, &srv->conns); /* every connection has ended by now */
    printf("summary: %u lines echoed, %u idle connection%s closed\n", atomic_load(&srv->echoed),
           atomic_load(&srv->idle), atomic_load(&srv->idle) == 1 ? "" : "s");
    int rc = err == CIO_OK && talked == CIO_OK && slept == CIO_OK ? 0 : 1;
    if (rc != 0)
        fprintf(stderr, "idle_server: %s / %s / %s\n", cio_err_name(err), cio_err_name(talked), cio_err_name(slept));
    free(srv);
    return rc;
}

int main(int argc, char **argv)
{
    bool evented = false;
    int idle_ms = 200;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--evented") == 0) {
            evented = true;
        } else if (strcmp(argv[a], "--idle-ms") == 0 && a + 1 < argc && atoi(argv[a + 1]) > 0) {
            idle_ms = atoi(argv[++a]);
        } else {
            fprintf(stderr, "usage: idle_server [--evented] [--idle-ms N]\n");
            return 2;
        }
    }
    int rc;
    if (evented) {
#if CIO_HAVE_EVENTED
        cio_evented *e;
        if (cio_evented_create(NULL, &e) != CIO_OK)
            return 2;
        rc = run(cio_evented_io(e), idle_ms);
        cio_evented_destroy(e);
#else
        fprintf(stderr, "idle_server: no Evented backend on this target\n");
        rc = 2;
#endif
    } else {
        cio_threaded *t;
        if (cio_threaded_create(NULL, &t) != CIO_OK)
            return 2;
        rc = run(cio_threaded_io(t), idle_ms);
        cio_threaded_destroy(t);
    }
    return rc;
}
