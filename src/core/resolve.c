/*
 * cio_hostname_lookup: numeric literals, the hosts file, RFC 6761 localhost, then our own DNS
 * client over the public socket and file calls (so it runs on every backend that has them).
 *
 * Invariants:
 *   - results go out only through emit(); the public function's emit is a cancelable queue put,
 *     and the queue is closed on every return path of cio_hostname_lookup;
 *   - exactly one canonical name is emitted, and only on success, after every address;
 *   - the UDP loop is bounded: it ends when every query is answered or at the overall deadline
 *     (timeout seconds after the start); every receive waits at most until the current attempt
 *     window ends; SERVFAIL resends are counted and capped by `attempts` per (query, server);
 *     the TCP phase that may follow is bounded too: per query at most attempts x servers
 *     exchanges of timeout/attempts each;
 *   - packets are accepted only from a configured nameserver address, with an outstanding id and
 *     a matching question (dns.c checks the latter), else dropped;
 *   - the one UDP socket is closed on every path;
 *   - a truncated (TC) UDP answer marks its query for TCP and is kept; after the UDP phase each
 *     such query is asked over TCP (resolve_tcp.c: from the server that truncated, then the next,
 *     `attempts` rounds, each exchange within timeout/attempts); only when no server answers over
 *     TCP are the truncated answer's addresses taken. Under use-vc there is no UDP phase. Addresses
 *     of a query go out from one answer only (never the truncated one and then the full one);
 *   - queries carry an EDNS0 OPT record (1232 bytes) until a server answers FORMERR, then that
 *     query is resent once without it.
 */
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "cio/net.h"
#include "dns.h"
#include "internal.h"
#include "resolve.h"
#include "resolve_files.h"
#include "resolve_tcp.h"
#include "internal/cio_oscalls.h"

#define MAX_NAMESERVERS CIO__RESOLVE_MAX_NAMESERVERS
#define MAX_TOKENS CIO__RESOLVE_MAX_TOKENS

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive equality of a and b[0..blen), ignoring one trailing dot on either. */
static bool name_eq(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen > 0 && a[alen - 1] == '.')
        alen--;
    if (blen > 0 && b[blen - 1] == '.')
        blen--;
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

cio_err cio_hostname_validate(const char *name)
{
    CIO__REQUIRE(name);
    size_t n = strlen(name);
    if (n > CIO_HOST_NAME_MAX)
        return CIO_E_NAME_TOO_LONG;
    if (n > 0 && name[n - 1] == '.')
        n--;
    if (n == 0)
        return CIO_E_INVALID_HOST_NAME;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c == '.') {
            if (label == 0)
                return CIO_E_INVALID_HOST_NAME;
            label = 0;
            continue;
        }
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok || ++label > 63)
            return CIO_E_INVALID_HOST_NAME;
    }
    return label == 0 ? CIO_E_INVALID_HOST_NAME : CIO_OK;
}

typedef struct lookup {
    cio_io io;
    const char *name;
    cio_lookup_options opt;
    cio__lookup_emit_fn emit;
    void *ctx;
    bool stopped;  /* emit refused (queue closed by someone else) */
    size_t naddrs; /* addresses emitted */
} lookup;

static bool family_ok(const lookup *l, cio_ip_family f)
{
    return l->opt.family == CIO_IP_NONE || l->opt.family == f;
}

static cio_err emit_result(lookup *l, const cio_lookup_result *r)
{
    if (l->stopped)
        return CIO_OK;
    cio_err err = l->emit(l->ctx, r);
    if (err == CIO_E_CANCELED)
        return err;
    if (err != CIO_OK)
        l->stopped = true;
    return CIO_OK;
}

static cio_err emit_address(lookup *l, const cio_ip_address *a)
{
    cio_lookup_result r;
    memset(&r, 0, sizeof r);
    r.kind = CIO_LOOKUP_ADDRESS;
    r.address = *a;
    r.address.port = l->opt.port;
    l->naddrs++;
    return emit_result(l, &r);
}

