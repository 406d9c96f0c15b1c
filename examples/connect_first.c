/*
 * Resolve a name and connect, first answer wins: cio_hostname_connect starts the lookup, starts one
 * connection attempt per address as the addresses arrive, keeps the first connection established
 * and cancels the lookup and every other attempt (their sockets are closed).
 *
 *     ./connect_first                 # "localhost", on a listener this program opens itself
 *     ./connect_first example.com 80  # a name and port of your choice (uses /etc/resolv.conf)
 *
 * With no port, a listener is opened on 127.0.0.1 (port chosen by the OS): "localhost" then gives
 * ::1 and 127.0.0.1 without asking DNS; the ::1 attempt is refused (or wins if something listens
 * there), the 127.0.0.1 attempt connects.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cio.h>

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "localhost";
    cio_threaded *threaded;
    if (cio_threaded_create(NULL, &threaded) != CIO_OK)
        return 1;
    cio_io io = cio_threaded_io(threaded);

    cio_server server;
    bool own_server = argc <= 2;
    uint16_t port;
    if (own_server) {
        cio_ip_address lo = cio_ip4_loopback(0);
        cio_err err = cio_net_listen(io, &lo, NULL, &server);
        if (err != CIO_OK) {
            fprintf(stderr, "listen: %s\n", cio_err_name(err));
            return 1;
        }
        port = server.address.port;
    } else {
        port = (uint16_t)strtoul(argv[2], NULL, 10);
    }

    cio_connect_options options = {.timeout = cio_timeout_ms(5000), .stagger = true};
    cio_stream stream;
    cio_err err = cio_hostname_connect(io, name, port, &options, &stream);
    if (err != CIO_OK) {
        fprintf(stderr, "connect to %s port %u: %s\n", name, (unsigned)port, cio_err_name(err));
        if (own_server)
            cio_server_close(io, &server);
        cio_threaded_destroy(threaded);
        return 1;
    }
    char text[CIO_IP_FORMAT_MAX];
    cio_ip_format(&stream.peer, text, sizeof text, NULL);
    printf("%s: connected to %s; the lookup and the other attempts were canceled\n", name, text);
    cio_stream_close(io, &stream);
    if (own_server)
        cio_server_close(io, &server);
    cio_threaded_destroy(threaded);
    return 0;
}
