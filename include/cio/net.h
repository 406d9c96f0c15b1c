/**
 * @file cio/net.h
 * @brief IP and Unix-domain addresses, TCP/UDP and Unix sockets, host name lookup and connect.
 *
 * cio/net.h — IP addresses, TCP and UDP sockets, Unix-domain sockets through a cio_io, and our own
 * resolver and first-connection-wins connect over them (Zig's std.Io.net and net.HostName).
 *
 * Addresses are plain values: parsing and formatting are pure library code (no OS call, no
 * locale), the same on every target. Sockets are plain values around the OS handle, like cio_file:
 * copy them freely, close each exactly once. Every socket is opened close-on-exec. A write to a
 * connection the peer has closed is CIO_E_BROKEN_PIPE, never a SIGPIPE.
 *
 * Cancellation: accept, connect, read, write, send and receive are cancellation points and, when
 * they block, cio_cancel knocks them out (CIO_E_CANCELED). Listen, bind, shutdown are cancellation
 * points that do not block. Close never fails and is not a cancellation point.
 *
 * Error sets are named after each function (spec/errors.yaml); any function may also return
 * CIO_E_INVALID_ARGUMENT for a NULL pointer or an impossible argument.
 */
#ifndef CIO_NET_H
#define CIO_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"
#include "cio/sync.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IP addresses -------------------------------------------------------------------------------- */

/** An IP address family. */
typedef enum cio_ip_family {
    CIO_IP_NONE = 0, /**< no address (a Unix-domain server's `address`) */
    CIO_IP4 = 4,     /**< IPv4 */
    CIO_IP6 = 6      /**< IPv6 */
} cio_ip_family;

/** An IPv4 or IPv6 address with a port. All-zero is "no address". */
typedef struct cio_ip_address {
    cio_ip_family family; /**< IPv4, IPv6 or none */
    uint16_t port;        /**< host byte order */
    uint8_t bytes[16];    /**< network byte order; IPv4 uses bytes[0..3], the rest stays zero */
    uint32_t flowinfo;    /**< IPv6 flow label (host byte order); 0 for IPv4 */
    uint32_t scope_id;    /**< IPv6 scope: an interface index, 0 = none; 0 for IPv4 */
} cio_ip_address;

/** Text of any address with its port ("[ffff:…:ffff%4294967295]:65535" plus NUL fits). */
#define CIO_IP_FORMAT_MAX 64

/**
 * An IPv4 address a.b.c.d with a port.
 * @param a the first byte
 * @param b the second byte
 * @param c the third byte
 * @param d the fourth byte
 * @param port the port (host byte order)
 * @return the address.
 * @cancellation no (pure library code)
 */
cio_ip_address cio_ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port);
/**
 * An IPv6 address with a port (flow label and scope 0).
 * @param bytes the 16 bytes, network byte order
 * @param port the port (host byte order)
 * @return the address.
 * @cancellation no (pure library code)
 */
cio_ip_address cio_ip6(const uint8_t bytes[16], uint16_t port);
/**
 * 127.0.0.1 with a port.
 * @param port the port (host byte order)
 * @return the address.
 * @cancellation no (pure library code)
 */
cio_ip_address cio_ip4_loopback(uint16_t port);
/**
 * 0.0.0.0 (any IPv4 address) with a port.
 * @param port the port (host byte order)
 * @return the address.
 * @cancellation no (pure library code)
 */
cio_ip_address cio_ip4_any(uint16_t port);
/**
 * ::1 with a port.
 * @param port the port (host byte order)
 * @return the address.
 * @cancellation no (pure library code)
 */
cio_ip_address cio_ip6_loopback(uint16_t port);
/**
 * :: (any IPv6 address) with a port.
 * @param port the port (host byte order)
 * @return the address.
 * @cancellation no (pure library code)
 */
cio_ip_address cio_ip6_any(uint16_t port);

/**
 * Zig's eql: same family, port and address bytes (flow and scope are not compared).
 * @param a an address
 * @param b another
 * @return whether they are equal.
 * @cancellation no (pure library code)
 */
bool cio_ip_equal(const cio_ip_address *a, const cio_ip_address *b);

/** The longest "%scope" text cio_ip6_parse accepts, in bytes. */
#define CIO_IP_SCOPE_MAX 255

