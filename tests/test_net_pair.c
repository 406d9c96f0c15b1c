/*
 * Socket pairs, interface names, scoped addresses and files sent over streams (cio/net.h), on
 * every backend; and, where the OS call table is (Linux, Windows: TransmitFile), the faults of their
 * call sites.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "cio.h"

#if defined(CIO_OS_LINUX) || defined(CIO_OS_WINDOWS)
#include <errno.h>
#include "faults.h"
#endif

/* ---- helpers ------------------------------------------------------------------------------------------- */

/* A pair, or a skip where the target has none (WASI). */
static void pair_or_skip(cio_io io, cio_stream pair[2])
{
    cio_err err = cio_net_socket_pair(io, pair);
#if defined(CIO_OS_WASI)
    if (err == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no sockets on this target (WASI preview1)");
#endif
    assert_int_equal(err, CIO_OK);
}

static void read_exactly(cio_io io, const cio_stream *s, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        size_t n = 0;
        assert_int_equal(cio_stream_read(io, s, buf + got, len - got, &n), CIO_OK);
        assert_true(n > 0);
        got += n;
    }
}

static uint8_t pattern_byte(uint64_t i)
{
    return (uint8_t)((i * 2654435761u) >> 13);
}

/* A file of `len` pattern bytes in the working directory, open for reading (and writing). */
static cio_file make_file(cio_io io, const char *name, uint64_t len)
{
    cio_create_file_options o = CIO_CREATE_FILE_DEFAULTS;
    o.read = true;
    cio_file f;
    assert_int_equal(cio_dir_create_file(io, cio_dir_cwd(), name, &o, &f), CIO_OK);
    uint8_t *buf = (uint8_t *)malloc(65536);
    assert_non_null(buf);
    for (uint64_t off = 0; off < len;) {
        size_t n = len - off < 65536 ? (size_t)(len - off) : 65536;
        for (size_t i = 0; i < n; i++)
            buf[i] = pattern_byte(off + i);
        assert_int_equal(cio_file_write_all(io, f, buf, n), CIO_OK);
        off += n;
    }
    free(buf);
    return f;
}

/* ---- socket pairs -------------------------------------------------------------------------------------- */

static void test_pair_echo(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream p[2];
    pair_or_skip(io, p);
    assert_int_not_equal(p[0].handle, p[1].handle);
    assert_int_equal(cio_stream_write_all(io, &p[0], "ping", 4), CIO_OK);
    uint8_t buf[8];
    read_exactly(io, &p[1], buf, 4);
    assert_memory_equal(buf, "ping", 4);
    assert_int_equal(cio_stream_write_all(io, &p[1], "pong!", 5), CIO_OK);
    read_exactly(io, &p[0], buf, 5);
    assert_memory_equal(buf, "pong!", 5);
    /* a closed end is the other's end of stream */
    cio_stream_close(io, &p[0]);
    size_t n = 99;
    assert_int_equal(cio_stream_read(io, &p[1], buf, sizeof buf, &n), CIO_OK);
    assert_int_equal(n, 0);
    cio_stream_close(io, &p[1]);
}

static void test_pair_peer_closed(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream p[2];
    pair_or_skip(io, p);
    cio_stream_close(io, &p[1]);
    /* no SIGPIPE: the process would die here */
    static uint8_t big[1 << 16];
    cio_err err = CIO_OK;
    for (int i = 0; i < 64 && err == CIO_OK; i++)
        err = cio_stream_write_all(io, &p[0], big, sizeof big);
    assert_true(err == CIO_E_BROKEN_PIPE || err == CIO_E_CONNECTION_RESET_BY_PEER);
    cio_stream_close(io, &p[0]);
}

typedef struct read_ctx {
    cio_io io;
    cio_stream s;
} read_ctx;

static cio_err blocked_read(void *p)
{
    read_ctx *c = (read_ctx *)p;
    uint8_t b;
    size_t n;
    return cio_stream_read(c->io, &c->s, &b, 1, &n);
}

