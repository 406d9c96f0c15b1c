/*
 * The Evented backend's files on Windows (the iocp flavour; fs.c is the POSIX one): regular files
 * it opens are asynchronous handles, and reads and writes on any asynchronous handle are overlapped
 * operations on the fiber's loop's completion port (poll_iocp.c, iocp.h).
 *
 * - Opening (dir_open_file, dir_create_file) is the Threaded implementation (fs_windows.c) on the
 *   helper pool, with no synchronous-I/O flag: NtCreateFile has no overlapped form.
 * - Each read or write asks the handle's mode first (FileModeInformation): a handle without either
 *   synchronous flag (ours, or one a caller opened overlapped) runs overlapped here; any other (a
 *   Threaded-opened file, a pipe, the console, a process's stdio) runs the Threaded implementation
 *   (fs_windows_io.c) on the helper pool, as every handle did before. Then GetFileType: a disk file
 *   takes a byte offset, anything else (a pipe) none and no positional calls (Unseekable).
 * - Streaming on a disk file: NT keeps no position for an asynchronous handle, so the position is
 *   FilePositionInformation, which the handle still stores (file_seek sets it, a Threaded io on the
 *   same handle reads it too): read it, transfer there, then set it past the bytes moved. If that
 *   last step fails the call fails with nothing moved (the position did not advance: a reader reads
 *   the same bytes again, a writer writes the same bytes at the same place). Two streaming calls on
 *   one handle at once race on the position, as Threaded's positional save/restore does. A handle
 *   with FILE_APPEND_DATA and no FILE_WRITE_DATA still appends: NT writes it at the end whatever the
 *   offset says.
 * - Vectored calls as the Threaded ones: buffer by buffer (one operation each, at most CHUNK_MAX
 *   bytes) until one is short; a pipe takes only the first non-empty buffer.
 * - Results are NTSTATUS in the OVERLAPPED (its Internal/InternalHigh are the I/O status block),
 *   through the Threaded maps (nt_read_file, nt_write_file): END_OF_FILE and PIPE_BROKEN read 0
 *   bytes; STATUS_CANCELLED by someone else's CancelIoEx (RETRY) starts the transfer again, while a
 *   cancel of the fiber ends it Canceled (cio__e_iocp_run waits for the packet either way).
 * - A start that fails at once queues no packet on NT, but Wine queues one for some failed file
 *   transfers: on a disk file the fiber then drains (cio__e_iocp_drain, a zero-length probe at
 *   offset 0) before its OVERLAPPED goes away. Pipes fail at once without a packet on both.
 * - An asynchronous handle attached to a port that is not this instance's (another instance read or
 *   wrote it first, even one destroyed since: poll_iocp.c) runs the Threaded implementation on the
 *   helper pool, which queues no packet; its first transfer says so before anything moves.
 * - file_sync stays on the helper pool (NtFlushBuffersFile waits for the flush on any handle).
 * Invariants: a thread that is not one of this instance's fibers runs the read/write path as a
 * fiber (cio__e_run) and the helper paths directly (helper.c).
 */
#include "iocp.h"

#include <string.h>

#include "cio/errmap.h"
#include "cio/ntapi.h"
#include "evented.h"
#include "fs_windows.h"
#include "helper_slot.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"
#include "slots.h"

#define STATUS_PENDING_ 0x00000103
#define CHUNK_MAX 0x40000000u /* bytes per operation, as fs_windows_io.c */

CIO__E_HELPER_SLOT(file_sync, 1, cio_file, file)

/* ---- opening: asynchronous handles, on the helper pool ------------------------------------------------------ */

struct open_args {
    cio_dir dir;
    const char *path;
    const void *options;
    cio_file *out;
    bool create;
};

static cio_err h_open(void *p)
{
    struct open_args *a = (struct open_args *)p;
    return a->create ? cio__win_dir_create_file(a->dir, a->path, (const cio_create_file_options *)a->options, 0, a->out)
                     : cio__win_dir_open_file(a->dir, a->path, (const cio_open_file_options *)a->options, 0, a->out);
}

cio_err cio__e_dir_open_file(void *ud, cio_dir dir, const char *path, const cio_open_file_options *options,
                             cio_file *out)
{
    struct open_args a = {dir, path, options, out, false};
    return cio__e_helper((struct cio_evented *)ud, h_open, &a, true);
}

cio_err cio__e_dir_create_file(void *ud, cio_dir dir, const char *path, const cio_create_file_options *options,
                               cio_file *out)
{
    struct open_args a = {dir, path, options, out, true};
    return cio__e_helper((struct cio_evented *)ud, h_open, &a, true);
}

