/**
 * @file
 * cio/net_socket.h: socket pairs, interface names, scoped addresses, files sent over streams,
 * socket options, multicast and socket addresses. Included by the subsystem header (kept apart
 * for size); part of <cio.h>.
 */
#ifndef CIO_NET_SOCKET_H
#define CIO_NET_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- socket pairs, interfaces, files over streams -------------------------------------------------------- */

/**
 * Creates two connected stream sockets: what is written to one is read from the other (both ways).
 * POSIX: socketpair(AF_UNIX, SOCK_STREAM), close-on-exec. Windows: a TCP connection over 127.0.0.1
 * (listen on a fresh port, connect, accept, the listener closed again; the accepted side is checked to
 * be this connection). WASI has no sockets: OperationUnsupported. Both ends are cio_streams for every
 * stream call on the backend that made them (their `peer` is all-zero); close each with
 * cio_stream_close. Writes never raise SIGPIPE.
 *
 * @param io    the backend
 * @param pair  receives the two ends (pair[0], pair[1]); untouched on failure
 * @return CIO_OK, or an error of set net.Socket.CreatePairError: AddressFamilyUnsupported,
 *         ProtocolUnsupportedBySystem, ProcessFdQuotaExceeded, SystemFdQuotaExceeded, SystemResources,
 *         AccessDenied, NetworkDown, OperationUnsupported, Canceled, Unexpected.
 * @cancellation yes (it does not block)
 */
cio_err cio_net_socket_pair(cio_io io, cio_stream pair[2]);

/** Longest interface name cio_net_interface_name writes, without its NUL (Windows' limit; POSIX
 *  names are at most 15 bytes). */
#define CIO_INTERFACE_NAME_MAX 256

/**
 * The index of the network interface called `name` ("lo", "eth0"; on Windows the names
 * if_nametoindex knows, such as "loopback_0"): what a scoped IPv6 address ("fe80::1%eth0") and the
 * multicast options take. POSIX and Windows: if_nametoindex. WASI: OperationUnsupported.
 *
 * @param io     the backend
 * @param name   NUL-terminated interface name
 * @param index  receives the index (never 0 on success)
 * @return CIO_OK, or an error of set net.Interface.ResolveError: InterfaceNotFound (no such
 *         interface, or an empty or over-long name), AccessDenied, SystemResources, Canceled,
 *         Unexpected; OperationUnsupported where the OS has no interfaces (WASI).
 * @cancellation yes (it does not block)
 */
cio_err cio_net_interface_name_resolve(cio_io io, const char *name, uint32_t *index);

/**
 * The name of the network interface with index `index` (if_indextoname), NUL-terminated in buf.
 *
 * @param io       the backend
 * @param index    an interface index (0 is never one: InterfaceNotFound)
 * @param buf      receives the name; always NUL-terminated when len > 0
 * @param len      size of buf (CIO_INTERFACE_NAME_MAX + 1 always suffices)
 * @param out_len  if not NULL, receives the name's length without the NUL, also when it did not fit
 * @return CIO_OK, or an error of set net.Interface.NameError: InterfaceNotFound, NameTooLong (buf
 *         too small), Canceled, Unexpected; OperationUnsupported where the OS has no interfaces (WASI).
 * @cancellation yes (it does not block)
 */
cio_err cio_net_interface_name(cio_io io, uint32_t index, char *buf, size_t len, size_t *out_len);

/**
 * cio_ip_parse, and a scope given by name ("fe80::1%lo", "ff02::1%eth0") resolved to its interface
 * index with cio_net_interface_name_resolve, so link-local addresses can be written as people write
 * them. A numeric scope is taken as the index, as cio_ip_parse does. cio_ip_format writes the index
 * back ("[fe80::1%1]:port"); cio_ip_format_resolve writes the name ("[fe80::1%lo]:port").
 *
 * @param io    the backend (for the interface lookup)
 * @param text  NUL-terminated IPv4 or IPv6 address, with an optional "%scope" on IPv6
 * @param port  put into *out
 * @param out   receives the address; written only on success
 * @return CIO_OK, or an error of set net.IpAddress.ResolveError: the parse errors of cio_ip_parse
 *         (InvalidAddress, InvalidPort, Overflow, InvalidCharacter, InvalidEnd, Incomplete,
 *         NonCanonical, NameTooLong) and those of resolving the scope (InterfaceNotFound,
 *         AccessDenied, SystemResources), Canceled, Unexpected.
 * @cancellation yes when the text has a scope name (it does not block)
 */
