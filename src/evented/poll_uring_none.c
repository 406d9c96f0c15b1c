/*
 * The io_uring entry points that fs.c names, where there is no io_uring (the BSDs). The flavour is
 * never CIO_EVENTED_IO_URING there (flavour_kqueue.c), so fs.c never calls them: reaching one is a
 * bug, reported as such.
 */
#include <errno.h>

#include "evented.h"
#include "internal.h"

int32_t cio__e_uring_rw(struct cio_evented *e, enum cio__e_uring_op op, int fd, const void *iov, unsigned iovcnt,
                        uint64_t offset, bool cancelable, bool *canceled)
{
    (void)e;
    (void)op;
    (void)fd;
    (void)iov;
    (void)iovcnt;
    (void)offset;
    (void)cancelable;
    *canceled = false;
    (void)CIO__BUG("io_uring operation on a system without io_uring");
    return -ENOSYS;
}
