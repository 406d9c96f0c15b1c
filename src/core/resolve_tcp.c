/*
 * DNS over TCP (RFC 7766): the resolver's retry of a truncated UDP answer, and its only transport
 * under `options use-vc`. See resolve_tcp.h for the contract.
 *
 * Invariants:
 *   - one exchange = one connection: connect (timed), the framed query written, exactly one framed
 *     answer read (cio__dns_tcp_reader never asks for a byte past the frame), the stream closed on
 *     every path; every wait (connect, each receive) ends at the exchange's deadline at the latest,
 *     and every one is a cancellation point;
 *   - a server that closes early, sends a length under a header or over the buffer, or trickles
 *     bytes past the deadline fails that exchange, never the caller's memory: the reader bounds
 *     every read by the frame and the buffer;
 *   - the answer is checked like a UDP one (cio__dns_parse: id, question, records); a bad one moves
 *     on to the next server, as a UDP failure would;
 *   - bounded: at most rounds x nservers exchanges (plus one without OPT after a FORMERR), each
 *     within window_ns.
 *
 * The receive is the datagram receive slot on the stream's handle: it is recvmsg/recvfrom on the
 * socket, which on a stream reads up to `want` bytes (0 bytes: the peer closed), and it is the
 * backends' one receive with a timeout. The sender address it reports is not used.
 */
#include <string.h>

#include "resolve_tcp.h"

cio__dns_counters cio__dns_stats;

/* One exchange with `server`. CIO_OK: the message is at buf + 2, *len bytes. */
static cio_err exchange(cio_io io, const cio_ip_address *server, const uint8_t *query, size_t qlen, int64_t deadline,
                        uint8_t *buf, size_t *len)
{
    cio_timeout until = cio_timeout_deadline(CIO_CLOCK_AWAKE, (cio_timestamp){deadline});
    cio_connect_options co;
    memset(&co, 0, sizeof co);
    co.timeout = until;
    cio_stream s;
    atomic_fetch_add(&cio__dns_stats.tcp_exchanges, 1);
    cio_err err = cio_net_connect(io, server, &co, &s);
    if (err != CIO_OK)
        return err;
    uint8_t frame[2 + CIO__DNS_QUERY_MAX];
    frame[0] = (uint8_t)(qlen >> 8);
    frame[1] = (uint8_t)qlen;
    memcpy(frame + 2, query, qlen);
    /* under a socket buffer: the write does not wait for the server */
    err = cio_stream_write_all(io, &s, frame, qlen + 2);
    cio__dns_tcp_reader rd;
    cio__dns_tcp_reader_init(&rd, buf, CIO__DNS_TCP_MAX + 2);
    cio_socket as_socket = {s.handle, s.peer};
    while (err == CIO_OK) {
        size_t want = 0, n = 0;
        uint8_t *p = cio__dns_tcp_space(&rd, &want);
        err = cio_socket_receive_timeout(io, &as_socket, p, want, &n, NULL, until);
        if (err != CIO_OK)
            break;
        int st = n == 0 ? -1 : cio__dns_tcp_advance(&rd, n); /* 0 bytes: closed before the end */
        if (st < 0)
            err = CIO_E_INVALID_DNS_PACKET;
        else if (st > 0) {
            *len = rd.msg_len;
            break;
        }
    }
    (void)cio_stream_close(io, &s);
    return err;
}

cio_err cio__dns_tcp_query(cio_io io, const cio__dns_tcp_request *rq, cio__dns_response *r, const uint8_t **pkt,
                           size_t *len)
{
    uint8_t query[CIO__DNS_QUERY_MAX];
    size_t qlen = rq->query_len < sizeof query ? rq->query_len : sizeof query;
    memcpy(query, rq->query, qlen);
    bool refused[8] = {false};
    size_t n = rq->nservers < 8 ? rq->nservers : 8;
    for (unsigned round = 0; round < rq->rounds; round++) {
        size_t asked = 0;
        for (size_t k = 0; k < n; k++) {
            size_t s = (rq->first + k) % n;
            if (refused[s])
                continue;
            asked++;
            size_t m = 0;
            int64_t deadline = cio_now(io, CIO_CLOCK_AWAKE).ns + rq->window_ns;
            cio_err e = exchange(io, &rq->servers[s], query, qlen, deadline, rq->buf, &m);
            if (e == CIO_E_CANCELED)
                return e;
            if (e == CIO_E_CONNECTION_REFUSED)
                refused[s] = true;
            if (e != CIO_OK || cio__dns_parse(rq->buf + 2, m, rq->id, rq->name, rq->qtype, r) != CIO_OK)
                continue;
            if (r->rcode == CIO__DNS_RCODE_FORMERR && qlen >= 12 && query[11] != 0) {
                /* no EDNS0 there: the same question without the OPT record (the last one) */
                qlen -= 11;
                query[11] = 0;
                k--;
                continue;
            }
            if (r->rcode != CIO__DNS_RCODE_NOERROR && r->rcode != CIO__DNS_RCODE_NXDOMAIN)
                continue;
            atomic_fetch_add(&cio__dns_stats.tcp_answers, 1);
            *pkt = rq->buf + 2;
            *len = m;
            return CIO_OK;
        }
        if (asked == 0)
            break; /* every server refused: no point in another round */
    }
    return CIO_E_NAME_SERVER_FAILURE;
}
