/*
 * TCP over loopback, two processes: B10 (echo, 64-byte messages, 50 connections, one message in
 * flight each), B14 (the same echo on the Evented backend's epoll flavour) and B11 (bulk: one
 * connection, 64 KiB writes). B15 is B10's echo once more, each backend with and without an idle timeout
 * on every server read (cio_stream_read_timeout, 10 s: the server a new user writes to close idle
 * clients), for the ratio timeout/plain.
 *
 * The listening socket is made before fork; the child is the server (echo server, or bulk
 * receiver), the parent the client. Under --cpus split the server process runs on CPU 1 and the
 * client on CPU 0; under same both run on CPU 0. The echo load generator is one thread with epoll
 * (written here, the same for every server); it reports the share of a CPU it used ("client_cpu")
 * so that it can be seen not to be the bottleneck, and the server's CPU time per round trip
 * ("server_us_per_rt", from /proc: clock-tick resolution; it moves less than the rate when other
 * processes share the CPUs). The bulk receiver measures from its first byte
 * to EOF and reports through a pipe.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "bench.h"

#define MSG 64
#define ECHO_CONNS 50
#define BULK_CHUNK (64 * 1024)

int bench_listen_loopback(uint16_t *port, int backlog)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        bench_die("socket");
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        bench_die("bind/listen");
    *port = ntohs(sa.sin_port);
    return fd;
}

int bench_connect_loopback(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        bench_die("socket");
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        bench_die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* ---- servers: cio (any backend) ------------------------------------------------------------------------ */

typedef struct conn_args {
    cio_io io;
    cio_stream stream;
    bool idle_timeout; /* B15: every read with IDLE_TIMEOUT_MS, as a server closing idle clients */
} conn_args;

#define IDLE_TIMEOUT_MS 10000

static cio_err echo_conn(void *context)
{
    conn_args *a = (conn_args *)context;
    char buf[1024]; /* messages are 64 B; an Evented fiber's stack is 64 KiB */
    for (;;) {
        size_t n = 0;
        cio_err err = a->idle_timeout ? cio_stream_read_timeout(a->io, &a->stream, buf, sizeof buf, &n,
                                                                cio_timeout_ms(IDLE_TIMEOUT_MS))
                                      : cio_stream_read(a->io, &a->stream, buf, sizeof buf, &n);
        if (err != CIO_OK || n == 0) /* CIO_E_TIMEOUT: idle, closed */
            break;
        if (cio_stream_write_all(a->io, &a->stream, buf, n) != CIO_OK)
            break;
    }
    cio_stream_close(a->io, &a->stream);
    return CIO_OK;
}

typedef struct serve_args {
    int listen_fd;
    int report_fd; /* bulk: where the receiver writes its result */
    bool idle_timeout;
} serve_args;

/* Echo: one concurrent task per connection. */
static void cio_echo_serve(bench_backend *b, void *arg)
{
    serve_args *s = (serve_args *)arg;
    cio_server srv;
    memset(&srv, 0, sizeof srv);
    srv.handle = s->listen_fd;
    cio_group g = CIO_GROUP_INIT;
    for (;;) {
        conn_args a = {b->io, {0}, s->idle_timeout};
        cio_err err = cio_server_accept(b->io, &srv, &a.stream);
        if (err != CIO_OK)
            bench_fail("cio_server_accept", err);
        err = cio_group_concurrent(b->io, &g, echo_conn, &a, sizeof a);
        if (err != CIO_OK)
            bench_fail("cio_group_concurrent", err);
    }
}

typedef struct bulk_report {
    int64_t bytes;
    int64_t ns;
} bulk_report;

static void report(int fd, int64_t bytes, int64_t ns)
{
    bulk_report r = {bytes, ns};
    if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
        bench_die("write report");
}