/**
 * Parses an IPv4 or IPv6 address (no port in the text).
 *
 * Parsing (Zig's Ip4Address.parse and Ip6Address.Unresolved.parse, same failures). Set:
 * net.IpParseError. Text is NUL-terminated; *out is written only on success.
 *
 * IPv4: exactly four decimal parts of 0..255, no leading zeros. "256.0.0.1" Overflow, "x.0.0.1" and
 *   "100..0.1" InvalidCharacter, "127.0.0.1.1" InvalidEnd, "127.0.0." Incomplete, "127.01.0.1"
 *   NonCanonical.
 * IPv6: up to eight groups of at most four hex digits (either case), one "::", an optional
 *   "%scope". "::ffff:a.b.c.d" (prefix in either case) is the IPv4-mapped form. A byte that cannot
 *   come where it stands is InvalidCharacter (":::", "FF01::Fb:zig", "::123.123.123.123"), a group
 *   over 0xffff is Overflow ("FF001::FB"), bytes after the eighth group InvalidEnd
 *   ("FF01:0:0:0:0:0:0:FB:"), too few groups or a cut-off text Incomplete ("FF01:", "1", "ff01::fb%"),
 *   an IPv4-mapped form whose IPv4 part does not parse InvalidAddress, a scope of more than
 *   CIO_IP_SCOPE_MAX bytes NameTooLong.
 * A scope here must be a decimal interface index (it becomes scope_id; over 2^32-1 is Overflow); a
 * scope name ("%eth0") needs the OS to resolve, so cio_ip_parse reports InvalidAddress for it:
 * use cio_ip6_parse_unresolved to get the name and resolve it yourself.
 *
 * cio_ip_parse decides by the text: with a ':' it is IPv6, otherwise IPv4 (Zig tries IPv4, then
 * IPv6; the errors here are those of the family the text is written in).
 * @param text the address, NUL-terminated
 * @param port the port to put into the address
 * @param[out] out the address (written only on success)
 * @return #CIO_OK, or an error of net.IpParseError \errset_net_ip_parse
 * @cancellation no (pure library code)
 */
cio_err cio_ip_parse(const char *text, uint16_t port, cio_ip_address *out);
/**
 * As cio_ip_parse for IPv4 text only.
 * @param text the address, NUL-terminated
 * @param port the port to put into the address
 * @param[out] out the address (written only on success)
 * @return #CIO_OK, or an error of net.IpParseError \errset_net_ip_parse
 * @cancellation no (pure library code)
 */
cio_err cio_ip4_parse(const char *text, uint16_t port, cio_ip_address *out);
/**
 * As cio_ip_parse for IPv6 text only.
 * @param text the address, NUL-terminated
 * @param port the port to put into the address
 * @param[out] out the address (written only on success)
 * @return #CIO_OK, or an error of net.IpParseError \errset_net_ip_parse
 * @cancellation no (pure library code)
 */
cio_err cio_ip6_parse(const char *text, uint16_t port, cio_ip_address *out);

/**
 * Zig's parseLiteral: "a.b.c.d", "a.b.c.d:port", "[v6]" or "[v6]:port" (port 0 when absent).
 * InvalidAddress for a bad address or bracket, InvalidPort for a bad port.
 * @param text the literal, NUL-terminated
 * @param[out] out the address (written only on success)
 * @return #CIO_OK, or an error of net.IpParseError \errset_net_ip_parse
 * @cancellation no (pure library code)
 */
cio_err cio_ip_parse_literal(const char *text, cio_ip_address *out);

/** An IPv6 address whose scope is still text (cio_ip6_parse_unresolved). */
typedef struct cio_ip6_unresolved {
    uint8_t bytes[16]; /**< the address, network byte order */
    const char *scope; /**< NULL: no "%scope"; else the scope's text, pointing into the parsed text */
    size_t scope_len;  /**< the scope's length in bytes */
} cio_ip6_unresolved;

/**
 * The IPv6 parser itself, on len bytes (no NUL needed): the scope is returned as text (pointing
 * into `text`, scope == NULL when there is none), and on failure *err_pos (if not NULL) gets the
 * byte offset Zig reports (invalid_byte, overflow, junk_after_end) or the length for Incomplete.
 * Zig's test values: ":::" InvalidCharacter at 2, "FF001::FB" Overflow at 4, "FF01::Fb:zig"
 * InvalidCharacter at 9, "FF01:0:0:0:0:0:0:FB:" InvalidEnd at 19, "::123.123.123.123"
 * InvalidCharacter at 5.
 * @param text the text
 * @param len its length
 * @param[out] out the address and its scope text
 * @param[out] err_pos (if not NULL) on failure, the byte offset of the failure
 * @return #CIO_OK, or an error of net.IpParseError \errset_net_ip_parse
 * @cancellation no (pure library code)
 */
