/*
 * B17: HTTP/1.1 keep-alive with a fixed small response (GET / answers a 16-byte body), at 1, 10,
 * 100 and 1,000 connections (--param), one request in flight per connection: requests per second,
 * with the p50 and p99 of the request latency beside it.
 *
 * Servers (a child process, placed as B10's: CPU 1 for split, CPU 0 for same):
 *   threaded, evented-uring  cio's own examples/http_server (built beside cio_bench as
 *                            cio_http_server; --evented for the Evented backend, whose default
 *                            flavour is io_uring where the kernel has it): the server a cio user
 *                            starts from (one task per connection in a cio_group, each
 *                            read with a 100 ms timeout so that a shutdown is seen)
 *   go, tokio                bench/peers: Go's net/http, and a minimal HTTP/1.1 keep-alive
 *                            responder on Tokio's TcpListener (Debian's hyper is not used:
 *                            see bench/README.md)
 *   libuv                    a minimal responder on libuv (here)
 * The client is one epoll thread (here, the same for every server): it opens the connections at
 * most 100 ahead of the first answers (so that no accept queue overflows), sends one request per
 * connection and the next one when the answer is complete (head + Content-Length), and reports
 * "client_cpu" (near 100 %: the client may be the bottleneck) and "server_us_per_req" (the
 * server's CPU time per request, from /proc). Each server answers with Content-Length and keeps
 * the connection open.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "bench.h"

#define MAX_CONNS 1000
#define RAMP_AHEAD 100 /* connections opened before their first answer, at most */
#define RESP_MAX 1024

static const char request[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
static const char response[] = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\nConnection: keep-alive\r\n\r\n"
                               "Hello from cio!\n";

/* ---- the libuv server ---------------------------------------------------------------------------- */

typedef struct uv_http_conn {
    uv_tcp_t tcp;
    size_t have; /* bytes of an unfinished request head in buf */
    char buf[8192];
} uv_http_conn;

static void uvh_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    uv_http_conn *c = (uv_http_conn *)h->data;
    *buf = uv_buf_init(c->buf + c->have, (unsigned)(sizeof c->buf - c->have));
}

static void uvh_closed(uv_handle_t *h)
{
    free(h->data);
}

static void uvh_written(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

static void uvh_answer(uv_stream_t *s)
{
    uv_buf_t b = uv_buf_init((char *)response, sizeof response - 1);
    int w = uv_try_write(s, &b, 1);
    if (w == (int)(sizeof response - 1))
        return;
    size_t done = w > 0 ? (size_t)w : 0;
    uv_write_t *req = (uv_write_t *)malloc(sizeof *req);
    if (req == NULL)
        bench_die("malloc");
    b = uv_buf_init((char *)response + done, (unsigned)(sizeof response - 1 - done));
    uv_write(req, s, &b, 1, uvh_written); /* the bytes are static: nothing to copy */
}

static void uvh_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    uv_http_conn *c = (uv_http_conn *)s->data;
    if (n < 0) {
        uv_close((uv_handle_t *)s, uvh_closed);
        return;
    }
    c->have += (size_t)n;
    size_t start = 0;
    for (;;) {
        char *end = (char *)memmem(c->buf + start, c->have - start, "\r\n\r\n", 4);
        if (end == NULL)
            break;
        uvh_answer(s);
        start = (size_t)(end + 4 - c->buf);
    }
    memmove(c->buf, c->buf + start, c->have - start);
    c->have -= start;
    if (c->have == sizeof c->buf)
        uv_close((uv_handle_t *)s, uvh_closed); /* a head larger than the buffer: not ours */
}

static void uvh_connection(uv_stream_t *server, int status)
{
    if (status != 0)
        return;
    uv_http_conn *c = (uv_http_conn *)malloc(sizeof *c);
    if (c == NULL)
        bench_die("malloc");
    c->have = 0;
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0)
        bench_die("uv_accept");
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, uvh_alloc, uvh_read);
}

static _Noreturn void uv_http_serve(int listen_fd)
{
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_t server;
    uv_tcp_init(loop, &server);
    if (uv_tcp_open(&server, listen_fd) != 0 || uv_listen((uv_stream_t *)&server, 4096, uvh_connection) != 0)
        bench_die("uv_listen");
    uv_run(loop, UV_RUN_DEFAULT);
    _exit(0);
}

/* ---- starting a server ------------------------------------------------------------------------- */

