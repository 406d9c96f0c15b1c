/*
 * The io_uring entry points that fs.c and io.c name, where there is no io_uring (the BSDs). The
 * flavour is never CIO_EVENTED_IO_URING there (flavour_kqueue.c), so they are never called: reaching
 * one is a bug, reported as such.
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

void cio__e_uring_fs_override(struct cio_evented *e, struct cio_vtable *vt)
{
    (void)e;
    (void)vt;
    (void)CIO__BUG("io_uring slots on a system without io_uring");
}

void cio__e_uring_net_override(struct cio_evented *e, struct cio_vtable *vt)
{
    (void)e;
    (void)vt;
    (void)CIO__BUG("io_uring slots on a system without io_uring");
}

void cio__e_uring_splice_override(struct cio_evented *e, struct cio_vtable *vt)
{
    (void)e;
    (void)vt;
    (void)CIO__BUG("io_uring slots on a system without io_uring");
}

void cio__e_uring_process_override(struct cio_evented *e, struct cio_vtable *vt)
{
    (void)e;
    (void)vt;
    (void)CIO__BUG("io_uring slots on a system without io_uring");
}