static void cio_bulk_receive(bench_backend *b, void *arg)
{
    serve_args *s = (serve_args *)arg;
    cio_server srv;
    memset(&srv, 0, sizeof srv);
    srv.handle = s->listen_fd;
    cio_stream st;
    cio_err err = cio_server_accept(b->io, &srv, &st);
    if (err != CIO_OK)
        bench_fail("cio_server_accept", err);
    static char buf[BULK_CHUNK];
    int64_t total = 0, t0 = 0;
    for (;;) {
        size_t n = 0;
        err = cio_stream_read(b->io, &st, buf, sizeof buf, &n);
        if (err != CIO_OK)
            bench_fail("cio_stream_read", err);
        if (n == 0)
            break;
        if (total == 0)
            t0 = bench_now_ns();
        total += (int64_t)n;
    }
    report(s->report_fd, total, bench_now_ns() - t0);
    cio_stream_close(b->io, &st);
}

/* ---- servers: libuv ------------------------------------------------------------------------------------------ */

typedef struct uv_conn {
    uv_tcp_t tcp;
    char buf[64 * 1024];
} uv_conn;

typedef struct uv_wreq {
    uv_write_t req;
    char data[];
} uv_wreq;

static void uv_conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    uv_conn *c = (uv_conn *)h->data;
    *buf = uv_buf_init(c->buf, sizeof c->buf);
}

static void uv_conn_closed(uv_handle_t *h)
{
    free(h->data);
}

static void uv_wreq_done(uv_write_t *req, int status)
{
    (void)status;
    free(req);
}

static void uv_echo_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    if (n < 0) {
        uv_close((uv_handle_t *)s, uv_conn_closed);
        return;
    }
    if (n == 0)
        return;
    uv_buf_t b = uv_buf_init(buf->base, (unsigned)n);
    int w = uv_try_write(s, &b, 1);
    if (w == n)
        return;
    size_t done = w > 0 ? (size_t)w : 0;
    size_t rest = (size_t)n - done;
    uv_wreq *r = (uv_wreq *)malloc(sizeof *r + rest);
    if (r == NULL)
        bench_die("malloc");
    memcpy(r->data, buf->base + done, rest);
    uv_buf_t rb = uv_buf_init(r->data, (unsigned)rest);
    uv_write(&r->req, s, &rb, 1, uv_wreq_done);
}

static uv_conn *uv_accept_conn(uv_stream_t *server)
{
    uv_conn *c = (uv_conn *)malloc(sizeof *c);
    if (c == NULL)
        bench_die("malloc");
    uv_tcp_init(server->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0)
        bench_die("uv_accept");
    return c;
}

static void uv_echo_connection(uv_stream_t *server, int status)
{
    if (status != 0)
        return;
    uv_conn *c = uv_accept_conn(server);
    uv_read_start((uv_stream_t *)&c->tcp, uv_conn_alloc, uv_echo_read);
}

static void uv_listen_on(uv_loop_t *loop, uv_tcp_t *server, int fd, uv_connection_cb cb)
{
    uv_tcp_init(loop, server);
    if (uv_tcp_open(server, fd) != 0 || uv_listen((uv_stream_t *)server, 256, cb) != 0)
        bench_die("uv_listen");
}

static void uv_echo_serve(int listen_fd)
{
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_t server;
    uv_listen_on(loop, &server, listen_fd, uv_echo_connection);
    uv_run(loop, UV_RUN_DEFAULT);
}

static int uv_bulk_report_fd;
static int64_t uv_bulk_total, uv_bulk_t0;

static void uv_bulk_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    if (n < 0) {
        report(uv_bulk_report_fd, uv_bulk_total, bench_now_ns() - uv_bulk_t0);
        uv_close((uv_handle_t *)s, uv_conn_closed);
        uv_close((uv_handle_t *)s->loop->data, NULL); /* the listener: uv_run returns */
        return;
    }
    if (n > 0 && uv_bulk_total == 0)
        uv_bulk_t0 = bench_now_ns();
    uv_bulk_total += n;
}

static void uv_bulk_connection(uv_stream_t *server, int status)
{
    if (status != 0)
        return;
    uv_conn *c = uv_accept_conn(server);
    uv_read_start((uv_stream_t *)&c->tcp, uv_conn_alloc, uv_bulk_read);
}

