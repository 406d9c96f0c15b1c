/*
 * The resolver's answers that do not fit in one UDP datagram, against real components on loopback:
 * a dnsmasq started by the test serving names with 60 and 300 A records and 60 AAAA records (an
 * addn-hosts file), and tiny servers of the test's own (tests/dns_servers.h): a UDP server whose
 * answers are truncated with no TCP listener, or with a TCP listener that stalls, or one that
 * misbehaves connection after connection before it answers; a UDP server without EDNS0 (FORMERR).
 * How many UDP and TCP exchanges happened is read from the resolver's counters (resolve_tcp.h).
 */
#define _POSIX_C_SOURCE 200809L
#define CIO_TEST_SUITE_TAG "tcp"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <sys/stat.h> /* chmod */
#endif

#include "resolve_helpers.h"
#include "dns_servers.h"
#include "resolve_tcp.h"

typedef struct counts {
    unsigned udp, truncated, tcp, tcp_answers;
} counts;

static counts counters(void)
{
    counts c = {atomic_load(&cio__dns_stats.udp_answers), atomic_load(&cio__dns_stats.udp_truncated),
                atomic_load(&cio__dns_stats.tcp_exchanges), atomic_load(&cio__dns_stats.tcp_answers)};
    return c;
}

static counts since(counts before)
{
    counts now = counters();
    counts d = {now.udp - before.udp, now.truncated - before.truncated, now.tcp - before.tcp,
                now.tcp_answers - before.tcp_answers};
    return d;
}

static int64_t ms_since(cio_io io, cio_timestamp t0)
{
    return (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
}

/* Every address of c is distinct and each of `want` (n of them) is among them. */
static void assert_all_distinct(const collected *c)
{
    for (size_t i = 0; i < c->naddrs; i++)
        for (size_t j = i + 1; j < c->naddrs; j++)
            assert_false(cio_ip_equal(&c->addrs[i], &c->addrs[j]));
}

/* ---- dnsmasq: 60 and 300 A records, 60 AAAA records ------------------------------------------- */

/* The addn-hosts file: where this process writes it and the path dnsmasq (a Linux process, also
 * under Wine) reads. */
static void big_hosts_paths(char native[128], char unix_path[128])
{
#if defined(CIO_OS_WINDOWS)
    snprintf(native, 128, "Z:\\tmp\\cio_test_resolve_tcp_%ld_big", OWN_PID);
#else
    snprintf(native, 128, "/tmp/cio_test_resolve_tcp_%ld_big", OWN_PID);
#endif
    snprintf(unix_path, 128, "/tmp/cio_test_resolve_tcp_%ld_big", OWN_PID);
    assert_true(tmp_count < TMP_FILES_MAX);
    strcpy(tmp_files[tmp_count++], native);
}

static void write_big_hosts(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 1; i <= 60; i++)
        fprintf(f, "127.0.1.%d big60.test\n", i);
    for (int i = 0; i < 300; i++)
        fprintf(f, "10.30.%d.%d big300.test\n", i / 200, i % 200 + 1);
    for (int i = 1; i <= 60; i++)
        fprintf(f, "fd00::6:%x big6.test\n", i);
    fclose(f);
#if !defined(CIO_OS_WINDOWS)
    /* dnsmasq reads it after dropping root for `nobody`: readable whatever the user's umask (077) */
    assert_int_equal(chmod(path, 0644), 0);
#endif
}

typedef struct big_fixture {
    dns_server pid;
    uint16_t port;
    char resolv[128], hosts[128], big[128];
} big_fixture;

/* dnsmasq with the big names, or a skip. */
static void big_start(cio_io io, big_fixture *b, const char *conf)
{
    CIO_NEED_TOOL(dnsmasq_installed(), "dnsmasq is not installed (apt-get install dnsmasq)");
    char unix_big[128], extra[200];
    big_hosts_paths(b->big, unix_big);
    write_big_hosts(b->big);
    snprintf(extra, sizeof extra, "--addn-hosts=%s", unix_big);
    dns_only_files("big", conf, b->resolv, b->hosts);
    cio_lookup_options o = {.resolv_conf = b->resolv, .hosts_file = b->hosts};
    if (!dnsmasq_serving(io, extra, "both.test", &o, &b->pid, &b->port))
        fail_msg("dnsmasq did not answer");
}