static void test_pair_cancel_read(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream p[2];
    pair_or_skip(io, p);
    read_ctx c = {io, p[1]};
    cio_future f;
    cio_err err = cio_concurrent(io, blocked_read, &c, sizeof c, &f);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_stream_close(io, &p[0]);
        cio_stream_close(io, &p[1]);
        CIO_SKIP("concurrency unavailable");
    }
    assert_int_equal(err, CIO_OK);
    assert_int_equal(cio_sleep(io, cio_timeout_ms(30)), CIO_OK);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    /* the pair is still usable */
    assert_int_equal(cio_stream_write_all(io, &p[0], "x", 1), CIO_OK);
    uint8_t b;
    read_exactly(io, &p[1], &b, 1);
    assert_int_equal(b, 'x');
    cio_stream_close(io, &p[0]);
    cio_stream_close(io, &p[1]);
}

/* ---- interfaces and scoped addresses ------------------------------------------------------------------- */

/* Some interface of this machine: its index and name (the first index from 1 that has a name). */
static bool some_interface(cio_io io, uint32_t *index, char *name, size_t len)
{
    for (uint32_t i = 1; i < 4096; i++)
        if (cio_net_interface_name(io, i, name, len, NULL) == CIO_OK) {
            *index = i;
            return true;
        }
    return false;
}