cio_err cio_ip6_parse_unresolved(const char *text, size_t len, cio_ip6_unresolved *out, size_t *err_pos);

/**
 * Formats an address with its port.
 *
 * Formatting as Zig's {f}: "a.b.c.d:port" and "[v6]:port" (RFC 5952: lowercase hex, the longest run
 * of two or more zero groups compressed to "::", the first of equal runs; "::ffff:a.b.c.d" for
 * IPv4-mapped), with "%scope_id" inside the brackets when scope_id != 0 (the index: this is pure
 * code; cio_ip_format_resolve in cio/net_socket.h writes the interface name, "fe80::1%lo").
 * cio_ip_format_host writes the address alone: no port, no brackets (scope kept).
 * Always NUL-terminates when len > 0. *out_len (if not NULL) gets the text's length without the
 * NUL, also when it did not fit: then the result is CIO_E_NAME_TOO_LONG.
 * @param address the address
 * @param buf where the text goes (CIO_IP_FORMAT_MAX bytes always suffice)
 * @param len its length
 * @param[out] out_len (if not NULL) the text's length without the NUL
 * @return #CIO_OK, or #CIO_E_NAME_TOO_LONG when the text did not fit (a member of
 *         net.IpParseError \errset_net_ip_parse)
 * @cancellation no (pure library code)
 */
cio_err cio_ip_format(const cio_ip_address *address, char *buf, size_t len, size_t *out_len);
/**
 * As cio_ip_format, the address alone: no port, no brackets (scope kept).
 * @param address the address
 * @param buf where the text goes
 * @param len its length
 * @param[out] out_len (if not NULL) the text's length without the NUL
 * @return #CIO_OK, or #CIO_E_NAME_TOO_LONG when the text did not fit (a member of
 *         net.IpParseError \errset_net_ip_parse)
 * @cancellation no (pure library code)
 */
cio_err cio_ip_format_host(const cio_ip_address *address, char *buf, size_t len, size_t *out_len);

/* ---- Unix-domain addresses ------------------------------------------------------------------------- */

#if defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || defined(__DragonFly__) || defined(__APPLE__)
#define CIO_UNIX_PATH_MAX 104 /**< The longest Unix-domain socket path: sun_path on the BSDs and macOS. */
#else
#define CIO_UNIX_PATH_MAX \
    108 /**< The longest Unix-domain socket path: sun_path on Linux (104 on the BSDs and macOS). */
#endif

/** A Unix-domain socket address: `len` bytes of `path`, no NUL needed. A path starting with '\0' is a
 * Linux abstract name (no file; every byte of `len` counts, including further NULs). */
typedef struct cio_unix_address {
    size_t len;                   /**< how many bytes of path count */
    char path[CIO_UNIX_PATH_MAX]; /**< the path or abstract name */
} cio_unix_address;

/**
 * A Unix-domain address from len bytes of path.
 * @param path the path, or an abstract name starting with NUL
 * @param len its length in bytes
 * @param[out] out the address
 * @return #CIO_OK; #CIO_E_NAME_TOO_LONG over CIO_UNIX_PATH_MAX bytes; #CIO_E_INVALID_ARGUMENT for len 0;
 *         #CIO_E_BAD_PATH_NAME for a NUL inside a file-system path (an abstract name, which starts
 *         with NUL, may hold any bytes). No named set: exactly these.
 * @cancellation no (pure library code)
 */
cio_err cio_unix_address_init(const char *path, size_t len, cio_unix_address *out);
/**
 * The same for a NUL-terminated file system path.
 * @param path the path, NUL-terminated
 * @param[out] out the address
 * @return as cio_unix_address_init.
 * @cancellation no (pure library code)
 */
cio_err cio_unix_address_from_path(const char *path, cio_unix_address *out);

/* ---- sockets --------------------------------------------------------------------------------------- */

/** A connected stream (TCP or Unix). `peer` is the address connected to (TCP connect), the client's
 * address (TCP accept), or all-zero (Unix). */
typedef struct cio_stream {
    cio_handle handle;   /**< the socket */
    cio_ip_address peer; /**< the other end (all-zero for Unix) */
} cio_stream;