static cio_err emit_canonical(lookup *l, const char *name, size_t len)
{
    cio_lookup_result r;
    memset(&r, 0, sizeof r);
    r.kind = CIO_LOOKUP_CANONICAL_NAME;
    if (len > CIO_HOST_NAME_MAX)
        len = CIO_HOST_NAME_MAX;
    memcpy(r.canonical_name, name, len);
    return emit_result(l, &r);
}

/* Hosts file: *found is set when at least one address was emitted (then the canonical name too). */
static cio_err lookup_hosts(lookup *l, bool *found)
{
    *found = false;
    char *buf = NULL;
    size_t len = 0;
    const char *path = l->opt.hosts_file != NULL ? l->opt.hosts_file : "/etc/hosts";
    cio_err err = cio__resolve_read_file(l->io, path, &buf, &len);
    if (err == CIO_E_CANCELED || err == CIO_E_SYSTEM_RESOURCES)
        return err; /* out of memory is not "no hosts file": asking DNS instead could answer wrongly */
    if (err != CIO_OK)
        return CIO_OK; /* no hosts file (or an unreadable one, as the C libraries do): go on */
    char canonical[CIO_HOST_NAME_MAX + 1] = {0};
    size_t clen = 0;
    size_t nlen = strlen(l->name);
    const char *p = buf;
    while (*p != '\0' && err == CIO_OK) {
        const char *tok[MAX_TOKENS];
        size_t tlen[MAX_TOKENS];
        size_t nt = cio__resolve_next_line(&p, tok, tlen, MAX_TOKENS);
        if (nt < 2 || tlen[0] >= 64)
            continue;
        bool match = false;
        for (size_t i = 1; i < nt && !match; i++)
            match = name_eq(l->name, nlen, tok[i], tlen[i]);
        if (!match)
            continue;
        char ip[64];
        memcpy(ip, tok[0], tlen[0]);
        ip[tlen[0]] = '\0';
        cio_ip_address a;
        if (cio_ip_parse(ip, l->opt.port, &a) != CIO_OK || !family_ok(l, a.family))
            continue;
        if (!*found && tlen[1] <= CIO_HOST_NAME_MAX) {
            memcpy(canonical, tok[1], tlen[1]);
            clen = tlen[1];
        }
        *found = true;
        err = emit_address(l, &a);
    }
    free(buf);
    if (err == CIO_OK && *found)
        err = emit_canonical(l, canonical, clen);
    return err;
}

/* ---- the DNS exchange ------------------------------------------------------------------------- */

typedef struct query {
    uint16_t type, id;
    size_t len;
    uint8_t pkt[CIO__DNS_QUERY_MAX];
    bool answered;
    bool edns; /* pkt ends with our OPT record (dropped after a FORMERR) */
    bool tcp;  /* to be asked over TCP, from server tc_server on */
    size_t tc_server;
    unsigned rcode;
    unsigned servfails[MAX_NAMESERVERS];
} query;

#define UDP_MAX 1500

/* Allocated on the first truncated answer (at once under use-vc): the TCP answer buffer, and each
 * query's truncated UDP answer, kept for when no server answers over TCP. */
typedef struct tcp_space {
    uint8_t tcp[CIO__DNS_TCP_MAX + 2];
    uint8_t udp[2][UDP_MAX];
    size_t udp_len[2];
} tcp_space;

static tcp_space *new_tcp_space(void)
{
    tcp_space *t = (tcp_space *)CIO__SYS(malloc, resolve_tcp_space)(sizeof *t);
    if (t != NULL)
        t->udp_len[0] = t->udp_len[1] = 0;
    return t;
}

static cio_ip_address mapped(const cio_ip_address *a)
{
    if (a->family != CIO_IP4)
        return *a;
    uint8_t b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0};
    memcpy(b + 12, a->bytes, 4);
    return cio_ip6(b, a->port);
}

/* Every query is answered, or every server answered it SERVFAIL as often as allowed (no point
 * waiting for the rest of the window). */
