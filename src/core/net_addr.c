/*
 * The public networking API of cio/net.h, its addresses (split from net.c): IP address parsing and
 * formatting (pure library code) and Unix address construction.
 *
 * Invariants:
 * - Parsing and formatting make no OS or libc locale call (no inet_pton/inet_ntop, no ctype): the
 *   same bytes give the same result on every target. The parsers read exactly the bytes they are
 *   given (NUL-terminated forms measure with strlen first) and never past them; on failure *out is
 *   untouched.
 * - The IPv4 and IPv6 parsers follow Zig's Ip4Address.parse and Ip6Address.Unresolved.parse state
 *   for state, so the error (and, for IPv6, the position) is the one Zig reports; the deliberate
 *   differences are: an IPv4-mapped prefix "::ffff:" followed by no '.' is parsed as plain hex
 *   groups (Zig rejects "::ffff:1234:5678"), and an oversized scope is NameTooLong (Zig: overflow).
 * - Formatting writes the whole text into a local buffer of CIO_IP_FORMAT_MAX bytes first, then
 *   copies what fits; the result is always NUL-terminated when len > 0.
 * - A NULL where the API forbids one is CIO__NULL_ARG: CIO_E_INVALID_ARGUMENT in every build
 *   (debug builds also print a line; cio/diag.h), as in net.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cio/io.h"
#include "cio/net.h"
#include "internal.h"

/* ---- constructors ----------------------------------------------------------------------------------- */

cio_ip_address cio_ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
    cio_ip_address r;
    memset(&r, 0, sizeof r);
    r.family = CIO_IP4;
    r.port = port;
    r.bytes[0] = a;
    r.bytes[1] = b;
    r.bytes[2] = c;
    r.bytes[3] = d;
    return r;
}

cio_ip_address cio_ip6(const uint8_t bytes[16], uint16_t port)
{
    cio_ip_address r;
    memset(&r, 0, sizeof r);
    r.family = CIO_IP6;
    r.port = port;
    if (bytes != NULL)
        memcpy(r.bytes, bytes, 16);
    return r;
}

cio_ip_address cio_ip4_loopback(uint16_t port)
{
    return cio_ip4(127, 0, 0, 1, port);
}

cio_ip_address cio_ip4_any(uint16_t port)
{
    return cio_ip4(0, 0, 0, 0, port);
}

cio_ip_address cio_ip6_loopback(uint16_t port)
{
    static const uint8_t one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return cio_ip6(one, port);
}

cio_ip_address cio_ip6_any(uint16_t port)
{
    static const uint8_t zero[16] = {0};
    return cio_ip6(zero, port);
}

bool cio_ip_equal(const cio_ip_address *a, const cio_ip_address *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if (a->family != b->family || a->port != b->port)
        return false;
    size_t n = a->family == CIO_IP4 ? 4 : a->family == CIO_IP6 ? 16 : 0;
    return memcmp(a->bytes, b->bytes, n) == 0;
}

/* ---- parsing ------------------------------------------------------------------------------------------ */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Zig's Ip4Address.parse over n bytes. */
static cio_err ip4_parse(const char *t, size_t n, uint8_t bytes[4])
{
    unsigned parts[4] = {0, 0, 0, 0};
    size_t index = 0;
    bool saw_digits = false, zero_prefix = false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (c == '.') {
            if (!saw_digits)
                return CIO_E_INVALID_CHARACTER;
            if (index == 3)
                return CIO_E_INVALID_END;
            index++;
            saw_digits = false;
            zero_prefix = false;
        } else if (c >= '0' && c <= '9') {
            if (c == '0' && !saw_digits)
                zero_prefix = true;
            else if (zero_prefix)
                return CIO_E_NON_CANONICAL;
            saw_digits = true;
            parts[index] = parts[index] * 10u + (unsigned)(c - '0');
            if (parts[index] > 255u)
                return CIO_E_OVERFLOW;
        } else {
            return CIO_E_INVALID_CHARACTER;
        }
    }
    if (index != 3 || !saw_digits)
        return CIO_E_INCOMPLETE;
    for (size_t k = 0; k < 4; k++)
        bytes[k] = (uint8_t)parts[k];
    return CIO_OK;
}

static bool prefix_mapped(const char *t, size_t n)
{
    static const char p[] = "::ffff:";
    if (n < sizeof p - 1)
        return false;
    for (size_t i = 0; i < sizeof p - 1; i++) {
        char c = t[i];
        if (c >= 'A' && c <= 'F')
            c = (char)(c - 'A' + 'a');
        if (c != p[i])
            return false;
    }
    return memchr(t + 7, '.', n - 7) != NULL; /* "::ffff:1234:5678" is plain hex (see above) */
}