static void test_interface_names(void **state)
{
    cio_io io = cio_test_io(state);
    uint32_t idx = 0;
    char name[CIO_INTERFACE_NAME_MAX + 1];
    cio_err err = cio_net_interface_name_resolve(io, "lo", &idx);
    if (err == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no network interfaces on this target");
#if defined(CIO_OS_LINUX)
    assert_int_equal(err, CIO_OK); /* Linux always has its loopback */
    assert_true(idx > 0);
    size_t n = 0;
    assert_int_equal(cio_net_interface_name(io, idx, name, sizeof name, &n), CIO_OK);
    assert_string_equal(name, "lo");
    assert_int_equal(n, 2);
#else
    (void)err;
#endif
    if (!some_interface(io, &idx, name, sizeof name))
        CIO_SKIP("no interface has a name here");
    uint32_t back = 0;
    assert_int_equal(cio_net_interface_name_resolve(io, name, &back), CIO_OK);
    assert_int_equal(back, idx);
    /* a short buffer: NameTooLong, the NUL-terminated prefix, the full length */
    char small[2];
    size_t full = 0;
    assert_int_equal(cio_net_interface_name(io, idx, small, sizeof small, &full), CIO_E_NAME_TOO_LONG);
    assert_int_equal(strlen(small), 1);
    assert_int_equal(full, strlen(name));
    /* what no interface is */
    assert_int_equal(cio_net_interface_name_resolve(io, "", &back), CIO_E_INTERFACE_NOT_FOUND);
    assert_int_equal(cio_net_interface_name_resolve(io, "cio-no-such-if0", &back), CIO_E_INTERFACE_NOT_FOUND);
    assert_int_equal(cio_net_interface_name(io, 0, name, sizeof name, NULL), CIO_E_INTERFACE_NOT_FOUND);
    assert_int_equal(cio_net_interface_name(io, 0x7ffffff0u, name, sizeof name, NULL), CIO_E_INTERFACE_NOT_FOUND);
}

static void test_scoped_addresses(void **state)
{
    cio_io io = cio_test_io(state);
    cio_ip_address a;
    char text[CIO_IP_FORMAT_MAX];
    /* what needs no interface: a numeric scope, no scope, IPv4, and every parse error as cio_ip_parse */
    assert_int_equal(cio_ip_parse_resolve(io, "fe80::1%5", 80, &a), CIO_OK);
    assert_int_equal(a.scope_id, 5);
    assert_int_equal(cio_ip_parse_resolve(io, "10.1.2.3", 7, &a), CIO_OK);
    assert_int_equal(a.family, CIO_IP4);
    const char *bad[] = {":::", "FF001::FB", "ff01::fb%", "127.01.0.1", "1.2.3", "fe80::1%99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cio_ip_address x;
        assert_int_equal(cio_ip_parse_resolve(io, bad[i], 0, &x), cio_ip_parse(bad[i], 0, &x));
    }
    /* Zig's test: a scope that parses but names no interface */
    cio_err err = cio_ip_parse_resolve(io, "ff01::fb%123s45678901234", 0, &a);
    assert_int_equal(err, CIO_E_INTERFACE_NOT_FOUND);
    uint32_t idx = 0; /* set when some_interface says so (-O2 cannot see the skip end the test) */
    char name[CIO_INTERFACE_NAME_MAX + 1];
    if (!some_interface(io, &idx, name, sizeof name))
        CIO_SKIP("no interface has a name here");
    char scoped[CIO_INTERFACE_NAME_MAX + 16];
    snprintf(scoped, sizeof scoped, "fe80::1%%%s", name);
    assert_int_equal(cio_ip_parse_resolve(io, scoped, 443, &a), CIO_OK);
    assert_int_equal(a.family, CIO_IP6);
    assert_int_equal(a.scope_id, idx);
    assert_int_equal(a.port, 443);
    assert_int_equal(a.bytes[0], 0xfe);
    assert_int_equal(a.bytes[15], 1);
    char want[64];
    snprintf(want, sizeof want, "[fe80::1%%%u]:443", (unsigned)idx);
    assert_int_equal(cio_ip_format(&a, text, sizeof text, NULL), CIO_OK);
    assert_string_equal(text, want);
}

/* cio_ip_format_resolve writes the scope as the interface's name ("fe80::1%lo"), read back by
 * cio_ip_parse_resolve; an index no interface has (and every index where the OS has no interfaces)
 * stays a number; no scope, or IPv4, is cio_ip_format's text; a short buffer is NameTooLong. */
static void test_format_scope_name(void **state)
{
    cio_io io = cio_test_io(state);
    char text[CIO_IP_FORMAT_MAX + CIO_INTERFACE_NAME_MAX];
    size_t n = 0;
    cio_ip_address a;
    assert_int_equal(cio_ip6_parse("fe80::1%2147483632", 80, &a), CIO_OK);
    assert_int_equal(cio_ip_format_resolve(io, &a, text, sizeof text, &n), CIO_OK);
    assert_string_equal(text, "[fe80::1%2147483632]:80");
    assert_int_equal(n, strlen(text));
    cio_ip_address v4 = cio_ip4_loopback(9);
    assert_int_equal(cio_ip_format_resolve(io, &v4, text, sizeof text, NULL), CIO_OK);
    assert_string_equal(text, "127.0.0.1:9");
    assert_int_equal(cio_ip6_parse("ff02::1", 0, &a), CIO_OK);
    assert_int_equal(cio_ip_format_host_resolve(io, &a, text, sizeof text, NULL), CIO_OK);
    assert_string_equal(text, "ff02::1");
    assert_int_equal(cio_ip_format_resolve(io, NULL, text, sizeof text, NULL), CIO_E_INVALID_ARGUMENT);
    uint32_t idx = 0; /* set when some_interface says so (-O2 cannot see the skip end the test) */
    char name[CIO_INTERFACE_NAME_MAX + 1];
    if (!some_interface(io, &idx, name, sizeof name))
        CIO_SKIP("no interface has a name here (the index fallback was checked)");
    assert_int_equal(cio_ip6_parse("fe80::1", 443, &a), CIO_OK);
    a.scope_id = idx;
    char want[CIO_INTERFACE_NAME_MAX + 32];
    snprintf(want, sizeof want, "[fe80::1%%%s]:443", name);
    assert_int_equal(cio_ip_format_resolve(io, &a, text, sizeof text, &n), CIO_OK);
    assert_string_equal(text, want);
    assert_int_equal(n, strlen(want));
    cio_ip_address back;
    snprintf(want, sizeof want, "fe80::1%%%s", name);
    assert_int_equal(cio_ip_format_host_resolve(io, &a, text, sizeof text, NULL), CIO_OK);
    assert_string_equal(text, want);
    assert_int_equal(cio_ip_parse_resolve(io, text, 443, &back), CIO_OK);
    assert_true(cio_ip_equal(&back, &a));
    char small[8];
    assert_int_equal(cio_ip_format_host_resolve(io, &a, small, sizeof small, &n), CIO_E_NAME_TOO_LONG);
    assert_int_equal(n, strlen(want));
    assert_int_equal(small[sizeof small - 1], '\0');
}

/* A lookup of a scoped numeric address gives it back with the interface's index, and a scope no
 * interface has is UnknownHostName. */
static void test_lookup_scoped(void **state)
{
    cio_io io = cio_test_io(state);
    uint32_t idx = 0; /* set when some_interface says so (-O2 cannot see the skip end the test) */
    char name[CIO_INTERFACE_NAME_MAX + 1];
    if (!some_interface(io, &idx, name, sizeof name))
        CIO_SKIP("no interface has a name here");
    char text[CIO_INTERFACE_NAME_MAX + 16];
    snprintf(text, sizeof text, "fe80::7%%%s", name);
    cio_lookup_result buf[4];
    cio_queue q;
    cio_queue_init(&q, buf, sizeof buf[0], 4);
    assert_int_equal(cio_hostname_lookup(io, text, &(cio_lookup_options){.port = 22}, &q), CIO_OK);
    cio_lookup_result r;
    assert_int_equal(cio_queue_get_one(io, &q, &r), CIO_OK);
    assert_int_equal(r.kind, CIO_LOOKUP_ADDRESS);
    assert_int_equal(r.address.scope_id, idx);
    assert_int_equal(r.address.port, 22);
    cio_queue_init(&q, buf, sizeof buf[0], 4);
    assert_int_equal(cio_hostname_lookup(io, "fe80::7%cio-nope0", NULL, &q), CIO_E_UNKNOWN_HOST_NAME);
}

/* ---- files over streams -------------------------------------------------------------------------------- */

typedef struct send_ctx {
    cio_io io;
    cio_stream s;
    cio_file f;
    uint64_t offset, len, sent;
    bool close_after;
} send_ctx;

static cio_err send_file(void *p)
{
    send_ctx *c = (send_ctx *)p;
    cio_err err = cio_net_write_file(c->io, &c->s, c->f, c->offset, c->len, &c->sent);
    if (c->close_after)
        cio_stream_close(c->io, &c->s);
    return err;
}

/* Sends [offset, offset+len) of a file of `size` bytes through a pair from a concurrent task and
 * reads it on this one; checks every byte and the count. */
static void send_and_check(cio_io io, uint64_t size, uint64_t offset, uint64_t len)
{
    cio_stream p[2];
    pair_or_skip(io, p);
    cio_file f = make_file(io, "net_pair_file.bin", size);
    uint64_t expect = offset >= size ? 0 : (len < size - offset ? len : size - offset);
    send_ctx c = {io, p[0], f, offset, len, 0, true};
    cio_future fut;
    cio_err err = cio_concurrent(io, send_file, &c, sizeof c, &fut);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        /* one thread: the whole send must fit the pair's buffer first */
        assert_true(expect <= 65536);
        assert_int_equal(send_file(&c), CIO_OK);
    } else {
        assert_int_equal(err, CIO_OK);
    }
    uint8_t *buf = (uint8_t *)malloc(65536);
    assert_non_null(buf);
    uint64_t got = 0;
    for (;;) {
        size_t n = 0;
        assert_int_equal(cio_stream_read(io, &p[1], buf, 65536, &n), CIO_OK);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            if (buf[i] != pattern_byte(offset + got + i))
                fail_msg("byte %llu differs", (unsigned long long)(got + i));
        got += n;
    }
    free(buf);
    if (err != CIO_E_CONCURRENCY_UNAVAILABLE)
        assert_int_equal(cio_await(io, &fut), CIO_OK);
    assert_int_equal(got, expect);
    cio_stream_close(io, &p[1]);
    cio_file_close(io, f);
    assert_int_equal(cio_dir_delete_file(io, cio_dir_cwd(), "net_pair_file.bin"), CIO_OK);
}