static bool all_settled(const query *q, size_t nq, const cio__resolv_conf *rc)
{
    for (size_t i = 0; i < nq; i++) {
        bool exhausted = true;
        for (size_t s = 0; s < rc->nns; s++)
            exhausted = exhausted && q[i].servfails[s] >= rc->attempts;
        if (!q[i].answered && !exhausted)
            return false;
    }
    return true;
}

typedef struct dns_outcome {
    bool got_address, nxdomain;
    char *canonical;
} dns_outcome;

/* A NOERROR or NXDOMAIN answer to q, parsed into r from pkt: every address goes out. */
static cio_err take_answer(lookup *l, query *q, const uint8_t *pkt, size_t len, const cio__dns_response *r,
                           const char *fqdn, dns_outcome *o)
{
    q->answered = true;
    q->rcode = r->rcode;
    if (r->rcode == CIO__DNS_RCODE_NXDOMAIN) {
        o->nxdomain = true;
        return CIO_OK;
    }
    if (o->canonical[0] == '\0' || strcmp(r->canonical, fqdn) != 0)
        memcpy(o->canonical, r->canonical, strlen(r->canonical) + 1);
    size_t cursor[2] = {0, 0};
    cio__dns_addr d;
    cio_err err = CIO_OK;
    while (err == CIO_OK && cio__dns_next_addr(pkt, len, r, cursor, &d)) {
        cio_ip_address a;
        if (d.type == CIO__DNS_TYPE_A)
            a = cio_ip4(d.bytes[0], d.bytes[1], d.bytes[2], d.bytes[3], 0);
        else
            a = cio_ip6(d.bytes, 0);
        o->got_address = true;
        err = emit_address(l, &a);
    }
    return err;
}

/* The UDP exchange: every query to every server, resent per attempt window, until each is answered
 * (a truncated answer counts: it is kept in *space and the query marked for TCP). */