/* ---- one transfer ----------------------------------------------------------------------------------------- */

struct rw {
    struct cio_evented *e;
    HANDLE h;
    const cio_iovec *iov;
    size_t iovcnt;
    uint64_t offset; /* positional: where; streaming on a disk file: the position read */
    bool write, positional, disk;
    size_t *n;
    /* the operation in flight */
    char *buf;
    uint32_t len;
    int64_t at;
    int32_t st;   /* what its start said */
    bool foreign; /* the handle is attached to another port: nothing was started (h_sync instead) */
};

static int32_t nt_rw(struct rw *a, void *ctx, cio_nt_io_status_block *iosb, uint32_t len, int64_t *at, bool probe)
{
    if (probe)
        return a->write ? CIO__SYS(NtWriteFile, iocp_file_probe)(a->h, NULL, NULL, ctx, iosb, a->buf, len, at, NULL)
                        : CIO__SYS(NtReadFile, iocp_file_probe)(a->h, NULL, NULL, ctx, iosb, a->buf, len, at, NULL);
    return a->write ? CIO__SYS(NtWriteFile, iocp_file_write)(a->h, NULL, NULL, ctx, iosb, a->buf, len, at, NULL)
                    : CIO__SYS(NtReadFile, iocp_file_read)(a->h, NULL, NULL, ctx, iosb, a->buf, len, at, NULL);
}

/* 0 when a packet follows (pending or done: NT_SUCCESS), else 1 (a->st says why). */
static int rw_start(struct cio__e_iocp_op *op, void *arg)
{
    struct rw *a = (struct rw *)arg;
    int64_t at = a->at;
    a->st = nt_rw(a, &op->ov, (cio_nt_io_status_block *)(void *)&op->ov, a->len, a->disk ? &at : NULL, false);
    return a->st == STATUS_PENDING_ || a->st >= 0 ? 0 : 1;
}

static int probe_start(struct cio__e_iocp_op *op, void *arg)
{
    struct rw *a = (struct rw *)arg;
    int64_t at = 0;
    int32_t st = nt_rw(a, CIO__E_IOCP_PROBE(op), (cio_nt_io_status_block *)(void *)&op->ov, 0, &at, true);
    return st == STATUS_PENDING_ || st >= 0 ? 0 : 1;
}

/* A finished transfer's status through the maps: CIO_OK (an OK mapping: nothing moved), the
 * error, or *again (RETRY: STATUS_CANCELLED by someone else's cancel). */
static cio_err outcome(int32_t st, bool write, bool *again)
{
    *again = false;
    if (st >= 0)
        return CIO_OK;
    cio__mapped m = write ? cio__ntstatus_nt_write_file(st) : cio__ntstatus_nt_read_file(st);
    if (m.action == CIO__MAP_RETRY) {
        *again = true;
        return CIO_OK;
    }
    if (m.action == CIO__MAP_OK)
        return CIO_OK;
    return m.action == CIO__MAP_BUG ? CIO__BUG("NtReadFile/NtWriteFile on an asynchronous handle") : m.err;
}

/* One overlapped transfer of a->len bytes at a->at (disk files) into or from a->buf: *done. */
static cio_err one(struct rw *a, size_t *done)
{
    for (;;) {
        struct cio__e_iocp_op op;
        int code = 0;
        *done = 0;
        cio_err err = cio__e_iocp_run(a->e, &op, a->h, rw_start, a, -1, true, &code);
        if (err != CIO_OK)
            return err;
        if (code == CIO__E_IOCP_FOREIGN) {
            a->foreign = true;
            return CIO_OK;
        }
        int32_t st = a->st;
        if (code != 0) {
            if (a->disk)
                cio__e_iocp_drain(&op, probe_start, a);
        } else {
            st = (int32_t)(uint32_t)op.ov.Internal;
            if (st >= 0)
                *done = (size_t)op.ov.InternalHigh;
        }
        bool again;
        err = outcome(st, a->write, &again);
        if (!again)
            return err;
    }
}

/* The buffers in turn from a->offset (disk files), as fs_windows_io.c's rw_vec. */
static cio_err vec(struct rw *a, size_t *total)
{
    *total = 0;
    for (size_t i = 0; i < a->iovcnt; i++) {
        if (a->iov[i].len == 0)
            continue;
        if (a->iov[i].base == NULL)
            return CIO_E_INVALID_ARGUMENT;
        a->buf = (char *)a->iov[i].base;
        a->len = a->iov[i].len > CHUNK_MAX ? CHUNK_MAX : (uint32_t)a->iov[i].len;
        a->at = (int64_t)(a->offset + *total);
        size_t done = 0;
        cio_err err = one(a, &done);
        if (a->foreign)
            return CIO_OK; /* the first transfer: nothing moved */
        if (err != CIO_OK)
            return *total > 0 ? CIO_OK : err; /* bytes already moved are reported; the error recurs */
        *total += done;
        if (done < a->iov[i].len || !a->disk)
            break;
    }
    return CIO_OK;
}