static void uv_bulk_receive(int listen_fd, int report_fd)
{
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_t server;
    uv_bulk_report_fd = report_fd;
    loop->data = &server;
    uv_listen_on(loop, &server, listen_fd, uv_bulk_connection);
    uv_run(loop, UV_RUN_DEFAULT);
}

/* B15's contenders: "<backend>+timeout" is <backend>'s echo server reading with an idle timeout.
 * Writes the backend's name to base; true for a +timeout contender. */
static bool idle_timeout_contender(const char *contender, char *base, size_t cap)
{
    const char *plus = strchr(contender, '+');
    size_t len = plus != NULL ? (size_t)(plus - contender) : strlen(contender);
    if (len >= cap)
        len = cap - 1;
    memcpy(base, contender, len);
    base[len] = '\0';
    return plus != NULL && strcmp(plus, "+timeout") == 0;
}

/* A cio server's counts (inline / on units) reach the driver when the client stops the server: this
 * thread takes the SIGTERM (blocked in every other thread), prints them and ends the process. */
static void *term_reporter(void *arg)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    int sig = 0;
    while (sigwait(&term, &sig) != 0)
        ;
    bench_backend_report_tasks((const bench_backend *)arg);
    _exit(0);
}

/* ---- the server process ------------------------------------------------------------------------------------------ */

/* A peer that is a program of its own (bench/peers/: "go", "tokio"): the program the driver named in
 * CIO_BENCH_<NAME>, or NULL (with *why) when build.py bench could not build it. */
const char *bench_external_peer(const char *contender, const char **why)
{
    static const char *const names[][3] = {{"go", "CIO_BENCH_GO", "CIO_BENCH_GO_WHY"},
                                           {"tokio", "CIO_BENCH_TOKIO", "CIO_BENCH_TOKIO_WHY"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(contender, names[i][0]) != 0)
            continue;
        const char *exe = getenv(names[i][1]);
        *why = getenv(names[i][2]);
        if (*why == NULL)
            *why = "not built here (python3 build.py bench builds it)";
        return exe != NULL && access(exe, X_OK) == 0 ? exe : NULL;
    }
    *why = NULL;
    return NULL;
}

/* In the server child: runs the peer program on the listening socket (it inherits it). */
_Noreturn void bench_exec_peer_server(const char *exe, const char *mode, int listen_fd)
{
    int flags = fcntl(listen_fd, F_GETFD);
    if (flags >= 0)
        (void)fcntl(listen_fd, F_SETFD, flags & ~FD_CLOEXEC);
    char fdtext[16];
    snprintf(fdtext, sizeof fdtext, "%d", listen_fd);
    execl(exe, exe, mode, fdtext, (char *)NULL);
    _exit(127);
}

static pid_t start_server(const bench_opts *o, const char *contender, bool bulk, int listen_fd, int report_fd)
{
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork");
    if (pid > 0)
        return pid;
    bench_server_child_init(o);
    char base[32];
    bool timed = idle_timeout_contender(contender, base, sizeof base);
    serve_args s = {listen_fd, report_fd, timed};
    bench_backend_kind kind;
    const char *why = NULL;
    const char *peer = bench_external_peer(contender, &why);
    if (peer != NULL && !bulk)
        bench_exec_peer_server(peer, "serve-echo", listen_fd);
    if (strcmp(contender, "thread-per-conn") == 0)
        bench_echo_thread_per_conn(listen_fd);
    if (strcmp(contender, "raw-epoll") == 0)
        bench_echo_raw_epoll(listen_fd);
    if (bench_kind_of(base, &kind)) {
        bench_backend b;
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &term, NULL); /* every thread made from here on: term_reporter's */
        if (!bench_backend_open(kind, 0, &b))
            _exit(BENCH_NA);
        pthread_t th;
        if (pthread_create(&th, NULL, term_reporter, &b) != 0)
            bench_die("pthread_create");
        bench_backend_run(&b, bulk ? cio_bulk_receive : cio_echo_serve, &s);
        bench_backend_close(&b);
    } else if (bulk) {
        uv_bulk_receive(listen_fd, report_fd);
    } else {
        uv_echo_serve(listen_fd);
    }
    _exit(0);
}