static cio_err udp_phase(lookup *l, const cio__resolv_conf *rc, query *q, size_t nq, const char *fqdn,
                         tcp_space **space, dns_outcome *o)
{
    cio_io io = l->io;
    bool v6 = false;
    for (size_t s = 0; s < rc->nns; s++)
        v6 = v6 || rc->ns[s].family == CIO_IP6;
    cio_ip_address ns[MAX_NAMESERVERS];
    for (size_t s = 0; s < rc->nns; s++)
        ns[s] = v6 ? mapped(&rc->ns[s]) : rc->ns[s];
    cio_socket sock;
    cio_ip_address any = v6 ? cio_ip6_any(0) : cio_ip4_any(0);
    cio_bind_options bo = {.reuse_address = false};
    cio_err err = cio_net_bind(io, &any, &bo, &sock);
    if (err != CIO_OK)
        return err;

    int64_t total = (int64_t)rc->timeout_s * 1000000000;
    int64_t window = total / (int64_t)rc->attempts;
    int64_t start = cio_now(io, CIO_CLOCK_AWAKE).ns;
    int64_t deadline = start + total;
    uint8_t buf[UDP_MAX];
    for (unsigned attempt = 0; attempt < rc->attempts && err == CIO_OK; attempt++) {
        for (size_t i = 0; i < nq && err == CIO_OK; i++)
            for (size_t s = 0; s < rc->nns && !q[i].answered; s++) {
                cio_err e = cio_socket_send_to(io, &sock, &ns[s], q[i].pkt, q[i].len, NULL);
                if (e == CIO_E_CANCELED)
                    err = e; /* other send errors: that server is unreachable, try the rest */
            }
        int64_t window_end = attempt + 1 == rc->attempts ? deadline : start + window * (int64_t)(attempt + 1);
        for (;;) {
            if (err != CIO_OK || all_settled(q, nq, rc))
                break;
            size_t n = 0;
            cio_ip_address from;
            cio_err e = cio_socket_receive_timeout(io, &sock, buf, sizeof buf, &n, &from,
                                                   cio_timeout_deadline(CIO_CLOCK_AWAKE, (cio_timestamp){window_end}));
            if (e == CIO_E_TIMEOUT)
                break;
            if (e == CIO_E_CANCELED) {
                err = e;
                break;
            }
            if (e != CIO_OK) {
                /* e.g. ConnectionRefused from an ICMP error: nothing to read; wait for the window */
                if (cio_now(io, CIO_CLOCK_AWAKE).ns >= window_end)
                    break;
                err = cio_sleep(io, cio_timeout_ms(10));
                continue;
            }
            size_t s = 0;
            while (s < rc->nns && !(cio_ip_equal(&from, &ns[s])))
                s++;
            if (s == rc->nns || n < 4)
                continue; /* not from a nameserver */
            unsigned id = ((unsigned)buf[0] << 8) | buf[1];
            size_t i = 0;
            while (i < nq && q[i].id != id)
                i++;
            if (i == nq || q[i].answered)
                continue;
            cio__dns_response r;
            if (cio__dns_parse(buf, n, q[i].id, fqdn, q[i].type, &r) != CIO_OK)
                continue;
            bool resend = false;
            if (r.rcode == CIO__DNS_RCODE_FORMERR && q[i].edns) {
                /* RFC 6891 7: a server without EDNS0; once more without the OPT record (the last 11 bytes) */
                q[i].edns = false;
                q[i].len -= 11;
                q[i].pkt[11] = 0; /* ARCOUNT */
                resend = true;
            } else if (r.rcode == CIO__DNS_RCODE_SERVFAIL) {
                resend = ++q[i].servfails[s] < rc->attempts;
            }
            if (resend) {
                cio_err se = cio_socket_send_to(io, &sock, &ns[s], q[i].pkt, q[i].len, NULL);
                if (se == CIO_E_CANCELED)
                    err = se;
                continue;
            }
            if (r.rcode != CIO__DNS_RCODE_NOERROR && r.rcode != CIO__DNS_RCODE_NXDOMAIN)
                continue;
            atomic_fetch_add(&cio__dns_stats.udp_answers, 1);
            if (r.truncated && r.rcode == CIO__DNS_RCODE_NOERROR) {
                /* cut to fit: ask server s again over TCP once UDP is done (RFC 7766 5) */
                atomic_fetch_add(&cio__dns_stats.udp_truncated, 1);
                if (*space == NULL && (*space = new_tcp_space()) == NULL) {
                    err = CIO_E_SYSTEM_RESOURCES;
                    break;
                }
                memcpy((*space)->udp[i], buf, n);
                (*space)->udp_len[i] = n;
                q[i].answered = true;
                q[i].tcp = true;
                q[i].tc_server = s;
                continue;
            }
            err = take_answer(l, &q[i], buf, n, &r, fqdn, o);
        }
        if (all_settled(q, nq, rc))
            break;
    }
    (void)cio_socket_close(io, &sock);
    return err;
}

/* The TCP exchange for every query marked for it; when no server answers over TCP, the truncated
 * UDP answer is taken (the best there is), or under use-vc the query stays unanswered. */
static cio_err tcp_phase(lookup *l, const cio__resolv_conf *rc, query *q, size_t nq, const char *fqdn, tcp_space *space,
                         dns_outcome *o)
{
    cio_err err = CIO_OK;
    for (size_t i = 0; i < nq && err == CIO_OK; i++) {
        if (!q[i].tcp)
            continue;
        cio__dns_tcp_request rq = {rc->ns,
                                   rc->nns,
                                   q[i].tc_server,
                                   rc->attempts,
                                   (int64_t)rc->timeout_s * 1000000000 / (int64_t)rc->attempts,
                                   q[i].pkt,
                                   q[i].len,
                                   q[i].id,
                                   q[i].type,
                                   fqdn,
                                   space->tcp};
        cio__dns_response r;
        const uint8_t *pkt = NULL;
        size_t len = 0;
        err = cio__dns_tcp_query(l->io, &rq, &r, &pkt, &len);
        if (err == CIO_E_CANCELED)
            break;
        if (err != CIO_OK) {
            err = CIO_OK;
            pkt = space->udp[i];
            len = space->udp_len[i];
            q[i].answered = false;
            /* a truncated answer without one address says nothing: the query stays unanswered */
            if (len == 0 || cio__dns_parse(pkt, len, q[i].id, fqdn, q[i].type, &r) != CIO_OK || r.naddrs == 0)
                continue;
        }
        err = take_answer(l, &q[i], pkt, len, &r, fqdn, o);
    }
    return err;
}

