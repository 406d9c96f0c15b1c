/*
 * DNS wire format: query building and response parsing (see dns.h for the contract).
 *
 * Invariants:
 *   - every read is preceded by a bounds check against `len` (helpers get16/need);
 *   - names: a pointer target must be < the offset of the pointer itself, at most
 *     CIO__DNS_MAX_HOPS pointers per name, at most 255 wire bytes decoded: loops and
 *     out-of-bounds pointers are malformed, never followed;
 *   - a label may not contain '.' or NUL (it could not be told apart from the dotted form);
 *   - pure: no I/O, no allocation, no globals.
 */
#include <string.h>

#include "dns.h"

static unsigned get16(const uint8_t *p)
{
    return ((unsigned)p[0] << 8) | (unsigned)p[1];
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static int name_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 0 && a[la - 1] == '.')
        la--;
    if (lb > 0 && b[lb - 1] == '.')
        lb--;
    if (la != lb)
        return 0;
    for (size_t i = 0; i < la; i++)
        if (lower(a[i]) != lower(b[i]))
            return 0;
    return 1;
}

size_t cio__dns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, uint16_t qtype)
{
    size_t n = strlen(name);
    if (n > 0 && name[n - 1] == '.')
        n--;
    if (n == 0 || n > 253 || cap < 12 + n + 2 + 4)
        return 0;
    memset(buf, 0, 12);
    buf[0] = (uint8_t)(id >> 8);
    buf[1] = (uint8_t)id;
    buf[2] = 0x01; /* RD */
    buf[5] = 1;    /* QDCOUNT */
    size_t o = 12, start = 0;
    while (start <= n) {
        size_t end = start;
        while (end < n && name[end] != '.')
            end++;
        size_t l = end - start;
        if (l == 0 || l > 63)
            return 0;
        buf[o++] = (uint8_t)l;
        memcpy(buf + o, name + start, l);
        o += l;
        start = end + 1;
    }
    buf[o++] = 0;
    buf[o++] = (uint8_t)(qtype >> 8);
    buf[o++] = (uint8_t)qtype;
    buf[o++] = 0;
    buf[o++] = 1; /* IN */
    return o;
}

int cio__dns_read_name(const uint8_t *pkt, size_t len, size_t *off, char out[CIO__DNS_NAME_MAX])
{
    size_t pos = *off, next = 0, o = 0, wire = 0;
    int jumped = 0;
    unsigned hops = 0;
    for (;;) {
        if (pos >= len)
            return -1;
        unsigned b = pkt[pos];
        if ((b & 0xC0) == 0xC0) {
            if (pos + 1 >= len || ++hops > CIO__DNS_MAX_HOPS)
                return -1;
            size_t target = ((size_t)(b & 0x3F) << 8) | pkt[pos + 1];
            if (target >= pos) /* forward or self pointer: could loop */
                return -1;
            if (!jumped)
                next = pos + 2;
            jumped = 1;
            pos = target;
            continue;
        }
        if ((b & 0xC0) != 0) /* 0x40 / 0x80: reserved label types */
            return -1;
        if (b == 0) {
            if (!jumped)
                next = pos + 1;
            break;
        }
        size_t l = b;
        if (pos + 1 + l > len)
            return -1;
        wire += l + 1;
        if (wire > 255)
            return -1;
        if (o > 0)
            out[o++] = '.';
        for (size_t i = 0; i < l; i++) {
            char c = (char)pkt[pos + 1 + i];
            if (c == '.' || c == '\0')
                return -1;
            out[o++] = c;
        }
        pos += 1 + l;
    }
    out[o] = '\0';
    *off = next;
    return 0;
}

typedef struct rr {
    char owner[CIO__DNS_NAME_MAX];
    unsigned type, klass;
    size_t rdata, rdlen;
} rr;

