/*
 * Addresses (cio/net.h), pure library code run on every target: Zig's Io/net/test.zig parse and
 * render tests (1-9 and the Unix address test) with their exact values and positions, RFC 5952
 * rendering and failure tables, Zig's parseLiteral, formatting into short buffers; and the
 * networking slots of cio_failing_io (NetworkDown).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cio.h"
#include "null_arg.h"

#include "asserts.h"

/* ---- parse and render ------------------------------------------------------------------------- */

static void expect_format(const cio_ip_address *a, const char *want)
{
    char buf[CIO_IP_FORMAT_MAX];
    size_t n = 0;
    assert_ok(cio_ip_format(a, buf, sizeof buf, &n));
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void expect_host(const cio_ip_address *a, const char *want)
{
    char buf[CIO_IP_FORMAT_MAX];
    size_t n = 0;
    assert_ok(cio_ip_format_host(a, buf, sizeof buf, &n));
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

/* Zig test 1: parse and render at "comptime" (here: any time). */
static void test_parse_and_render(void **state)
{
    (void)state;
    cio_ip_address a;
    assert_ok(cio_ip_parse("::1", 0, &a));
    expect_format(&a, "[::1]:0");
    assert_ok(cio_ip_parse("127.0.0.1", 0, &a));
    expect_format(&a, "127.0.0.1:0");
    assert_err(cio_ip_parse("::123.123.123.123", 0, &a), CIO_E_INVALID_CHARACTER);
    assert_err(cio_ip_parse("127.01.0.1", 0, &a), CIO_E_NON_CANONICAL);
}

/* Zig tests 2, 3, 5 and RFC 5952's rules: input -> the address as rendered (without the port). */
static const struct {
    const char *in;
    const char *out;
} ip6_render[] = {
    {"2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6"},                 /* Zig 2: no zero runs */
    {"2001:0db8:0000:0000:0001:0000:0000:0002", "2001:db8::1:0:0:2"}, /* Zig 3: first on a tie */
    {"2001:0db8:0000:0000:0000:0000:0001:0002", "2001:db8::1:2"},     /* Zig 3: longest */
    {"2001:0db8:0001:0000:0001:0000:0000:0002", "2001:db8:1:0:1::2"}, /* Zig 3: a single 0 stays */
    {"FF01:0:0:0:0:0:0:FB", "ff01::fb"},                              /* Zig 5 from here */
    {"FF01::Fb", "ff01::fb"},
    {"::1", "::1"},
    {"::", "::"},
    {"1::", "1::"},
    {"2001:db8::", "2001:db8::"},
    {"::1234:5678", "::1234:5678"},
    {"2001:db8::1234:5678", "2001:db8::1234:5678"},
    {"FF01::FB%1234", "ff01::fb%1234"},
    {"::ffff:123.5.123.5", "::ffff:123.5.123.5"},
    {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"}, /* RFC 5952 4.2.2: one 0 is not "::" */
    {"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},          /* 4.2.3: the longest run */
    {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},    /* 4.2.3: the first of equal runs */
    {"0:0:0:0:0:0:0:1", "::1"},
    {"1:0:0:0:0:0:0:0", "1::"},
    {"0:0:0:0:0:0:0:0", "::"},
    {"ABCD:EF01:2345:6789:ABCD:EF01:2345:6789", "abcd:ef01:2345:6789:abcd:ef01:2345:6789"}, /* 4.3 */
    {"1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"},
    {"::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"},
    {"0001:002:03:4::", "1:2:3:4::"},
    {"1::2:0:0:3", "1::2:0:0:3"},
    {"fe80::1%2", "fe80::1%2"},
    {"::FFFF:1.2.3.4", "::ffff:1.2.3.4"}, /* 5: IPv4-mapped kept, prefix in either case */
    {"::ffff:0.0.0.0", "::ffff:0.0.0.0"},
    {"::ffff:1234:5678", "::ffff:18.52.86.120"}, /* hex groups: still IPv4-mapped when rendered */
    {"fFfF:ffff:FFFF:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
};

static void test_ip6_render_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ip6_render / sizeof ip6_render[0]; i++) {
        cio_ip_address a;
        cio_err err = cio_ip6_parse(ip6_render[i].in, 0, &a);
        if (err != CIO_OK)
            fail_msg("%s: %s", ip6_render[i].in, cio_err_name(err));
        char buf[CIO_IP_FORMAT_MAX];
        assert_ok(cio_ip_format_host(&a, buf, sizeof buf, NULL));
        if (strcmp(buf, ip6_render[i].out) != 0)
            fail_msg("%s: rendered %s, want %s", ip6_render[i].in, buf, ip6_render[i].out);
        /* Zig's {f} form is the same in brackets with the port. */
        char want[CIO_IP_FORMAT_MAX + 8];
        snprintf(want, sizeof want, "[%s]:0", ip6_render[i].out);
        expect_format(&a, want);
        /* and the rendering parses back to the same address */
        cio_ip_address b;
        assert_ok(cio_ip6_parse(buf, 0, &b));
        assert_true(cio_ip_equal(&a, &b));
        assert_int_equal(a.scope_id, b.scope_id);
    }
}

/* Zig test 4: the raw bytes. */
static void test_ip6_raw_bytes(void **state)
{
    (void)state;
    static const uint8_t want[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2};
    cio_ip_address a;
    assert_ok(cio_ip6_parse("2001:db8:0000:0000:0001:0000:0000:0002", 0, &a));
    assert_int_equal(a.family, CIO_IP6);
    assert_memory_equal(a.bytes, want, 16);
}

/* Zig test 6 with the positions, and more failures. pos SIZE_MAX: not checked (Incomplete). */
static const struct {
    const char *in;
    cio_err err;
    size_t pos;
} ip6_fail[] = {
    {":::", CIO_E_INVALID_CHARACTER, 2},
    {"FF001::FB", CIO_E_OVERFLOW, 4},
    {"FF01::Fb:zig", CIO_E_INVALID_CHARACTER, 9},
    {"FF01:0:0:0:0:0:0:FB:", CIO_E_INVALID_END, 19},
    {"FF01:", CIO_E_INCOMPLETE, SIZE_MAX},
    {"::123.123.123.123", CIO_E_INVALID_CHARACTER, 5},
    {"1", CIO_E_INCOMPLETE, SIZE_MAX},
    {"ff01::fb%", CIO_E_INCOMPLETE, SIZE_MAX},
    {"", CIO_E_INCOMPLETE, SIZE_MAX},
    {"1:2:3:4:5:6:7", CIO_E_INCOMPLETE, SIZE_MAX},
    {"1:2:3:4:5:6:7:8:9", CIO_E_INVALID_END, 15},
    {"1::2::3", CIO_E_INVALID_CHARACTER, 5},
    {"00000::", CIO_E_INVALID_CHARACTER, 4},
    {":1", CIO_E_INVALID_CHARACTER, 1},
    {"::%1", CIO_E_INVALID_CHARACTER, 2},
    {"g::", CIO_E_INVALID_CHARACTER, 0},
    {"1::2 ", CIO_E_INVALID_CHARACTER, 4},
    {"64:ff9b::192.0.2.33", CIO_E_INVALID_CHARACTER, 12},
    {"::ffff:1.2.3", CIO_E_INVALID_ADDRESS, 7},
    {"::ffff:1.2.3.256", CIO_E_INVALID_ADDRESS, 7},
};

static void test_ip6_parse_failures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ip6_fail / sizeof ip6_fail[0]; i++) {
        cio_ip6_unresolved u;
        size_t pos = SIZE_MAX;
        cio_err err = cio_ip6_parse_unresolved(ip6_fail[i].in, strlen(ip6_fail[i].in), &u, &pos);
        if (err != ip6_fail[i].err)
            fail_msg("%s: got %s, want %s", ip6_fail[i].in, cio_err_name(err), cio_err_name(ip6_fail[i].err));
        if (ip6_fail[i].pos != SIZE_MAX && pos != ip6_fail[i].pos)
            fail_msg("%s: at %lu, want %lu", ip6_fail[i].in, (unsigned long)pos, (unsigned long)ip6_fail[i].pos);
        cio_ip_address a = cio_ip4(9, 9, 9, 9, 9);
        assert_err(cio_ip6_parse(ip6_fail[i].in, 0, &a), ip6_fail[i].err);
        assert_int_equal(a.family, CIO_IP4); /* untouched on failure */
    }
}

/* Zig tests 5, 7, 8: scopes. A numeric scope is the interface index; a name needs the OS. */
static void test_ip6_scopes(void **state)
{
    (void)state;
    cio_ip_address a;
    assert_ok(cio_ip6_parse("FF01::FB%1234", 80, &a));
    assert_int_equal(a.scope_id, 1234);
    expect_format(&a, "[ff01::fb%1234]:80");

    /* "ff01::fb%12345678901234" renders through the unresolved form (Zig 5) ... */
    cio_ip6_unresolved u;
    const char *long_numeric = "ff01::fb%12345678901234";
    assert_ok(cio_ip6_parse_unresolved(long_numeric, strlen(long_numeric), &u, NULL));
    assert_int_equal(u.scope_len, 14);
    assert_memory_equal(u.scope, "12345678901234", 14);
    assert_int_equal(u.bytes[0], 0xff);
    assert_int_equal(u.bytes[15], 0xfb);
    /* ... but is no 32-bit interface index (Zig's older resolve test: Overflow). */
    assert_err(cio_ip6_parse(long_numeric, 0, &a), CIO_E_OVERFLOW);
    assert_ok(cio_ip6_parse("ff01::fb%4294967295", 0, &a));
    assert_int_equal(a.scope_id, 4294967295u);
    assert_err(cio_ip6_parse("ff01::fb%4294967296", 0, &a), CIO_E_OVERFLOW);

    /* Zig 7: a name (even "123s45678901234") needs resolving: not a pure parse. */
    assert_err(cio_ip6_parse("ff01::fb%123s45678901234", 0, &a), CIO_E_INVALID_ADDRESS);
    assert_err(cio_ip6_parse("fe80::1%eth0", 0, &a), CIO_E_INVALID_ADDRESS);
    assert_ok(cio_ip6_parse_unresolved("fe80::1%eth0", 12, &u, NULL));
    assert_int_equal(u.scope_len, 4);
    assert_memory_equal(u.scope, "eth0", 4);
    assert_ok(cio_ip6_parse_unresolved("::1", 3, &u, NULL));
    assert_null(u.scope);

    /* Zig 8: an oversized scope id fails the parse. */
    char text[9 + 256 + 1];
    memcpy(text, "ff01::fb%", 9);
    memset(text + 9, 'a', 256);
    text[9 + 256] = '\0';
    size_t pos = 0;
    assert_err(cio_ip6_parse_unresolved(text, strlen(text), &u, &pos), CIO_E_NAME_TOO_LONG);
    assert_int_equal(pos, 9);
    assert_err(cio_ip6_parse(text, 0, &a), CIO_E_NAME_TOO_LONG);
    text[9 + 255] = '\0'; /* 255 bytes: a (long) name */
    assert_ok(cio_ip6_parse_unresolved(text, strlen(text), &u, NULL));
    assert_int_equal(u.scope_len, 255);
}

/* Zig test 9, and more. */
static const char *const ip4_round_trip[] = {"0.0.0.0",   "255.255.255.255", "1.2.3.4",   "123.255.0.91",
                                             "127.0.0.1", "10.0.0.255",      "100.64.1.0"};

static const struct {
    const char *in;
    cio_err err;
} ip4_fail[] = {
    {"256.0.0.1", CIO_E_OVERFLOW},         /* Zig 9 */
    {"x.0.0.1", CIO_E_INVALID_CHARACTER},  /* Zig 9 */
    {"127.0.0.1.1", CIO_E_INVALID_END},    /* Zig 9 */
    {"127.0.0.", CIO_E_INCOMPLETE},        /* Zig 9 */
    {"100..0.1", CIO_E_INVALID_CHARACTER}, /* Zig 9 */
    {"127.01.0.1", CIO_E_NON_CANONICAL},   /* Zig 9 */
    {"", CIO_E_INCOMPLETE},
    {"1.2.3", CIO_E_INCOMPLETE},
    {"1.2.3.4 ", CIO_E_INVALID_CHARACTER},
    {".1.2.3", CIO_E_INVALID_CHARACTER},
    {"1.2.3.00", CIO_E_NON_CANONICAL},
    {"1.2.3.1000", CIO_E_OVERFLOW},
    {"300.1.1.1", CIO_E_OVERFLOW},
    {"25a.0.0.1", CIO_E_INVALID_CHARACTER},
    {"1.2.3.4/24", CIO_E_INVALID_CHARACTER},
    {"-1.2.3.4", CIO_E_INVALID_CHARACTER},
};

static void test_ip4_parse_and_render(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ip4_round_trip / sizeof ip4_round_trip[0]; i++) {
        cio_ip_address a;
        assert_ok(cio_ip4_parse(ip4_round_trip[i], 0, &a));
        assert_int_equal(a.family, CIO_IP4);
        char want[32];
        snprintf(want, sizeof want, "%s:0", ip4_round_trip[i]);
        expect_format(&a, want);
        expect_host(&a, ip4_round_trip[i]);
    }
    for (size_t i = 0; i < sizeof ip4_fail / sizeof ip4_fail[0]; i++) {
        cio_ip_address a;
        cio_err err = cio_ip4_parse(ip4_fail[i].in, 0, &a);
        if (err != ip4_fail[i].err)
            fail_msg("%s: got %s, want %s", ip4_fail[i].in, cio_err_name(err), cio_err_name(ip4_fail[i].err));
        assert_err(cio_ip_parse(ip4_fail[i].in, 0, &a), ip4_fail[i].err); /* no ':' : IPv4 */
    }
    cio_ip_address a;
    assert_ok(cio_ip4_parse("192.168.1.20", 65535, &a));
    expect_format(&a, "192.168.1.20:65535");
    assert_int_equal(a.bytes[0], 192);
    assert_int_equal(a.bytes[3], 20);
    assert_int_equal(a.port, 65535);
}

