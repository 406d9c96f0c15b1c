/*
 * File to file (cio_file_write_file_*) and the ANSI escape code questions of cio/fs_tree.h.
 *
 * Invariants:
 * - The write_file wrappers call the file_write_file slot first; its Unimplemented (an OS without an
 *   in-kernel copy, a pair of files the kernel refuses: EXDEV, EINVAL, ...) comes with what it
 *   copied already, and the rest is copied here (cio__copy_by_hand: positional reads and writes in
 *   one 64 KiB heap buffer; cio_net_write_file uses it too), so the caller never sees Unimplemented. *nwritten counts
 * every byte that went, also when an error ends the call. A read of 0 bytes is the end of `in`.
 * - cio_tty_config_detect reads the environment (cio__env_set) and asks the enable slot; it never fails.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "internal.h"

#define COPY_CHUNK ((size_t)64 * 1024)

cio_err cio__copy_by_hand(cio_io io, cio_file in, uint64_t in_offset, uint64_t len, const void *target, cio__put_fn put,
                          uint64_t *total)
{
    unsigned char *buf = (unsigned char *)malloc(COPY_CHUNK);
    if (buf == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio_err err = CIO_OK;
    while (err == CIO_OK && *total < len) {
        uint64_t left = len - *total;
        size_t want = left < COPY_CHUNK ? (size_t)left : COPY_CHUNK;
        size_t got = 0;
        err = cio_file_read_positional(io, in, buf, want, in_offset + *total, &got);
        if (err != CIO_OK || got == 0)
            break; /* an error, or the end of the file */
        for (size_t done = 0; err == CIO_OK && done < got;) {
            size_t w = 0;
            err = put(io, target, buf + done, got - done, *total, &w);
            *total += w;
            done += w;
            if (err == CIO_OK && w == 0)
                err = CIO_E_UNEXPECTED; /* a sink that takes nothing would loop for ever */
        }
    }
    free(buf);
    return err;
}

/* Where write_file's library copy goes. */
typedef struct file_sink {
    cio_file out;
    bool positional;
    uint64_t out_offset;
} file_sink;

static cio_err put_file(cio_io io, const void *target, const void *buf, size_t len, uint64_t at, size_t *n)
{
    const file_sink *s = (const file_sink *)target;
    return s->positional ? cio_file_write_positional(io, s->out, buf, len, s->out_offset + at, n)
                         : cio_file_write_streaming(io, s->out, buf, len, n);
}

static cio_err write_file(cio_io io, cio_file out, bool positional, uint64_t out_offset, cio_file in,
                          uint64_t in_offset, uint64_t len, uint64_t *nwritten)
{
    if (nwritten != NULL)
        *nwritten = 0;
    if (positional && out_offset > (uint64_t)INT64_MAX)
        return CIO_E_INVALID_ARGUMENT;
    if (len > UINT64_MAX - in_offset)
        len = UINT64_MAX - in_offset; /* "to the end" never wraps past the largest offset */
    uint64_t total = 0;
    cio_err err = CIO_OK;
    if (len > 0) {
        err = CIO__VT(io)->file_write_file(io.userdata, out, positional, out_offset, in, in_offset, len, &total);
        file_sink sink = {out, positional, out_offset};
        if (err == CIO_E_UNIMPLEMENTED)
            err = cio__copy_by_hand(io, in, in_offset, len, &sink, put_file, &total);
    }
    if (nwritten != NULL)
        *nwritten = total;
    return CIO__IN_SET(file_write_file_copy, err);
}

cio_err cio_file_write_file_streaming(cio_io io, cio_file out, cio_file in, uint64_t in_offset, uint64_t len,
                                      uint64_t *nwritten)
{
    return write_file(io, out, false, 0, in, in_offset, len, nwritten);
}

cio_err cio_file_write_file_positional(cio_io io, cio_file out, uint64_t out_offset, cio_file in, uint64_t in_offset,
                                       uint64_t len, uint64_t *nwritten)
{
    return write_file(io, out, true, out_offset, in, in_offset, len, nwritten);
}

cio_err cio_file_supports_ansi_escape_codes(cio_io io, cio_file file, bool *out)
{
    CIO__REQUIRE(out);
    return CIO__IN_SET(cancelable, CIO__VT(io)->file_supports_ansi_escape_codes(io.userdata, file, out));
}

cio_err cio_file_enable_ansi_escape_codes(cio_io io, cio_file file)
{
    return CIO__IN_SET(file_enable_ansi_escape_codes, CIO__VT(io)->file_enable_ansi_escape_codes(io.userdata, file));
}

cio_tty_config cio_tty_config_detect(cio_io io, cio_file file)
{
    if (cio__env_set("NO_COLOR"))
        return CIO_TTY_NO_COLOR;
    if (cio__env_set("CLICOLOR_FORCE"))
        return CIO_TTY_ESCAPE_CODES;
    return cio_file_enable_ansi_escape_codes(io, file) == CIO_OK ? CIO_TTY_ESCAPE_CODES : CIO_TTY_NO_COLOR;
}
