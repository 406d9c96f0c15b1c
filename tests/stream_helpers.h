/*
 * Connected streams and pipes for the suites that drive them (test_batch.c, test_timeouts.c):
 * loopback TCP pairs (every OS has them; a skip where the backend has no networking) and an OS
 * pipe (POSIX pipe(2), Windows CreatePipe; none on WASI). Include after backends.h and asserts.h.
 */
#ifndef CIO_TESTS_STREAM_HELPERS_H
#define CIO_TESTS_STREAM_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio.h"
#if defined(CIO_OS_WINDOWS)
#include <windows.h>
#elif !defined(CIO_OS_WASI)
#include <fcntl.h>
#include <unistd.h>
#endif

static inline int64_t now_ms(cio_io io)
{
    return cio_now(io, CIO_CLOCK_AWAKE).ns / 1000000;
}

/* A listener on 127.0.0.1 port 0 with room for `backlog` pending connections, or a skip where
 * there is no networking. */
static inline void listen_loopback_n(cio_io io, int backlog, cio_server *out)
{
    cio_ip_address a = cio_ip4_loopback(0);
    cio_listen_options o = CIO_LISTEN_DEFAULTS;
    o.backlog = backlog;
    cio_err err = cio_net_listen(io, &a, &o, out);
    if (err == CIO_E_NETWORK_DOWN)
        CIO_SKIP("no networking on this backend or target");
    assert_ok(err);
}

/* n connected pairs: a[i] the client side, b[i] the accepted side. */
static inline void socket_pairs(cio_io io, cio_stream *a, cio_stream *b, size_t n)
{
    cio_server srv;
    listen_loopback_n(io, (int)(n * 2 + 2), &srv);
    for (size_t i = 0; i < n; i++) {
        assert_ok(cio_net_connect(io, &srv.address, NULL, &a[i]));
        assert_ok(cio_server_accept(io, &srv, &b[i]));
    }
    cio_server_close(io, &srv);
}

static inline void close_pairs(cio_io io, cio_stream *a, cio_stream *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cio_stream_close(io, &a[i]);
        cio_stream_close(io, &b[i]);
    }
}

/* An OS pipe (read end, write end); false where the target has none. */
#if defined(CIO_OS_WINDOWS)
static inline bool make_pipe(cio_file *r, cio_file *w)
{
    HANDLE hr, hw;
    if (!CreatePipe(&hr, &hw, NULL, 0))
        return false;
    r->handle = hr;
    w->handle = hw;
    return true;
}

/* Writes to a pipe's end outside cio; closes one. */
static inline bool pipe_write_raw(cio_file w, const void *buf, size_t len)
{
    DWORD put = 0;
    return WriteFile(w.handle, buf, (DWORD)len, &put, NULL) && put == len;
}

static inline void pipe_close_raw(cio_file f)
{
    CloseHandle(f.handle);
}
#elif defined(CIO_OS_WASI)
static inline bool make_pipe(cio_file *r, cio_file *w)
{
    (void)r;
    (void)w;
    return false;
}
#else
static inline bool make_pipe(cio_file *r, cio_file *w)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    r->handle = fds[0];
    w->handle = fds[1];
    return true;
}

static inline bool pipe_write_raw(cio_file w, const void *buf, size_t len)
{
    return write(w.handle, buf, len) == (ssize_t)len;
}

static inline void pipe_close_raw(cio_file f)
{
    close(f.handle);
}
#endif

#endif /* CIO_TESTS_STREAM_HELPERS_H */
