/*
 * Networking on a target without it (WASI preview1, where tests/test_net.c cannot run: it needs
 * sockets): every call that would create, use or accept a socket fails with CIO_E_NETWORK_DOWN and
 * writes no handle, while the address helpers, which need no network, still work.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "backends.h"

static void test_sockets_are_network_down(void **state)
{
    cio_io io = cio_test_io(state);
    cio_ip_address any4;
    assert_int_equal(cio_ip_parse("127.0.0.1", 8080, &any4), CIO_OK);

    cio_server server;
    memset(&server, 0x5a, sizeof server);
    assert_int_equal(cio_net_listen(io, &any4, NULL, &server), CIO_E_NETWORK_DOWN);
    cio_stream stream;
    assert_int_equal(cio_net_connect(io, &any4, NULL, &stream), CIO_E_NETWORK_DOWN);
    cio_socket sock;
    assert_int_equal(cio_net_bind(io, &any4, NULL, &sock), CIO_E_NETWORK_DOWN);

    cio_unix_address ua;
    assert_int_equal(cio_unix_address_from_path("/tmp/cio-none.sock", &ua), CIO_OK);
    assert_int_equal(cio_unix_listen(io, &ua, NULL, &server), CIO_E_NETWORK_DOWN);
    assert_int_equal(cio_unix_connect(io, &ua, &stream), CIO_E_NETWORK_DOWN);
}

/* The socket option and address calls (issue 25): OperationUnsupported, nothing written. */
static void test_socket_options_unsupported(void **state)
{
    cio_io io = cio_test_io(state);
    int64_t v = 77;
    assert_int_equal(cio_net_set_option(io, 3, CIO_SOCKOPT_NODELAY, 1), CIO_E_OPERATION_UNSUPPORTED);
    assert_int_equal(cio_net_get_option(io, 3, CIO_SOCKOPT_NODELAY, &v), CIO_E_OPERATION_UNSUPPORTED);
    assert_int_equal(v, 77);
    cio_ip_address group, lo = cio_ip4_loopback(0);
    assert_int_equal(cio_ip_parse("239.1.2.3", 0, &group), CIO_OK);
    assert_int_equal(cio_net_multicast_join(io, 3, &group, &lo), CIO_E_OPERATION_UNSUPPORTED);
    assert_int_equal(cio_net_multicast_leave(io, 3, &group, NULL), CIO_E_OPERATION_UNSUPPORTED);
    assert_int_equal(cio_net_multicast_interface(io, 3, &lo), CIO_E_OPERATION_UNSUPPORTED);
    cio_ip_address out;
    assert_int_equal(cio_net_local_address(io, 3, &out), CIO_E_OPERATION_UNSUPPORTED);
    assert_int_equal(cio_net_peer_address(io, 3, &out), CIO_E_OPERATION_UNSUPPORTED);
}

static void test_addresses_still_work(void **state)
{
    (void)state;
    cio_ip_address a, b;
    assert_int_equal(cio_ip_parse("::1", 443, &a), CIO_OK);
    assert_int_equal(cio_ip_parse("::1", 443, &b), CIO_OK);
    assert_true(cio_ip_equal(&a, &b));
    char text[CIO_IP_FORMAT_MAX];
    size_t n = 0;
    assert_int_equal(cio_ip_format(&a, text, sizeof text, &n), CIO_OK);
    assert_int_equal(strlen(text), n);
    assert_true(n > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_sockets_are_network_down),
        CIO_TESTS(test_socket_options_unsupported),
        CIO_TESTS(test_addresses_still_work),
    };
    return cmocka_run_group_tests_name("net (none)", tests, NULL, NULL);
}
