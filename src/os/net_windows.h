/*
 * What net_windows.c shares with sockopt_windows.c: the mapped-failure step of its Winsock call
 * loop (RETRY after the cancel check, REINIT after WSAStartup once, BUG asserts in debug builds).
 */
#ifndef CIO_THREADED_NET_WINDOWS_H
#define CIO_THREADED_NET_WINDOWS_H

#include <stdbool.h>

#include "cio/errmap.h"
#include "cio/errors.h"

/* The error of one failed Winsock call (m: its mapped WSA code); *again: call once more. */
cio_err cio__os_wsa_failure(cio__mapped m, bool *again, bool *reinit_done);

#endif /* CIO_THREADED_NET_WINDOWS_H */