static void test_write_file_whole(void **state)
{
    cio_io io = cio_test_io(state);
    send_and_check(io, (3u << 20) + 123, 0, UINT64_MAX);
}

static void test_write_file_ranges(void **state)
{
    cio_io io = cio_test_io(state);
    send_and_check(io, 200000, 70001, 50000);  /* inside */
    send_and_check(io, 200000, 150000, 90000); /* past the end: what is there */
    send_and_check(io, 1000, 5000, 10);        /* beyond the end: nothing */
    send_and_check(io, 1000, 0, 0);            /* nothing asked */
}

static void test_write_file_counts_on_error(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream p[2];
    pair_or_skip(io, p);
    cio_file f = make_file(io, "net_pair_err.bin", 1u << 20);
    cio_stream_close(io, &p[1]); /* nobody reads: the send fails */
    uint64_t sent = 12345;
    cio_err err = cio_net_write_file(io, &p[0], f, 0, UINT64_MAX, &sent);
    assert_true(err == CIO_E_BROKEN_PIPE || err == CIO_E_CONNECTION_RESET_BY_PEER);
    assert_true(sent < (1u << 20));
    cio_stream_close(io, &p[0]);
    cio_file_close(io, f);
    assert_int_equal(cio_dir_delete_file(io, cio_dir_cwd(), "net_pair_err.bin"), CIO_OK);
}

