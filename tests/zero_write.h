/*
 * An Io whose write slots (file_write_streaming, net_write) misbehave on purpose, for the tests of
 * cio_file_write_all and cio_stream_write_all: it is the test's backend with those two slots
 * replaced (every other slot, and the userdata, are the backend's own). The OS is not mocked: a
 * write the script lets through goes to the backend's real slot.
 *
 * The script: the first `zeros` calls report 0 bytes written (nothing is written); after that each
 * call goes to the real slot, except that with `overcount` set the count it reports is one more than
 * it was given. As a safety valve against an endless loop in the code under test, call number
 * ZERO_WRITE_VALVE fails with CIO_E_SYSTEM_RESOURCES (in both slots' sets), so a write_all that loops
 * forever fails the test with that error instead of hanging it. Not thread-safe: one wrapped Io at
 * a time.
 */
#ifndef CIO_TESTS_ZERO_WRITE_H
#define CIO_TESTS_ZERO_WRITE_H

#include "cio.h"

#define ZERO_WRITE_VALVE 10000

static struct {
    const struct cio_vtable *real;
    struct cio_vtable vt;
    unsigned zeros; /* calls still to report 0 bytes */
    bool overcount; /* report one byte more than asked */
    unsigned calls;
} zero_write;

static cio_err zero_write_step(size_t asked, size_t *n, bool *pass)
{
    *pass = false;
    if (++zero_write.calls >= ZERO_WRITE_VALVE)
        return CIO_E_SYSTEM_RESOURCES;
    if (zero_write.zeros > 0) {
        zero_write.zeros--;
        *n = 0;
        return CIO_OK;
    }
    if (zero_write.overcount) {
        *n = asked + 1;
        return CIO_OK;
    }
    *pass = true;
    return CIO_OK;
}

static size_t zero_write_total(const cio_const_iovec *iov, size_t iovcnt)
{
    size_t total = 0;
    for (size_t i = 0; i < iovcnt; i++)
        total += iov[i].len;
    return total;
}

static cio_err zero_write_file(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt, size_t *n)
{
    bool pass;
    cio_err err = zero_write_step(zero_write_total(iov, iovcnt), n, &pass);
    return pass ? zero_write.real->file_write_streaming(ud, file, iov, iovcnt, n) : err;
}

static cio_err zero_write_net(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *n)
{
    bool pass;
    cio_err err = zero_write_step(zero_write_total(iov, iovcnt), n, &pass);
    return pass ? zero_write.real->net_write(ud, stream, iov, iovcnt, n) : err;
}

/* io with its write slots scripted: `zeros` 0-byte writes first, then real ones (or overcounted). */
static cio_io zero_write_io(cio_io io, unsigned zeros, bool overcount)
{
    zero_write.real = io.vtable;
    zero_write.vt = *io.vtable;
    zero_write.vt.file_write_streaming = zero_write_file;
    zero_write.vt.net_write = zero_write_net;
    zero_write.zeros = zeros;
    zero_write.overcount = overcount;
    zero_write.calls = 0;
    return (cio_io){io.userdata, &zero_write.vt};
}

#endif
