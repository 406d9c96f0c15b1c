/*
 * DNS wire format (RFC 1035) for the resolver: build a query, parse a response. Pure functions over
 * byte buffers: no I/O, no allocation, no global state, so they can be fuzzed and unit-tested.
 * Internal (not installed).
 *
 * Invariants: the parser never reads outside [pkt, pkt + len); a compression pointer must point
 * strictly before the position it was read from (so a chain of pointers always makes progress
 * toward the start and cannot loop) and at most CIO__DNS_MAX_HOPS pointers are followed per name;
 * a decoded name is at most 255 bytes on the wire (RFC 1035 2.3.4); a malformed packet yields
 * CIO_E_INVALID_DNS_PACKET (or the record-specific error) and *out is then meaningless.
 */
#ifndef CIO_CORE_DNS_H
#define CIO_CORE_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "cio/errors.h"

#define CIO__DNS_TYPE_A 1
#define CIO__DNS_TYPE_CNAME 5
#define CIO__DNS_TYPE_AAAA 28
#define CIO__DNS_TYPE_OPT 41
#define CIO__DNS_RCODE_NOERROR 0
#define CIO__DNS_RCODE_FORMERR 1
#define CIO__DNS_RCODE_SERVFAIL 2
#define CIO__DNS_RCODE_NXDOMAIN 3
#define CIO__DNS_NAME_MAX 256      /* a dotted name without the trailing dot, plus the NUL */
#define CIO__DNS_MAX_ADDRS 32      /* addresses copied into a response's addrs[]; cio__dns_next_addr walks all */
#define CIO__DNS_MAX_HOPS 64       /* compression pointers followed per name */
#define CIO__DNS_QUERY_MAX 512     /* a query for a 255-byte name fits, with its OPT record */
#define CIO__DNS_EDNS_PAYLOAD 1232 /* the UDP payload advertised in OPT (DNS Flag Day 2020) */
#define CIO__DNS_TCP_MAX 65535     /* a message over TCP: its two-byte length prefix bounds it */

typedef struct cio__dns_addr {
    uint16_t type; /* CIO__DNS_TYPE_A (4 bytes) or CIO__DNS_TYPE_AAAA (16 bytes) */
    uint8_t bytes[16];
} cio__dns_addr;

typedef struct cio__dns_response {
    unsigned rcode;
    int truncated;                           /* TC: the server cut the answer (RFC 1035 4.1.1); ask again over TCP */
    size_t naddrs;                           /* every address of qtype owned by `canonical` (also those past addrs[]) */
    cio__dns_addr addrs[CIO__DNS_MAX_ADDRS]; /* the first min(naddrs, CIO__DNS_MAX_ADDRS) of them */
    char canonical[CIO__DNS_NAME_MAX];       /* the end of the CNAME chain (the query name without one) */
    /* for cio__dns_next_addr: the answer section and how many of its records are whole */
    size_t answers;
    unsigned ancount;
    uint16_t qtype;
} cio__dns_response;

/* Walks every address of a parsed response, in packet order: *cursor starts at 0 (opaque after);
 * returns 1 with *out set, 0 at the end. pkt/len must be the packet the response was parsed from. */
int cio__dns_next_addr(const uint8_t *pkt, size_t len, const cio__dns_response *r, size_t cursor[2],
                       cio__dns_addr *out);

/* Writes a recursive query (RD set) for `name` (dotted, an optional trailing dot) into buf;
 * returns its length, or 0 if the name is not encodable (empty label, label > 63, > 255) or buf
 * is too small. */
size_t cio__dns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, uint16_t qtype);

/* Appends an EDNS0 OPT record (RFC 6891: root owner, class = `payload`, version 0, no options) to the
 * query of `len` bytes in buf and counts it in ARCOUNT; returns the new length, or 0 if it does not
 * fit in cap. */
size_t cio__dns_add_opt(uint8_t *buf, size_t cap, size_t len, uint16_t payload);

/* Parses a response to the query (id, name, qtype): the header must be a response with that id,
 * exactly one question equal to (name, qtype, IN) (case-insensitive). Follows CNAMEs from `name`
 * (any order in the answer section, at most 16 links) and keeps the A/AAAA records of qtype owned
 * by the end of the chain. CIO_OK, or CIO_E_INVALID_DNS_PACKET / _A_RECORD / _AAAA_RECORD /
 * _CNAME_RECORD: drop the packet.
 * A response with TC set may end inside a record (it was cut to fit): its whole records count, the
 * rest is ignored (out->truncated says so). A FORMERR with no question (what a server without EDNS0
 * may send back for an OPT record) is accepted with rcode FORMERR and nothing else. */
cio_err cio__dns_parse(const uint8_t *pkt, size_t len, uint16_t id, const char *name, uint16_t qtype,
                       cio__dns_response *out);

/* Decodes the (possibly compressed) name at *off into out (dotted, no trailing dot, "" for the root)
 * and advances *off past it in the packet. 0 on success, -1 if malformed. */
int cio__dns_read_name(const uint8_t *pkt, size_t len, size_t *off, char out[CIO__DNS_NAME_MAX]);

/* ---- DNS over TCP framing (RFC 1035 4.2.2): a two-byte big-endian length, then the message ---- */

/* Reads one framed message into buf[0, cap) however the bytes arrive (one at a time included):
 * the caller reads at most `*want` bytes into buf + have (cio__dns_tcp_space) and reports them
 * (cio__dns_tcp_advance). Never asks for a byte past the frame, so nothing after it is consumed.
 * Invariant: have <= 2 + msg_len <= cap once the length is known. */
typedef struct cio__dns_tcp_reader {
    uint8_t *buf;
    size_t cap;
    size_t have;    /* bytes in buf, prefix included */
    size_t msg_len; /* from the prefix, once have >= 2 */
} cio__dns_tcp_reader;

void cio__dns_tcp_reader_init(cio__dns_tcp_reader *r, uint8_t *buf, size_t cap);
/* Where to read next and at most how many bytes (never 0 while the message is incomplete). */
uint8_t *cio__dns_tcp_space(const cio__dns_tcp_reader *r, size_t *want);
/* n bytes were read into the space: 1 when the message is complete (buf + 2, msg_len bytes),
 * 0 when more are needed, -1 when the length is impossible (under 12, a header, or over cap - 2)
 * or n is more than was asked. */
int cio__dns_tcp_advance(cio__dns_tcp_reader *r, size_t n);

#endif /* CIO_CORE_DNS_H */
