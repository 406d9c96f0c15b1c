/*
 * Tiny DNS servers made of real sockets on loopback, run as tasks on cio's own sockets, for the
 * resolver's TCP fallback tests (tests/test_resolve_tcp.c, tests/test_faults_os.c):
 *   - UDP: every A query gets a truncated answer (TC, the first 3 records of 127.0.2.1..3), or in
 *     FORMERR mode: a query with an OPT record gets FORMERR, one without a whole answer 127.0.0.77;
 *   - TCP on the same port number (optional): STALL accepts and never answers; SCRIPT answers
 *     connection k as script step k: close at once, a length of 5, a length of 60000 then 20 bytes
 *     and close, then a whole answer (127.0.3.1..5) trickled one byte per write.
 * Every wait is bounded or canceled by the test.
 */
#ifndef CIO_TEST_DNS_SERVERS_H
#define CIO_TEST_DNS_SERVERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cio.h"

/* A query's length without its EDNS0 OPT record (the resolver appends one: the last 11 bytes),
 * ARCOUNT set back to 0, so that answers can be written right after the question. */
static inline size_t strip_opt(uint8_t *q, size_t n)
{
    if (n >= 12 + 11 && q[10] == 0 && q[11] == 1 && q[n - 11] == 0 && q[n - 10] == 0 && q[n - 9] == 41) {
        q[11] = 0;
        return n - 11;
    }
    return n;
}

typedef enum tcp_mode { TCP_NONE = 0, TCP_STALL, TCP_SCRIPT } tcp_mode;

typedef struct dns_test_server {
    cio_io io;
    cio_socket udp;
    cio_server tcp;
    tcp_mode mode;
    bool formerr;
    _Atomic(unsigned) udp_queries, udp_with_opt, tcp_accepted;
    cio_future fu, ft;
    bool tcp_running;
} dns_test_server;

/* The answer to query q (n bytes, no OPT) with `count` A records 127.0.<net>.1.., TC as asked. */
static inline size_t dns_test_answer(const uint8_t *q, size_t n, uint8_t *out, unsigned count, uint8_t net, bool tc)
{
    memcpy(out, q, n);
    out[2] = (uint8_t)(out[2] | 0x80 | (tc ? 0x02 : 0)); /* QR, TC */
    out[3] = (uint8_t)(out[3] & 0xF0);                   /* NOERROR */
    out[6] = 0;
    out[7] = (uint8_t)count;
    out[8] = out[9] = out[10] = out[11] = 0;
    size_t m = n;
    for (unsigned i = 0; i < count; i++) {
        const uint8_t rr[] = {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, net, (uint8_t)(i + 1)};
        memcpy(out + m, rr, sizeof rr);
        m += sizeof rr;
    }
    return m;
}

static inline cio_err dns_test_udp_task(void *context)
{
    dns_test_server *s = *(dns_test_server **)context;
    uint8_t q[600], a[700];
    for (int i = 0; i < 1000; i++) {
        size_t n = 0;
        cio_ip_address from;
        cio_err err = cio_socket_receive_timeout(s->io, &s->udp, q, 512, &n, &from, cio_timeout_ms(20000));
        if (err != CIO_OK)
            return err;
        size_t plain = strip_opt(q, n);
        if (plain < 17)
            continue;
        bool opt = plain != n;
        atomic_fetch_add(&s->udp_queries, 1);
        if (opt)
            atomic_fetch_add(&s->udp_with_opt, 1);
        bool is_a = q[plain - 3] == 1;
        size_t m;
        if (s->formerr && opt) {
            memcpy(a, q, 12);
            a[2] = (uint8_t)(a[2] | 0x80);
            a[3] = (uint8_t)((a[3] & 0xF0) | 1); /* FORMERR, no question */
            memset(a + 4, 0, 8);
            m = 12;
        } else if (s->formerr) {
            m = dns_test_answer(q, plain, a, is_a ? 1 : 0, 0, false);
            if (is_a)
                a[m - 1] = 77;
        } else {
            m = dns_test_answer(q, plain, a, is_a ? 3 : 0, 2, is_a);
        }
        (void)cio_socket_send_to(s->io, &s->udp, &from, a, m, NULL);
    }
    return CIO_OK;
}

/* Reads exactly len bytes: CIO_OK, CIO_E_END_OF_STREAM for a close, or the read's error. */
static inline cio_err dns_test_read_exact(cio_io io, const cio_stream *c, uint8_t *p, size_t len)
{
    while (len > 0) {
        size_t n = 0;
        cio_err err = cio_stream_read(io, c, p, len, &n);
        if (err != CIO_OK)
            return err;
        if (n == 0)
            return CIO_E_END_OF_STREAM;
        p += n;
        len -= n;
    }
    return CIO_OK;
}

