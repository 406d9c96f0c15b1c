/*
 * The Evented backend's file and directory slots.
 *
 * Reads, writes and fsync are native: on the io_uring flavour one ring operation each (pipes, sockets
 * and regular files alike, canceled with ASYNC_CANCEL); on the readiness flavours a non-blocking
 * attempt (Linux: preadv2/pwritev2 with RWF_NOWAIT, fs_nowait_linux.c), then either a readiness wait
 * (pipes, terminals, sockets) or, for data that is not cached or a file that cannot say (regular
 * files; every file on the BSDs, fs_nowait_none.c), the helper pool. Opening a file is the helper
 * pool's (here, not in fs_helper.c: fs_rw_iocp.c opens asynchronous handles on Windows). The
 * other slots, which every flavour runs alike (the helper pool; closing and seeking in place), are
 * fs_helper.c's. (The io_uring flavour replaces the slots it has opcodes for, open/stat/mkdir/rename/
 * delete/set_length/close, with ring operations: fs_uring.c.)
 * Invariants: a slot called by a thread that is not one of this instance's fibers runs the read and
 * write paths as a fiber (cio__e_run) and the helper paths directly on that thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/uio.h>

#include "cio/errmap.h"
#include "evented.h"
#include "internal.h"
#include "slots.h"
#include "helper_slot.h"
#include "os.h"

/* ---- opening files: the Threaded implementation on the helper pool (fs_rw_iocp.c on Windows) ---------------- */

CIO__E_HELPER_SLOT(dir_open_file, 4, cio_dir, dir, const char *, path, const cio_open_file_options *, options,
                   cio_file *, out)
CIO__E_HELPER_SLOT(dir_create_file, 4, cio_dir, dir, const char *, path, const cio_create_file_options *, options,
                   cio_file *, out)

/* ---- reads, writes, sync ------------------------------------------------------------------------------------ */

enum rw_kind { RW_READ, RW_WRITE, RW_PREAD, RW_PWRITE, RW_SYNC /* file_sync: only rw_uring, n NULL */ };

struct rw {
    struct cio_evented *e;
    enum rw_kind kind;
    int fd;
    const void *iov; /* cio_iovec or cio_const_iovec: both are {base, len} like struct iovec */
    int iovcnt;
    uint64_t offset;
    size_t *n;
};

static cio__mapped map_rw(enum rw_kind k, int err)
{
    switch (k) {
    case RW_READ: return cio__errno_readv(err);
    case RW_WRITE: return cio__errno_writev(err);
    case RW_PREAD: return cio__errno_preadv(err);
    case RW_PWRITE: return cio__errno_pwritev(err);
    default: return cio__errno_fsync(err);
    }
}

static cio_err rw_mapped(cio__mapped m)
{
    if (m.action == CIO__MAP_BUG)
        return CIO__BUG("read/write: an errno that means a bug");
    return m.action == CIO__MAP_OK ? (cio_err)CIO_OK : m.err;
}

/* The blocking call, for the helper pool. */
static cio_err rw_blocking(void *p)
{
    struct rw *a = (struct rw *)p;
    switch (a->kind) {
    case RW_READ:
        return cio__os_file_read_streaming(NULL, (cio_file){a->fd}, (const cio_iovec *)a->iov, (size_t)a->iovcnt, a->n);
    case RW_WRITE:
        return cio__os_file_write_streaming(NULL, (cio_file){a->fd}, (const cio_const_iovec *)a->iov, (size_t)a->iovcnt,
                                            a->n);
    case RW_PREAD:
        return cio__os_file_read_positional(NULL, (cio_file){a->fd}, (const cio_iovec *)a->iov, (size_t)a->iovcnt,
                                            a->offset, a->n);
    default:
        return cio__os_file_write_positional(NULL, (cio_file){a->fd}, (const cio_const_iovec *)a->iov,
                                             (size_t)a->iovcnt, a->offset, a->n);
    }
}

/* Whether a positional ring transfer on fd keeps its offset. The ring ignores the offset of a stream
 * (a pipe, a socket: the kernel reads or writes it in order) where pread/pwrite say ESPIPE, which is
 * Threaded's and the readiness path's Unseekable: so a descriptor not yet known seekable is asked
 * with fstat first (the Threaded file_stat, its site and map), and a regular file or block device is
 * remembered until cio closes it (fds.c). A failed fstat leaves the answer to the ring. */
static bool positional_ok(int fd)
{
    uint32_t gen;
    if (cio__e_fd_seekable(fd, &gen))
        return true;
    cio_stat st;
    if (cio__os_file_stat(NULL, (cio_file){fd}, &st) != CIO_OK)
        return true;
    if (st.kind == CIO_FILE_KIND_FILE || st.kind == CIO_FILE_KIND_BLOCK_DEVICE) {
        cio__e_fd_set_seekable(fd, gen);
        return true;
    }
    return st.kind != CIO_FILE_KIND_NAMED_PIPE && st.kind != CIO_FILE_KIND_UNIX_DOMAIN_SOCKET;
}

