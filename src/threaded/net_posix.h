/*
 * The address conversions the Evented backend's ring operations (evented/net_uring.c) share with
 * the Threaded sockets: they hand the kernel the same sockaddrs. They live in net_common.c.
 */
#ifndef CIO_THREADED_NET_POSIX_H
#define CIO_THREADED_NET_POSIX_H

#include "net_common.h"

#endif /* CIO_THREADED_NET_POSIX_H */