static void big_stop(big_fixture *b)
{
    stop_dnsmasq(b->pid);
    remove(b->resolv);
    remove(b->hosts);
    remove(b->big);
}

static void test_dnsmasq_many_records(void **state)
{
    cio_io io = cio_test_io(state);
    big_fixture b;
    big_start(io, &b, "nameserver 127.0.0.1\noptions timeout:4 attempts:2\n");
    collected *c = (collected *)malloc(sizeof *c);
    assert_non_null(c);
    cio_lookup_options o = {.port = 80, .resolv_conf = b.resolv, .hosts_file = b.hosts, .dns_port = b.port};

    /* 60 A records: ~1,000 bytes, in one EDNS0 UDP answer (no TC, no TCP) */
    o.family = CIO_IP4;
    counts k0 = counters();
    assert_int_equal(lookup(io, "big60.test", &o, c), CIO_OK);
    counts d = since(k0);
    assert_int_equal(c->naddrs, 60);
    assert_all_distinct(c);
    assert_true(has(c, "127.0.1.1") && has(c, "127.0.1.60"));
    assert_int_equal(c->addrs[59].port, 80);
    assert_int_equal(d.udp, 1);
    assert_int_equal(d.truncated, 0);
    assert_int_equal(d.tcp, 0);

    /* 300 A records (~4,800 bytes): truncated over UDP, all of them over TCP */
    k0 = counters();
    assert_int_equal(lookup(io, "big300.test", &o, c), CIO_OK);
    d = since(k0);
    assert_int_equal(c->naddrs, 300);
    assert_all_distinct(c);
    assert_true(has(c, "10.30.0.1") && has(c, "10.30.1.100"));
    assert_int_equal(d.truncated, 1);
    assert_int_equal(d.tcp, 1);
    assert_int_equal(d.tcp_answers, 1);
    assert_string_equal(c->canonical, "big300.test");

    /* 60 AAAA records (~1,700 bytes): over 1232, so TC and TCP */
    o.family = CIO_IP6;
    k0 = counters();
    assert_int_equal(lookup(io, "big6.test", &o, c), CIO_OK);
    d = since(k0);
    assert_int_equal(c->naddrs, 60);
    assert_all_distinct(c);
    assert_true(has(c, "fd00::6:1") && has(c, "fd00::6:3c"));
    assert_int_equal(d.truncated, 1);
    assert_int_equal(d.tcp_answers, 1);

    /* both families at once: the A query over UDP, the AAAA query over TCP */
    o.family = CIO_IP_NONE;
    assert_int_equal(lookup(io, "big6.test", &o, c), CIO_OK);
    assert_int_equal(c->naddrs, 60);
    assert_int_equal(lookup(io, "big300.test", &o, c), CIO_OK);
    assert_int_equal(c->naddrs, 300);
    assert_int_equal(c->canonicals, 1);

    /* options use-vc: TCP from the start, no UDP at all */
    write_text(b.resolv, "nameserver 127.0.0.1\noptions use-vc timeout:4 attempts:2\n");
    o.family = CIO_IP4;
    k0 = counters();
    assert_int_equal(lookup(io, "big60.test", &o, c), CIO_OK);
    d = since(k0);
    assert_int_equal(c->naddrs, 60);
    assert_int_equal(d.udp, 0);
    assert_int_equal(d.tcp_answers, 1);
    assert_int_equal(lookup(io, "nothing.test", &o, c), CIO_E_UNKNOWN_HOST_NAME);
    free(c);
    big_stop(&b);
}

/* cio_hostname_connect races every one of the 60 addresses (not the first 32): only the 55th,
 * 127.0.1.55, listens; the others refuse. */