/** A listening socket. `address` is the bound address with the actual port (TCP); all-zero (Unix). */
typedef struct cio_server {
    cio_handle handle;      /**< the socket */
    cio_ip_address address; /**< the bound address (all-zero for Unix) */
} cio_server;

/** A datagram (UDP) socket; `address` is the bound address with the actual port. */
typedef struct cio_socket {
    cio_handle handle;      /**< the socket */
    cio_ip_address address; /**< the bound address */
} cio_socket;

/**
 * Socket options set when a socket is made (issue 25; the calls on an open socket are in "socket
 * options and addresses" below).
 *
 * A cio_sockopts is part of cio_listen_options, cio_connect_options and cio_bind_options (the
 * field `sockopts`): the options are set on the new socket before it binds or connects. All-zero
 * (every existing caller) sets nothing: the OS's defaults hold. A TCP listener's options are
 * inherited by the connections it accepts (Linux, the BSDs and Windows copy them to the accepted
 * socket). An option the OS does not have is OptionUnsupported (the socket is not made), never
 * skipped; one that does not apply to the socket's kind (nodelay on UDP, broadcast on TCP) is what
 * the OS says of it, usually OptionUnsupported too. */
typedef struct cio_sockopts {
    bool nodelay;                /**< TCP_NODELAY: send small segments at once (no Nagle) */
    bool keepalive;              /**< SO_KEEPALIVE */
    uint32_t keepalive_idle;     /**< seconds idle before the first probe (TCP_KEEPIDLE); 0: OS default */
    uint32_t keepalive_interval; /**< seconds between probes (TCP_KEEPINTVL); 0: OS default */
    uint32_t keepalive_count;    /**< probes before the connection is dropped (TCP_KEEPCNT); 0: OS default */
    uint32_t send_buffer;        /**< SO_SNDBUF bytes; 0: OS default */
    uint32_t receive_buffer;     /**< SO_RCVBUF bytes; 0: OS default */
    bool linger;                 /**< SO_LINGER on, for linger_seconds (0: close resets the connection) */
    uint16_t linger_seconds;     /**< with linger: seconds close waits for unsent data */
    uint8_t ttl;                 /**< IP_TTL (IPv4) or IPV6_UNICAST_HOPS (IPv6) by the address; 0: OS default */
} cio_sockopts;

/** Options of cio_net_listen and cio_unix_listen. NULL means CIO_LISTEN_DEFAULTS. reuse_address is SO_REUSEADDR (rebind
 * over TIME_WAIT; two listeners on one port are still AddressInUse); reuse_port is SO_REUSEPORT (several listeners on
 * one port: Zig's reuse_address sets both). Unix listeners use only backlog. */
typedef struct cio_listen_options {
    uint32_t backlog;      /**< 0: 128 */
    bool reuse_address;    /**< SO_REUSEADDR (rebind over TIME_WAIT) */
    bool reuse_port;       /**< SO_REUSEPORT (several listeners on one port) */
    cio_sockopts sockopts; /**< all-zero: the OS's defaults (see cio_sockopts) */
} cio_listen_options;

/** The default cio_listen_options: backlog 128, reuse_address on, reuse_port off, no socket options. */
#define CIO_LISTEN_DEFAULTS ((cio_listen_options){.backlog = 128, .reuse_address = true})

/* ---- host name lookup (library code over the socket and file calls: every backend) ------------- */

/** The longest host name, in bytes (RFC 1123). */
#define CIO_HOST_NAME_MAX 255

/** Options of cio_hostname_lookup. NULL or all-zero: any family, port 0, /etc/resolv.conf, /etc/hosts,
 * DNS port 53. */
typedef struct cio_lookup_options {
    uint16_t port;           /**< put into every address returned */
    cio_ip_family family;    /**< CIO_IP_NONE: both; CIO_IP4 / CIO_IP6: only that family */
    const char *resolv_conf; /**< NULL: "/etc/resolv.conf" (a missing file means nameserver 127.0.0.1) */
    const char *hosts_file;  /**< NULL: "/etc/hosts" (a missing file is skipped) */
    uint16_t dns_port;       /**< 0: 53. An override for tests and local servers (resolv.conf has no port) */
} cio_lookup_options;

/** What a cio_lookup_result holds. */
typedef enum cio_lookup_result_kind {
    CIO_LOOKUP_ADDRESS = 1,       /**< an address */
    CIO_LOOKUP_CANONICAL_NAME = 2 /**< the canonical name (the last element on success) */
} cio_lookup_result_kind;

