/*
 * Socket pairs, interface names, scoped addresses and files sent over streams (cio/net.h): the
 * public wrappers of their slots, and the library code around them.
 *
 * Invariants:
 * - Each wrapper checks its arguments (CIO__NULL_ARG), calls its slot and returns the slot's result
 *   in the function's set (CIO__IN_SET), as net.c's do.
 * - cio_net_write_file: the slot sends what it can without copying and says Unimplemented, having
 *   sent nothing more, where it has no such path (another OS, a file the kernel refuses); the rest
 *   is copied by cio__copy_by_hand (fs_copy.c) through the positional-read and stream-write slots.
 *   Unimplemented never reaches the caller. *nwritten counts every byte that went, also when an
 *   error ends the call.
 * - cio_ip_parse_resolve resolves only a scope that is not a decimal index; everything else is
 *   cio_ip_parse's, so the two agree on every text without a scope name. cio_ip_format_resolve is
 *   cio_ip_format with the scope's index replaced by its interface name when the OS knows one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"
#include "internal.h"


cio_err cio_net_socket_pair(cio_io io, cio_stream pair[2])
{
    CIO__REQUIRE(pair);
    return CIO__IN_SET(net_socket_create_pair, CIO__VT(io)->net_socket_pair(io.userdata, pair));
}

cio_err cio_net_interface_name_resolve(cio_io io, const char *name, uint32_t *index)
{
    CIO__REQUIRE(name, index);
    cio_err err = CIO__VT(io)->net_interface_name_resolve(io.userdata, name, index);
    return err == CIO_E_OPERATION_UNSUPPORTED ? err : CIO__IN_SET(net_interface_resolve, err);
}

cio_err cio_net_interface_name(cio_io io, uint32_t index, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_err err = CIO__VT(io)->net_interface_name(io.userdata, index, buf, len, out_len);
    return err == CIO_E_OPERATION_UNSUPPORTED ? err : CIO__IN_SET(net_interface_name, err);
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

cio_err cio_ip_parse_resolve(cio_io io, const char *text, uint16_t port, cio_ip_address *out)
{
    CIO__REQUIRE(text, out);
    size_t n = strlen(text);
    if (memchr(text, ':', n) == NULL || memchr(text, '%', n) == NULL)
        return cio_ip_parse(text, port, out);
    cio_ip6_unresolved u;
    cio_err err = cio_ip6_parse_unresolved(text, n, &u, NULL);
    if (err != CIO_OK || u.scope == NULL || all_digits(u.scope, u.scope_len))
        return err != CIO_OK ? CIO__IN_SET(net_ip_address_resolve, err) : cio_ip_parse(text, port, out);
    char name[CIO_IP_SCOPE_MAX + 1]; /* the parser refuses a longer scope (NameTooLong) */
    memcpy(name, u.scope, u.scope_len);
    name[u.scope_len] = '\0';
    uint32_t index = 0;
    err = cio_net_interface_name_resolve(io, name, &index);
    if (err != CIO_OK)
        return err == CIO_E_OPERATION_UNSUPPORTED ? CIO_E_INTERFACE_NOT_FOUND : err;
    *out = cio_ip6(u.bytes, port);
    out->scope_id = index;
    return CIO_OK;
}

static cio_err format_resolve(cio_io io, const cio_ip_address *address, char *buf, size_t len, size_t *out_len,
                              bool with_port)
{
    CIO__REQUIRE(address);
    char name[CIO_INTERFACE_NAME_MAX + 1];
    const char *scope = NULL;
    if (address->family == CIO_IP6 && address->scope_id != 0) {
        cio_err err = CIO__VT(io)->net_interface_name(io.userdata, address->scope_id, name, sizeof name, NULL);
        if (err == CIO_E_CANCELED)
            return err;
        scope = err == CIO_OK ? name : NULL; /* no such interface (or no interfaces): the index */
    }
    return CIO__IN_SET(net_ip_address_format, cio__ip_format_scoped(address, scope, buf, len, out_len, with_port));
}

cio_err cio_ip_format_resolve(cio_io io, const cio_ip_address *address, char *buf, size_t len, size_t *out_len)
{
    return format_resolve(io, address, buf, len, out_len, true);
}

cio_err cio_ip_format_host_resolve(cio_io io, const cio_ip_address *address, char *buf, size_t len, size_t *out_len)
{
    return format_resolve(io, address, buf, len, out_len, false);
}

/* Where the library's copy goes: the stream, written in order. */
static cio_err put_stream(cio_io io, const void *target, const void *buf, size_t len, uint64_t at, size_t *n)
{
    (void)at;
    return cio_stream_write(io, (const cio_stream *)target, buf, len, n);
}

cio_err cio_net_write_file(cio_io io, const cio_stream *stream, cio_file file, uint64_t offset, uint64_t len,
                           uint64_t *nwritten)
{
    CIO__REQUIRE(stream);
    if (nwritten != NULL)
        *nwritten = 0;
    if (len > UINT64_MAX - offset)
        len = UINT64_MAX - offset; /* "to the end" never wraps past the largest offset */
    uint64_t total = 0;
    cio_err err = CIO_OK;
    if (len > 0) {
        err = CIO__VT(io)->net_write_file(io.userdata, stream->handle, file, offset, len, &total);
        if (err == CIO_E_UNIMPLEMENTED)
            err = cio__copy_by_hand(io, file, offset, len, stream, put_stream, &total);
    }
    if (nwritten != NULL)
        *nwritten = total;
    return CIO__IN_SET(net_write_file, err);
}