/* The cio_http_server program beside this one (the bench's CMake builds examples/http_server.c). */
static bool example_path(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return false;
    static const char name[] = "/cio_http_server";
    size_t dir = (size_t)(slash - self);
    if (dir + sizeof name > cap)
        return false;
    memcpy(out, self, dir);
    memcpy(out + dir, name, sizeof name);
    return access(out, X_OK) == 0;
}

/* Starts the contender's server in a child placed per --cpus; returns its pid, the port in *port. */
static int start_http_server(const bench_opts *o, const char *contender, uint16_t *port)
{
    char example[PATH_MAX];
    bool cio = strcmp(contender, "threaded") == 0 || strcmp(contender, "evented-uring") == 0;
    if (cio && !example_path(example, sizeof example)) {
        (void)bench_na("cio_http_server (examples/http_server.c) is not built beside cio_bench");
        return -1;
    }
    const char *why = NULL;
    const char *peer = bench_external_peer(contender, &why);
    if (peer == NULL && why != NULL) {
        (void)bench_na(why);
        return -1;
    }
    int lfd = -1, out[2] = {-1, -1};
    if (cio) {
        if (pipe2(out, O_CLOEXEC) != 0)
            bench_die("pipe2");
    } else {
        lfd = bench_listen_loopback(port, 4096);
    }
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork");
    if (pid == 0) {
        bench_server_child_init(o);
        if (cio) {
            dup2(out[1], 1);
            if (strcmp(contender, "evented-uring") == 0)
                execl(example, example, "--evented", "--port", "0", "--idle-ms", "600000", (char *)NULL);
            else
                execl(example, example, "--port", "0", "--idle-ms", "600000", (char *)NULL);
            _exit(127);
        }
        if (peer != NULL)
            bench_exec_peer_server(peer, "serve-http", lfd);
        uv_http_serve(lfd);
    }
    if (!cio) {
        close(lfd);
        return pid;
    }
    close(out[1]);
    char line[128];
    size_t got = 0;
    while (got < sizeof line - 1) { /* "listening on port N\n" */
        ssize_t r = read(out[0], line + got, 1);
        if (r <= 0 || line[got] == '\n')
            break;
        got++;
    }
    line[got] = '\0';
    close(out[0]);
    unsigned p = 0;
    if (sscanf(line, "listening on port %u", &p) != 1 || p == 0 || p > 65535) {
        fprintf(stderr, "cio_bench: cio_http_server said \"%s\"\n", line);
        bench_stop_server(pid);
        exit(1);
    }
    *port = (uint16_t)p;
    return pid;
}

/* ---- the client ------------------------------------------------------------------------------------- */

typedef struct http_conn {
    int fd;
    size_t got;
    int64_t sent_at;
    bool answered; /* its first answer came */
    char buf[RESP_MAX];
} http_conn;

/* Bytes of the complete answer at the start of buf, 0 while it is incomplete, -1 if malformed. */
static long answer_length(const char *buf, size_t got)
{
    const char *end = (const char *)memmem(buf, got, "\r\n\r\n", 4);
    if (end == NULL)
        return got >= RESP_MAX ? -1 : 0;
    long head = (long)(end + 4 - buf), body = -1;
    for (const char *p = buf; p < end; p++)
        if ((p == buf || p[-1] == '\n') && strncasecmp(p, "content-length:", 15) == 0) {
            body = strtol(p + 15, NULL, 10);
            break;
        }
    if (body < 0)
        return -1;
    return (size_t)(head + body) <= got ? head + body : (head + body > RESP_MAX ? -1 : 0);
}