/** One element of the lookup queue. */
typedef struct cio_lookup_result {
    cio_lookup_result_kind kind;                /**< which field is set */
    cio_ip_address address;                     /**< CIO_LOOKUP_ADDRESS */
    char canonical_name[CIO_HOST_NAME_MAX + 1]; /**< CIO_LOOKUP_CANONICAL_NAME (NUL-terminated) */
} cio_lookup_result;

/**
 * Resolves `name` into `results` (a cio_queue of cio_lookup_result), streaming addresses as they are
 * found, then exactly one canonical name on success. The queue is closed on return, success or
 * error; nobody else may close it meanwhile (if they do, the lookup stops pushing and returns).
 * A queue of capacity >= 16 never blocks for a numeric, hosts-file or localhost answer.
 *
 * Order: a numeric address (cio_ip_parse: "127.0.0.1", "::1"; a family mismatch is
 * UnknownHostName), then name validation (RFC 1123: over 255 bytes NameTooLong; an empty label, a
 * label over 63 bytes or a byte other than [A-Za-z0-9_-] InvalidHostName; one trailing dot allowed),
 * then the hosts file (case-insensitive; the first name of the first matching line is canonical),
 * then RFC 6761 `localhost` and `*.localhost` (::1 and 127.0.0.1, never sent to DNS), then DNS:
 * resolv.conf (nameserver x3, search/domain, options ndots:n attempts:n timeout:n use-vc edns0;
 * malformed lines ignored), A and AAAA to every nameserver over one UDP socket, first valid answer
 * per query wins, resend every timeout/attempts, SERVFAIL retries that server, NXDOMAIN is
 * UnknownHostName, a name with no address of the family is NoAddressReturned, no usable answer in
 * time NameServerFailure. Packets from other addresses, with another id or question, or malformed,
 * are dropped. Every address of an answer is returned, however many.
 * EDNS0: every query advertises a 1232-byte UDP payload (RFC 6891, DNS Flag Day 2020), so answers
 * up to that size come in one datagram (`options edns0` is accepted: this is the default); a
 * server that answers FORMERR is asked that query once more without it.
 * Truncated answers (TC set, RFC 7766): once the UDP exchange is over, the query is asked again
 * over TCP (RFC 1035 4.2.2 framing, through cio's own socket calls: cancelable), first of the
 * server that truncated, then of the next ones, `attempts` rounds, each exchange (connect, send,
 * receive) within timeout/attempts; a TCP answer must match the id and question like a UDP one.
 * `options use-vc` asks over TCP from the start (no UDP at all). The TCP exchange comes on top of
 * the UDP timeout: a lookup whose servers all stall on TCP can take up to
 * timeout + attempts x servers x timeout/attempts per truncated query.
 * When no server answers over TCP (refused, reset, closed early, a bad length or answer, the
 * window ran out), the addresses of the truncated UDP answer are returned and the lookup
 * succeeds: they are all of the name's addresses that could be had, possibly not all it has;
 * the queue does not say so (under use-vc there is no such fallback: NameServerFailure). No
 * address is ever returned from a truncated answer when the server's full answer was had.
 * Out of memory while reading the hosts file or resolv.conf, or for the TCP answer's buffer (64 KiB),
 * is SystemResources (LookupError has no
 * OutOfMemory; the lookup stops rather than answer without the file); any other failure to read
 * resolv.conf is ResolvConfParseFailed (a missing one means the defaults).
 * Cancelable. Set: LookupError.
 * @param io the Io
 * @param name the host name or numeric address, NUL-terminated
 * @param options NULL or all-zero: the defaults (cio_lookup_options)
 * @param results a cio_queue of cio_lookup_result, closed on return
 * @return #CIO_OK, or an error of LookupError \errset_lookup
 * @cancellation yes
 */
cio_err cio_hostname_lookup(cio_io io, const char *name, const cio_lookup_options *options, cio_queue *results);

/**
 * The name checks of cio_hostname_lookup alone.
 * @param name the host name, NUL-terminated
 * @return #CIO_OK, or an error of HostName.ValidateError \errset_host_name_validate
 * @cancellation no (pure library code)
 */
cio_err cio_hostname_validate(const char *name);

/** Options of cio_net_connect and cio_hostname_connect. NULL or all-zero: no timeout. Connect with a
 * timeout that expires is CIO_E_TIMEOUT (the attempt is abandoned and its socket closed). `lookup` and
 * `stagger` are used by cio_hostname_connect only (its `port` is replaced by the port argument). */
