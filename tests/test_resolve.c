/*
 * cio_hostname_lookup and cio_hostname_connect against real components on loopback: a dnsmasq
 * started by the test (a test zone: A-only, AAAA-only, both, a CNAME chain, NXDOMAIN), a UDP socket
 * that never answers, a SERVFAIL responder and a responder that answers garbage (tasks using cio's
 * own sockets), and TCP listeners on 127.0.0.1 and ::1. resolv.conf and hosts files are written by
 * the test; dns_port points the resolver at the test servers. Every wait is bounded.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve_helpers.h"
#include "dns_servers.h"

static void test_numeric_and_validation(void **state)
{
    cio_io io = cio_test_io(state);
    collected c;
    cio_lookup_options o = {.port = 80};
    assert_int_equal(lookup(io, "127.0.0.1", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 1);
    assert_int_equal(c.addrs[0].port, 80);
    assert_int_equal(c.canonicals, 1);
    o.family = CIO_IP4;
    assert_int_equal(lookup(io, "::1", &o, &c), CIO_E_UNKNOWN_HOST_NAME);
    assert_int_equal(c.naddrs, 0);
    char name[300];
    memset(name, 'a', 299);
    name[299] = '\0';
    for (size_t i = 50; i < 299; i += 50)
        name[i] = '.';
    assert_int_equal(lookup(io, name, &o, &c), CIO_E_NAME_TOO_LONG);
    memset(name, 'b', 64);
    name[64] = '\0';
    assert_int_equal(lookup(io, name, &o, &c), CIO_E_INVALID_HOST_NAME);
    assert_int_equal(lookup(io, "a..b", &o, &c), CIO_E_INVALID_HOST_NAME);
    assert_int_equal(lookup(io, "", &o, &c), CIO_E_INVALID_HOST_NAME);
    assert_int_equal(lookup(io, "bad name", &o, &c), CIO_E_INVALID_HOST_NAME);
    assert_int_equal(cio_hostname_validate("ok-name.example."), CIO_OK);
}

static void test_localhost_and_hosts_file(void **state)
{
    cio_io io = cio_test_io(state);
    char hosts[128], resolv[128];
    tmp_path(hosts, sizeof hosts, "hosts");
    tmp_path(resolv, sizeof resolv, "resolv");
    write_text(hosts, "# comment\n10.1.2.3   myhost.test   Alias # trailing\n"
                      "fe80::1 myhost.test\n"
                      "garbage line without address\n"
                      "10.9.9.9\n");
    /* a nameserver nobody runs: localhost and the hosts file must not ask it */
    write_text(resolv, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
    cio_lookup_options o = {.port = 7, .hosts_file = hosts, .resolv_conf = resolv, .dns_port = 9};
    collected c;
    assert_int_equal(lookup(io, "localhost", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 2);
    assert_true(has(&c, "::1") && has(&c, "127.0.0.1"));
    assert_string_equal(c.canonical, "localhost");
    assert_int_equal(lookup(io, "x.LOCALHOST.", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 2);
    o.family = CIO_IP4;
    assert_int_equal(lookup(io, "localhost", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 1);
    assert_true(has(&c, "127.0.0.1"));
    o.family = CIO_IP_NONE;
    assert_int_equal(lookup(io, "alias", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 1);
    assert_true(has(&c, "10.1.2.3"));
    assert_string_equal(c.canonical, "myhost.test");
    assert_int_equal(lookup(io, "MYHOST.test", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 2);
    assert_int_equal(c.canonicals, 1);
    o.family = CIO_IP6;
    assert_int_equal(lookup(io, "myhost.test", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 1);
    assert_true(has(&c, "fe80::1"));
    remove(hosts);
    remove(resolv);
}

/* ---- a server that never answers, and a SERVFAIL responder ------------------------------------- */

static void test_server_never_answers(void **state)
{
    cio_io io = cio_test_io(state);
    cio_socket s;
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_int_equal(cio_net_bind(io, &lo, NULL, &s), CIO_OK);
    char resolv[128], hosts[128];
    dns_only_files("silent", "nameserver 127.0.0.1\noptions timeout:1 attempts:2\n", resolv, hosts);
    cio_lookup_options o = {.resolv_conf = resolv, .hosts_file = hosts, .dns_port = s.address.port};
    collected c;
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(lookup(io, "silent.test", &o, &c), CIO_E_NAME_SERVER_FAILURE);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    assert_true(ms >= 900 && ms < 5000);
    /* it was asked: A and AAAA, twice each (two attempt windows) */
    uint8_t buf[600];
    size_t n, got = 0;
    while (cio_socket_receive_timeout(io, &s, buf, sizeof buf, &n, NULL, cio_timeout_ms(0)) == CIO_OK)
        got++;
    assert_int_equal(got, 4);
    cio_socket_close(io, &s);
    remove(resolv);
    remove(hosts);
}

typedef struct responder {
    cio_io io;
    cio_socket sock;
    _Atomic(unsigned) *count;
} responder;

static cio_err servfail_task(void *context)
{
    responder *r = (responder *)context;
    uint8_t buf[600];
    for (int i = 0; i < 1000; i++) {
        size_t n = 0;
        cio_ip_address from;
        cio_err err = cio_socket_receive_timeout(r->io, &r->sock, buf, sizeof buf, &n, &from, cio_timeout_ms(10000));
        if (err != CIO_OK)
            return err;
        if (n < 12)
            continue;
        atomic_fetch_add(r->count, 1);
        buf[2] = (uint8_t)(buf[2] | 0x80);       /* QR */
        buf[3] = (uint8_t)((buf[3] & 0xF0) | 2); /* SERVFAIL */
        (void)cio_socket_send_to(r->io, &r->sock, &from, buf, n, NULL);
    }
    return CIO_OK;
}

static cio_err start_servfail(cio_io io, const cio_ip_address *at, cio_socket *s, _Atomic(unsigned) *count,
                              cio_future *f)
{
    cio_err err = cio_net_bind(io, at, NULL, s);
    if (err != CIO_OK)
        return err;
    responder r = {io, *s, count};
    err = cio_concurrent(io, servfail_task, &r, sizeof r, f);
    if (err != CIO_OK)
        cio_socket_close(io, s);
    return err;
}

static void test_servfail_server(void **state)
{
    cio_io io = cio_test_io(state);
    _Atomic(unsigned) count = 0;
    cio_socket s;
    cio_future f;
    cio_ip_address lo = cio_ip4_loopback(0);
    CIO_REQUIRE_CONCURRENT(start_servfail(io, &lo, &s, &count, &f));
    char resolv[128], hosts[128];
    dns_only_files("servfail", "nameserver 127.0.0.1\nnameserver not-an-address\noptions timeout:3 attempts:3 bogus\n",
                   resolv, hosts);
    cio_lookup_options o = {.resolv_conf = resolv, .hosts_file = hosts, .dns_port = s.address.port};
    collected c;
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(lookup(io, "fail.test", &o, &c), CIO_E_NAME_SERVER_FAILURE);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    /* retried on SERVFAIL at once, until the attempts ran out: no need to wait for the windows */
    assert_true(ms < 900);
    assert_int_equal(atomic_load(&count), 6); /* (A + AAAA) x 3 attempts */
    cio_cancel(io, &f);
    cio_socket_close(io, &s);
    remove(resolv);
    remove(hosts);
}

/* ---- a server that answers garbage ----------------------------------------------------------- */

/* Answers every query with malformed packets carrying the query's own id (so they reach the
 * parser): a bare header, a truncated answer, a name pointer that loops, more answers announced
 * than present, an A record of 16 bytes, random bytes. With `then_valid` each burst ends with a
 * correct answer (A 127.0.0.77) for A queries. */
typedef struct garbage_ctx {
    cio_io io;
    cio_socket sock;
    bool then_valid;
    _Atomic(unsigned) *queries;
} garbage_ctx;

static size_t valid_answer(const uint8_t *q, size_t n, uint8_t *out)
{
    memcpy(out, q, n);
    out[2] = (uint8_t)(out[2] | 0x80); /* QR */
    out[3] = (uint8_t)(out[3] & 0xF0); /* NOERROR */
    out[7] = 1;                        /* ANCOUNT 1 */
    static const uint8_t rr[] = {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 77};
    memcpy(out + n, rr, sizeof rr);
    return n + sizeof rr;
}

static cio_err garbage_task(void *context)
{
    garbage_ctx *g = (garbage_ctx *)context;
    uint8_t q[600], a[700];
    for (int i = 0; i < 1000; i++) {
        size_t n = 0;
        cio_ip_address from;
        cio_err err = cio_socket_receive_timeout(g->io, &g->sock, q, 512, &n, &from, cio_timeout_ms(10000));
        if (err != CIO_OK)
            return err;
        n = strip_opt(q, n);
        if (n < 17)
            continue;
        atomic_fetch_add(g->queries, 1);
        bool is_a = q[n - 3] == 1; /* QTYPE low byte: 1 = A, 28 = AAAA */
        size_t m = valid_answer(q, n, a);
        uint8_t bad[700];
        /* 1: the header alone, announcing a question and an answer */
        memcpy(bad, a, 12);
        (void)cio_socket_send_to(g->io, &g->sock, &from, bad, 12, NULL);
        /* 2: the answer cut inside its address */
        (void)cio_socket_send_to(g->io, &g->sock, &from, a, m - 2, NULL);
        /* 3: the answer's name points at itself */
        memcpy(bad, a, m);
        bad[n] = 0xC0;
        bad[n + 1] = (uint8_t)n;
        (void)cio_socket_send_to(g->io, &g->sock, &from, bad, m, NULL);
        /* 4: fifty answers announced, one present */
        memcpy(bad, a, m);
        bad[7] = 50;
        (void)cio_socket_send_to(g->io, &g->sock, &from, bad, m, NULL);
        /* 5: an A record of 16 bytes */
        memcpy(bad, a, m);
        bad[n + 11] = 16;
        memset(bad + m, 0x41, 12);
        (void)cio_socket_send_to(g->io, &g->sock, &from, bad, m + 12, NULL);
        /* 6: the id, then noise */
        memcpy(bad, a, 2);
        for (size_t k = 2; k < 300; k++)
            bad[k] = (uint8_t)(k * 131 + 7);
        (void)cio_socket_send_to(g->io, &g->sock, &from, bad, 300, NULL);
        if (g->then_valid && is_a)
            (void)cio_socket_send_to(g->io, &g->sock, &from, a, m, NULL);
    }
    return CIO_OK;
}

static void garbage_lookup(void **state, bool then_valid)
{
    cio_io io = cio_test_io(state);
    _Atomic(unsigned) queries = 0;
    cio_ip_address lo = cio_ip4_loopback(0);
    garbage_ctx g;
    memset(&g, 0, sizeof g);
    g.io = io;
    g.then_valid = then_valid;
    g.queries = &queries;
    assert_int_equal(cio_net_bind(io, &lo, NULL, &g.sock), CIO_OK);
    cio_future f;
    cio_err err = cio_concurrent(io, garbage_task, &g, sizeof g, &f);
    if (err != CIO_OK)
        cio_socket_close(io, &g.sock);
    CIO_REQUIRE_CONCURRENT(err);
    char resolv[128], hosts[128];
    dns_only_files(then_valid ? "garbage_valid" : "garbage", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
                   resolv, hosts);
    cio_lookup_options o = {.resolv_conf = resolv,
                            .hosts_file = hosts,
                            .dns_port = g.sock.address.port,
                            .family = CIO_IP4};
    collected c;
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    err = lookup(io, "junk.test", &o, &c);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    if (then_valid) {
        /* the malformed packets are dropped; the good answer that follows them counts */
        assert_int_equal(err, CIO_OK);
        assert_int_equal(c.naddrs, 1);
        assert_true(has(&c, "127.0.0.77"));
        assert_true(ms < 900);
    } else {
        /* nothing usable came back: the server failed, after the (1 s) window, no sooner */
        assert_int_equal(err, CIO_E_NAME_SERVER_FAILURE);
        assert_int_equal(c.naddrs, 0);
        assert_true(ms >= 900 && ms < 5000);
    }
    assert_true(atomic_load(&queries) >= 1);
    cio_cancel(io, &f);
    cio_socket_close(io, &g.sock);
    unlink(resolv);
    unlink(hosts);
}

static void test_garbage_server(void **state)
{
    garbage_lookup(state, false);
}

static void test_garbage_then_answer(void **state)
{
    garbage_lookup(state, true);
}


static void test_dnsmasq_zone(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_NEED_TOOL(dnsmasq_installed(), "dnsmasq is not installed (apt-get install dnsmasq)");
    if (!CIO_HAVE_THREADS)
        CIO_SKIP("needs a second thread for the SERVFAIL responder");
    /* a free port on 127.0.0.1 for dnsmasq; the SERVFAIL responder takes the same on 127.0.0.2 */
    char resolv[128], hosts[128];
    dns_only_files("dnsmasq", "nameserver 127.0.0.1\nsearch search.test\noptions timeout:2 attempts:2\n", resolv,
                   hosts);
    cio_lookup_options o = {.port = 443, .resolv_conf = resolv, .hosts_file = hosts};
    dns_server pid;
    uint16_t port;
    if (!dnsmasq_serving(io, NULL, "both.test", &o, &pid, &port))
        fail_msg("dnsmasq did not answer");
    o.dns_port = port;
    collected c;
    assert_int_equal(lookup(io, "both.test", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 2);
    assert_true(has(&c, "127.0.0.10") && has(&c, "::10"));
    assert_int_equal(c.addrs[0].port, 443);
    assert_string_equal(c.canonical, "both.test");

    assert_int_equal(lookup(io, "v4only.test", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 1);
    assert_true(has(&c, "127.0.0.11"));
    assert_int_equal(lookup(io, "v6only.test", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 1);
    assert_true(has(&c, "::11"));
    o.family = CIO_IP4;
    assert_int_equal(lookup(io, "v6only.test", &o, &c), CIO_E_NO_ADDRESS_RETURNED);
    o.family = CIO_IP_NONE;

    assert_int_equal(lookup(io, "alias.test", &o, &c), CIO_OK);
    assert_int_equal(c.naddrs, 2);
    assert_true(has(&c, "127.0.0.10") && has(&c, "::10"));
    assert_string_equal(c.canonical, "both.test");
    assert_int_equal(c.canonicals, 1);

    assert_int_equal(lookup(io, "nothing.test", &o, &c), CIO_E_UNKNOWN_HOST_NAME);
    assert_int_equal(c.canonicals, 0);
    /* "www" has fewer dots than ndots (1): the search domain is tried first */
    assert_int_equal(lookup(io, "www", &o, &c), CIO_OK);
    assert_true(has(&c, "127.0.0.12"));
    assert_string_equal(c.canonical, "www.search.test");

    /* a SERVFAIL server listed first (127.0.0.2, same port) does not stop dnsmasq's answer */
    _Atomic(unsigned) count = 0;
    cio_socket sf;
    cio_future f;
    cio_ip_address lo2 = cio_ip4(127, 0, 0, 2, port);
    if (start_servfail(io, &lo2, &sf, &count, &f) == CIO_OK) {
        write_text(resolv, "nameserver 127.0.0.2\nnameserver 127.0.0.1\noptions timeout:2 attempts:2\n");
        assert_int_equal(lookup(io, "both.test", &o, &c), CIO_OK);
        assert_int_equal(c.naddrs, 2);
        cio_cancel(io, &f);
        cio_socket_close(io, &sf);
    }

    /* an IPv6 nameserver in the list: one dual-stack socket, the IPv4 server addressed as
     * v4-mapped (nothing listens on [::1]:port; dnsmasq answers) */
    cio_socket v6probe;
    cio_ip_address lo6 = cio_ip6_loopback(0);
    if (cio_net_bind(io, &lo6, NULL, &v6probe) == CIO_OK) {
        cio_socket_close(io, &v6probe);
        write_text(resolv, "nameserver ::1\nnameserver 127.0.0.1\noptions timeout:2 attempts:2\n");
        assert_int_equal(lookup(io, "both.test", &o, &c), CIO_OK);
        assert_int_equal(c.naddrs, 2);
    }

    stop_dnsmasq(pid);
    remove(resolv);
    remove(hosts);
}

/* ---- hostname_connect ------------------------------------------------------------------------- */

static int count_fds(void)
{
    return cio_test_count_handles();
}

/* The descriptor count is `before` again (where it can be counted: before >= 0) within a second: a
 * descriptor closed by a worker that is still finishing may linger for a moment. */
static void assert_fds_back_to(cio_io io, int before)
{
    int after = count_fds();
    for (int i = 0; i < 100 && after != before; i++) {
        cio_sleep(io, cio_timeout_ms(10));
        after = count_fds();
    }
    if (before >= 0)
        assert_int_equal(before, after);
}

static void test_connect_race(void **state)
{
    cio_io io = cio_test_io(state);
    int before = count_fds();
    cio_server v6;
    cio_ip_address lo6 = cio_ip6_loopback(0);
    if (cio_net_listen(io, &lo6, NULL, &v6) != CIO_OK)
        CIO_SKIP("no IPv6 loopback");
    uint16_t port = v6.address.port;
    /* 127.0.0.1:port is (almost certainly) closed: that attempt is refused */
    char hosts[128], resolv[128];
    tmp_path(hosts, sizeof hosts, "hosts_race");
    tmp_path(resolv, sizeof resolv, "resolv_race");
    write_text(hosts, "127.0.0.1 race.test\n::1 race.test\n");
    write_text(resolv, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
    for (int stagger = 0; stagger < 2; stagger++) {
        cio_connect_options co = {.timeout = cio_timeout_ms(5000)};
        co.lookup.hosts_file = hosts;
        co.lookup.resolv_conf = resolv;
        co.lookup.dns_port = 9;
        co.stagger = stagger != 0;
        cio_stream s;
        cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
        assert_int_equal(cio_hostname_connect(io, "race.test", port, &co, &s), CIO_OK);
        int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
        /* ::1 is the second address: with the stagger its attempt starts 250 ms after the first */
        if (stagger)
            assert_true(ms >= 200);
        assert_int_equal(s.peer.family, CIO_IP6);
        assert_int_equal(s.peer.port, port);
        /* the listener never accepted (slow to accept): the connection is still established */
        cio_stream_close(io, &s);
    }
    /* a listener on 127.0.0.1 only: ::1 refuses */
    cio_server v4;
    cio_ip_address lo4 = cio_ip4_loopback(0);
    assert_int_equal(cio_net_listen(io, &lo4, NULL, &v4), CIO_OK);
    cio_connect_options co = {.timeout = cio_timeout_ms(5000)};
    co.lookup.hosts_file = hosts;
    co.lookup.resolv_conf = resolv;
    co.lookup.dns_port = 9;
    cio_stream s;
    assert_int_equal(cio_hostname_connect(io, "race.test", v4.address.port, &co, &s), CIO_OK);
    assert_int_equal(s.peer.family, CIO_IP4);
    cio_stream accepted;
    assert_int_equal(cio_server_accept(io, &v4, &accepted), CIO_OK);
    cio_stream_close(io, &accepted);
    cio_stream_close(io, &s);
    cio_server_close(io, &v4);
    cio_server_close(io, &v6);
    /* nobody listens any more: both refused */
    assert_int_equal(cio_hostname_connect(io, "race.test", port, &co, &s), CIO_E_CONNECTION_REFUSED);
    /* an invalid name: the lookup's error */
    assert_int_equal(cio_hostname_connect(io, "bad..name", port, &co, &s), CIO_E_INVALID_HOST_NAME);
    /* a literal and NULL options */
    assert_int_equal(cio_hostname_connect(io, "127.0.0.1", port, NULL, &s), CIO_E_CONNECTION_REFUSED);
    assert_fds_back_to(io, before);
    remove(hosts);
    remove(resolv);
}

typedef struct connect_args {
    cio_io io;
    const char *name;
    cio_connect_options options;
    cio_stream *out;
} connect_args;

static cio_err connect_task(void *context)
{
    connect_args *a = (connect_args *)context;
    return cio_hostname_connect(a->io, a->name, 80, &a->options, a->out);
}

/* cio_hostname_connect blocked in a DNS lookup (the server never answers) is canceled promptly and
 * leaves no socket behind. */
static void test_connect_canceled_during_lookup(void **state)
{
    cio_io io = cio_test_io(state);
    int before = count_fds();
    cio_socket silent;
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_int_equal(cio_net_bind(io, &lo, NULL, &silent), CIO_OK);
    char resolv[128], hosts[128];
    dns_only_files("cancel", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n", resolv, hosts);
    cio_stream out;
    connect_args a = {io, "slow.test", {.timeout = cio_timeout_ms(5000)}, &out};
    a.options.lookup.resolv_conf = resolv;
    a.options.lookup.hosts_file = hosts;
    a.options.lookup.dns_port = silent.address.port;
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, connect_task, &a, sizeof a, &f));
    /* wait until the query reached the silent server */
    uint8_t buf[600];
    size_t n;
    assert_int_equal(cio_socket_receive_timeout(io, &silent, buf, sizeof buf, &n, NULL, cio_timeout_ms(10000)), CIO_OK);
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns < (int64_t)2000000000);
    cio_socket_close(io, &silent);
    assert_fds_back_to(io, before);
    remove(resolv);
    remove(hosts);
}

int main(void)
{
#if !defined(CIO_OS_WINDOWS) /* no SIGPIPE there */
    signal(SIGPIPE, SIG_IGN);
#endif
    atexit(remove_tmp_files);
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_numeric_and_validation),
        CIO_TESTS(test_localhost_and_hosts_file),
        CIO_TESTS(test_server_never_answers),
        CIO_TESTS(test_servfail_server),
        CIO_TESTS(test_garbage_server),
        CIO_TESTS(test_garbage_then_answer),
        CIO_TESTS(test_dnsmasq_zone),
        CIO_TESTS(test_connect_race),
        CIO_TESTS(test_connect_canceled_during_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