/* ---- faults (Linux: the OS call table) ------------------------------------------------------------------ */

#if defined(CIO_OS_LINUX)
static void test_fault_socketpair(void **state)
{
    cio_io io = cio_test_io(state);
    int before = fd_count();
    cio__fault_reset();
    cio_stream p[2];
    const struct {
        int err;
        cio_err want;
        const char *name;
    } cases[] = {
        {EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED, "EMFILE"},
        {ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED, "ENFILE"},
        {ENOMEM, CIO_E_SYSTEM_RESOURCES, "ENOMEM"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio__fault_reset();
        assert_true(cio__fault_errno("socketpair@socket_pair", cases[i].err, 0, 1) == 1);
        assert_int_equal(cio_net_socket_pair(io, p), cases[i].want);
        covered("socketpair@socket_pair", cases[i].name);
    }
    cio__fault_reset();
    assert_true(cio__fault_errno("socketpair@socket_pair", EINTR, 0, 3) == 1); /* retried */
    assert_int_equal(cio_net_socket_pair(io, p), CIO_OK);
    covered("socketpair@socket_pair", "EINTR");
    cio__sys_reset();
    cio_stream_close(io, &p[0]);
    cio_stream_close(io, &p[1]);
    assert_handles(before);
}

static void test_fault_interface_name(void **state)
{
    cio_io io = cio_test_io(state);
    uint32_t lo;
    assert_int_equal(cio_net_interface_name_resolve(io, "lo", &lo), CIO_OK);
    char name[32];
    cio__fault_reset();
    assert_true(cio__fault_errno("if_indextoname@interface_name", ENXIO, 0, 1) == 1);
    assert_int_equal(cio_net_interface_name(io, lo, name, sizeof name, NULL), CIO_E_INTERFACE_NOT_FOUND);
    covered("if_indextoname@interface_name", "ENXIO");
    cio__sys_reset();
}

/* sendfile is the path taken on every backend (Evented: on the helper pool, waiting for POLLOUT on
 * the loop between buffers-full); the kernel refuses the file (EINVAL): the library copies, every
 * byte arrives. */
static void test_fault_sendfile_fallback(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    assert_true(cio__fault_watch("sendfile@write_file") == 1); /* the zero-copy path is the one taken */
    send_and_check(io, 1u << 20, 0, UINT64_MAX);
    assert_true(cio__fault_hits("sendfile@write_file") > 0);
    cio__fault_reset();
    assert_true(cio__fault_errno("sendfile@write_file", EINVAL, 0, 1) == 1);
    send_and_check(io, 300000, 1, UINT64_MAX);
    covered("sendfile@write_file", "EINVAL");
    cio__fault_reset();
    assert_true(cio__fault_errno("sendfile@write_file", EINTR, 0, 5) == 1); /* retried */
    send_and_check(io, 100000, 0, UINT64_MAX);
    covered("sendfile@write_file", "EINTR");
    cio__fault_reset();
    assert_true(cio__fault_errno("pthread_sigmask@sendfile_block", EINVAL, 0, 1) == 1); /* sent unmasked */
    send_and_check(io, 10000, 0, UINT64_MAX);
    covered("pthread_sigmask@sendfile_block", "EINVAL");
    cio__sys_reset();
}

static void test_fault_sendfile_errors(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream p[2];
    pair_or_skip(io, p);
    cio_file f = make_file(io, "net_pair_fault.bin", 4096);
    const struct {
        int err;
        cio_err want;
        const char *name;
    } cases[] = {
        {EIO, CIO_E_INPUT_OUTPUT, "EIO"},
        {EPIPE, CIO_E_BROKEN_PIPE, "EPIPE"},
        {ECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER, "ECONNRESET"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio__fault_reset();
        assert_true(cio__fault_errno("sendfile@write_file", cases[i].err, 0, 1) == 1);
        if (cases[i].err == EPIPE) /* the EPIPE path also drains a SIGPIPE; none is pending here */
            assert_true(cio__fault_errno("sigtimedwait@sendfile_sigpipe", EINTR, 0, 2) == 1);
        uint64_t sent = 1;
        assert_int_equal(cio_net_write_file(io, &p[0], f, 0, 4096, &sent), cases[i].want);
        assert_int_equal(sent, 0);
        covered("sendfile@write_file", cases[i].name);
        if (cases[i].err == EPIPE)
            covered("sigtimedwait@sendfile_sigpipe", "EINTR");
    }
    cio__sys_reset();
    cio_stream_close(io, &p[0]);
    cio_stream_close(io, &p[1]);
    cio_file_close(io, f);
    assert_int_equal(cio_dir_delete_file(io, cio_dir_cwd(), "net_pair_fault.bin"), CIO_OK);
}
#endif

#if defined(CIO_OS_WINDOWS)
/* TransmitFile is the path taken; where it cannot be had (no pointer, no event, a file it refuses)
 * the library copies and every byte arrives; WSAEINTR is retried. */
static void test_fault_transmit_file_fallback(void **state)
{
    cio_io io = cio_test_io(state);
    send_and_check(io, 1000, 0, UINT64_MAX); /* warm-up: the pool's worker for the sender */
    int before = fd_count();
    cio__fault_reset();
    assert_true(cio__fault_watch("TransmitFile@write_file") == 1);
    send_and_check(io, 1u << 20, 0, UINT64_MAX);
    assert_true(cio__fault_hits("TransmitFile@write_file") > 0);
    cio__sys_reset();
    assert_handles(before);
    const struct {
        const char *site;
        int code;
        const char *name;
    } cases[] = {
        {"wsa_ioctl@transmit_file_fn", WSAEOPNOTSUPP, "WSAEOPNOTSUPP"},
        {"CreateEventW@transmit_event", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY"},
        {"TransmitFile@write_file", WSAEOPNOTSUPP, "WSAEOPNOTSUPP"},
        {"TransmitFile@write_file", WSAEINTR, "WSAEINTR"},
        {"CloseHandle@transmit_event", ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio__fault_reset();
        assert_true(cio__fault_errno(cases[i].site, cases[i].code, 0, 1) == 1);
        send_and_check(io, 300000, 1, UINT64_MAX);
        covered(cases[i].site, cases[i].name);
        cio__sys_reset();
        assert_handles(before);
    }
    cio__sys_reset();
    assert_handles(before);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_pair_echo),
        CIO_TESTS(test_pair_peer_closed),
        CIO_TESTS(test_pair_cancel_read),
        CIO_TESTS(test_interface_names),
        CIO_TESTS(test_scoped_addresses),
        CIO_TESTS(test_format_scope_name),
        CIO_TESTS(test_lookup_scoped),
        CIO_TESTS(test_write_file_whole),
        CIO_TESTS(test_write_file_ranges),
        CIO_TESTS(test_write_file_counts_on_error),
#if defined(CIO_OS_LINUX)
        CIO_TESTS(test_fault_socketpair),
        CIO_TESTS(test_fault_interface_name),
        CIO_TESTS(test_fault_sendfile_fallback),
        CIO_TESTS(test_fault_sendfile_errors),
#endif
#if defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_fault_transmit_file_fallback),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
