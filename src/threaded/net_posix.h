/*
 * Address conversions of net_posix.c, shared with the Evented backend's ring operations
 * (evented/net_uring.c), which hand the kernel the same sockaddrs the Threaded calls do.
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

#endif /* CIO_THREADED_NET_POSIX_H */