/* Zig's Ip6Address.Unresolved.parse: digits of a group, ':' ends a group or (with no digits before
 * it) marks the "::", '%' starts the scope; after the eighth group or the scope only the end may
 * follow. *pos gets the failure's offset (n for Incomplete). */
static cio_err ip6_parse(const char *t, size_t n, cio_ip6_unresolved *out, size_t *pos)
{
    *pos = n;
    if (n < 2)
        return CIO_E_INCOMPLETE;
    if (prefix_mapped(t, n)) {
        uint8_t b4[4];
        if (ip4_parse(t + 7, n - 7, b4) != CIO_OK) {
            *pos = 7;
            return CIO_E_INVALID_ADDRESS;
        }
        memset(out, 0, sizeof *out);
        out->bytes[10] = 0xff;
        out->bytes[11] = 0xff;
        memcpy(out->bytes + 12, b4, 4);
        return CIO_OK;
    }
    uint16_t parts[8] = {0};
    size_t pi = 0, i = 0, digits = 0, compress = 8; /* 8: no "::" */
    const char *scope = NULL;
    size_t scope_len = 0;
    for (;;) {
        char c = t[i];
        int d = hex_value(c);
        if (d >= 0) {
            if (parts[pi] > 0x0fffu) {
                *pos = i;
                return CIO_E_OVERFLOW;
            }
            parts[pi] = (uint16_t)(parts[pi] * 16u + (unsigned)d);
            if (digits == 4) {
                *pos = i;
                return CIO_E_INVALID_CHARACTER;
            }
            digits++;
            if (++i == n) {
                pi++;
                break;
            }
        } else if (c == ':') {
            if (digits == 0) {
                if (compress != 8) {
                    *pos = i;
                    return CIO_E_INVALID_CHARACTER;
                }
                if (i == 0 && t[++i] != ':') {
                    *pos = i;
                    return CIO_E_INVALID_CHARACTER;
                }
                compress = pi;
                if (++i == n)
                    break;
            } else {
                if (++pi == 8)
                    break; /* a ninth group: junk after the end, at this ':' */
                digits = 0;
                if (++i == n)
                    return CIO_E_INCOMPLETE;
            }
        } else if (c == '%') {
            if (digits == 0) {
                *pos = i;
                return CIO_E_INVALID_CHARACTER;
            }
            pi++;
            if (++i == n)
                return CIO_E_INCOMPLETE;
            if (n - i > CIO_IP_SCOPE_MAX) {
                *pos = i;
                return CIO_E_NAME_TOO_LONG;
            }
            scope = t + i;
            scope_len = n - i;
            i = n;
            break;
        } else {
            *pos = i;
            return CIO_E_INVALID_CHARACTER;
        }
    }
    if (i != n) {
        *pos = i;
        return CIO_E_INVALID_END;
    }
    if (compress != 8) {
        size_t moved = pi - compress, gap = 8 - pi;
        memmove(parts + 8 - moved, parts + compress, moved * sizeof parts[0]);
        for (size_t k = 0; k < gap; k++)
            parts[compress + k] = 0;
    } else if (pi != 8) {
        return CIO_E_INCOMPLETE;
    }
    for (size_t k = 0; k < 8; k++) {
        out->bytes[2 * k] = (uint8_t)(parts[k] >> 8);
        out->bytes[2 * k + 1] = (uint8_t)(parts[k] & 0xffu);
    }
    out->scope = scope;
    out->scope_len = scope_len;
    return CIO_OK;
}

cio_err cio_ip6_parse_unresolved(const char *text, size_t len, cio_ip6_unresolved *out, size_t *err_pos)
{
    CIO__REQUIRE(out);
    CIO__REQUIRE_BUF(text, len);
    size_t pos = 0;
    cio_ip6_unresolved r;
    cio_err err = ip6_parse(text, len, &r, &pos);
    if (err == CIO_OK)
        *out = r;
    else if (err_pos != NULL)
        *err_pos = pos;
    return CIO__IN_SET(net_ip_parse, err);
}

/* A decimal scope (interface index) into *id: InvalidAddress for a name, Overflow past 2^32-1. */
static cio_err scope_index(const char *s, size_t n, uint32_t *id)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return CIO_E_INVALID_ADDRESS; /* a name: needs the OS (cio_ip6_parse_unresolved) */
    for (size_t i = 0; i < n; i++) {
        v = v * 10u + (uint64_t)(s[i] - '0');
        if (v > UINT32_MAX)
            return CIO_E_OVERFLOW;
    }
    *id = (uint32_t)v;
    return CIO_OK;
}