cio_err cio_ip_parse_resolve(cio_io io, const char *text, uint16_t port, cio_ip_address *out);

/**
 * cio_ip_format with the scope written as people write it: the interface's name
 * ("[fe80::1%lo]:80", found with cio_net_interface_name), or its index when the OS has no interface
 * of that index or no interfaces at all (WASI), so the text always says what the address is.
 * cio_ip_parse_resolve reads either form back. cio_ip_format (pure, no Io) always writes the index.
 *
 * @param io       the backend (for the interface lookup)
 * @param address  the address
 * @param buf      where the text goes (CIO_IP_FORMAT_MAX + CIO_INTERFACE_NAME_MAX bytes always suffice);
 *                 always NUL-terminated when len > 0
 * @param len      its length
 * @param out_len  if not NULL, the text's length without the NUL, also when it did not fit
 * @return #CIO_OK, or an error of net.IpAddress.FormatError \errset_net_ip_address_format: NameTooLong
 *         (buf too small), InvalidArgument (not an IP address), Canceled.
 * @cancellation yes when the address has a scope (the lookup does not block)
 */
cio_err cio_ip_format_resolve(cio_io io, const cio_ip_address *address, char *buf, size_t len, size_t *out_len);

/**
 * As cio_ip_format_resolve, the address alone: no port, no brackets ("fe80::1%lo").
 *
 * @param io       the backend (for the interface lookup)
 * @param address  the address
 * @param buf      where the text goes
 * @param len      its length
 * @param out_len  if not NULL, the text's length without the NUL, also when it did not fit
 * @return #CIO_OK, or an error of net.IpAddress.FormatError \errset_net_ip_address_format.
 * @cancellation yes when the address has a scope (the lookup does not block)
 */
cio_err cio_ip_format_host_resolve(cio_io io, const cio_ip_address *address, char *buf, size_t len, size_t *out_len);

/**
 * Sends up to `len` bytes of `file`, starting at `offset`, to a connected stream, and says how many
 * went. The file's own position is neither used nor moved. Linux: sendfile(2), the bytes never
 * copied through user memory (Threaded: on the calling thread; Evented: on the helper pool, the
 * fiber waiting for room in the socket between calls); elsewhere, and where the kernel refuses a file (EINVAL, ENOSYS:
 * a pipe, a file system without the support), the library copies itself with positional reads into a
 * 64 KiB buffer and stream writes, on every backend: the caller never sees Unimplemented.
 * The call returns when `len` bytes went, at the end of the file (*nwritten < len: nothing more to
 * send; len UINT64_MAX sends to the end), or on an error; on an error *nwritten still counts the
 * bytes that went before it (a write error after some bytes is reported, with their count).
 *
 * @param io        the backend
 * @param stream    a connected stream (TCP, Unix, or a cio_net_socket_pair end)
 * @param file      a file open for reading (positional reads)
 * @param offset    where in the file to start
 * @param len       how many bytes at most (UINT64_MAX: to the end of the file)
 * @param nwritten  receives the number of bytes sent (may be NULL)
 * @return CIO_OK, or an error of set net.WriteFileError: the stream's write errors (net.WriteError:
 *         BrokenPipe, ConnectionResetByPeer, SystemResources, NetworkDown, ..., WouldBlock, Timeout)
 *         and the file's (File.ReadPositionalError: InputOutput, IsDir, NotOpenForReading,
 *         Unseekable, AccessDenied, ...), Canceled, Unexpected.
 * @cancellation yes: a cancel knocks out a blocked send; the bytes sent so far are counted
 */
cio_err cio_net_write_file(cio_io io, const cio_stream *stream, cio_file file, uint64_t offset, uint64_t len,
                           uint64_t *nwritten);