typedef struct cio_connect_options {
    cio_timeout timeout;       /**< per connection attempt */
    cio_lookup_options lookup; /**< cio_hostname_connect's lookup */
    bool stagger;              /**< RFC 8305: attempt k starts k x 250 ms after the first */
    cio_sockopts sockopts;     /**< set on each attempt's socket before it connects; all-zero: none */
} cio_connect_options;

/**
 * Looks `name` up and connects to `port`: the lookup and the connection attempts race (one attempt
 * per address as it arrives, concurrently when the backend can; every address is tried, at most 32
 * at a time: the 33rd starts when one of those has failed; where the lookup cannot run concurrently
 * it runs first, and only its first 32 addresses are tried). The first established
 * connection wins; the lookup and every other attempt are canceled and their sockets closed.
 * If every attempt fails, the error is, in order of preference: the first ConnectionRefused or
 * Timeout of an attempt; else the first other attempt error; else the lookup's error; else (no
 * address at all) UnknownHostName. Canceled wins over all of these. Set: HostName.ConnectError.
 * @param io the Io
 * @param name the host name or numeric address, NUL-terminated
 * @param port the port to connect to
 * @param options NULL or all-zero: no timeout, default lookup, no stagger
 * @param[out] out the connected stream
 * @return #CIO_OK, or an error of HostName.ConnectError \errset_host_name_connect
 * @cancellation yes
 */
cio_err cio_hostname_connect(cio_io io, const char *name, uint16_t port, const cio_connect_options *options,
                             cio_stream *out);

/** Options of cio_net_bind. NULL or all-zero: none of these. */
typedef struct cio_bind_options {
    bool reuse_address;    /**< SO_REUSEADDR */
    bool reuse_port;       /**< SO_REUSEPORT */
    bool ip6_only;         /**< IPv6 sockets only: IPV6_V6ONLY on (otherwise the system's default holds) */
    bool allow_broadcast;  /**< SO_BROADCAST */
    cio_sockopts sockopts; /**< set before bind; all-zero: none (TCP-only fields are OptionUnsupported) */
} cio_bind_options;

/** Which direction cio_stream_shutdown shuts. */
typedef enum cio_shutdown_how {
    CIO_SHUTDOWN_RECEIVE = 0, /**< no more receiving */
    CIO_SHUTDOWN_SEND,        /**< no more sending (the peer reads the end) */
    CIO_SHUTDOWN_BOTH         /**< both */
} cio_shutdown_how;

/** One datagram for cio_socket_receive_batch: the caller sets buf and cap; the call sets the rest. */
typedef struct cio_message {
    void *buf;           /**< where the datagram goes (the caller's) */
    size_t cap;          /**< its capacity (the caller's) */
    size_t len;          /**< bytes stored in buf */
    cio_ip_address from; /**< the sender */
    bool truncated;      /**< the datagram was longer than cap; the rest is lost */
} cio_message;

/* ---- TCP ------------------------------------------------------------------------------------------ */

/**
 * socket + bind + listen; out->address gets the bound address (port 0: the port the OS chose).
 * @param io the Io
 * @param address the address to listen on
 * @param options NULL: CIO_LISTEN_DEFAULTS
 * @param[out] out the server
 * @return #CIO_OK, or an error of net.ListenError \errset_net_listen
 * @cancellation yes (does not block)
 */
cio_err cio_net_listen(cio_io io, const cio_ip_address *address, const cio_listen_options *options, cio_server *out);
/**
 * Waits for a connection; out->peer gets the client's address (Unix: all-zero). With a timeout:
 * cio_server_accept_timeout (cio/batch.h).
 * @param io the Io
 * @param server the listening socket
 * @param[out] out the accepted stream
 * @return #CIO_OK, or an error of net.AcceptError \errset_net_accept
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_server_accept(cio_io io, const cio_server *server, cio_stream *out);
/**
 * Closes a server. The socket is gone afterwards whatever the result (never retried). NotOpen means
 * it was not open (closed twice, or never opened; debug builds also print a line naming the function
 * and the handle); a handle number reused in between is closed instead (see cio_file_close).
 * @param io the Io
 * @param server the server (exactly once)
 * @return #CIO_OK, or an error of CloseError \errset_close
 * @cancellation no
 */
cio_err cio_server_close(cio_io io, const cio_server *server);

