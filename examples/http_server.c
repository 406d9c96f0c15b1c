/*
 * A small HTTP/1.1 keep-alive server with a graceful shutdown (issue 25):
 *
 *     ./http_server [--evented] [--port N] [--root DIR] [--idle-ms N] [--deadline-ms N]
 *
 * GET / answers a fixed body; GET /files/NAME sends the file NAME under --root (cio_net_write_file:
 * sendfile where the OS has it). One task per connection in a cio_group; a connection idle for
 * --idle-ms (5000) is closed. SIGINT or SIGTERM (cio_signal_wait) stops accepting; a request whose
 * bytes had arrived is still answered (with "Connection: close"), idle connections are closed, and
 * after --deadline-ms (2000) the connections left are canceled. Exit 0. It prints
 * "listening on port N" when ready and "shutdown: ..." at the end, with the count of open
 * descriptors at the start and after the backend is destroyed (exit 2 if they differ: a leak).
 * The same source runs on Threaded and Evented: only the line that makes `io` differs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <fcntl.h>
#endif

#include <cio.h>

#define REQ_MAX 8192

struct server {
    cio_io io;
    cio_server listener;
    cio_dir root;
    bool have_root;
    cio_group conns;
    int64_t idle_ms;
    atomic_bool stopping;
    atomic_int open_conns;
    atomic_long answered;
};

struct conn {
    struct server *srv;
    cio_stream stream;
};

static const char hello[] = "Hello from cio!\n";

/* The head of an answer, and `body` (len bytes) after it when it is not NULL: one write, one segment. */
static cio_err send_answer(struct server *s, const cio_stream *st, int code, const char *reason, uint64_t len,
                           const char *body, bool close)
{
    char head[256 + sizeof hello];
    int n = snprintf(head, 256, "HTTP/1.1 %d %s\r\nContent-Length: %llu\r\nConnection: %s\r\n\r\n", code, reason,
                     (unsigned long long)len, close ? "close" : "keep-alive");
    if (body != NULL && len <= sizeof hello) {
        memcpy(head + n, body, (size_t)len);
        n += (int)len;
    }
    return cio_stream_write_all_timeout(s->io, st, head, (size_t)n, NULL, cio_timeout_ms(s->idle_ms));
}

static cio_err send_head(struct server *s, const cio_stream *st, int code, const char *reason, uint64_t len, bool close)
{
    return send_answer(s, st, code, reason, len, NULL, close);
}

/* Answers one request (its head is req[0..len)); false: close the connection. */
static bool answer(struct server *s, const cio_stream *st, char *req, bool close)
{
    char *sp = strchr(req, ' ');
    char *path = sp ? sp + 1 : NULL;
    char *end = path ? strchr(path, ' ') : NULL;
    if (strncmp(req, "GET ", 4) != 0 || end == NULL) {
        (void)send_head(s, st, 400, "Bad Request", 0, true);
        return false;
    }
    *end = '\0';
    if (strstr(end + 1, "\r\nConnection: close") != NULL || strncmp(end + 1, "HTTP/1.0", 8) == 0)
        close = true;
    cio_err err = CIO_OK;
    if (strcmp(path, "/") == 0) {
        err = send_answer(s, st, 200, "OK", sizeof hello - 1, hello, close);
    } else if (strncmp(path, "/files/", 7) == 0 && s->have_root && strstr(path, "..") == NULL) {
        cio_file f;
        cio_stat meta;
        if (cio_dir_open_file(s->io, s->root, path + 7, NULL, &f) != CIO_OK) {
            err = send_head(s, st, 404, "Not Found", 0, close);
        } else {
            err = cio_file_stat(s->io, f, &meta);
            if (err == CIO_OK)
                err = send_head(s, st, 200, "OK", meta.size, close);
            uint64_t sent = 0;
            if (err == CIO_OK)
                err = cio_net_write_file(s->io, st, f, 0, meta.size, &sent);
            cio_file_close(s->io, f);
        }
    } else {
        err = send_head(s, st, 404, "Not Found", 0, close);
    }
    if (err == CIO_OK)
        atomic_fetch_add(&s->answered, 1);
    return err == CIO_OK && !close;
}

/* One connection: read a request head, answer it, again, until the client closes, the connection
 * is idle too long, or the server stops (then only a request already begun is answered). The read
 * waits at most 100 ms at a time so that a stop is seen; a read that times out consumes nothing. */
static cio_err connection(void *p)
{
    struct conn *c = (struct conn *)p;
    struct server *s = c->srv;
    char buf[REQ_MAX + 1];
    size_t have = 0;
    int64_t idle = 0;
    for (;;) {
        char *head_end = NULL;
        buf[have] = '\0';
        if (have > 0)
            head_end = strstr(buf, "\r\n\r\n");
        if (head_end != NULL) {
            size_t used = (size_t)(head_end + 4 - buf);
            head_end[2] = '\0';
            if (!answer(s, &c->stream, buf, atomic_load(&s->stopping)))
                break;
            memmove(buf, buf + used, have - used);
            have -= used;
            idle = 0;
            continue;
        }
        if (have == REQ_MAX) {
            (void)send_head(s, &c->stream, 431, "Request Header Fields Too Large", 0, true);
            break;
        }
        /* stopping with nothing begun: one short look at what has arrived (a request sent before
         * the signal is there), then close. (Not a zero timeout: where a backend has no native
         * timed read, an expired timeout may end the read before it tried, cio/batch.h.) */
        bool last_look = have == 0 && atomic_load(&s->stopping);
        size_t n = 0;
        cio_err err = cio_stream_read_timeout(s->io, &c->stream, buf + have, REQ_MAX - have, &n,
                                              cio_timeout_ms(last_look ? 10 : 100));
        if (err == CIO_E_TIMEOUT && last_look)
            break;
        if (err == CIO_E_TIMEOUT) {
            idle += 100;
            if (idle >= s->idle_ms)
                break;
            continue;
        }
        if (err != CIO_OK || n == 0)
            break; /* canceled at the deadline, an error, or the client closed */
        have += n;
        idle = 0;
    }
    cio_stream_close(s->io, &c->stream);
    atomic_fetch_sub(&s->open_conns, 1);
    return CIO_OK;
}

