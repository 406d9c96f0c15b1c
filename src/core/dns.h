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
#define CIO__DNS_RCODE_NOERROR 0
#define CIO__DNS_RCODE_SERVFAIL 2
#define CIO__DNS_RCODE_NXDOMAIN 3
#define CIO__DNS_NAME_MAX 256   /* a dotted name without the trailing dot, plus the NUL */
#define CIO__DNS_MAX_ADDRS 32   /* addresses kept per response; the rest are ignored */
#define CIO__DNS_MAX_HOPS 64    /* compression pointers followed per name */
#define CIO__DNS_QUERY_MAX 512  /* a query for a 255-byte name fits */

typedef struct cio__dns_addr {
    uint16_t type; /* CIO__DNS_TYPE_A (4 bytes) or CIO__DNS_TYPE_AAAA (16 bytes) */
    uint8_t bytes[16];
} cio__dns_addr;

typedef struct cio__dns_response {
    unsigned rcode;
    size_t naddrs;
    cio__dns_addr addrs[CIO__DNS_MAX_ADDRS];
    char canonical[CIO__DNS_NAME_MAX]; /* the end of the CNAME chain (the query name without one) */
} cio__dns_response;

/* Writes a recursive query (RD set) for `name` (dotted, an optional trailing dot) into buf;
 * returns its length, or 0 if the name is not encodable (empty label, label > 63, > 255) or buf
 * is too small. */
size_t cio__dns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, uint16_t qtype);

/* Parses a response to the query (id, name, qtype): the header must be a response with that id,
 * exactly one question equal to (name, qtype, IN) (case-insensitive). Follows CNAMEs from `name`
 * (any order in the answer section, at most 16 links) and keeps the A/AAAA records of qtype owned
 * by the end of the chain. CIO_OK, or CIO_E_INVALID_DNS_PACKET / _A_RECORD / _AAAA_RECORD /
 * _CNAME_RECORD: drop the packet. */
cio_err cio__dns_parse(const uint8_t *pkt, size_t len, uint16_t id, const char *name, uint16_t qtype,
                       cio__dns_response *out);

/* Decodes the (possibly compressed) name at *off into out (dotted, no trailing dot, "" for the root)
 * and advances *off past it in the packet. 0 on success, -1 if malformed. */
int cio__dns_read_name(const uint8_t *pkt, size_t len, size_t *off, char out[CIO__DNS_NAME_MAX]);

#endif /* CIO_CORE_DNS_H */
