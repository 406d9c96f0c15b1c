/*
 * The address conversions the Evented backend's ring operations (evented/net_uring.c) share with
 * the Threaded sockets (they hand the kernel the same sockaddrs; they live in net_common.c), and the
 * accept the Evented readiness core (evented/net.c) calls with its own flags.
 */
#ifndef CIO_THREADED_NET_POSIX_H
#define CIO_THREADED_NET_POSIX_H

#include "net_common.h"

/* cio__t_net_accept with extra accept4 flags (the Evented backend's SOCK_NONBLOCK). */
cio_err cio__t_net_accept_flags(cio_handle listener, cio_stream *out, int flags);

#endif /* CIO_THREADED_NET_POSIX_H */