static cio_err rw_uring(struct rw *a)
{
    bool writing = a->kind == RW_WRITE || a->kind == RW_PWRITE;
    uint64_t off = (a->kind == RW_READ || a->kind == RW_WRITE) ? (uint64_t)-1 : a->offset;
    enum cio__e_uring_op op = a->kind == RW_SYNC ? CIO__E_U_FSYNC : writing ? CIO__E_U_WRITEV : CIO__E_U_READV;
    if ((a->kind == RW_PREAD || a->kind == RW_PWRITE) && !positional_ok(a->fd))
        return rw_mapped(map_rw(a->kind, ESPIPE));
    for (;;) {
        bool canceled = false;
        int32_t res = cio__e_uring_rw(a->e, op, a->fd, a->iov, (unsigned)a->iovcnt, off, true, &canceled);
        if (canceled)
            return CIO_E_CANCELED;
        if (res >= 0 && a->n != NULL)
            *a->n = (size_t)res;
        if (res >= 0)
            return CIO_OK;
        cio__mapped m = map_rw(a->kind, -res);
        if (m.action == CIO__MAP_RETRY)
            continue;
        return rw_mapped(m);
    }
}

static cio_err rw_readiness(struct rw *a)
{
    bool writing = a->kind == RW_WRITE || a->kind == RW_PWRITE;
    off_t off = (a->kind == RW_READ || a->kind == RW_WRITE) ? (off_t)-1 : (off_t)a->offset;
    if (off != (off_t)-1 && (a->offset > (uint64_t)INT64_MAX))
        return rw_mapped(map_rw(a->kind, EINVAL));
    for (;;) {
        cio_err c = cio__e_cancel_point(a->e);
        if (c != CIO_OK)
            return c;
        long n = cio__e_file_try_rw(a->fd, a->iov, a->iovcnt, (int64_t)off, writing); /* fs_nowait_<os>.c */
        if (n >= 0) {
            *a->n = (size_t)n;
            return CIO_OK;
        }
        int err = errno;
        if (err == EINTR)
            continue;
        if (err == EOPNOTSUPP)
            return cio__e_helper(a->e, rw_blocking, a, true);
        if (err != EAGAIN)
            return rw_mapped(map_rw(a->kind, err));
        uint32_t rev;
        c = cio__e_wait_fd(a->e, a->fd, writing ? POLLOUT : POLLIN, -1, true, &rev);
        if (c == CIO_E_OPERATION_UNSUPPORTED) /* a regular file: not cached, cannot be polled */
            return cio__e_helper(a->e, rw_blocking, a, true);
        if (c != CIO_OK)
            return c;
    }
}

static cio_err rw_run(void *p)
{
    struct rw *a = (struct rw *)p;
    return a->e->flavour == CIO_EVENTED_IO_URING ? rw_uring(a) : rw_readiness(a);
}

static cio_err rw_slot(void *ud, enum rw_kind kind, cio_file file, const void *iov, size_t iovcnt, uint64_t offset,
                       size_t *n)
{
    if (n == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *n = 0;
    struct rw a = {(struct cio_evented *)ud,
                   kind,
                   file.handle,
                   iov,
                   iovcnt > CIO__OS_IOV_MAX ? (int)CIO__OS_IOV_MAX : (int)iovcnt,
                   offset,
                   n};
    return cio__e_run(a.e, rw_run, &a);
}

cio_err cio__e_file_read_streaming(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    return CIO__IN_SET(file_reader, rw_slot(ud, RW_READ, file, iov, iovcnt, 0, nread));
}

cio_err cio__e_file_write_streaming(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    size_t *nwritten)
{
    return CIO__IN_SET(file_write_streaming, rw_slot(ud, RW_WRITE, file, iov, iovcnt, 0, nwritten));
}

cio_err cio__e_file_read_positional(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                    size_t *nread)
{
    return CIO__IN_SET(file_read_positional, rw_slot(ud, RW_PREAD, file, iov, iovcnt, offset, nread));
}

cio_err cio__e_file_write_positional(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                     uint64_t offset, size_t *nwritten)
{
    return CIO__IN_SET(file_write_positional, rw_slot(ud, RW_PWRITE, file, iov, iovcnt, offset, nwritten));
}

static cio_err sync_blocking(void *p)
{
    return cio__os_file_sync(NULL, (cio_file){((struct rw *)p)->fd});
}

static cio_err sync_run(void *p)
{
    struct rw *a = (struct rw *)p;
    if (a->e->flavour != CIO_EVENTED_IO_URING)
        return cio__e_helper(a->e, sync_blocking, a, true);
    return rw_uring(a);
}

cio_err cio__e_file_sync(void *ud, cio_file file)
{
    struct rw a = {.e = (struct cio_evented *)ud, .kind = RW_SYNC, .fd = file.handle};
    return CIO__IN_SET(file_sync, cio__e_run(a.e, sync_run, &a));
}
