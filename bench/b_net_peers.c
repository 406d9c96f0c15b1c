/*
 * The echo servers a C programmer writes without a library, as peers of B10 and B16 (run in the
 * server process that b_net.c forks): one thread per connection doing blocking read/write
 * ("thread-per-conn"), and one thread with a raw epoll loop over non-blocking sockets
 * ("raw-epoll", level-triggered, 64-byte messages echoed as they arrive). Neither returns.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

static void *conn_thread(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[1024];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w <= 0) {
                close(fd);
                return NULL;
            }
            off += w;
        }
    }
    close(fd);
    return NULL;
}

_Noreturn void bench_echo_thread_per_conn(int listen_fd)
{
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            bench_die("accept4");
        }
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        if (pthread_create(&th, &attr, conn_thread, (void *)(intptr_t)fd) != 0)
            bench_die("pthread_create");
        pthread_attr_destroy(&attr);
    }
}

_Noreturn void bench_echo_raw_epoll(int listen_fd)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        bench_die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = listen_fd}};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev) != 0)
        bench_die("epoll_ctl");
    struct epoll_event evs[64];
    char buf[1024];
    for (;;) {
        int n = epoll_wait(ep, evs, 64, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            bench_die("epoll_wait");
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == listen_fd) {
                int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (c < 0)
                    continue;
                struct epoll_event cev = {.events = EPOLLIN, .data = {.fd = c}};
                if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev) != 0)
                    bench_die("epoll_ctl");
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN)
                    continue;
                close(fd); /* leaves the epoll set with its last descriptor */
                continue;
            }
            /* A 64-byte reply fits any socket buffer: one write (a short one would be a bug here). */
            if (write(fd, buf, (size_t)r) != r)
                close(fd);
        }
    }
}