static const struct {
    const char *in;
    cio_err err;
    const char *out;
} literals[] = {
    {"127.0.0.1:80", CIO_OK, "127.0.0.1:80"},
    {"127.0.0.1", CIO_OK, "127.0.0.1:0"},
    {"[::1]:8080", CIO_OK, "[::1]:8080"},
    {"[::1]", CIO_OK, "[::1]:0"},
    {"[fe80::1%3]:65535", CIO_OK, "[fe80::1%3]:65535"},
    {"[::1]x", CIO_E_INVALID_ADDRESS, NULL},
    {"[::1]:", CIO_E_INVALID_PORT, NULL},
    {"127.0.0.1:65536", CIO_E_INVALID_PORT, NULL},
    {"127.0.0.1:abc", CIO_E_INVALID_PORT, NULL},
    {"127.0.0.1:", CIO_E_INVALID_PORT, NULL},
    {"[::1", CIO_E_INVALID_ADDRESS, NULL},
    {"1.2.3:80", CIO_E_INVALID_ADDRESS, NULL},
    {"", CIO_E_INVALID_ADDRESS, NULL},
    {"[zz]:1", CIO_E_INVALID_ADDRESS, NULL},
    {"::1", CIO_E_INVALID_ADDRESS, NULL}, /* IPv6 needs the brackets */
};