/* Reads the record at *off; 0 on success. */
static int read_rr(const uint8_t *pkt, size_t len, size_t *off, rr *r)
{
    if (cio__dns_read_name(pkt, len, off, r->owner) != 0)
        return -1;
    if (len - *off < 10)
        return -1;
    const uint8_t *p = pkt + *off;
    r->type = get16(p);
    r->klass = get16(p + 2);
    r->rdlen = get16(p + 8);
    r->rdata = *off + 10;
    if (r->rdlen > len - r->rdata)
        return -1;
    *off = r->rdata + r->rdlen;
    return 0;
}

#define MAX_CNAME_LINKS 16

cio_err cio__dns_parse(const uint8_t *pkt, size_t len, uint16_t id, const char *name, uint16_t qtype,
                       cio__dns_response *out)
{
    memset(out, 0, sizeof *out);
    if (qtype != CIO__DNS_TYPE_A && qtype != CIO__DNS_TYPE_AAAA)
        return CIO_E_INVALID_DNS_PACKET;
    if (pkt == NULL || len < 12 || get16(pkt) != id || (pkt[2] & 0x80) == 0)
        return CIO_E_INVALID_DNS_PACKET;
    out->rcode = pkt[3] & 0x0F;
    out->truncated = (pkt[2] & 0x02) != 0;
    out->qtype = qtype;
    unsigned qd = get16(pkt + 4), an = get16(pkt + 6);
    if (qd == 0 && an == 0 && out->rcode == CIO__DNS_RCODE_FORMERR)
        return CIO_OK; /* a server that does not know OPT may answer without the question */
    if (qd != 1)
        return CIO_E_INVALID_DNS_PACKET;
    size_t off = 12;
    rr q;
    if (cio__dns_read_name(pkt, len, &off, q.owner) != 0 || len - off < 4)
        return CIO_E_INVALID_DNS_PACKET;
    if (!name_equal(q.owner, name) || get16(pkt + off) != qtype || get16(pkt + off + 2) != 1)
        return CIO_E_INVALID_DNS_PACKET;
    off += 4;
    size_t answers = off;

    /* Validate every answer record once (bounds, record sizes), so later passes cannot fail. */
    {
        size_t o = answers;
        for (unsigned i = 0; i < an; i++) {
            rr r;
            if (read_rr(pkt, len, &o, &r) != 0) {
                if (!out->truncated)
                    return CIO_E_INVALID_DNS_PACKET;
                an = i; /* cut to fit (TC): the whole records before the cut are the answer */
                break;
            }
            if (r.klass != 1)
                continue;
            if (r.type == CIO__DNS_TYPE_A && r.rdlen != 4)
                return CIO_E_INVALID_DNS_A_RECORD;
            if (r.type == CIO__DNS_TYPE_AAAA && r.rdlen != 16)
                return CIO_E_INVALID_DNS_AAAA_RECORD;
            if (r.type == CIO__DNS_TYPE_CNAME) {
                char t[CIO__DNS_NAME_MAX];
                size_t ro = r.rdata;
                if (cio__dns_read_name(pkt, r.rdata + r.rdlen, &ro, t) != 0 || ro != r.rdata + r.rdlen || t[0] == '\0')
                    return CIO_E_INVALID_DNS_CNAME_RECORD;
            }
        }
    }

    /* Follow the CNAME chain from the query name (records in any order; bounded). */
    size_t nl = strlen(name);
    if (nl >= CIO__DNS_NAME_MAX)
        return CIO_E_INVALID_DNS_PACKET;
    memcpy(out->canonical, name, nl + 1);
    if (nl > 0 && out->canonical[nl - 1] == '.')
        out->canonical[nl - 1] = '\0';
    for (unsigned link = 0; link < MAX_CNAME_LINKS; link++) {
        size_t o = answers;
        int found = 0;
        for (unsigned i = 0; i < an && !found; i++) {
            rr r;
            (void)read_rr(pkt, len, &o, &r);
            if (r.klass == 1 && r.type == CIO__DNS_TYPE_CNAME && name_equal(r.owner, out->canonical)) {
                size_t ro = r.rdata;
                (void)cio__dns_read_name(pkt, r.rdata + r.rdlen, &ro, out->canonical);
                found = 1;
            }
        }
        if (!found)
            break;
        if (link == MAX_CNAME_LINKS - 1)
            return CIO_E_INVALID_DNS_CNAME_RECORD; /* a chain this long is a loop */
    }

    size_t o = answers;
    for (unsigned i = 0; i < an; i++) {
        rr r;
        (void)read_rr(pkt, len, &o, &r);
        if (r.klass != 1 || r.type != qtype || !name_equal(r.owner, out->canonical))
            continue;
        if (out->naddrs < CIO__DNS_MAX_ADDRS) {
            cio__dns_addr *a = &out->addrs[out->naddrs];
            a->type = (uint16_t)r.type;
            memcpy(a->bytes, pkt + r.rdata, r.rdlen);
        }
        out->naddrs++;
    }
    out->answers = answers;
    out->ancount = an;
    return CIO_OK;
}