static cio_err lookup_dns(lookup *l, const cio__resolv_conf *rc, const char *fqdn, char *canonical)
{
    cio_io io = l->io;
    query q[2];
    size_t nq = 0;
    if (l->opt.family != CIO_IP6)
        q[nq++].type = CIO__DNS_TYPE_A;
    if (l->opt.family != CIO_IP4)
        q[nq++].type = CIO__DNS_TYPE_AAAA;
    for (size_t i = 0; i < nq; i++) {
        cio_random(io, &q[i].id, sizeof q[i].id);
        if (i == 1 && q[1].id == q[0].id)
            q[1].id = (uint16_t)(q[0].id + 1);
        q[i].len = cio__dns_build_query(q[i].pkt, sizeof q[i].pkt, q[i].id, fqdn, q[i].type);
        if (q[i].len == 0)
            return CIO_E_INVALID_HOST_NAME;
        q[i].len = cio__dns_add_opt(q[i].pkt, sizeof q[i].pkt, q[i].len, CIO__DNS_EDNS_PAYLOAD);
        q[i].edns = true;
        q[i].answered = false;
        q[i].tcp = rc->use_vc;
        q[i].tc_server = 0;
        q[i].rcode = 0;
        memset(q[i].servfails, 0, sizeof q[i].servfails);
    }
    canonical[0] = '\0';
    dns_outcome o = {false, false, canonical};
    tcp_space *space = NULL;
    cio_err err = CIO_OK;
    if (rc->use_vc) {
        if ((space = new_tcp_space()) == NULL)
            return CIO_E_SYSTEM_RESOURCES;
    } else {
        err = udp_phase(l, rc, q, nq, fqdn, &space, &o);
    }
    if (err == CIO_OK && space != NULL)
        err = tcp_phase(l, rc, q, nq, fqdn, space, &o);
    free(space);
    if (err != CIO_OK)
        return err;
    if (o.got_address)
        return CIO_OK;
    if (o.nxdomain)
        return CIO_E_UNKNOWN_HOST_NAME;
    bool all = true;
    for (size_t i = 0; i < nq; i++)
        all = all && q[i].answered;
    return all ? CIO_E_NO_ADDRESS_RETURNED : CIO_E_NAME_SERVER_FAILURE;
}

static cio_err lookup_dns_search(lookup *l)
{
    cio__resolv_conf rc;
    uint16_t port = l->opt.dns_port != 0 ? l->opt.dns_port : 53;
    cio_err err = cio__resolve_parse_conf(l->io, l->opt.resolv_conf != NULL ? l->opt.resolv_conf : "/etc/resolv.conf",
                                          port, &rc);
    if (err != CIO_OK)
        return err;
    size_t nlen = strlen(l->name);
    unsigned dots = 0;
    for (size_t i = 0; i < nlen; i++)
        dots += l->name[i] == '.';
    bool absolute = nlen > 0 && l->name[nlen - 1] == '.';
    char canonical[CIO__DNS_NAME_MAX];
    char fqdn[CIO__DNS_NAME_MAX * 2];
    if (!absolute && dots < rc.ndots) {
        const char *p = rc.search;
        while (*p != '\0') {
            while (*p == ' ')
                p++;
            const char *s = p;
            while (*p != '\0' && *p != ' ')
                p++;
            size_t dl = (size_t)(p - s);
            if (dl == 0 || nlen + 1 + dl > CIO_HOST_NAME_MAX)
                continue;
            memcpy(fqdn, l->name, nlen);
            fqdn[nlen] = '.';
            memcpy(fqdn + nlen + 1, s, dl);
            fqdn[nlen + 1 + dl] = '\0';
            err = lookup_dns(l, &rc, fqdn, canonical);
            if (err == CIO_OK)
                return emit_canonical(l, canonical, strlen(canonical));
            if (err != CIO_E_UNKNOWN_HOST_NAME && err != CIO_E_NO_ADDRESS_RETURNED)
                return err;
        }
    }
    memcpy(fqdn, l->name, nlen + 1);
    if (absolute)
        fqdn[nlen - 1] = '\0';
    err = lookup_dns(l, &rc, fqdn, canonical);
    if (err == CIO_OK)
        err = emit_canonical(l, canonical, strlen(canonical));
    return err;
}