/**
 * Connects, giving up after the options' timeout (the abandoned socket is closed).
 * @param io the Io
 * @param address the address to connect to
 * @param options NULL: no timeout
 * @param[out] out the connected stream
 * @return #CIO_OK, or an error of net.ConnectError \errset_net_connect
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_net_connect(cio_io io, const cio_ip_address *address, const cio_connect_options *options, cio_stream *out);

/**
 * Reads what has arrived (waits for at least one byte). 0 bytes read means the peer closed its side.
 * With a timeout (an idle connection): cio_stream_read_timeout (cio/batch.h), which loses nothing
 * and leaves the stream usable when it times out.
 * @param io the Io
 * @param stream the connected stream
 * @param buf where the bytes go
 * @param len its length
 * @param[out] nread how many were read (0: the peer closed)
 * @return #CIO_OK, or an error of net.ReadError \errset_net_read
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_stream_read(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread);
/**
 * Vectored read; 0 bytes read means the peer closed its side.
 * @param io the Io
 * @param stream the connected stream
 * @param iov the buffers
 * @param iovcnt how many
 * @param[out] nread how many bytes were read
 * @return #CIO_OK, or an error of net.ReadError \errset_net_read
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_stream_read_v(cio_io io, const cio_stream *stream, const cio_iovec *iov, size_t iovcnt, size_t *nread);
/**
 * Writes (may be short); a closed peer is BrokenPipe or ConnectionResetByPeer, never a SIGPIPE.
 * @param io the Io
 * @param stream the connected stream
 * @param buf the bytes
 * @param len how many
 * @param[out] nwritten how many were written
 * @return #CIO_OK, or an error of net.WriteError \errset_net_write
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_stream_write(cio_io io, const cio_stream *stream, const void *buf, size_t len, size_t *nwritten);
/**
 * Vectored write (may be short).
 * @param io the Io
 * @param stream the connected stream
 * @param iov the buffers
 * @param iovcnt how many
 * @param[out] nwritten how many bytes were written
 * @return #CIO_OK, or an error of net.WriteError \errset_net_write
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_stream_write_v(cio_io io, const cio_stream *stream, const cio_const_iovec *iov, size_t iovcnt,
                           size_t *nwritten);
/**
 * Writes every byte, retrying short writes. As cio_file_write_all: a second 0-byte write in a row
 * is CIO_E_UNEXPECTED, never an endless loop. With a timeout: cio_stream_write_all_timeout
 * (cio/batch.h).
 * @param io the Io
 * @param stream the connected stream
 * @param buf the bytes
 * @param len how many
 * @return #CIO_OK, or an error of net.WriteError \errset_net_write
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_stream_write_all(cio_io io, const cio_stream *stream, const void *buf, size_t len);
/**
 * Shuts one or both directions of a stream.
 * @param io the Io
 * @param stream the connected stream
 * @param how which direction
 * @return #CIO_OK, or an error of net.ShutdownError \errset_net_shutdown
 * @cancellation yes (does not block)
 */
cio_err cio_stream_shutdown(cio_io io, const cio_stream *stream, cio_shutdown_how how);
/**
 * Closes a stream. The socket is gone afterwards whatever the result (never retried). NotOpen means
 * it was not open (closed twice, or never opened; debug builds also print a line naming the function
 * and the handle); a handle number reused in between is closed instead (see cio_file_close).
 * @param io the Io
 * @param stream the stream (exactly once)
 * @return #CIO_OK, or an error of CloseError \errset_close
 * @cancellation no
 */
cio_err cio_stream_close(cio_io io, const cio_stream *stream);

/* ---- UDP ------------------------------------------------------------------------------------------ */

/**
 * A datagram socket bound to address; out->address gets the actual port.
 * @param io the Io
 * @param address the address to bind
 * @param options NULL: none
 * @param[out] out the socket
 * @return #CIO_OK, or an error of net.BindError \errset_net_bind
 * @cancellation yes (does not block)
 */