int cio__dns_next_addr(const uint8_t *pkt, size_t len, const cio__dns_response *r, size_t cursor[2], cio__dns_addr *out)
{
    /* cursor[0]: offset of the next record (0: not started), cursor[1]: records read. The records
     * were validated by cio__dns_parse, so read_rr cannot fail on [0, ancount). */
    size_t o = cursor[0] != 0 ? cursor[0] : r->answers;
    while (cursor[1] < r->ancount) {
        rr x;
        if (read_rr(pkt, len, &o, &x) != 0)
            return 0;
        cursor[0] = o;
        cursor[1]++;
        if (x.klass != 1 || x.type != r->qtype || !name_equal(x.owner, r->canonical))
            continue;
        out->type = (uint16_t)x.type;
        memcpy(out->bytes, pkt + x.rdata, x.rdlen);
        return 1;
    }
    return 0;
}

size_t cio__dns_add_opt(uint8_t *buf, size_t cap, size_t len, uint16_t payload)
{
    if (len < 12 || cap < len || cap - len < 11)
        return 0;
    uint8_t *p = buf + len;
    p[0] = 0; /* owner: the root */
    p[1] = 0;
    p[2] = CIO__DNS_TYPE_OPT;
    p[3] = (uint8_t)(payload >> 8); /* class: the UDP payload we can take */
    p[4] = (uint8_t)payload;
    memset(p + 5, 0, 6); /* extended rcode, version 0, flags (no DO), RDLEN 0 */
    unsigned ar = get16(buf + 10) + 1;
    buf[10] = (uint8_t)(ar >> 8);
    buf[11] = (uint8_t)ar;
    return len + 11;
}

/* ---- TCP framing ------------------------------------------------------------------------------- */

void cio__dns_tcp_reader_init(cio__dns_tcp_reader *r, uint8_t *buf, size_t cap)
{
    r->buf = buf;
    r->cap = cap;
    r->have = 0;
    r->msg_len = 0;
}

uint8_t *cio__dns_tcp_space(const cio__dns_tcp_reader *r, size_t *want)
{
    size_t end = r->have < 2 ? 2 : 2 + r->msg_len;
    *want = end > r->have ? end - r->have : 0;
    return r->buf + r->have;
}

int cio__dns_tcp_advance(cio__dns_tcp_reader *r, size_t n)
{
    size_t want;
    (void)cio__dns_tcp_space(r, &want);
    if (n > want)
        return -1;
    r->have += n;
    if (r->have < 2)
        return 0;
    if (r->have == 2 && n > 0) {
        r->msg_len = get16(r->buf);
        if (r->msg_len < 12 || r->cap < 2 || r->msg_len > r->cap - 2)
            return -1;
        return 0;
    }
    return r->have == 2 + r->msg_len ? 1 : 0;
}
