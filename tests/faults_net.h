/*
 * The socket cases both OS fault suites run (tests/test_faults_os.c at the POSIX call sites,
 * tests/test_faults_windows_os.c at the Winsock ones): prep opens what a case needs in the fixture
 * of tests/faults.h (a listener, a pending connection, a connected pair f->a/f->b, two UDP sockets),
 * run does the operation under the armed fault and returns its error (checking the data that
 * crossed), done closes what prep opened.
 */
#ifndef CIO_TESTS_FAULTS_NET_H
#define CIO_TESTS_FAULTS_NET_H
#include "faults.h"

static inline void net_pair(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_listen(f->io, &lo, NULL, &f->server));
    assert_ok(cio_net_connect(f->io, &f->server.address, NULL, &f->a));
    assert_ok(cio_server_accept(f->io, &f->server, &f->b));
}

static inline void net_unpair(fx *f)
{
    cio_stream_close(f->io, &f->a);
    cio_stream_close(f->io, &f->b);
    cio_server_close(f->io, &f->server);
}

static inline cio_err run_listen(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server s;
    cio_err err = cio_net_listen(f->io, &lo, NULL, &s);
    if (err == CIO_OK)
        cio_server_close(f->io, &s);
    return err;
}

static inline void prep_listener(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_listen(f->io, &lo, NULL, &f->server));
}

static inline void done_listener(fx *f)
{
    cio_server_close(f->io, &f->server);
}

/* The end of a connect case: when the connect (its result err) made *s, the listener f->server
 * accepts the peer and both are closed. Returns err. */
static inline cio_err accept_and_close(fx *f, cio_err err, cio_stream *s)
{
    if (err == CIO_OK) {
        cio_stream peer;
        assert_ok(cio_server_accept(f->io, &f->server, &peer));
        cio_stream_close(f->io, &peer);
        cio_stream_close(f->io, s);
    }
    return err;
}

static inline cio_err run_connect(fx *f)
{
    cio_stream s;
    cio_connect_options o;
    memset(&o, 0, sizeof o);
    o.timeout = cio_timeout_ms(5000);
    cio_err err = cio_net_connect(f->io, &f->server.address, &o, &s);
    return accept_and_close(f, err, &s);
}

static inline void prep_pending(fx *f)
{
    prep_listener(f);
    assert_ok(cio_net_connect(f->io, &f->server.address, NULL, &f->a));
}

static inline void done_pending(fx *f)
{
    cio_stream_close(f->io, &f->a);
    cio_server_close(f->io, &f->server);
}

static inline cio_err run_accept(fx *f)
{
    cio_stream s;
    cio_err err = cio_server_accept(f->io, &f->server, &s);
    if (err == CIO_OK)
        cio_stream_close(f->io, &s);
    return err;
}

static inline cio_err run_bind(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_socket s;
    cio_bind_options o = {.reuse_address = true,
                          .allow_broadcast = true}; /* reuse_address, allow_broadcast: options to set */
    cio_err err = cio_net_bind(f->io, &lo, &o, &s);
    if (err == CIO_OK)
        cio_socket_close(f->io, &s);
    return err;
}

static inline void prep_pair(fx *f)
{
    net_pair(f);
}

static inline void done_pair(fx *f)
{
    net_unpair(f);
}

/* Reads DATA_LEN bytes from b with read loops; they must be data's. */
static inline void stream_read_back(fx *f)
{
    static unsigned char buf[DATA_LEN];
    size_t done = 0;
    while (done < DATA_LEN) {
        size_t n = 0;
        assert_ok(cio_stream_read(f->io, &f->b, buf + done, DATA_LEN - done, &n));
        assert_true(n > 0);
        done += n;
    }
    assert_memory_equal(buf, data, DATA_LEN);
}

/* a -> b: 20000 bytes written with write_all, read with read loops; both must match. */
static inline cio_err run_stream_write(fx *f)
{
    cio_err err = cio_stream_write_all(f->io, &f->a, data, DATA_LEN);
    if (err == CIO_OK)
        stream_read_back(f);
    return err;
}

/* Reads `len` bytes from b into buf with read loops (`vectored`: each read into two buffers,
 * cio_stream_read_v); they must be data's first `len`. The first error ends it. */