/* ==== socket options and addresses (issue 25) ===============================================================
 *
 * Calls on an open socket: `socket` is the handle of a cio_stream, cio_server or cio_socket
 * (`stream.handle`). None blocks: each is one setsockopt/getsockopt/getsockname/getpeername, on
 * every backend (Evented runs it on the calling fiber), and each is a cancellation point that does
 * not block. Any may also return InvalidArgument (NULL, an option or value out of range, a handle
 * that is no socket).
 *
 * Windows (Winsock) differs: its SO_REUSEADDR lets another socket bind a port in use, which is
 * CIO_SOCKOPT_REUSE_PORT here (and which socket of the two gets a connection is not defined there);
 * it rebinds over TIME_WAIT without any option, so CIO_SOCKOPT_REUSE_ADDRESS is OptionUnsupported.
 * OpenBSD has no per-socket keepalive timing (KEEPALIVE_IDLE/INTERVAL/COUNT: OptionUnsupported).
 * WASI (no sockets): every call is OperationUnsupported.
 */

/** The options of cio_net_set_option / cio_net_get_option. Values are int64_t: 0/1 for the
 * booleans, bytes, seconds or counts otherwise. */
typedef enum cio_sockopt {
    CIO_SOCKOPT_NODELAY = 1,        /**< bool: TCP_NODELAY (TCP) */
    CIO_SOCKOPT_KEEPALIVE,          /**< bool: SO_KEEPALIVE (TCP) */
    CIO_SOCKOPT_KEEPALIVE_IDLE,     /**< seconds >= 1: TCP_KEEPIDLE (Windows: TCP_KEEPALIVE) */
    CIO_SOCKOPT_KEEPALIVE_INTERVAL, /**< seconds >= 1: TCP_KEEPINTVL */
    CIO_SOCKOPT_KEEPALIVE_COUNT,    /**< probes >= 1: TCP_KEEPCNT */
    CIO_SOCKOPT_REUSE_ADDRESS,      /**< bool: SO_REUSEADDR (matters before bind: use the options structs) */
    CIO_SOCKOPT_REUSE_PORT,         /**< bool: SO_REUSEPORT (Windows: SO_REUSEADDR; before bind, as above) */
    CIO_SOCKOPT_SEND_BUFFER,        /**< bytes >= 1: SO_SNDBUF (Linux reads back twice the value set) */
    CIO_SOCKOPT_RECEIVE_BUFFER,     /**< bytes >= 1: SO_RCVBUF (Linux reads back twice the value set) */
    CIO_SOCKOPT_LINGER,             /**< -1: off; 0..65535: SO_LINGER on for that many seconds */
    CIO_SOCKOPT_IP6_ONLY,           /**< bool: IPV6_V6ONLY (IPv6; before bind: use cio_bind_options.ip6_only,
                                     * Linux refuses a change on a bound socket: InvalidArgument) */
    CIO_SOCKOPT_BROADCAST,          /**< bool: SO_BROADCAST (UDP) */
    CIO_SOCKOPT_TTL,                /**< 1..255: IP_TTL (IPv4 sockets) */
    CIO_SOCKOPT_HOP_LIMIT,          /**< 1..255: IPV6_UNICAST_HOPS (IPv6 sockets) */
    CIO_SOCKOPT_MULTICAST_TTL,      /**< 0..255: IP_MULTICAST_TTL (IPv4 UDP) */
    CIO_SOCKOPT_MULTICAST_HOPS,     /**< 0..255: IPV6_MULTICAST_HOPS (IPv6 UDP) */
    CIO_SOCKOPT_MULTICAST_LOOP,     /**< bool: IP_MULTICAST_LOOP (IPv4 UDP) */
    CIO_SOCKOPT_MULTICAST_LOOP6     /**< bool: IPV6_MULTICAST_LOOP (IPv6 UDP) */
} cio_sockopt;

