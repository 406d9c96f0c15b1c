/*
 * Fault injection on the resolver's TCP path (src/core/resolve.c, resolve_tcp.c; the method is in
 * tests/test_faults.c's top comment): no memory for the TCP space (its own call site, under
 * use-vc and after a truncated UDP answer), and no socket for the TCP connection (the connect's
 * socket sites of every backend): the lookup then takes the truncated answer at once rather than
 * wait for a server that stalls. The servers are tests/dns_servers.h's, on loopback.
 */
#include "faults.h"
#include "dns_servers.h"
#include "resolve_tcp.h"

static void write_conf(fx *f, const char *text, char path[96])
{
    cio_file h;
    assert_ok(cio_dir_create_file(f->io, f->dir, "g", NULL, &h)); /* a name fx_close removes */
    assert_ok(cio_file_write_all(f->io, h, text, strlen(text)));
    cio_file_close(f->io, h);
    snprintf(path, 96, "%s/g", f->path);
}

static cio_err lookup_into(cio_io io, const char *name, const cio_lookup_options *o, size_t *naddrs)
{
    static cio_lookup_result results[16];
    cio_queue q;
    cio_queue_init(&q, results, sizeof results[0], 16);
    cio_err err = cio_hostname_lookup(io, name, o, &q);
    cio_lookup_result r;
    *naddrs = 0;
    while (cio_queue_get_one(io, &q, &r) == CIO_OK)
        *naddrs += r.kind == CIO_LOOKUP_ADDRESS;
    return err;
}

/* malloc@resolve_tcp_space: SystemResources, nothing leaked; under use-vc (before any socket: every
 * target) and after a truncated UDP answer (a server of the test's own). */
static void test_resolve_tcp_memory_fails(void **state)
{
    fx f;
    fx_open(state, &f);
    char resolv[96];
    write_conf(&f, "nameserver 127.0.0.1\noptions use-vc timeout:1 attempts:1\n", resolv);
    cio_lookup_options o;
    memset(&o, 0, sizeof o);
    o.hosts_file = "/nonexistent/hosts";
    o.resolv_conf = resolv;
    o.family = CIO_IP4;
    o.dns_port = 9;
    int fds = fd_count();
    size_t n = 0;
    assert_true(cio__fault_errno("malloc@resolve_tcp_space", ENOMEM, 0, -1) == 1);
    cio_err err = lookup_into(f.io, "vc.test", &o, &n);
    unsigned hits = cio__fault_hits("malloc@resolve_tcp_space");
    cio__sys_reset();
    assert_err(err, CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(hits, 1);
    assert_int_equal(n, 0);
    assert_int_equal(fd_count(), fds);
    covered("malloc@resolve_tcp_space", "ENOMEM");

    dns_test_server s;
    err = dns_test_server_start(f.io, &s, TCP_NONE, false);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE || err == CIO_E_NETWORK_DOWN) {
        fx_close(&f);
        return; /* the use-vc case above covered the site */
    }
    assert_ok(err);
    (void)cio_dir_delete_file(f.io, f.dir, "g");
    write_conf(&f, "nameserver 127.0.0.1\noptions timeout:2 attempts:1\n", resolv);
    o.dns_port = s.udp.address.port;
    cio__fault_reset();
    assert_true(cio__fault_errno("malloc@resolve_tcp_space", ENOMEM, 0, -1) == 1);
    err = lookup_into(f.io, "trunc.test", &o, &n);
    hits = cio__fault_hits("malloc@resolve_tcp_space");
    cio__sys_reset();
    assert_err(err, CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(hits, 1);
    /* with memory: the truncated answer's 3 addresses (nothing listens on TCP) */
    assert_ok(lookup_into(f.io, "trunc.test", &o, &n));
    assert_int_equal(n, 3);
    dns_test_server_stop(&s);
    fx_close(&f);
}

#if !defined(CIO_OS_WINDOWS) /* the POSIX socket sites; Windows' connect sites are tests/test_faults_windows*.c's */
/* No socket for the TCP connection (EMFILE at the connect's socket, whichever backend): the lookup
 * takes the truncated answer at once; the stalling TCP server is never reached. */
static void test_resolve_tcp_no_socket(void **state)
{
    fx f;
    fx_open(state, &f);
    dns_test_server s;
    cio_err err = dns_test_server_start(f.io, &s, TCP_STALL, false);
    if (err == CIO_E_ADDRESS_IN_USE || err == CIO_E_NETWORK_DOWN || err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        fx_close(&f);
        if (err == CIO_E_NETWORK_DOWN)
            CIO_SKIP("no sockets on this target (NetworkDown)");
        if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
            CIO_SKIP("concurrency unavailable (the servers are tasks)");
        CIO_SKIP("the TCP port of the server's UDP port number is taken");
    }
    assert_ok(err);
    char resolv[96];
    write_conf(&f, "nameserver 127.0.0.1\noptions timeout:2 attempts:1\n", resolv);
    cio_lookup_options o;
    memset(&o, 0, sizeof o);
    o.hosts_file = "/nonexistent/hosts";
    o.resolv_conf = resolv;
    o.family = CIO_IP4;
    o.dns_port = s.udp.address.port;
    static const char *const sites[] = {"socket@connect_ip", "socket@uring_socket"};
    for (size_t i = 0; i < 2; i++)
        (void)cio__fault_errno(sites[i], EMFILE, 0, -1);
    unsigned tcp0 = atomic_load(&cio__dns_stats.tcp_exchanges);
    cio_timestamp t0 = cio_now(f.io, CIO_CLOCK_AWAKE);
    size_t n = 0;
    err = lookup_into(f.io, "trunc.test", &o, &n);
    int64_t ms = (cio_now(f.io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    unsigned hit = 0;
    for (size_t i = 0; i < 2; i++)
        hit += cio__fault_injected(sites[i]) != 0;
    assert_ok(err);
    assert_int_equal(n, 3);
    assert_true(ms < 900);
    assert_int_equal(hit, 1);
    assert_int_equal(atomic_load(&cio__dns_stats.tcp_exchanges) - tcp0, 1);
    assert_int_equal(atomic_load(&s.tcp_accepted), 0);
    for (size_t i = 0; i < 2; i++)
        if (cio__fault_injected(sites[i]) != 0)
            covered(sites[i], "EMFILE");
    cio__sys_reset();
    dns_test_server_stop(&s);
    fx_close(&f);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_resolve_tcp_memory_fails),
#if !defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_resolve_tcp_no_socket),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
