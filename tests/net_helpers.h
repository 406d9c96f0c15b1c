/*
 * The socket suites' shared helpers (test_net.c, test_net_udp_unix.c): open descriptors counted,
 * whether AF_UNIX exists here (and the exact errors where it does not), a millisecond clock, and a
 * task blocked in accept/read/connect/receive that the caller cancels. Include after backends.h,
 * os_helpers.h and asserts.h.
 */
#ifndef CIO_TESTS_NET_HELPERS_H
#define CIO_TESTS_NET_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include "cio.h"
#if defined(CIO_OS_WINDOWS)
#include <winsock2.h>
#endif

/* Open descriptors (sockets included) of this process; -1 where they cannot be counted. */
static inline int count_fds(void)
{
    return cio_test_count_handles();
}

#if defined(CIO_OS_WINDOWS)
/* Wine's ntdll exports wine_get_version; Windows' does not. */
static inline bool running_under_wine(void)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}
#endif

/* Whether AF_UNIX sockets exist here: on Windows only since 10 1803, and not under Wine 8, where
 * socket(AF_UNIX) fails with WSAEAFNOSUPPORT and every cio Unix call must say
 * CIO_E_ADDRESS_FAMILY_UNSUPPORTED. Asked of Winsock directly, not of cio. */
static inline bool have_af_unix(void)
{
#if defined(CIO_OS_WINDOWS)
    WSADATA data;
    if (WSAStartup(MAKEWORD(2, 2), &data) != 0)
        return false;
    SOCKET s = socket(AF_UNIX, SOCK_STREAM, 0);
    bool ok = s != INVALID_SOCKET;
    if (ok)
        closesocket(s);
    else
        assert_int_equal(WSAGetLastError(), WSAEAFNOSUPPORT);
    WSACleanup();
    return ok;
#else
    return true;
#endif
}

/* Where AF_UNIX is missing, listen and connect fail with exactly AddressFamilyUnsupported and
 * leave nothing open; returns true when it checked that (the caller's round trip cannot run). */
static inline bool unix_unsupported_checked(cio_io io, const cio_unix_address *addr)
{
    if (have_af_unix())
        return false;
    int fds = count_fds();
    cio_server srv;
    cio_stream s;
    cio_err err = cio_unix_listen(io, addr, NULL, &srv);
    if (err != CIO_E_ADDRESS_FAMILY_UNSUPPORTED)
        fail_msg("listen without AF_UNIX: got %s, want AddressFamilyUnsupported", cio_err_name(err));
    err = cio_unix_connect(io, addr, &s);
    if (err != CIO_E_ADDRESS_FAMILY_UNSUPPORTED)
        fail_msg("connect without AF_UNIX: got %s, want AddressFamilyUnsupported", cio_err_name(err));
    assert_int_equal(count_fds(), fds);
    print_message("      no AF_UNIX here: listen and connect are AddressFamilyUnsupported\n");
    return true;
}

static inline int64_t now_ms(cio_io io)
{
    return cio_now(io, CIO_CLOCK_AWAKE).ns / 1000000;
}

typedef struct blocked_ctx {
    cio_io io;
    cio_handle handle;
    cio_ip_address address;
    int kind; /* 0 accept, 1 read, 2 connect (no timeout), 3 UDP receive, 4 UDP receive with timeout */
} blocked_ctx;

static inline cio_err blocked_task(void *context)
{
    blocked_ctx *c = (blocked_ctx *)context;
    cio_err err;
    char buf[8];
    size_t n = 0;
    switch (c->kind) {
    case 0: {
        cio_server s = {c->handle, c->address};
        cio_stream out;
        err = cio_server_accept(c->io, &s, &out);
        if (err == CIO_OK)
            cio_stream_close(c->io, &out);
        break;
    }
    case 1: {
        cio_stream s = {c->handle, c->address};
        err = cio_stream_read(c->io, &s, buf, sizeof buf, &n);
        break;
    }
    case 2: {
        cio_stream out;
        err = cio_net_connect(c->io, &c->address, NULL, &out);
        if (err == CIO_OK)
            cio_stream_close(c->io, &out);
        break;
    }
    default: {
        cio_socket s = {c->handle, c->address};
        cio_timeout t = c->kind == 4 ? cio_timeout_ms(100000) : CIO_TIMEOUT_NONE;
        err = cio_socket_receive_timeout(c->io, &s, buf, sizeof buf, &n, NULL, t);
        break;
    }
    }
    return err == CIO_OK ? CIO_E_UNEXPECTED : err; /* it was not blocked */
}

/* Starts the blocked task, sleeps 20 ms, cancels: Canceled within a second. */
static inline void cancel_blocked(cio_io io, blocked_ctx *ctx)
{
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, blocked_task, ctx, sizeof *ctx, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
    int64_t t0 = now_ms(io);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_in_range(now_ms(io) - t0, 0, 1000);
}

#endif
