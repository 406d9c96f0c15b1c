/*
 * The address conversions the Evented backend's ring operations (evented/net_uring.c) share with
 * the Threaded sockets (they hand the kernel the same sockaddrs; they live in net_common.c), and the
 * accept the Evented readiness core (evented/net.c) calls with its own flags.
 */
#ifndef CIO_THREADED_NET_POSIX_H
#define CIO_THREADED_NET_POSIX_H

#include "net_common.h"

/* cio__os_net_accept with extra accept4 flags (the Evented backend's SOCK_NONBLOCK). */
cio_err cio__os_net_accept_flags(cio_handle listener, cio_stream *out, int flags);

/* Waits up to timeout for `events` (POLLIN, POLLOUT) on fd, in the cancellation bracket: CIO_OK,
 * CIO_E_TIMEOUT, CIO_E_CANCELED, SystemResources, Unexpected (net_posix.c's poll_one). */
cio_err cio__os_poll_ready(int fd, short events, cio_timeout timeout);

#endif /* CIO_THREADED_NET_POSIX_H */