static void send_request(http_conn *c)
{
    c->sent_at = bench_now_ns();
    if (write(c->fd, request, sizeof request - 1) != (ssize_t)(sizeof request - 1))
        bench_die("client write");
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int http(const bench_opts *o, const char *contender)
{
    bench_report_cpu = false;
    long conns = o->param > 0 ? o->param : 100;
    if (conns > MAX_CONNS)
        conns = MAX_CONNS;
    if (o->smoke && conns > 10)
        conns = 10;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)conns + 64) {
        rl.rlim_cur = rl.rlim_max; /* the server child inherits it too */
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    uint16_t port = 0;
    int pid = start_http_server(o, contender, &port);
    if (pid < 0)
        return BENCH_NA;
    int cpu = bench_client_cpu(o->cpus);
    if (cpu >= 0)
        bench_pin_self(cpu);
    http_conn *st = (http_conn *)calloc((size_t)conns, sizeof *st);
    size_t cap = o->smoke ? 1000 : 4000000, nlat = 0;
    int64_t *lat = (int64_t *)malloc(cap * sizeof *lat);
    if (st == NULL || lat == NULL)
        bench_die("malloc");
    int ep = epoll_create1(EPOLL_CLOEXEC);
    long opened = 0, first_answers = 0;
    int64_t warm = (int64_t)(o->seconds * 0.2e9), budget = (int64_t)(o->seconds * 1e9);
    int64_t start = bench_now_ns(), t0 = 0, last_progress = start;
    double cpu0 = 0, srv0 = 0;
    uint64_t count = 0;
    int64_t first_max = 0; /* the longest wait for a connection's first answer */
    bool measuring = false;
    struct epoll_event evs[64];
    int rc = 0;
    for (;;) {
        while (opened < conns && opened - first_answers < RAMP_AHEAD) {
            http_conn *c = &st[opened];
            c->fd = bench_connect_loopback(port);
            struct epoll_event ev = {.events = EPOLLIN, .data = {.u32 = (uint32_t)opened}};
            if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
                bench_die("epoll_ctl");
            opened++;
            send_request(c);
        }
        int n = epoll_wait(ep, evs, 64, 1000);
        int64_t now = bench_now_ns();
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            bench_die("epoll_wait");
        if (n > 0)
            last_progress = now;
        else if (now - last_progress > 10000000000LL) {
            fprintf(stderr, "cio_bench: http: no answer for 10 s\n");
            rc = 1;
            break;
        }
        for (int k = 0; k < n; k++) {
            http_conn *c = &st[evs[k].data.u32];
            ssize_t r = read(c->fd, c->buf + c->got, RESP_MAX - c->got);
            if (r <= 0) {
                fprintf(stderr, "cio_bench: http: the server closed a connection\n");
                rc = 1;
                break;
            }
            c->got += (size_t)r;
            long len = answer_length(c->buf, c->got);
            if (len < 0 || (len > 0 && (size_t)len != c->got)) {
                fprintf(stderr, "cio_bench: http: an answer this client does not expect\n");
                rc = 1;
                break;
            }
            if (len == 0)
                continue;
            c->got = 0;
            if (!c->answered) {
                c->answered = true;
                first_answers++;
                int64_t wait = now - c->sent_at;
                if (wait > first_max)
                    first_max = wait;
            }
            if (measuring) {
                count++;
                if (nlat < cap)
                    lat[nlat++] = now - c->sent_at;
            }
            send_request(c);
        }
        if (rc != 0)
            break;
        if (!measuring && now - start >= warm && first_answers == conns) {
            bench_result("ramp", (double)(now - start) / 1e9, "s"); /* every connection open and answered */
            measuring = true;
            t0 = now;
            cpu0 = bench_cpu_seconds();
            srv0 = bench_proc_cpu_seconds(pid);
        } else if (measuring && now - t0 >= budget) {
            double wall = (double)(now - t0) / 1e9;
            bench_result("main", (double)count / wall, "req/s");
            bench_result("client_cpu", 100.0 * (bench_cpu_seconds() - cpu0) / wall, "%");
            double srv1 = bench_proc_cpu_seconds(pid);
            if (srv0 >= 0 && srv1 >= 0 && count > 0)
                bench_result("server_us_per_req", (srv1 - srv0) * 1e6 / (double)count, "us");
            if (nlat > 0) {
                qsort(lat, nlat, sizeof *lat, cmp_i64);
                bench_result("p50", (double)lat[nlat / 2], "ns/req");
                bench_result("p99", (double)lat[nlat * 99 / 100], "ns/req");
            }
            bench_result("conns", (double)conns, "n");
            bench_result("first_max", (double)first_max, "ns/req");
            break;
        }
    }
    for (long i = 0; i < opened; i++)
        close(st[i].fd);
    close(ep);
    bench_stop_server(pid);
    free(st);
    free(lat);
    return rc;
}

const bench_entry bench_http_entries[] = {
    {"B17", "threaded", http}, {"B17", "evented-uring", http}, {"B17", "libuv", http},
    {"B17", "go", http},       {"B17", "tokio", http},         {NULL, NULL, NULL},
};