static void test_connect_60_addresses(void **state)
{
    cio_io io = cio_test_io(state);
    cio_server srv;
    cio_ip_address at = cio_ip4(127, 0, 1, 55, 0);
    if (cio_net_listen(io, &at, NULL, &srv) != CIO_OK)
        CIO_SKIP("cannot listen on 127.0.1.55");
    big_fixture b;
    big_start(io, &b, "nameserver 127.0.0.1\noptions timeout:4 attempts:2\n");
    cio_connect_options co = {.timeout = cio_timeout_ms(5000)};
    co.lookup.resolv_conf = b.resolv;
    co.lookup.hosts_file = b.hosts;
    co.lookup.dns_port = b.port;
    cio_stream s;
    assert_int_equal(cio_hostname_connect(io, "big60.test", srv.address.port, &co, &s), CIO_OK);
    assert_true(cio_ip_equal(&s.peer, &srv.address));
    cio_stream_close(io, &s);
    cio_server_close(io, &srv);
    big_stop(&b);
}

/* ---- the test's own servers ------------------------------------------------------------------- */

static void own_files(const char *what, unsigned timeout, unsigned attempts, char resolv[128], char hosts[128])
{
    char conf[128];
    snprintf(conf, sizeof conf, "nameserver 127.0.0.1\noptions timeout:%u attempts:%u\n", timeout, attempts);
    dns_only_files(what, conf, resolv, hosts);
}

/* The test's own server (TCP `mode`; FORMERR to EDNS0 or not) and cio's files naming it (timeout and
 * attempts in resolv.conf), with IPv4 lookup options; skips where the server's TCP port is taken. */
typedef struct own_fixture {
    dns_test_server s;
    char resolv[128], hosts[128];
    cio_lookup_options o;
} own_fixture;

static void own_start(cio_io io, own_fixture *x, tcp_mode mode, bool formerr, const char *what, unsigned timeout,
                      unsigned attempts)
{
    cio_err err = dns_test_server_start(io, &x->s, mode, formerr);
    if (mode != TCP_NONE && err == CIO_E_ADDRESS_IN_USE)
        CIO_SKIP("the TCP port of the server's UDP port number is taken");
    CIO_REQUIRE_CONCURRENT(err);
    own_files(what, timeout, attempts, x->resolv, x->hosts);
    x->o = (cio_lookup_options){.resolv_conf = x->resolv,
                                .hosts_file = x->hosts,
                                .dns_port = x->s.udp.address.port,
                                .family = CIO_IP4};
}

static void own_stop(own_fixture *x)
{
    dns_test_server_stop(&x->s);
    remove(x->resolv);
    remove(x->hosts);
}

/* UDP answers are truncated and nothing listens on TCP: the truncated addresses, at once. */
static void test_udp_only_server(void **state)
{
    cio_io io = cio_test_io(state);
    own_fixture x;
    own_start(io, &x, TCP_NONE, false, "udponly", 2, 2);
    collected c;
    counts k0 = counters();
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(lookup(io, "trunc.test", &x.o, &c), CIO_OK);
    int64_t ms = ms_since(io, t0);
    counts d = since(k0);
    assert_int_equal(c.naddrs, 3);
    assert_true(has(&c, "127.0.2.1") && has(&c, "127.0.2.3"));
    assert_int_equal(d.truncated, 1);
    assert_int_equal(d.tcp, 1); /* refused: not asked again */
    assert_int_equal(d.tcp_answers, 0);
    assert_true(ms < 900);
    own_stop(&x);
}

/* A TCP server that accepts and never answers: the exchange ends at its window (timeout/attempts)
 * and the truncated answer is what there is. */
static void test_tcp_stall_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    own_fixture x;
    own_start(io, &x, TCP_STALL, false, "stall", 1, 1);
    collected c;
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(lookup(io, "stall.test", &x.o, &c), CIO_OK);
    int64_t ms = ms_since(io, t0);
    print_message("stalled TCP server: the lookup returned after %lld ms (window 1000 ms)\n", (long long)ms);
    assert_int_equal(c.naddrs, 3);
    assert_true(ms >= 900 && ms < 3000);
    assert_int_equal(atomic_load(&x.s.tcp_accepted), 1);
    own_stop(&x);
}