static void test_parse_literal(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof literals / sizeof literals[0]; i++) {
        cio_ip_address a;
        cio_err err = cio_ip_parse_literal(literals[i].in, &a);
        if (err != literals[i].err)
            fail_msg("%s: got %s, want %s", literals[i].in, cio_err_name(err), cio_err_name(literals[i].err));
        if (err == CIO_OK)
            expect_format(&a, literals[i].out);
    }
}

static void test_format_buffer_and_helpers(void **state)
{
    (void)state;
    cio_ip_address a = cio_ip6_loopback(443);
    char buf[8];
    size_t n = 0;
    assert_err(cio_ip_format(&a, buf, sizeof buf, &n), CIO_E_NAME_TOO_LONG);
    assert_int_equal(n, strlen("[::1]:443"));
    assert_string_equal(buf, "[::1]:4"); /* cut, NUL-terminated */
    char exact[10];
    assert_ok(cio_ip_format(&a, exact, sizeof exact, &n));
    assert_string_equal(exact, "[::1]:443");
    assert_err(cio_ip_format(&a, NULL, 0, &n), CIO_E_NAME_TOO_LONG);
    assert_int_equal(n, 9);
    cio_ip_address none;
    memset(&none, 0, sizeof none);
    assert_err(cio_ip_format(&none, exact, sizeof exact, &n), CIO_E_INVALID_ARGUMENT);
    /* the longest text fits CIO_IP_FORMAT_MAX */
    cio_ip_address big;
    assert_ok(cio_ip6_parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff%4294967295", 65535, &big));
    expect_format(&big, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff%4294967295]:65535");

    cio_ip_address l4 = cio_ip4_loopback(1), any4 = cio_ip4_any(2), l6 = cio_ip6_loopback(3), any6 = cio_ip6_any(4);
    expect_format(&l4, "127.0.0.1:1");
    expect_format(&any4, "0.0.0.0:2");
    expect_format(&l6, "[::1]:3");
    expect_format(&any6, "[::]:4");
    cio_ip_address p;
    assert_ok(cio_ip_parse("127.0.0.1", 1, &p));
    assert_true(cio_ip_equal(&p, &l4));
    p.port = 2;
    assert_false(cio_ip_equal(&p, &l4)); /* IpAddress.setPort: the port counts */
    assert_false(cio_ip_equal(&l4, &l6));
    assert_null_arg(cio_ip_parse(NULL, 0, &p));
    assert_null_arg(cio_ip_parse("::1", 0, NULL));
}

/* Zig's "parse and render UNIX addresses": a 200-byte path is NameTooLong. */
static void test_unix_address(void **state)
{
    (void)state;
    cio_unix_address u;
    assert_ok(cio_unix_address_from_path("/tmp/testpath", &u));
    assert_int_equal(u.len, 13);
    assert_memory_equal(u.path, "/tmp/testpath", 13);
    char too_long[201];
    memset(too_long, 'a', 200);
    too_long[200] = '\0';
    assert_err(cio_unix_address_from_path(too_long, &u), CIO_E_NAME_TOO_LONG);
    assert_err(cio_unix_address_init(too_long, 109, &u), CIO_E_NAME_TOO_LONG);
    assert_ok(cio_unix_address_init(too_long, 108, &u));
    assert_ok(cio_unix_address_init("\0abstract", 9, &u));
    assert_int_equal(u.len, 9);
    assert_int_equal(u.path[0], '\0');
    assert_ok(cio_unix_address_init("\0abs\0tract", 11, &u)); /* an abstract name is any bytes */
    /* a NUL inside a file-system path would name another file: BadPathName, never a silent cut */
    assert_err(cio_unix_address_init("/tmp/a\0b", 8, &u), CIO_E_BAD_PATH_NAME);
    assert_err(cio_unix_address_init("/tmp/a\0", 7, &u), CIO_E_BAD_PATH_NAME);
    assert_err(cio_unix_address_init("x", 0, &u), CIO_E_INVALID_ARGUMENT);
}

/* ---- the failing backend ------------------------------------------------------------------------------ */

static void test_failing_io_network_down(void **state)
{
    (void)state;
    cio_io io = cio_failing_io();
    cio_ip_address a = cio_ip4_loopback(1);
    cio_server srv; /* the handles are never looked at */
    cio_stream st;
    cio_socket so;
    memset(&srv, 0, sizeof srv);
    memset(&st, 0, sizeof st);
    memset(&so, 0, sizeof so);
    cio_unix_address u;
    assert_ok(cio_unix_address_from_path("/tmp/x", &u));
    char buf[4];
    size_t n;
    cio_message m = {buf, sizeof buf, 0, a, false};
    assert_err(cio_net_listen(io, &a, NULL, &srv), CIO_E_NETWORK_DOWN);
    assert_err(cio_server_accept(io, &srv, &st), CIO_E_NETWORK_DOWN);
    assert_err(cio_net_connect(io, &a, NULL, &st), CIO_E_NETWORK_DOWN);
    assert_err(cio_net_bind(io, &a, NULL, &so), CIO_E_NETWORK_DOWN);
    assert_err(cio_unix_listen(io, &u, NULL, &srv), CIO_E_NETWORK_DOWN);
    assert_err(cio_unix_connect(io, &u, &st), CIO_E_NETWORK_DOWN);
    assert_err(cio_stream_read(io, &st, buf, sizeof buf, &n), CIO_E_NETWORK_DOWN);
    assert_err(cio_stream_write(io, &st, buf, sizeof buf, &n), CIO_E_NETWORK_DOWN);
    assert_err(cio_stream_write_all(io, &st, buf, sizeof buf), CIO_E_NETWORK_DOWN);
    assert_err(cio_stream_shutdown(io, &st, CIO_SHUTDOWN_BOTH), CIO_E_NETWORK_DOWN);
    assert_err(cio_socket_send_to(io, &so, &a, buf, 1, NULL), CIO_E_NETWORK_DOWN);
    assert_err(cio_socket_receive_from(io, &so, buf, sizeof buf, &n, NULL), CIO_E_NETWORK_DOWN);
    assert_err(cio_socket_receive_batch(io, &so, &m, 1, CIO_TIMEOUT_NONE, &n), CIO_E_NETWORK_DOWN);
    cio_stream_close(io, &st);
    cio_server_close(io, &srv);
    cio_socket_close(io, &so);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_render), cmocka_unit_test(test_ip6_render_table),
        cmocka_unit_test(test_ip6_raw_bytes),    cmocka_unit_test(test_ip6_parse_failures),
        cmocka_unit_test(test_ip6_scopes),       cmocka_unit_test(test_ip4_parse_and_render),
        cmocka_unit_test(test_parse_literal),    cmocka_unit_test(test_format_buffer_and_helpers),
        cmocka_unit_test(test_unix_address),     cmocka_unit_test(test_failing_io_network_down),
    };
    return cmocka_run_group_tests_name("net_addr", tests, NULL, NULL);
}
