/*
 * The Evented backend's whole-file slots (issue 21): the atomic file's unnamed temporary and the
 * in-kernel copy between files. Each runs the Threaded implementation on the helper pool (helper.c),
 * never on a loop thread; the wait for the helper is a cancellation point, as the Threaded call is.
 * A caller that is not one of this instance's fibers runs it on its own thread. An O_TMPFILE open is
 * rare. File to file stays here on every flavour: io_uring has no copy_file_range opcode, and
 * copy_file_range can reflink or copy inside the file system; the io_uring flavour's SPLICE needs a
 * pipe on one side, and it takes over only a streaming write into a pipe (splice_uring.c), handing
 * back to this slot whatever the kernel refuses.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "evented.h"
#include "internal.h"
#include "slots.h"
#include "os.h"

struct a_create_tmp {
    cio_dir dir;
    uint32_t permissions;
    cio_file *out;
};
static cio_err h_create_tmp(void *p)
{
    struct a_create_tmp *a = (struct a_create_tmp *)p;
    return cio__os_dir_create_tmp_file(NULL, a->dir, a->permissions, a->out);
}
cio_err cio__e_dir_create_tmp_file(void *ud, cio_dir dir, uint32_t permissions, cio_file *out)
{
    struct a_create_tmp a = {dir, permissions, out};
    return cio__e_helper((struct cio_evented *)ud, h_create_tmp, &a, true);
}

struct a_write_file {
    cio_file out;
    bool positional;
    uint64_t out_offset;
    cio_file in;
    uint64_t in_offset;
    uint64_t len;
    uint64_t *nwritten;
};
static cio_err h_write_file(void *p)
{
    struct a_write_file *a = (struct a_write_file *)p;
    return cio__os_file_write_file(NULL, a->out, a->positional, a->out_offset, a->in, a->in_offset, a->len,
                                   a->nwritten);
}
cio_err cio__e_file_write_file(void *ud, cio_file out, bool positional, uint64_t out_offset, cio_file in,
                               uint64_t in_offset, uint64_t len, uint64_t *nwritten)
{
    struct a_write_file a = {out, positional, out_offset, in, in_offset, len, nwritten};
    return cio__e_helper((struct cio_evented *)ud, h_write_file, &a, true);
}
