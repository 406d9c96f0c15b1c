/*
 * The readiness flavour's non-blocking file attempt on Linux: preadv2/pwritev2 with RWF_NOWAIT,
 * which fails with EAGAIN instead of waiting for the disk (data not in the page cache) or for a
 * pipe, and with EOPNOTSUPP where the file system cannot promise that (fs.c then uses the helper
 * pool). off < 0 means the file position, as for preadv2 itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/uio.h>

#include "evented.h"
#include "internal/cio_oscalls.h"

long cio__e_file_try_rw(int fd, const void *iov, int iovcnt, int64_t off, bool writing)
{
    const struct iovec *v = (const struct iovec *)iov;
    off_t o = off < 0 ? (off_t)-1 : (off_t)off;
    return writing ? (long)CIO__SYS(pwritev2, nowait_write)(fd, v, iovcnt, o, RWF_NOWAIT)
                   : (long)CIO__SYS(preadv2, nowait_read)(fd, v, iovcnt, o, RWF_NOWAIT);
}