static cio_err ip6_parse_full(const char *t, size_t n, uint16_t port, cio_ip_address *out)
{
    cio_ip6_unresolved u;
    size_t pos;
    cio_err err = ip6_parse(t, n, &u, &pos);
    uint32_t scope_id = 0;
    if (err == CIO_OK && u.scope != NULL)
        err = scope_index(u.scope, u.scope_len, &scope_id);
    if (err != CIO_OK)
        return err;
    *out = cio_ip6(u.bytes, port);
    out->scope_id = scope_id;
    return CIO_OK;
}

static cio_err ip4_parse_full(const char *t, size_t n, uint16_t port, cio_ip_address *out)
{
    uint8_t b[4];
    cio_err err = ip4_parse(t, n, b);
    if (err == CIO_OK)
        *out = cio_ip4(b[0], b[1], b[2], b[3], port);
    return err;
}

cio_err cio_ip4_parse(const char *text, uint16_t port, cio_ip_address *out)
{
    CIO__REQUIRE(text, out);
    return CIO__IN_SET(net_ip_parse, ip4_parse_full(text, strlen(text), port, out));
}

cio_err cio_ip6_parse(const char *text, uint16_t port, cio_ip_address *out)
{
    CIO__REQUIRE(text, out);
    return CIO__IN_SET(net_ip_parse, ip6_parse_full(text, strlen(text), port, out));
}

cio_err cio_ip_parse(const char *text, uint16_t port, cio_ip_address *out)
{
    CIO__REQUIRE(text, out);
    size_t n = strlen(text);
    cio_err err = memchr(text, ':', n) != NULL ? ip6_parse_full(text, n, port, out)
                                               : ip4_parse_full(text, n, port, out);
    return CIO__IN_SET(net_ip_parse, err);
}

/* A decimal port of 1 to 5 digits, at most 65535. */
static bool parse_port(const char *s, size_t n, uint16_t *port)
{
    if (n == 0 || n > 5)
        return false;
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10u + (uint32_t)(s[i] - '0');
    }
    if (v > 65535u)
        return false;
    *port = (uint16_t)v;
    return true;
}

cio_err cio_ip_parse_literal(const char *text, cio_ip_address *out)
{
    CIO__REQUIRE(text, out);
    size_t n = strlen(text);
    cio_ip_address r;
    memset(&r, 0, sizeof r);
    uint16_t port = 0;
    cio_err err;
    if (n == 0) {
        err = CIO_E_INVALID_ADDRESS;
    } else if (text[0] == '[') {
        const char *close = (const char *)memchr(text, ']', n);
        size_t end = close == NULL ? 0 : (size_t)(close - text);
        if (close == NULL || (end != n - 1 && text[end + 1] != ':'))
            err = CIO_E_INVALID_ADDRESS;
        else if (end != n - 1 && !parse_port(text + end + 2, n - end - 2, &port))
            err = CIO_E_INVALID_PORT;
        else
            err = ip6_parse_full(text + 1, end - 1, port, &r) == CIO_OK ? CIO_OK : CIO_E_INVALID_ADDRESS;
    } else {
        const char *colon = (const char *)memchr(text, ':', n);
        size_t end = colon == NULL ? n : (size_t)(colon - text);
        if (ip4_parse_full(text, end, 0, &r) != CIO_OK)
            err = CIO_E_INVALID_ADDRESS;
        else if (colon != NULL && !parse_port(colon + 1, n - end - 1, &port))
            err = CIO_E_INVALID_PORT;
        else
            err = CIO_OK;
        r.port = port;
    }
    if (err == CIO_OK)
        *out = r;
    return CIO__IN_SET(net_ip_parse, err);
}

/* ---- formatting --------------------------------------------------------------------------------------- */

typedef struct text_buf {
    char s[CIO_IP_FORMAT_MAX + CIO_INTERFACE_NAME_MAX]; /* room for a scope name too */
    size_t n;
} text_buf;

static void put_char(text_buf *b, char c)
{
    if (b->n < sizeof b->s - 1)
        b->s[b->n++] = c;
}

static void put_str(text_buf *b, const char *s)
{
    while (*s != '\0')
        put_char(b, *s++);
}

static void put_dec(text_buf *b, uint32_t v)
{
    char tmp[10];
    size_t k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    while (k > 0)
        put_char(b, tmp[--k]);
}

