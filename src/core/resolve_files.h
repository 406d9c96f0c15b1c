/*
 * The resolver's files (resolve_files.c): read into memory, split into tokens, resolv.conf parsed.
 * Internal.
 */
#ifndef CIO_CORE_RESOLVE_FILES_H
#define CIO_CORE_RESOLVE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/net.h"
#include "dns.h"

#define CIO__RESOLVE_MAX_NAMESERVERS 3
#define CIO__RESOLVE_MAX_TOKENS 64

typedef struct cio__resolv_conf {
    cio_ip_address ns[CIO__RESOLVE_MAX_NAMESERVERS];
    size_t nns;
    char search[CIO__DNS_NAME_MAX * 2];
    unsigned ndots, attempts, timeout_s;
    bool use_vc; /* options use-vc: TCP only */
} cio__resolv_conf;

/* Reads up to 1 MiB of path into a malloc'd, NUL-terminated buffer (*out; free it). The open's
 * error (CIO_E_FILE_NOT_FOUND, ...) when it cannot be opened, CIO_E_SYSTEM_RESOURCES without memory. */
cio_err cio__resolve_read_file(cio_io io, const char *path, char **out, size_t *len);

/* The line at *p (up to its '\n' or the NUL; from '#' on a comment) split into tokens at blanks:
 * tok[i], tlen[i], the count returned (at most max); *p moves on to the next line. */
size_t cio__resolve_next_line(const char **p, const char **tok, size_t *tlen, size_t max);

/* resolv.conf at path (nameservers get `port`): nameserver (3 at most), search/domain (the last one
 * wins), options ndots:n attempts:n timeout:n use-vc (edns0 is accepted: EDNS0 is always on). A
 * missing file means the defaults (nameserver 127.0.0.1, ndots 1, attempts 2, timeout 5). Canceled
 * and SystemResources as such; any other failure to read it ResolvConfParseFailed. */
cio_err cio__resolve_parse_conf(cio_io io, const char *path, uint16_t port, cio__resolv_conf *rc);

#endif