void bench_server_child_init(const bench_opts *o)
{
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* a client that dies (killed, SIGPIPE) takes its server along */
    bench_pin_process(bench_server_cpu(o->cpus));
}

void bench_stop_server(int pid)
{
    /* SIGTERM first: a cio server prints its task counts then (term_reporter); 1 s at most. */
    kill(pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        usleep(5000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Before forking: a cio contender that cannot run here is NA in the parent, not a hung client. */
static bool contender_available(const char *contender)
{
    char base[32];
    (void)idle_timeout_contender(contender, base, sizeof base);
    contender = base;
    const char *why = NULL;
    if (bench_external_peer(contender, &why) == NULL && why != NULL) {
        (void)bench_na(why);
        return false;
    }
    bench_backend_kind kind;
    if (!bench_kind_of(contender, &kind) || kind == BENCH_THREADED)
        return true;
    bench_backend b;
    if (!bench_backend_open(kind, 0, &b))
        return false;
    bench_backend_close(&b);
    return true;
}

/* ---- B10 / B14: echo ---------------------------------------------------------------------------------------------- */

typedef struct echo_conn_state {
    int fd;
    size_t got;
} echo_conn_state;

/* CPU time (user + system, every thread) of another process, from /proc/PID/stat; -1 if unreadable. */
double bench_proc_cpu_seconds(int pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    const char *p = strrchr(line, ')'); /* the command name may hold spaces */
    unsigned long ut = 0, st = 0;
    if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void send_msg(int fd)
{
    static const char msg[MSG + 1] = "cio echo benchmark: 64 bytes per message, one in flight per conn";
    if (write(fd, msg, MSG) != MSG)
        bench_die("client write");
}

static int echo(const bench_opts *o, const char *contender)
{
    bench_report_cpu = false;
    if (!contender_available(contender))
        return BENCH_NA;
    uint16_t port;
    int lfd = bench_listen_loopback(&port, 256);
    pid_t pid = start_server(o, contender, false, lfd, -1);
    close(lfd);
    int cpu = bench_client_cpu(o->cpus);
    if (cpu >= 0)
        bench_pin_self(cpu);
    int conns = o->smoke ? 4 : ECHO_CONNS;
    echo_conn_state st[ECHO_CONNS];
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < conns; i++) {
        st[i].fd = bench_connect_loopback(port);
        st[i].got = 0;
        struct epoll_event ev = {.events = EPOLLIN, .data = {.u32 = (uint32_t)i}};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, st[i].fd, &ev) != 0)
            bench_die("epoll_ctl");
        send_msg(st[i].fd);
    }
    int64_t warm = (int64_t)(o->seconds * 0.2e9), budget = (int64_t)(o->seconds * 1e9);
    int64_t start = bench_now_ns(), t0 = 0, last_progress = start;
    double cpu0 = 0, srv0 = 0;
    uint64_t count = 0;
    bool measuring = false;
    struct epoll_event evs[ECHO_CONNS];
    char buf[MSG];
    for (;;) {
        int n = epoll_wait(ep, evs, ECHO_CONNS, 1000);
        int64_t now = bench_now_ns();
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            bench_die("epoll_wait");
        if (n > 0)
            last_progress = now;
        else if (now - last_progress > 10000000000LL) {
            fprintf(stderr, "cio_bench: echo: no reply for 10 s\n");
            bench_stop_server(pid);
            return 1;
        }
        for (int k = 0; k < n; k++) {
            echo_conn_state *c = &st[evs[k].data.u32];
            ssize_t r = read(c->fd, buf, MSG - c->got);
            if (r <= 0) {
                fprintf(stderr, "cio_bench: echo: the server closed a connection\n");
                bench_stop_server(pid);
                return 1;
            }
            c->got += (size_t)r;
            if (c->got == MSG) {
                c->got = 0;
                count++;
                send_msg(c->fd);
            }
        }
        if (!measuring && now - start >= warm) {
            measuring = true;
            count = 0;
            t0 = now;
            cpu0 = bench_cpu_seconds();
            srv0 = bench_proc_cpu_seconds(pid);
        } else if (measuring && now - t0 >= budget) {
            double wall = (double)(now - t0) / 1e9;
            bench_result("main", (double)count / wall, "rt/s");
            bench_result("client_cpu", 100.0 * (bench_cpu_seconds() - cpu0) / wall, "%");
            double srv1 = bench_proc_cpu_seconds(pid);
            if (srv0 >= 0 && srv1 >= 0 && count > 0) /* the server's CPU per round trip (clock ticks) */
                bench_result("server_us_per_rt", (srv1 - srv0) * 1e6 / (double)count, "us");
            break;
        }
    }
    for (int i = 0; i < conns; i++)
        close(st[i].fd);
    close(ep);
    bench_stop_server(pid);
    return 0;
}

/* ---- B16: one connection, one 64-byte message at a time: round-trip latency --------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int latency(const bench_opts *o, const char *contender)
{
    bench_report_cpu = false;
    if (!contender_available(contender))
        return BENCH_NA;
    uint16_t port;
    int lfd = bench_listen_loopback(&port, 256);
    pid_t pid = start_server(o, contender, false, lfd, -1);
    close(lfd);
    int cpu = bench_client_cpu(o->cpus);
    if (cpu >= 0)
        bench_pin_self(cpu);
    int fd = bench_connect_loopback(port);
    size_t cap = o->smoke ? 100 : 200000, n = 0;
    int64_t *rtt = (int64_t *)malloc(cap * sizeof *rtt);
    if (rtt == NULL)
        bench_die("malloc");
    char buf[MSG];
    int64_t start = bench_now_ns(), warm = (int64_t)(o->seconds * 0.2e9), budget = (int64_t)(o->seconds * 1e9);
    for (;;) {
        int64_t t = bench_now_ns();
        send_msg(fd);
        for (size_t got = 0; got < MSG;) {
            ssize_t r = read(fd, buf, MSG - got);
            if (r <= 0) {
                fprintf(stderr, "cio_bench: latency: the server closed the connection\n");
                bench_stop_server(pid);
                free(rtt);
                return 1;
            }
            got += (size_t)r;
        }
        int64_t now = bench_now_ns();
        if (now - start >= warm && n < cap)
            rtt[n++] = now - t;
        if (now - start >= warm + budget || n == cap)
            break;
    }
    qsort(rtt, n, sizeof *rtt, cmp_i64);
    bench_result("main", (double)rtt[n / 2], "ns/rt");
    bench_result("p99", (double)rtt[n * 99 / 100], "ns/rt");
    bench_result("rounds", (double)n, "n");
    free(rtt);
    close(fd);
    bench_stop_server(pid);
    return 0;
}

/* ---- B11: bulk ------------------------------------------------------------------------------------------------------
 */

static char chunk[BULK_CHUNK];

typedef struct uv_sender {
    uv_loop_t *loop;
    uv_tcp_t tcp;
    uv_connect_t conn;
    uv_write_t w[4];
    int64_t end;
    int live;
    bool stopping;
} uv_sender;

static void uv_sender_write(uv_sender *s, uv_write_t *w);

static void uv_sender_wrote(uv_write_t *w, int status)
{
    uv_sender *s = (uv_sender *)w->data;
    s->live--;
    if (status != 0)
        bench_die("uv_write");
    if (bench_now_ns() < s->end) {
        uv_sender_write(s, w);
    } else if (s->live == 0 && !s->stopping) {
        s->stopping = true;
        uv_close((uv_handle_t *)&s->tcp, NULL);
    }
}

static void uv_sender_write(uv_sender *s, uv_write_t *w)
{
    uv_buf_t b = uv_buf_init(chunk, BULK_CHUNK);
    w->data = s;
    s->live++;
    if (uv_write(w, (uv_stream_t *)&s->tcp, &b, 1, uv_sender_wrote) != 0)
        bench_die("uv_write");
}

static void uv_sender_connected(uv_connect_t *c, int status)
{
    uv_sender *s = (uv_sender *)c->data;
    if (status != 0)
        bench_die("uv_tcp_connect");
    for (int i = 0; i < 4; i++)
        uv_sender_write(s, &s->w[i]);
}

static int bulk(const bench_opts *o, const char *contender)
{
    bench_report_cpu = false;
    if (!contender_available(contender))
        return BENCH_NA;
    uint16_t port;
    int lfd = bench_listen_loopback(&port, 256);
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        bench_die("pipe2");
    pid_t pid = start_server(o, contender, true, lfd, pfd[1]);
    close(lfd);
    close(pfd[1]);
    int cpu = bench_client_cpu(o->cpus);
    if (cpu >= 0)
        bench_pin_self(cpu);
    memset(chunk, 'b', sizeof chunk);
    int64_t end = bench_now_ns() + (int64_t)(o->seconds * 1e9);
    bench_backend_kind kind;
    if (bench_kind_of(contender, &kind)) {
        bench_backend b;
        if (!bench_backend_open(kind, 0, &b)) {
            bench_stop_server(pid);
            return BENCH_NA;
        }
        cio_ip_address a = cio_ip4_loopback(port);
        cio_stream st;
        cio_err err = cio_net_connect(b.io, &a, NULL, &st);
        if (err != CIO_OK)
            bench_fail("cio_net_connect", err);
        while (bench_now_ns() < end) {
            err = cio_stream_write_all(b.io, &st, chunk, sizeof chunk);
            if (err != CIO_OK)
                bench_fail("cio_stream_write_all", err);
        }
        cio_stream_close(b.io, &st);
        bench_backend_close(&b);
    } else {
        uv_sender *s = (uv_sender *)calloc(1, sizeof *s);
        if (s == NULL)
            bench_die("calloc");
        s->loop = uv_default_loop();
        s->end = end;
        struct sockaddr_in sa;
        uv_ip4_addr("127.0.0.1", port, &sa);
        uv_tcp_init(s->loop, &s->tcp);
        s->conn.data = s;
        if (uv_tcp_connect(&s->conn, &s->tcp, (const struct sockaddr *)&sa, uv_sender_connected) != 0)
            bench_die("uv_tcp_connect");
        uv_run(s->loop, UV_RUN_DEFAULT);
        free(s);
    }
    bulk_report r;
    ssize_t got = read(pfd[0], &r, sizeof r);
    close(pfd[0]);
    bench_stop_server(pid);
    if (got != (ssize_t)sizeof r || r.ns <= 0) {
        fprintf(stderr, "cio_bench: bulk: no report from the receiver\n");
        return 1;
    }
    bench_result("main", (double)r.bytes * 8.0 / (double)r.ns, "Gbit/s");
    return 0;
}

const bench_entry bench_net_entries[] = {
    {"B10", "threaded", echo},
    {"B10", "evented-uring", echo},
    {"B10", "libuv", echo},
    {"B10", "go", echo},
    {"B10", "thread-per-conn", echo},
    {"B10", "raw-epoll", echo},
    {"B16", "threaded", latency},
    {"B16", "evented-uring", latency},
    {"B16", "evented-epoll", latency},
    {"B16", "libuv", latency},
    {"B16", "go", latency},
    {"B16", "tokio", latency},
    {"B16", "raw-epoll", latency},
    {"B16", "thread-per-conn", latency},
    {"B10", "tokio", echo},
    {"B11", "threaded", bulk},
    {"B11", "libuv", bulk},
    {"B14", "evented-epoll", echo},
    {"B14", "libuv", echo},
    {"B15", "threaded", echo},
    {"B15", "threaded+timeout", echo},
    {"B15", "evented-uring", echo},
    {"B15", "evented-uring+timeout", echo},
    {"B15", "evented-epoll", echo},
    {"B15", "evented-epoll+timeout", echo},
    {NULL, NULL, NULL},
};
