/*
 * The OS-independent half of the Threaded sockets (net_common.c), shared by net_posix.c,
 * net_windows.c and the Evented backend's ring operations (evented/net_uring.c, through
 * net_posix.h): address conversions, deadlines, option defaults.
 *
 * Invariants:
 * - sockaddr_in/sockaddr_in6/sockaddr_un have the same members on POSIX and Winsock, so one
 *   conversion serves both; only the headers that declare them differ (chosen below by the
 *   generated cio/target.h, the one OS choice in this file). Ports and flow labels are stored in
 *   network byte order, scope ids in host order; an AF_UNIX (or any other) peer reads as all-zero.
 * - Nothing here makes an OS call: the call sites of the OS call table stay in the OS files.
 */
#ifndef CIO_THREADED_NET_COMMON_H
#define CIO_THREADED_NET_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cio/net.h"
#include "cio/target.h"

#if defined(CIO_OS_WINDOWS)
#include <winsock2.h>
#include <ws2tcpip.h>
#include <afunix.h>
#define CIO__OS_SHUT_RD SD_RECEIVE
#define CIO__OS_SHUT_WR SD_SEND
#define CIO__OS_SHUT_RDWR SD_BOTH
#else
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#define CIO__OS_SHUT_RD SHUT_RD
#define CIO__OS_SHUT_WR SHUT_WR
#define CIO__OS_SHUT_RDWR SHUT_RDWR
#endif

/* Every sockaddr a socket slot hands the OS, in one piece of storage. */
typedef union cio__os_sockaddr_any {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
    struct sockaddr_un un;
    struct sockaddr_storage storage;
} cio__os_sockaddr_any;

/* sa all zero, for the OS to fill: its size, the length to hand the call. */
static inline socklen_t cio__os_sockaddr_clear(cio__os_sockaddr_any *sa)
{
    memset(sa, 0, sizeof *sa);
    return (socklen_t)sizeof *sa;
}

/* An IPv4/IPv6 address as a sockaddr in *sa, its length in *len; false for another family. */
bool cio__os_sockaddr_from_ip(const cio_ip_address *a, struct sockaddr_storage *sa, socklen_t *len);
/* A sockaddr the OS returned (len bytes) as an address; all zero for a family other than IP. */
void cio__os_sockaddr_to_ip(const struct sockaddr_storage *sa, socklen_t len, cio_ip_address *out);
/* Copies the NUL-terminated `name` into buf (len bytes; always NUL-terminated when len > 0) and its
 * length into *out_len (if not NULL): CIO_OK, or NameTooLong with the prefix that fits. */
cio_err cio__os_name_out(const char *name, char *buf, size_t len, size_t *out_len);
/* A Unix-domain address (checked by the caller: 1..CIO_UNIX_PATH_MAX bytes) as a sockaddr_un; the length. */
socklen_t cio__os_sockaddr_from_unix(const cio_unix_address *a, struct sockaddr_storage *sa);

/* A Unix-domain address a slot can take: 1..CIO_UNIX_PATH_MAX bytes (a NULL one is not). */
static inline bool cio__os_unix_address_ok(const cio_unix_address *a)
{
    return a != NULL && a->len != 0 && a->len <= CIO_UNIX_PATH_MAX;
}

/* A timeout as a deadline fixed on entry, so that waking early or retrying never extends it. */
typedef struct cio__os_deadline {
    bool none; /* no timeout: wait for ever */
    cio_clock clock;
    int64_t ns; /* on `clock` */
} cio__os_deadline;

cio__os_deadline cio__os_deadline_from(cio_timeout t);

/* The options a NULL pointer stands for. */
extern const cio_listen_options cio__os_listen_defaults;
extern const cio_bind_options cio__os_bind_defaults;

/* Sets the options of a listen/connect/bind options struct (`tcp`: a stream socket) on a fresh socket
 * of `family`, in the order of the struct's fields; the first failure ends it (a TCP-only option on
 * a datagram socket is OptionUnsupported). NULL sets nothing. Its errors are net.SocketOptionError's
 * without OperationUnsupported: members of ListenError, ConnectError and BindError. (sockopt_apply.c,
 * through the set_option of sockopt_posix.c or sockopt_windows.c.) */
/* The error for an option the OS file cannot describe: OptionUnsupported for a cio_sockopt this
 * target lacks, InvalidArgument for a number that is no cio_sockopt. */
cio_err cio__os_sockopt_undescribed(int option);
/* An option's value as read back from the OS, normalised: a boolean option is 0 or 1 (the BSDs
 * answer the option's bit, e.g. 0x200 for SO_REUSEPORT; Windows a BOOL). */
int64_t cio__os_sockopt_read_back(int option, int64_t value);
cio_err cio__os_sockopts_apply(cio_handle socket, cio_ip_family family, bool tcp, const cio_sockopts *options);

/* A cio_shutdown_how as shutdown(2)'s (Winsock's) `how`; -1 for a value that is none of them. */
int cio__os_shutdown_how(int how);

/* The listen backlog asked for (0: 128), at most `max`. */
int cio__os_backlog(const cio_listen_options *options, int max);

#endif /* CIO_THREADED_NET_COMMON_H */