cio_err cio_net_bind(cio_io io, const cio_ip_address *address, const cio_bind_options *options, cio_socket *out);
/**
 * Sends one datagram (all of it or an error).
 * @param io the Io
 * @param socket the datagram socket
 * @param dest the receiver (NULL: the connected peer)
 * @param buf the datagram
 * @param len its length
 * @param[out] nsent (may be NULL) how many bytes were sent
 * @return #CIO_OK, or an error of net.SendError \errset_net_send
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_socket_send_to(cio_io io, const cio_socket *socket, const cio_ip_address *dest, const void *buf, size_t len,
                           size_t *nsent);
/**
 * Sends one datagram gathered from several buffers.
 * @param io the Io
 * @param socket the datagram socket
 * @param dest the receiver (NULL: the connected peer)
 * @param iov the buffers
 * @param iovcnt how many
 * @param[out] nsent (may be NULL) how many bytes were sent
 * @return #CIO_OK, or an error of net.SendError \errset_net_send
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_socket_send_to_v(cio_io io, const cio_socket *socket, const cio_ip_address *dest,
                             const cio_const_iovec *iov, size_t iovcnt, size_t *nsent);
/**
 * Waits for one datagram. A datagram longer than len is cut to len.
 * @param io the Io
 * @param socket the datagram socket
 * @param buf where the datagram goes
 * @param len its length
 * @param[out] nread how many bytes were stored
 * @param[out] from (if not NULL) the sender
 * @return #CIO_OK, or an error of net.ReceiveError \errset_net_receive
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_socket_receive_from(cio_io io, const cio_socket *socket, void *buf, size_t len, size_t *nread,
                                cio_ip_address *from);
/**
 * As cio_socket_receive_from, giving up with CIO_E_TIMEOUT.
 * @param io the Io
 * @param socket the datagram socket
 * @param buf where the datagram goes
 * @param len its length
 * @param[out] nread how many bytes were stored
 * @param[out] from (if not NULL) the sender
 * @param timeout how long to wait
 * @return #CIO_OK, or an error of net.ReceiveTimeoutError \errset_net_receive_timeout
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_socket_receive_timeout(cio_io io, const cio_socket *socket, void *buf, size_t len, size_t *nread,
                                   cio_ip_address *from, cio_timeout timeout);
/**
 * Waits (up to timeout; CIO_TIMEOUT_NONE: forever) for the first datagram, then takes the ones that
 * have already arrived, up to max, without waiting for more: *count is 1..max on success. An error
 * after the first datagram ends the batch early (the call succeeds; the error comes again next
 * time).
 * @param io the Io
 * @param socket the datagram socket
 * @param msgs the messages (the caller sets buf and cap of each)
 * @param max how many at most
 * @param timeout how long to wait for the first
 * @param[out] count how many were received
 * @return #CIO_OK, or an error of net.ReceiveTimeoutError \errset_net_receive_timeout
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_socket_receive_batch(cio_io io, const cio_socket *socket, cio_message *msgs, size_t max,
                                 cio_timeout timeout, size_t *count);
/**
 * Closes a datagram socket. The socket is gone afterwards whatever the result (never retried). NotOpen means
 * it was not open (closed twice, or never opened; debug builds also print a line naming the function
 * and the handle); a handle number reused in between is closed instead (see cio_file_close).
 * @param io the Io
 * @param socket the socket (exactly once)
 * @return #CIO_OK, or an error of CloseError \errset_close
 * @cancellation no
 */
cio_err cio_socket_close(cio_io io, const cio_socket *socket);

/* ---- Unix-domain streams --------------------------------------------------------------------------- */

/**
 * socket(AF_UNIX, stream) + bind + listen. A file system path is created by bind and stays after
 * close (delete it yourself); an abstract name vanishes with the socket.
 * @param io the Io
 * @param address the path or abstract name
 * @param options NULL: CIO_LISTEN_DEFAULTS (only backlog is used)
 * @param[out] out the server
 * @return #CIO_OK, or an error of net.UnixAddress.ListenError \errset_net_unix_address_listen
 * @cancellation yes (does not block)
 */
cio_err cio_unix_listen(cio_io io, const cio_unix_address *address, const cio_listen_options *options, cio_server *out);
/**
 * Connects to a Unix-domain stream server.
 * @param io the Io
 * @param address the path or abstract name
 * @param[out] out the connected stream
 * @return #CIO_OK, or an error of net.UnixAddress.ConnectError \errset_net_unix_address_connect
 * @cancellation yes (a cancel knocks it out of the wait)
 */
cio_err cio_unix_connect(cio_io io, const cio_unix_address *address, cio_stream *out);

#ifdef __cplusplus
}
#endif

/* cio/net_socket.h continues this header: socket pairs, interface names, scoped addresses, files over streams,
 * socket options, multicast and socket addresses. */
#include "cio/net_socket.h"

#endif /* CIO_NET_H */