typedef struct lookup_args {
    cio_io io;
    const char *name;
    cio_lookup_options o;
    collected *c;
} lookup_args;

static cio_err lookup_task(void *context)
{
    lookup_args *a = (lookup_args *)context;
    return lookup(a->io, a->name, &a->o, a->c);
}

/* The same stall with a 30 s window: the caller's cancel ends the lookup promptly, no socket left. */
static void test_tcp_stall_canceled(void **state)
{
    cio_io io = cio_test_io(state);
    int before = cio_test_count_handles();
    own_fixture x;
    own_start(io, &x, TCP_STALL, false, "stall_cancel", 30, 1);
    collected *c = (collected *)malloc(sizeof *c);
    assert_non_null(c);
    lookup_args a = {io, "stall.test", x.o, c};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, lookup_task, &a, sizeof a, &f));
    for (int i = 0; i < 1000 && atomic_load(&x.s.tcp_accepted) == 0; i++)
        cio_sleep(io, cio_timeout_ms(10));
    assert_int_equal(atomic_load(&x.s.tcp_accepted), 1);
    cio_sleep(io, cio_timeout_ms(50)); /* into its receive */
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(cio_cancel(io, &f), CIO_E_CANCELED);
    int64_t ms = ms_since(io, t0);
    print_message("stalled TCP server: canceled in %lld ms\n", (long long)ms);
    assert_true(ms < 500);
    dns_test_server_stop(&x.s);
    free(c);
    if (before >= 0) {
        int after = cio_test_count_handles();
        for (int i = 0; i < 100 && after != before; i++) {
            cio_sleep(io, cio_timeout_ms(10));
            after = cio_test_count_handles();
        }
        assert_int_equal(after, before);
    }
    remove(x.resolv);
    remove(x.hosts);
}

/* Connection after connection the TCP server misbehaves (closes at once; a length of 5; a length
 * of 60000, 20 bytes, close), then answers one byte per write: the fourth round's whole answer
 * wins over the truncated one. */
static void test_tcp_misbehaving_then_trickle(void **state)
{
    cio_io io = cio_test_io(state);
    own_fixture x;
    own_start(io, &x, TCP_SCRIPT, false, "script", 8, 4);
    collected c;
    counts k0 = counters();
    assert_int_equal(lookup(io, "trickle.test", &x.o, &c), CIO_OK);
    counts d = since(k0);
    assert_int_equal(c.naddrs, 5);
    assert_true(has(&c, "127.0.3.1") && has(&c, "127.0.3.5"));
    assert_false(has(&c, "127.0.2.1"));
    assert_int_equal(d.tcp, 4);
    assert_int_equal(d.tcp_answers, 1);
    assert_int_equal(atomic_load(&x.s.tcp_accepted), 4);
    own_stop(&x);
}

/* A server without EDNS0 answers FORMERR to the OPT record: asked once more without it. */
static void test_formerr_without_edns(void **state)
{
    cio_io io = cio_test_io(state);
    own_fixture x;
    own_start(io, &x, TCP_NONE, true, "formerr", 2, 1);
    collected c;
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_int_equal(lookup(io, "old.test", &x.o, &c), CIO_OK);
    assert_true(ms_since(io, t0) < 900);
    assert_int_equal(c.naddrs, 1);
    assert_true(has(&c, "127.0.0.77"));
    assert_int_equal(atomic_load(&x.s.udp_queries), 2);
    assert_int_equal(atomic_load(&x.s.udp_with_opt), 1);
    own_stop(&x);
}

int main(void)
{
#if !defined(CIO_OS_WINDOWS) /* no SIGPIPE there */
    signal(SIGPIPE, SIG_IGN);
#endif
    atexit(remove_tmp_files);
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_dnsmasq_many_records), CIO_TESTS(test_connect_60_addresses),
        CIO_TESTS(test_udp_only_server),      CIO_TESTS(test_tcp_stall_timeout),
        CIO_TESTS(test_tcp_stall_canceled),   CIO_TESTS(test_tcp_misbehaving_then_trickle),
        CIO_TESTS(test_formerr_without_edns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