static void put_hex(text_buf *b, unsigned v)
{
    static const char digits[] = "0123456789abcdef";
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
        unsigned d = (v >> (unsigned)shift) & 0xfu;
        if (d != 0 || started || shift == 0) {
            put_char(b, digits[d]);
            started = true;
        }
    }
}

static void put_ip4(text_buf *b, const uint8_t *p)
{
    for (int k = 0; k < 4; k++) {
        if (k > 0)
            put_char(b, '.');
        put_dec(b, p[k]);
    }
}

/* RFC 5952 (and Zig's Unresolved.format): the first longest run of >= 2 zero groups is "::". */
static void put_ip6(text_buf *b, const cio_ip_address *a, const char *scope_name)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a->bytes, mapped, sizeof mapped) == 0) {
        put_str(b, "::ffff:");
        put_ip4(b, a->bytes + 12);
    } else {
        unsigned parts[8];
        for (size_t k = 0; k < 8; k++)
            parts[k] = ((unsigned)a->bytes[2 * k] << 8) | a->bytes[2 * k + 1];
        size_t best = 8, best_len = 0, run = 0;
        for (size_t k = 0; k < 8; k++) {
            run = parts[k] == 0 ? run + 1 : 0;
            if (run > best_len) {
                best_len = run;
                best = k + 1 - run;
            }
        }
        if (best_len < 2)
            best = 8;
        for (size_t k = 0; k < 8; k++) {
            if (k == best) {
                put_str(b, k == 0 ? "::" : ":");
                k += best_len - 1;
                continue;
            }
            put_hex(b, parts[k]);
            if (k != 7)
                put_char(b, ':');
        }
    }
    if (a->scope_id != 0) {
        put_char(b, '%');
        if (scope_name != NULL)
            put_str(b, scope_name);
        else
            put_dec(b, a->scope_id);
    }
}

static cio_err finish(const text_buf *t, char *buf, size_t len, size_t *out_len)
{
    if (out_len != NULL)
        *out_len = t->n;
    if (len == 0)
        return CIO_E_NAME_TOO_LONG;
    size_t copy = t->n < len - 1 ? t->n : len - 1;
    memcpy(buf, t->s, copy);
    buf[copy] = '\0';
    return copy == t->n ? CIO_OK : CIO_E_NAME_TOO_LONG;
}

cio_err cio__ip_format_scoped(const struct cio_ip_address *a, const char *scope_name, char *buf, size_t len,
                              size_t *out_len, bool with_port)
{
    CIO__REQUIRE(a);
    CIO__REQUIRE_BUF(buf, len);
    if (a->family != CIO_IP4 && a->family != CIO_IP6)
        return CIO_E_INVALID_ARGUMENT;
    text_buf t;
    t.n = 0;
    if (a->family == CIO_IP4) {
        put_ip4(&t, a->bytes);
    } else {
        if (with_port)
            put_char(&t, '[');
        put_ip6(&t, a, scope_name);
        if (with_port)
            put_char(&t, ']');
    }
    if (with_port) {
        put_char(&t, ':');
        put_dec(&t, a->port);
    }
    t.s[t.n] = '\0';
    return finish(&t, buf, len, out_len);
}

cio_err cio_ip_format(const cio_ip_address *address, char *buf, size_t len, size_t *out_len)
{
    return cio__ip_format_scoped(address, NULL, buf, len, out_len, true);
}

cio_err cio_ip_format_host(const cio_ip_address *address, char *buf, size_t len, size_t *out_len)
{
    return cio__ip_format_scoped(address, NULL, buf, len, out_len, false);
}

/* ---- Unix addresses ----------------------------------------------------------------------------------- */

cio_err cio_unix_address_init(const char *path, size_t len, cio_unix_address *out)
{
    CIO__REQUIRE(path, out);
    if (len == 0)
        return CIO_E_INVALID_ARGUMENT;
    if (len > CIO_UNIX_PATH_MAX)
        return CIO_E_NAME_TOO_LONG;
    /* A file-system path ends at its first NUL in the kernel's eyes: one inside would name another
     * file. An abstract name (a leading NUL) is any bytes. */
    if (path[0] != '\0' && memchr(path, '\0', len) != NULL)
        return CIO_E_BAD_PATH_NAME;
    memset(out, 0, sizeof *out);
    memcpy(out->path, path, len);
    out->len = len;
    return CIO_OK;
}

cio_err cio_unix_address_from_path(const char *path, cio_unix_address *out)
{
    CIO__REQUIRE(path);
    size_t n = 0;
    while (n <= CIO_UNIX_PATH_MAX && path[n] != '\0')
        n++;
    return cio_unix_address_init(path, n, out);
}