static bool is_localhost(const char *name)
{
    size_t n = strlen(name);
    if (n > 0 && name[n - 1] == '.')
        n--;
    if (n < 9)
        return false;
    if (!name_eq(name + n - 9, 9, "localhost", 9))
        return false;
    return n == 9 || name[n - 10] == '.';
}

cio_err cio__hostname_lookup_emit(cio_io io, const char *name, const cio_lookup_options *options,
                                  cio__lookup_emit_fn emit, void *ctx)
{
    lookup l;
    memset(&l, 0, sizeof l);
    l.io = io;
    l.name = name;
    if (options != NULL)
        l.opt = *options;
    l.emit = emit;
    l.ctx = ctx;
    CIO__REQUIRE(name);
    if ((l.opt.family != CIO_IP_NONE && l.opt.family != CIO_IP4 && l.opt.family != CIO_IP6))
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio_check_cancel(io);
    if (err != CIO_OK)
        return err;

    cio_ip_address a;
    /* a numeric address, its scope given by index or by interface name ("fe80::1%eth0") */
    err = strlen(name) < 64 ? cio_ip_parse_resolve(io, name, l.opt.port, &a) : CIO_E_INVALID_ADDRESS;
    if (err == CIO_OK) {
        if (!family_ok(&l, a.family))
            return CIO_E_UNKNOWN_HOST_NAME;
        err = emit_address(&l, &a);
        if (err == CIO_OK)
            err = emit_canonical(&l, name, strlen(name));
        return err;
    }
    if (err == CIO_E_CANCELED || err == CIO_E_SYSTEM_RESOURCES)
        return err;
    if (err == CIO_E_INTERFACE_NOT_FOUND || err == CIO_E_ACCESS_DENIED)
        return CIO_E_UNKNOWN_HOST_NAME; /* an address on an interface this machine does not have */
    err = cio_hostname_validate(name);
    if (err != CIO_OK)
        return err;
    bool found = false;
    err = lookup_hosts(&l, &found);
    if (err != CIO_OK || found)
        return err;
    if (is_localhost(name)) {
        static const uint8_t lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        if (family_ok(&l, CIO_IP6)) {
            a = cio_ip6(lo6, l.opt.port);
            err = emit_address(&l, &a);
        }
        if (err == CIO_OK && family_ok(&l, CIO_IP4)) {
            a = cio_ip4_loopback(l.opt.port);
            err = emit_address(&l, &a);
        }
        if (err == CIO_OK)
            err = emit_canonical(&l, "localhost", 9);
        return err;
    }
    return lookup_dns_search(&l);
}

struct queue_ctx {
    cio_io io;
    cio_queue *q;
};

static cio_err queue_emit(void *ctx, const cio_lookup_result *r)
{
    struct queue_ctx *c = (struct queue_ctx *)ctx;
    return cio_queue_put_one(c->io, c->q, r);
}

cio_err cio_hostname_lookup(cio_io io, const char *name, const cio_lookup_options *options, cio_queue *results)
{
    CIO__REQUIRE(results);
    struct queue_ctx c = {io, results};
    cio_err err = cio__hostname_lookup_emit(io, name, options, queue_emit, &c);
    cio_queue_close(io, results);
    return err == CIO_E_INVALID_ARGUMENT ? err : CIO__IN_SET(lookup, err);
}