/* Only CIO_E_CANCELED matters to the caller (a cancel is delivered once: it must end the task). */
static inline cio_err dns_test_script_step(dns_test_server *s, const cio_stream *c, unsigned step)
{
    uint8_t q[600], a[800];
    if (step == 0)
        return CIO_OK; /* closes at once, before reading */
    cio_err err = dns_test_read_exact(s->io, c, q, 2);
    size_t n = ((size_t)q[0] << 8) | q[1];
    if (err == CIO_OK && n > 512)
        err = CIO_E_END_OF_STREAM;
    if (err == CIO_OK)
        err = dns_test_read_exact(s->io, c, q, n);
    if (err != CIO_OK)
        return err;
    n = strip_opt(q, n);
    size_t m = dns_test_answer(q, n, a + 2, 5, 3, false);
    if (step == 1) {
        static const uint8_t five[] = {0, 5, 1, 2, 3, 4, 5};
        return cio_stream_write_all(s->io, c, five, sizeof five);
    }
    if (step == 2) {
        a[0] = 0xEA; /* 60000 */
        a[1] = 0x60;
        return cio_stream_write_all(s->io, c, a, 22);
    }
    a[0] = (uint8_t)(m >> 8);
    a[1] = (uint8_t)m;
    for (size_t i = 0; i < m + 2 && err == CIO_OK; i++) {
        err = cio_stream_write_all(s->io, c, a + i, 1);
        if (err == CIO_OK)
            err = cio_sleep(s->io, cio_timeout_ms(2));
    }
    return err;
}

static inline cio_err dns_test_tcp_task(void *context)
{
    dns_test_server *s = *(dns_test_server **)context;
    cio_stream held[8];
    size_t nheld = 0;
    cio_err err = CIO_OK;
    for (unsigned k = 0; err == CIO_OK; k++) {
        cio_stream c;
        err = cio_server_accept(s->io, &s->tcp, &c);
        if (err != CIO_OK)
            break;
        atomic_fetch_add(&s->tcp_accepted, 1);
        if (s->mode == TCP_STALL && nheld < 8) {
            held[nheld++] = c; /* never answered; closed when the task is canceled */
            continue;
        }
        if (dns_test_script_step(s, &c, k) == CIO_E_CANCELED)
            err = CIO_E_CANCELED;
        cio_stream_close(s->io, &c);
    }
    for (size_t i = 0; i < nheld; i++)
        cio_stream_close(s->io, &held[i]);
    return err;
}

/* Starts the server on 127.0.0.1 (a fresh port); false (and nothing left open) when concurrency is
 * missing or the TCP port of the same number is taken. */
static inline cio_err dns_test_server_start(cio_io io, dns_test_server *s, tcp_mode mode, bool formerr)
{
    memset(s, 0, sizeof *s);
    s->io = io;
    s->mode = mode;
    s->formerr = formerr;
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_err err = cio_net_bind(io, &lo, NULL, &s->udp);
    if (err != CIO_OK)
        return err;
    if (mode != TCP_NONE) {
        cio_ip_address at = cio_ip4_loopback(s->udp.address.port);
        err = cio_net_listen(io, &at, NULL, &s->tcp);
        if (err == CIO_OK) {
            dns_test_server *self = s;
            err = cio_concurrent(io, dns_test_tcp_task, &self, sizeof self, &s->ft);
            if (err != CIO_OK)
                cio_server_close(io, &s->tcp);
            s->tcp_running = err == CIO_OK;
        }
    }
    if (err == CIO_OK) {
        dns_test_server *self = s;
        err = cio_concurrent(io, dns_test_udp_task, &self, sizeof self, &s->fu);
    }
    if (err != CIO_OK) {
        if (s->tcp_running) {
            (void)cio_cancel(io, &s->ft);
            cio_server_close(io, &s->tcp);
        }
        cio_socket_close(io, &s->udp);
    }
    return err;
}

static inline void dns_test_server_stop(dns_test_server *s)
{
    (void)cio_cancel(s->io, &s->fu);
    cio_socket_close(s->io, &s->udp);
    if (s->tcp_running) {
        (void)cio_cancel(s->io, &s->ft);
        cio_server_close(s->io, &s->tcp);
    }
}

#endif
