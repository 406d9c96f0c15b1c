/*
 * examples/http_server.c as a real process (issue 25), on Threaded and on Evented (io_uring and
 * epoll, chosen with CIO_EVENTED_BACKEND in the server's environment): a load generator here
 * (threads, plain sockets) sends 10,000 keep-alive requests over 8 connections, all answered; then
 * it keeps sending and the test sends SIGINT: every request whose send completed before the kill
 * must be answered in full, the server must exit 0 (it checks its own descriptors: exit 2 on a
 * leak) within its deadline (measured).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"

#define CONNS 8
#define PHASE1 10000
#define DEADLINE_MS 2000

static atomic_int signaled;     /* set just before the kill */
static atomic_long answered;    /* responses received in full */
static atomic_long lost;        /* requests sent before the kill and not answered */
static atomic_long phase1_left; /* requests phase 1 still has to send */
static atomic_int phase2;       /* keep sending until the server closes */
static int port;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads one response (head and body); 1: complete, 0: the connection ended first. *closing: the
 * server said Connection: close. */
static int read_response(int fd, char *buf, size_t cap, size_t *have, int *closing)
{
    for (;;) {
        buf[*have] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end != NULL) {
            char *cl = strstr(buf, "Content-Length: ");
            size_t body = cl ? (size_t)strtoul(cl + 16, NULL, 10) : 0;
            size_t total = (size_t)(end + 4 - buf) + body;
            if (*have >= total) {
                *closing = strstr(buf, "Connection: close") != NULL && strstr(buf, "Connection: close") < end;
                if (strncmp(buf, "HTTP/1.1 200 OK", 15) != 0 || memcmp(end + 4, "Hello from cio!\n", 16) != 0)
                    return -1;
                memmove(buf, buf + total, *have - total);
                *have -= total;
                return 1;
            }
        }
        ssize_t n = read(fd, buf + *have, cap - 1 - *have);
        if (n <= 0)
            return 0;
        *have += (size_t)n;
    }
}

static void *client(void *arg)
{
    (void)arg;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        atomic_fetch_add(&lost, 1);
        return NULL;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static const char req[] = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    char buf[4096];
    size_t have = 0;
    for (;;) {
        if (!atomic_load(&phase2) && atomic_fetch_sub(&phase1_left, 1) <= 0)
            break;
        ssize_t w = send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
        int before = atomic_load(&signaled) == 0; /* the send completed before the kill */
        if (w != (ssize_t)(sizeof req - 1)) {
            if (before)
                atomic_fetch_add(&lost, 1);
            break;
        }
        int closing = 0;
        int r = read_response(fd, buf, sizeof buf, &have, &closing);
        if (r == 1)
            atomic_fetch_add(&answered, 1);
        else if (before || r < 0)
            atomic_fetch_add(&lost, 1);
        if (r != 1 || closing)
            break;
    }
    close(fd);
    return NULL;
}

static void run_clients(void)
{
    pthread_t t[CONNS];
    for (int i = 0; i < CONNS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, client, NULL), 0);
    for (int i = 0; i < CONNS; i++)
        pthread_join(t[i], NULL);
}

static void run_server(const char *flavour)
{
#if !defined(CIO_HTTP_SERVER_PATH)
    (void)flavour;
    CIO_SKIP("examples/http_server was not built (CIO_BUILD_EXAMPLES off)");
#else
    if (flavour != NULL) {
        cio_evented_options o = {0};
        o.flavour = strcmp(flavour, "io_uring") == 0 ? CIO_EVENTED_IO_URING : CIO_EVENTED_EPOLL;
        if (o.flavour == CIO_EVENTED_IO_URING && cio_test_under_valgrind())
            CIO_SKIP("io_uring under valgrind (backends.h says why)");
        cio_evented *e = NULL;
        cio_err err = cio_evented_create(&o, &e);
        if (err != CIO_OK) {
            print_message("      skip: evented/%s unavailable here: %s\n", flavour, cio_err_name(err));
            skip();
        }
        cio_evented_destroy(e);
    }
    int out[2];
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(out[1], 1);
        if (flavour != NULL)
            setenv("CIO_EVENTED_BACKEND", flavour, 1);
        char dl[32];
        snprintf(dl, sizeof dl, "%d", DEADLINE_MS);
        execl(CIO_HTTP_SERVER_PATH, CIO_HTTP_SERVER_PATH, "--port", "0", "--deadline-ms", dl,
              flavour != NULL ? "--evented" : NULL, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    char line[512];
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(sscanf(line, "listening on port %d", &port), 1);

    /* phase 1: 10,000 keep-alive requests, all answered */
    atomic_store(&signaled, 0);
    atomic_store(&answered, 0);
    atomic_store(&lost, 0);
    atomic_store(&phase2, 0);
    atomic_store(&phase1_left, PHASE1);
    int64_t t0 = now_ms();
    run_clients();
    int64_t ms = now_ms() - t0;
    print_message("      %d requests over %d connections: %lld ms (%.0f req/s)\n", PHASE1, CONNS, (long long)ms,
                  PHASE1 * 1000.0 / (double)(ms > 0 ? ms : 1));
    assert_int_equal(atomic_load(&lost), 0);
    assert_int_equal(atomic_load(&answered), PHASE1);

    /* phase 2: requests in flight when SIGINT comes */
    atomic_store(&answered, 0);
    atomic_store(&phase2, 1);
    pthread_t t[CONNS];
    for (int i = 0; i < CONNS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, client, NULL), 0);
    usleep(200 * 1000);
    atomic_store(&signaled, 1);
    int64_t k0 = now_ms();
    assert_int_equal(kill(pid, SIGINT), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    int64_t exit_ms = now_ms() - k0;
    for (int i = 0; i < CONNS; i++)
        pthread_join(t[i], NULL);
    line[0] = '\0';
    if (fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    fclose(f);
    print_message("      SIGINT with requests in flight: %ld answered in phase 2, exit %d after %lld ms; server: %s",
                  (long)atomic_load(&answered), WIFEXITED(status) ? WEXITSTATUS(status) : -1, (long long)exit_ms, line);
    assert_true(atomic_load(&answered) > 0);
    assert_int_equal(atomic_load(&lost), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* 2: a descriptor leaked */
    assert_true(exit_ms < DEADLINE_MS + 1000);
#endif
}

static void test_threaded(void **state)
{
    (void)state;
    run_server(NULL);
}

static void test_evented_uring(void **state)
{
    (void)state;
    run_server("io_uring");
}

static void test_evented_epoll(void **state)
{
    (void)state;
    run_server("epoll");
}

int main(void)
{
    (void)cio_test_backend_threaded, (void)cio_test_backend_uring, (void)cio_test_backend_epoll;
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threaded),
        cmocka_unit_test(test_evented_uring),
        cmocka_unit_test(test_evented_epoll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
