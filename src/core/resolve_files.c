/*
 * The resolver's files: reading one into memory, splitting its lines into tokens (hosts and
 * resolv.conf share both), and resolv.conf itself (see resolve_files.h). Called from resolve.c only.
 *
 * Invariants: a file is read up to FILE_MAX bytes and NUL-terminated; the buffer is freed on every
 * path; out of memory is SystemResources, never "no file"; malformed resolv.conf lines are ignored
 * and every option value is clamped to its range.
 */
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "resolve_files.h"
#include "internal/cio_oscalls.h"

#define FILE_MAX ((size_t)1 << 20) /* hosts / resolv.conf bytes read; the rest is ignored */

/* Reads up to FILE_MAX bytes of path into a malloc'd, NUL-terminated buffer. CIO_E_FILE_NOT_FOUND
 * (or another open error) when it cannot be opened. */
cio_err cio__resolve_read_file(cio_io io, const char *path, char **out, size_t *len)
{
    cio_file f;
    cio_err err = cio_dir_open_file(io, cio_dir_cwd(), path, NULL, &f);
    if (err != CIO_OK)
        return err;
    char *buf = (char *)CIO__SYS(malloc, resolve_read_file)(FILE_MAX + 1);
    if (buf == NULL) {
        (void)cio_file_close(io, f);
        return CIO_E_SYSTEM_RESOURCES;
    }
    size_t n = 0;
    err = cio_file_read_all(io, f, buf, FILE_MAX, &n);
    (void)cio_file_close(io, f);
    if (err != CIO_OK) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return CIO_OK;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Splits line [p, end) (comment already cut) into tokens; returns the count (at most max). */
static size_t split_tokens(const char *p, const char *end, const char **tok, size_t *tlen, size_t max)
{
    size_t n = 0;
    while (p < end && n < max) {
        while (p < end && is_space(*p))
            p++;
        if (p == end)
            break;
        const char *s = p;
        while (p < end && !is_space(*p))
            p++;
        tok[n] = s;
        tlen[n] = (size_t)(p - s);
        n++;
    }
    return n;
}

/* Returns the end of the line at p (the '\n' or the NUL) and the end of its content before '#'. */
static const char *line_end(const char *p, const char **content_end)
{
    const char *e = p;
    *content_end = NULL;
    while (*e != '\0' && *e != '\n') {
        if (*e == '#' && *content_end == NULL)
            *content_end = e;
        e++;
    }
    if (*content_end == NULL)
        *content_end = e;
    return e;
}

size_t cio__resolve_next_line(const char **p, const char **tok, size_t *tlen, size_t max)
{
    const char *cend;
    const char *e = line_end(*p, &cend);
    size_t n = split_tokens(*p, cend, tok, tlen, max);
    *p = *e == '\n' ? e + 1 : e;
    return n;
}


/* ---- resolv.conf ------------------------------------------------------------------------------ */
static unsigned option_value(const char *s, size_t len, unsigned cap)
{
    unsigned v = 0;
    if (len == 0)
        return cap + 1; /* invalid: caller ignores */
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return cap + 1;
        if (v < 1000)
            v = v * 10 + (unsigned)(s[i] - '0');
    }
    return v > cap ? cap : v;
}

cio_err cio__resolve_parse_conf(cio_io io, const char *path, uint16_t port, cio__resolv_conf *rc)
{
    memset(rc, 0, sizeof rc->ns);
    rc->nns = 0;
    rc->search[0] = '\0';
    rc->ndots = 1;
    rc->attempts = 2;
    rc->timeout_s = 5;
    rc->use_vc = false;
    char *buf = NULL;
    size_t len = 0;
    cio_err err = cio__resolve_read_file(io, path, &buf, &len);
    if (err == CIO_E_CANCELED || err == CIO_E_SYSTEM_RESOURCES)
        return err; /* out of memory (or descriptors) is not a file we could not parse */
    if (err == CIO_OK) {
        const char *p = buf;
        while (*p != '\0') {
            const char *tok[CIO__RESOLVE_MAX_TOKENS];
            size_t tlen[CIO__RESOLVE_MAX_TOKENS];
            size_t nt = cio__resolve_next_line(&p, tok, tlen, CIO__RESOLVE_MAX_TOKENS);
            if (nt >= 2 && tlen[0] == 10 && memcmp(tok[0], "nameserver", 10) == 0) {
                char ip[64];
                cio_ip_address a;
                if (tlen[1] < sizeof ip && rc->nns < CIO__RESOLVE_MAX_NAMESERVERS) {
                    memcpy(ip, tok[1], tlen[1]);
                    ip[tlen[1]] = '\0';
                    if (cio_ip_parse(ip, port, &a) == CIO_OK)
                        rc->ns[rc->nns++] = a;
                }
            } else if (nt >= 1 && ((tlen[0] == 6 && memcmp(tok[0], "search", 6) == 0) ||
                                   (tlen[0] == 6 && memcmp(tok[0], "domain", 6) == 0))) {
                /* the last one wins; stored as space-separated domains */
                size_t o = 0;
                rc->search[0] = '\0';
                for (size_t i = 1; i < nt; i++) {
                    if (o + tlen[i] + 2 > sizeof rc->search)
                        break;
                    if (o > 0)
                        rc->search[o++] = ' ';
                    memcpy(rc->search + o, tok[i], tlen[i]);
                    o += tlen[i];
                    rc->search[o] = '\0';
                }
            } else if (nt >= 1 && tlen[0] == 7 && memcmp(tok[0], "options", 7) == 0) {
                for (size_t i = 1; i < nt; i++) {
                    unsigned v;
                    if (tlen[i] > 6 && memcmp(tok[i], "ndots:", 6) == 0) {
                        if ((v = option_value(tok[i] + 6, tlen[i] - 6, 15)) <= 15)
                            rc->ndots = v;
                    } else if (tlen[i] > 9 && memcmp(tok[i], "attempts:", 9) == 0) {
                        if ((v = option_value(tok[i] + 9, tlen[i] - 9, 10)) <= 10)
                            rc->attempts = v;
                    } else if (tlen[i] > 8 && memcmp(tok[i], "timeout:", 8) == 0) {
                        if ((v = option_value(tok[i] + 8, tlen[i] - 8, 60)) <= 60)
                            rc->timeout_s = v;
                    } else if (tlen[i] == 6 && memcmp(tok[i], "use-vc", 6) == 0) {
                        rc->use_vc = true;
                    } /* "edns0": EDNS0 is always on (a FORMERR turns it off per query) */
                }
            }
        }
        free(buf);
    } else if (err != CIO_E_FILE_NOT_FOUND) {
        return CIO_E_RESOLV_CONF_PARSE_FAILED;
    }
    if (rc->attempts == 0)
        rc->attempts = 1;
    if (rc->timeout_s == 0)
        rc->timeout_s = 1;
    if (rc->nns == 0)
        rc->ns[rc->nns++] = cio_ip4_loopback(port);
    return CIO_OK;
}