static inline cio_err read_back_into(fx *f, unsigned char *buf, size_t len, bool vectored)
{
    size_t done = 0;
    while (done < len) {
        size_t left = len - done, n = 0;
        cio_err err;
        if (vectored && left > 1) {
            cio_iovec iov[2] = {{buf + done, left / 2}, {buf + done + left / 2, left - left / 2}};
            err = cio_stream_read_v(f->io, &f->b, iov, 2, &n);
        } else {
            err = cio_stream_read(f->io, &f->b, buf + done, left, &n);
        }
        if (err != CIO_OK)
            return err;
        assert_true(n > 0);
        done += n;
    }
    assert_memory_equal(buf, data, len);
    return CIO_OK;
}

static inline cio_err run_stream_read(fx *f)
{
    assert_ok(cio_stream_write_all(f->io, &f->a, data, 5000));
    static unsigned char buf[5000];
    return read_back_into(f, buf, 5000, false);
}

static inline cio_err run_shutdown(fx *f)
{
    cio_err err = cio_stream_shutdown(f->io, &f->a, CIO_SHUTDOWN_SEND);
    if (err == CIO_OK) {
        unsigned char b;
        size_t n = 1;
        assert_ok(cio_stream_read(f->io, &f->b, &b, 1, &n));
        assert_int_equal(n, 0); /* the peer sees the end */
    }
    return err;
}

static inline void prep_udp(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_bind(f->io, &lo, NULL, &f->udp1));
    assert_ok(cio_net_bind(f->io, &lo, NULL, &f->udp2));
}

static inline void done_udp(fx *f)
{
    cio_socket_close(f->io, &f->udp1);
    cio_socket_close(f->io, &f->udp2);
}

static inline cio_err run_send(fx *f)
{
    size_t n = 0;
    cio_err err = cio_socket_send_to(f->io, &f->udp1, &f->udp2.address, data, 100, &n);
    if (err != CIO_OK)
        return err;
    assert_int_equal(n, 100);
    unsigned char buf[200];
    size_t got = 0;
    assert_ok(cio_socket_receive_timeout(f->io, &f->udp2, buf, sizeof buf, &got, NULL, cio_timeout_ms(5000)));
    assert_int_equal(got, 100);
    assert_memory_equal(buf, data, 100);
    return CIO_OK;
}

static inline cio_err run_receive_timeout(fx *f)
{
    size_t n = 0;
    assert_ok(cio_socket_send_to(f->io, &f->udp1, &f->udp2.address, data, 100, &n));
    unsigned char buf[200];
    size_t got = 0;
    cio_err err = cio_socket_receive_timeout(f->io, &f->udp2, buf, sizeof buf, &got, NULL, cio_timeout_ms(5000));
    if (err == CIO_OK) {
        assert_int_equal(got, 100);
        assert_memory_equal(buf, data, 100);
    }
    return err;
}


/* ---- socket options and addresses (issue 25) ---- */

/* NODELAY on f->a, read back with cio (the OS's own reading is test_sockopt.c's). */
static inline cio_err run_sockopt_set(fx *f)
{
    cio_err err = cio_net_set_option(f->io, f->a.handle, CIO_SOCKOPT_NODELAY, 1);
    if (err == CIO_OK) {
        int64_t v = 0;
        assert_ok(cio_net_get_option(f->io, f->a.handle, CIO_SOCKOPT_NODELAY, &v));
        assert_int_equal(v, 1);
    }
    return err;
}

static inline cio_err run_sockopt_get(fx *f)
{
    int64_t v = -1;
    cio_err err = cio_net_get_option(f->io, f->a.handle, CIO_SOCKOPT_KEEPALIVE, &v);
    if (err == CIO_OK)
        assert_int_equal(v, 0);
    return err;
}

/* The outgoing multicast interface of a UDP socket: 127.0.0.1's. */
static inline cio_err run_multicast(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    return cio_net_multicast_interface(f->io, f->udp1.handle, &lo);
}

static inline cio_err run_local_address(fx *f)
{
    cio_ip_address a;
    cio_err err = cio_net_local_address(f->io, f->server.handle, &a);
    if (err == CIO_OK)
        assert_true(cio_ip_equal(&a, &f->server.address));
    return err;
}

static inline cio_err run_peer_address(fx *f)
{
    cio_ip_address a;
    cio_err err = cio_net_peer_address(f->io, f->a.handle, &a);
    if (err == CIO_OK)
        assert_true(cio_ip_equal(&a, &f->a.peer));
    return err;
}

/* listen with a socket option in its options struct (the create-time path of the option sites). */
static inline cio_err run_listen_sockopts(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_listen_options o = CIO_LISTEN_DEFAULTS;
    o.sockopts.nodelay = true;
    cio_server s;
    cio_err err = cio_net_listen(f->io, &lo, &o, &s);
    if (err == CIO_OK)
        cio_server_close(f->io, &s);
    return err;
}

#endif
