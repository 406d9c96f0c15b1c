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

/* Calls `call` (an int expression, SOCKET_ERROR on failure; its result in `res`) until it succeeds
 * or fails for good: `err` is CIO_OK or the error of the WSA code through the map of `op`. */
#define CIO__OS_WSA_CALL(err, res, op, call)                                                    \
    do {                                                                                        \
        bool reinit__ = false, again__ = true;                                                  \
        (err) = CIO_OK;                                                                         \
        while (again__) {                                                                       \
            again__ = false;                                                                    \
            (res) = (call);                                                                     \
            if ((res) != SOCKET_ERROR)                                                          \
                break;                                                                          \
            (err) = cio__os_wsa_failure(cio__wsa_##op(WSAGetLastError()), &again__, &reinit__); \
        }                                                                                       \
    } while (0)

#endif /* CIO_THREADED_NET_WINDOWS_H */