static cio_err acceptor(void *p)
{
    struct server *s = *(struct server **)p;
    for (;;) {
        struct conn c = {s, {0}};
        cio_err err = cio_server_accept(s->io, &s->listener, &c.stream);
        if (err == CIO_E_CANCELED)
            return err;
        if (err != CIO_OK)
            continue; /* a connection reset before it was accepted, no descriptor free: go on */
        atomic_fetch_add(&s->open_conns, 1);
        (void)cio_net_set_option(s->io, c.stream.handle, CIO_SOCKOPT_NODELAY, 1);
        if (cio_group_concurrent(s->io, &s->conns, connection, &c, sizeof c) != CIO_OK) {
            cio_stream_close(s->io, &c.stream);
            atomic_fetch_sub(&s->open_conns, 1);
        }
    }
}

static int open_descriptors(void)
{
#if defined(_WIN32)
    return -1; /* not counted on Windows */
#else
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
#endif
}

int main(int argc, char **argv)
{
    bool evented = false;
    int port = 8080;
    int64_t deadline_ms = 2000;
    const char *root = NULL;
    struct server s = {.conns = CIO_GROUP_INIT, .idle_ms = 5000};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--evented") == 0)
            evented = true;
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(argv[i], "--idle-ms") == 0 && i + 1 < argc)
            s.idle_ms = atoll(argv[++i]);
        else if (strcmp(argv[i], "--deadline-ms") == 0 && i + 1 < argc)
            deadline_ms = atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--evented] [--port N] [--root DIR] [--idle-ms N] [--deadline-ms N]\n", argv[0]);
            return 1;
        }
    }
    int fds_before = open_descriptors();
    cio_threaded *threaded = NULL;
#if CIO_HAVE_EVENTED
    cio_evented *ev = NULL;
    cio_err err = evented ? cio_evented_create(NULL, &ev) : cio_threaded_create(NULL, &threaded);
#else
    cio_err err = evented ? CIO_E_OPERATION_UNSUPPORTED : cio_threaded_create(NULL, &threaded);
#endif
    if (err != CIO_OK) {
        fprintf(stderr, "create: %s\n", cio_err_name(err));
        return 1;
    }
#if CIO_HAVE_EVENTED
    s.io = evented ? cio_evented_io(ev) : cio_threaded_io(threaded); /* the one line that differs */
#else
    s.io = cio_threaded_io(threaded);
#endif

    if (root != NULL) {
        err = cio_dir_open_dir(s.io, cio_dir_cwd(), root, NULL, &s.root);
        if (err != CIO_OK) {
            fprintf(stderr, "%s: %s\n", root, cio_err_name(err));
            return 1;
        }
        s.have_root = true;
    }
    cio_ip_address addr = cio_ip4_loopback((uint16_t)port);
    err = cio_net_listen(s.io, &addr, NULL, &s.listener);
    if (err != CIO_OK) {
        fprintf(stderr, "listen: %s\n", cio_err_name(err));
        return 1;
    }
    struct server *sp = &s;
    cio_future accepting = {NULL, CIO_OK, 0};
    err = cio_concurrent(s.io, acceptor, &sp, sizeof sp, &accepting);
    if (err != CIO_OK) {
        fprintf(stderr, "accept task: %s\n", cio_err_name(err));
        return 1;
    }

    cio_sigset stop;
    cio_sigset_empty(&stop);
    (void)cio_sigset_add(&stop, CIO_SIG_INT);
    (void)cio_sigset_add(&stop, CIO_SIG_TERM);
    printf("listening on port %u\n", (unsigned)s.listener.address.port);
    fflush(stdout);
    cio_sig sig = CIO_SIG_INT;
    err = cio_signal_wait(s.io, &stop, &sig);
    if (err != CIO_OK)
        fprintf(stderr, "signal wait: %s\n", cio_err_name(err));

    /* 1. stop accepting; 2. let requests begun finish until the deadline; 3. cancel the rest */
    cio_timestamp t0 = cio_now(s.io, CIO_CLOCK_AWAKE);
    atomic_store(&s.stopping, true);
    (void)cio_cancel(s.io, &accepting);
    cio_server_close(s.io, &s.listener);
    while (atomic_load(&s.open_conns) > 0 && (cio_now(s.io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000 < deadline_ms)
        (void)cio_sleep(s.io, cio_timeout_ms(5));
    int left = atomic_load(&s.open_conns);
    cio_group_cancel(s.io, &s.conns);
    int64_t ms = (cio_now(s.io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    if (s.have_root)
        cio_dir_close(s.io, s.root);
#if CIO_HAVE_EVENTED
    if (evented)
        cio_evented_destroy(ev);
#endif
    if (threaded != NULL)
        cio_threaded_destroy(threaded);
    int fds_after = open_descriptors();
    printf("shutdown: signal %s, %ld requests answered, %d connections canceled at the deadline, %lld ms, "
           "descriptors %d at start, %d at the end\n",
           cio_sig_name(sig), (long)atomic_load(&s.answered), left, (long long)ms, fds_before, fds_after);
    fflush(stdout);
    return fds_after == fds_before ? 0 : 2;
}