/* FilePositionInformation of h, queried (set false) or set. */
static cio_err position(HANDLE h, bool set, int64_t *pos)
{
    cio_nt_io_status_block iosb;
    cio_nt_file_position_information info = {*pos};
    int32_t st = set ? CIO__SYS(NtSetInformationFile, iocp_file_advance)(h, &iosb, &info, sizeof info,
                                                                         CIO_NT_FilePositionInformation)
                     : CIO__SYS(NtQueryInformationFile, iocp_file_position)(h, &iosb, &info, sizeof info,
                                                                            CIO_NT_FilePositionInformation);
    if (st >= 0) {
        *pos = info.CurrentByteOffset;
        return CIO_OK;
    }
    cio__mapped m = cio__ntstatus_nt_file_position(st);
    return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
}

/* The Threaded implementation, on the helper pool (a synchronous handle). */
static cio_err h_sync(void *p)
{
    struct rw *a = (struct rw *)p;
    cio_file f = {a->h};
    if (a->positional)
        return a->write ? cio__os_file_write_positional(NULL, f, (const cio_const_iovec *)(const void *)a->iov,
                                                        a->iovcnt, a->offset, a->n)
                        : cio__os_file_read_positional(NULL, f, a->iov, a->iovcnt, a->offset, a->n);
    return a->write
               ? cio__os_file_write_streaming(NULL, f, (const cio_const_iovec *)(const void *)a->iov, a->iovcnt, a->n)
               : cio__os_file_read_streaming(NULL, f, a->iov, a->iovcnt, a->n);
}

static cio_err rw_run(void *p)
{
    struct rw *a = (struct rw *)p;
    if (!cio__win_handle_is_async(a->h)) /* or the mode unknown: the helper path says what it is */
        return cio__e_helper(a->e, h_sync, a, true);
    cio_err err = CIO_OK;
    a->disk = GetFileType(a->h) == FILE_TYPE_DISK;
    if (a->positional) {
        if (!a->disk)
            return CIO_E_UNSEEKABLE;
        err = vec(a, a->n);
        return a->foreign ? cio__e_helper(a->e, h_sync, a, true) : err;
    }
    int64_t pos = 0;
    if (a->disk) {
        err = position(a->h, false, &pos);
        if (err != CIO_OK)
            return err;
        a->offset = (uint64_t)pos;
    }
    size_t total = 0;
    err = vec(a, &total);
    if (a->foreign) /* the Threaded call moves the stored position itself */
        return cio__e_helper(a->e, h_sync, a, true);
    if (err == CIO_OK && a->disk && total > 0) {
        pos += (int64_t)total;
        err = position(a->h, true, &pos);
    }
    *a->n = err == CIO_OK ? total : 0;
    return err;
}

static cio_err rw_slot(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset, bool write,
                       bool positional, size_t *n)
{
    if (n == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    *n = 0;
    if (positional && offset > (uint64_t)INT64_MAX)
        return CIO_E_INVALID_ARGUMENT;
    struct rw a;
    memset(&a, 0, sizeof a);
    a.e = (struct cio_evented *)ud;
    a.h = (HANDLE)file.handle;
    a.iov = iov;
    a.iovcnt = iovcnt;
    a.offset = offset;
    a.write = write;
    a.positional = positional;
    a.n = n;
    return cio__e_run(a.e, rw_run, &a);
}

cio_err cio__e_file_read_streaming(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    return CIO__IN_SET(file_reader, rw_slot(ud, file, iov, iovcnt, 0, false, false, nread));
}

cio_err cio__e_file_write_streaming(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    size_t *nwritten)
{
    return CIO__IN_SET(file_write_streaming,
                       rw_slot(ud, file, (const cio_iovec *)(const void *)iov, iovcnt, 0, true, false, nwritten));
}

cio_err cio__e_file_read_positional(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                    size_t *nread)
{
    return CIO__IN_SET(file_read_positional, rw_slot(ud, file, iov, iovcnt, offset, false, true, nread));
}

cio_err cio__e_file_write_positional(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                     uint64_t offset, size_t *nwritten)
{
    return CIO__IN_SET(file_write_positional,
                       rw_slot(ud, file, (const cio_iovec *)(const void *)iov, iovcnt, offset, true, true, nwritten));
}