/**
 * Sets a socket option on an open socket.
 * @param io      any backend.
 * @param socket  the handle of a cio_stream, cio_server or cio_socket.
 * @param option  a cio_sockopt.
 * @param value   the option's value (see cio_sockopt for the range of each).
 * @return CIO_OK or a member of net.SocketOptionError: Canceled, Unexpected, OptionUnsupported (the
 *         OS lacks the option, or it does not apply to this socket), OperationUnsupported (no
 *         sockets: WASI), SystemResources, NetworkDown; InvalidArgument for a value out of range.
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_set_option(cio_io io, cio_handle socket, cio_sockopt option, int64_t value);

/**
 * Reads a socket option back from the OS (getsockopt).
 * @param io      any backend.
 * @param socket  the handle of a cio_stream, cio_server or cio_socket.
 * @param option  a cio_sockopt.
 * @param value   receives the value in the units of cio_net_set_option (booleans as 0/1, LINGER as
 *                -1 when off).
 * @return CIO_OK or a member of net.SocketOptionError (as cio_net_set_option).
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_get_option(cio_io io, cio_handle socket, cio_sockopt option, int64_t *value);

/**
 * Joins a multicast group on a UDP socket (IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP).
 * @param io         any backend.
 * @param socket     the handle of a cio_socket of the group's family.
 * @param group      an IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address; its port is ignored.
 * @param iface      which interface: for an IPv4 group, the interface's IPv4 address (NULL or
 *                   0.0.0.0: the OS chooses); for an IPv6 group, the interface index in its
 *                   scope_id (NULL: the group's own scope_id; 0: the OS chooses).
 * @return CIO_OK or a member of net.MulticastError: Canceled, Unexpected, OptionUnsupported,
 *         OperationUnsupported (WASI), SystemResources, NetworkDown, AddressInUse (already a
 *         member), AddressUnavailable (no such interface address; leave: not a member, which
 *         Winsock under Wine reports as InvalidArgument),
 *         InterfaceNotFound (no such interface, or no route for the group); InvalidArgument for a
 *         group that is not multicast or a family mismatch.
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_multicast_join(cio_io io, cio_handle socket, const cio_ip_address *group, const cio_ip_address *iface);

/**
 * Leaves a multicast group joined with cio_net_multicast_join (same arguments).
 * @param io     the Io
 * @param socket the UDP socket's handle
 * @param group  the group joined
 * @param iface  the interface it was joined on (as for cio_net_multicast_join)
 * @return CIO_OK or a member of net.MulticastError (as cio_net_multicast_join).
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_multicast_leave(cio_io io, cio_handle socket, const cio_ip_address *group, const cio_ip_address *iface);

/**
 * Chooses the interface outgoing multicast datagrams leave by (IP_MULTICAST_IF / IPV6_MULTICAST_IF).
 * @param io         any backend.
 * @param socket     the handle of a cio_socket.
 * @param iface      IPv4: the interface's address (0.0.0.0: the OS chooses again); IPv6: an address
 *                   whose scope_id is the interface index (0: the OS chooses).
 * @return CIO_OK or a member of net.MulticastError (as cio_net_multicast_join).
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_multicast_interface(cio_io io, cio_handle socket, const cio_ip_address *iface);

/**
 * The local address of a socket (getsockname): the address a stream's own end is bound to.
 * @param io      any backend.
 * @param socket  the handle of a cio_stream, cio_server or cio_socket.
 * @param out     receives the address (all-zero for a Unix-domain socket).
 * @return CIO_OK or a member of net.SocketAddressError: Canceled, Unexpected, SystemResources,
 *         SocketUnconnected, NetworkDown, OperationUnsupported (WASI).
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_local_address(cio_io io, cio_handle socket, cio_ip_address *out);

/**
 * The address of a connected socket's peer (getpeername), e.g. of a UDP socket after connect or of
 * a stream handed in from elsewhere.
 * @param io      any backend.
 * @param socket  the handle of a connected cio_stream or cio_socket.
 * @param out     receives the address (all-zero for a Unix-domain peer).
 * @return CIO_OK or a member of net.SocketAddressError (as cio_net_local_address; SocketUnconnected
 *         when there is no peer).
 * A cancellation point that does not block.
 * @cancellation yes
 */
cio_err cio_net_peer_address(cio_io io, cio_handle socket, cio_ip_address *out);

#ifdef __cplusplus
}
#endif

#endif /* CIO_NET_SOCKET_H */
