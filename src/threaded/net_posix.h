/*
 * Address conversions of net_posix.c, shared with the Evented backend's ring operations
 * (evented/net_uring.c), which hand the kernel the same sockaddrs the Threaded calls do; and the
 * accept the Evented readiness core (evented/net.c) calls with its own flags.
 */
#ifndef CIO_THREADED_NET_POSIX_H
#define CIO_THREADED_NET_POSIX_H

#include <stdbool.h>
#include <sys/socket.h>

#include "cio/net.h"

/* An IPv4/IPv6 address as a sockaddr in *sa, its length in *len; false for another family. */
bool cio__t_sockaddr_from_ip(const cio_ip_address *a, struct sockaddr_storage *sa, socklen_t *len);
/* A sockaddr the kernel returned (len bytes) as an address; all zero for a family other than IP. */
void cio__t_sockaddr_to_ip(const struct sockaddr_storage *sa, socklen_t len, cio_ip_address *out);
/* A Unix-domain address (checked by the caller: 1..CIO_UNIX_PATH_MAX bytes) as a sockaddr_un; the length. */
socklen_t cio__t_sockaddr_from_unix(const cio_unix_address *a, struct sockaddr_storage *sa);
/* cio__t_net_accept with extra accept4 flags (the Evented backend's SOCK_NONBLOCK). */
cio_err cio__t_net_accept_flags(cio_handle listener, cio_stream *out, int flags);

#endif /* CIO_THREADED_NET_POSIX_H */
