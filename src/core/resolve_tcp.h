/*
 * DNS over TCP for the resolver (RFC 7766, framing RFC 1035 4.2.2): one query asked of the
 * nameservers in turn, over cio's own stream calls (cancelable, timed). Internal.
 * resolve.c calls in here; nothing here calls back into resolve.c.
 */
#ifndef CIO_CORE_RESOLVE_TCP_H
#define CIO_CORE_RESOLVE_TCP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/net.h"
#include "dns.h"

/* How the resolver's exchanges went, for tests (process-wide, only ever incremented). */
typedef struct cio__dns_counters {
    _Atomic(unsigned) udp_answers;   /* UDP responses taken (TC ones included) */
    _Atomic(unsigned) udp_truncated; /* of which had TC set */
    _Atomic(unsigned) tcp_exchanges; /* TCP connections attempted */
    _Atomic(unsigned) tcp_answers;   /* TCP responses taken */
} cio__dns_counters;

extern cio__dns_counters cio__dns_stats;

typedef struct cio__dns_tcp_request {
    const cio_ip_address *servers;
    size_t nservers;
    size_t first;         /* the server asked first (the one whose UDP answer was truncated) */
    unsigned rounds;      /* every server is asked up to this many times (resolv.conf attempts) */
    int64_t window_ns;    /* each exchange: connect, send, receive, within this long */
    const uint8_t *query; /* the UDP query as sent (an OPT record is dropped after a FORMERR) */
    size_t query_len;
    uint16_t id, qtype;
    const char *name;
    uint8_t *buf; /* receives the framed answer: CIO__DNS_TCP_MAX + 2 bytes */
} cio__dns_tcp_request;

/*
 * Asks rq->servers in turn from rq->first, rounds times at most, until one answers NOERROR or
 * NXDOMAIN with a valid response (id, question; dns.c). CIO_OK: *r is parsed from *pkt (*len bytes,
 * inside rq->buf). CIO_E_CANCELED as is. CIO_E_NAME_SERVER_FAILURE when no server answered: refused,
 * reset, closed early, a short or oversized length, a malformed answer, SERVFAIL, or the window ran
 * out (a server that refused is not asked again).
 */
cio_err cio__dns_tcp_query(cio_io io, const cio__dns_tcp_request *rq, cio__dns_response *r, const uint8_t **pkt,
                           size_t *len);

#endif
