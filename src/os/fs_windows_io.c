/*
 * Reading, writing, seeking, lengths, sync, timestamps and directory iteration for the Threaded
 * backend on Windows (fs_windows.c opens the handles; its header comment states the invariants this
 * file keeps too: every NT call bracketed and mapped, STATUS_CANCELLED retried unless canceled).
 *
 * Invariants:
 * - A read of 0 bytes means the end: STATUS_END_OF_FILE and, on a pipe, STATUS_PIPE_BROKEN (the
 *   writer is gone) map to ok with nothing read.
 * - Asynchronous handles (no synchronous flag: the Evented backend's files, or one a caller opened
 *   overlapped) work here too. A transfer that says STATUS_PENDING is waited out on the handle
 *   (signaled when a transfer on it ends; if it still says pending, another transfer on the same
 *   handle ended: 1 ms naps until this one does), alertably: a cancel's kick (an APC) makes it
 *   CancelIoEx that exact transfer (its status block) and wait, without alerts, for its end, whose
 *   STATUS_CANCELLED is the usual RETRY (canceled, or made again after a stray APC). NT keeps no
 *   position for such a handle, so a streaming call without a byte offset is refused
 *   (STATUS_INVALID_PARAMETER): the handle's mode is asked then, only then, and if it is
 *   asynchronous the call is made at FilePositionInformation, which is set past the bytes moved
 *   (as src/evented/fs_rw_iocp.c does). No packet reaches a completion port the handle is attached
 *   to: these calls pass no APC context.
 * - Directory iteration asks NtQueryDirectoryFile for one entry at a time
 *   (FileIdFullDirectoryInformation into a stack record sized for the longest name) and stores its
 *   WTF-8 name, NUL-terminated, in the reader's buffer; a batch stops when the buffer might not
 *   hold another longest name, so 1024 bytes always make progress. "." and ".." are skipped.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/ntapi.h"
#include "fs_windows.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "path_windows.h"
#include "os.h"

#define NT_SUCCESS(s) ((s) >= 0)
#define STATUS_PENDING_ 0x00000103
#define STATUS_INVALID_PARAMETER_ ((int32_t)0xC000000DL)
#define CHUNK_MAX 0x40000000u /* bytes per NtReadFile/NtWriteFile */
#define UNIX_EPOCH_AS_FILETIME 116444736000000000LL

static int32_t status_of(const cio_nt_io_status_block *iosb)
{
    return *(const volatile int32_t *)&iosb->Status; /* the kernel writes it when the transfer ends */
}

/* A transfer on an asynchronous handle that said STATUS_PENDING, waited out (the header says how):
 * its final status. Inside the bracket. */
static int32_t wait_pending(void *h, cio_nt_io_status_block *iosb)
{
    bool cancel_sent = false;
    while (status_of(iosb) == STATUS_PENDING_) {
        DWORD r = CIO__SYS(WaitForSingleObjectEx, rw_pending)(h, cancel_sent ? 1 : INFINITE, !cancel_sent);
        if (r != WAIT_IO_COMPLETION && status_of(iosb) == STATUS_PENDING_)
            r = CIO__SYS(SleepEx, rw_nap)(1, !cancel_sent); /* another transfer's end, or a failed wait: a nap */
        if (r == WAIT_IO_COMPLETION && !cancel_sent) {
            cancel_sent = true; /* ERROR_NOT_FOUND: it just ended; any other failure: it ends by itself */
            (void)CIO__SYS(CancelIoEx, rw_cancel)(h, (OVERLAPPED *)(void *)iosb);
        }
    }
    return status_of(iosb);
}

/* One NtReadFile or NtWriteFile of up to CHUNK_MAX bytes at *offset (NULL: the current position)
 * inside the bracket. *no_position: a streaming call the handle refused for want of an offset (the
 * bracket is left, nothing moved). */
static cio_err rw_once(bool write, void *h, void *buf, size_t len, int64_t *offset, cio__mapped (*map)(cio_ntstatus),
                       size_t *done, bool *no_position)
{
    *done = 0;
    *no_position = false;
    uint32_t n = len > CHUNK_MAX ? CHUNK_MAX : (uint32_t)len;
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return e;
    for (;;) {
        cio_nt_io_status_block iosb = {STATUS_PENDING_, 0, 0};
        int64_t off = offset != NULL ? *offset : 0;
        int64_t *at = offset != NULL ? &off : NULL;
        int32_t st = write ? CIO__SYS(NtWriteFile, rw_once)(h, NULL, NULL, NULL, &iosb, buf, n, at, NULL)
                           : CIO__SYS(NtReadFile, rw_once)(h, NULL, NULL, NULL, &iosb, buf, n, at, NULL);
        if (st == STATUS_PENDING_)
            st = wait_pending(h, &iosb);
        if (st == STATUS_INVALID_PARAMETER_ && offset == NULL) {
            cio__t_syscall_end();
            *no_position = true;
            return CIO_OK;
        }
        if (cio__win_nt_again(st, map, &e))
            continue;
        if (NT_SUCCESS(st))
            *done = (size_t)iosb.Information;
        return e;
    }
}

/* NtQueryInformationFile (set false) or NtSetInformationFile outside the bracket; RETRY asks the
 * cancel state and calls again. */
static cio_err info_io(bool set, void *h, void *buf, uint32_t len, uint32_t cls, cio__mapped (*map)(cio_ntstatus))
{
    for (;;) {
        cio_nt_io_status_block iosb;
        int32_t st = set ? CIO__SYS(NtSetInformationFile, io_set)(h, &iosb, buf, len, cls)
                         : CIO__SYS(NtQueryInformationFile, io_query)(h, &iosb, buf, len, cls);
        if (NT_SUCCESS(st))
            return CIO_OK;
        cio__mapped m = map(st);
        if (m.action == CIO__MAP_RETRY) {
            cio_err e = cio__t_cancel_point();
            if (e != CIO_OK)
                return e;
            continue;
        }
        if (m.action == CIO__MAP_OK)
            return CIO_OK;
        return m.action == CIO__MAP_BUG ? CIO__BUG("NtQueryInformationFile/NtSetInformationFile") : m.err;
    }
}

static cio_err query(void *h, void *buf, uint32_t len, uint32_t cls, cio__mapped (*map)(cio_ntstatus))
{
    return info_io(false, h, buf, len, cls, map);
}

static cio_err set_info(void *h, void *buf, uint32_t len, uint32_t cls, cio__mapped (*map)(cio_ntstatus))
{
    return info_io(true, h, buf, len, cls, map);
}

static bool is_disk(void *h)
{
    return GetFileType(h) == FILE_TYPE_DISK;
}

static cio_err get_position(void *h, int64_t *pos);
static cio_err set_position(void *h, int64_t pos);

bool cio__win_handle_is_async(void *h)
{
    cio_nt_io_status_block iosb;
    uint32_t mode = 0;
    int32_t st = CIO__SYS(NtQueryInformationFile, handle_mode)(h, &iosb, &mode, sizeof mode,
                                                               CIO_NT_FileModeInformation);
    return NT_SUCCESS(st) && (mode & (CIO_NT_FILE_SYNCHRONOUS_IO_ALERT | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT)) == 0;
}

/* Vectored transfer: buffer by buffer on disk files until one is short, else the first non-empty
 * buffer only. offset NULL: streaming (on an asynchronous disk file: at its stored position, which
 * is then advanced). */
static cio_err rw_vec(bool write, void *h, const cio_iovec *iov, size_t iovcnt, int64_t *offset,
                      cio__mapped (*map)(cio_ntstatus), size_t *total)
{
    *total = 0;
    bool disk = is_disk(h);
    int64_t pos = 0, *stored = NULL; /* an asynchronous handle's emulated position */
    cio_err err = CIO_OK;
    for (size_t i = 0; i < iovcnt; i++) {
        if (iov[i].len == 0)
            continue;
        if (iov[i].base == NULL)
            return CIO_E_INVALID_ARGUMENT;
        size_t done = 0;
        bool no_position = false;
        cio_err e = rw_once(write, h, iov[i].base, iov[i].len, offset, map, &done, &no_position);
        if (no_position) {
            if (!disk || !cio__win_handle_is_async(h))
                return CIO_E_UNEXPECTED; /* refused for another reason */
            e = get_position(h, &pos);
            if (e != CIO_OK)
                return e;
            offset = stored = &pos;
            i--; /* this buffer again, at the position */
            continue;
        }
        if (e != CIO_OK) {
            err = *total > 0 ? CIO_OK : e; /* bytes already moved are reported; the error recurs */
            break;
        }
        *total += done;
        if (offset != NULL)
            *offset += (int64_t)done;
        if (done < iov[i].len || !disk)
            break;
    }
    if (stored != NULL && *total > 0) {
        cio_err e = set_position(h, pos);
        if (e != CIO_OK) { /* not advanced: as if nothing moved (the same bytes again next time) */
            *total = 0;
            return e;
        }
    }
    return err;
}

static cio_err get_position(void *h, int64_t *pos)
{
    cio_nt_file_position_information info;
    cio_err e = query(h, &info, sizeof info, CIO_NT_FilePositionInformation, cio__ntstatus_nt_file_position);
    *pos = info.CurrentByteOffset;
    return e;
}

static cio_err set_position(void *h, int64_t pos)
{
    cio_nt_file_position_information info = {pos};
    return set_info(h, &info, sizeof info, CIO_NT_FilePositionInformation, cio__ntstatus_nt_file_position);
}

/* A positional transfer that leaves the handle's position where it was. */
static cio_err rw_positional(bool write, void *h, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                             cio__mapped (*map)(cio_ntstatus), size_t *total)
{
    *total = 0;
    if (offset > (uint64_t)INT64_MAX)
        return CIO_E_INVALID_ARGUMENT;
    if (!is_disk(h))
        return CIO_E_UNSEEKABLE;
    int64_t saved = 0;
    cio_err e = get_position(h, &saved);
    if (e != CIO_OK)
        return e == CIO_E_CANCELED ? e : CIO_E_UNSEEKABLE;
    int64_t off = (int64_t)offset;
    e = rw_vec(write, h, iov, iovcnt, &off, map, total);
    (void)set_position(h, saved);
    return e;
}

cio_err cio__os_file_read_streaming(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    (void)ud;
    if (nread == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_reader, rw_vec(false, file.handle, iov, iovcnt, NULL, cio__ntstatus_nt_read_file, nread));
}

cio_err cio__os_file_write_streaming(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                     size_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_write_streaming, rw_vec(true, file.handle, (const cio_iovec *)(const void *)iov, iovcnt,
                                                    NULL, cio__ntstatus_nt_write_file, nwritten));
}

cio_err cio__os_file_read_positional(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                     size_t *nread)
{
    (void)ud;
    if (nread == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_read_positional,
                       rw_positional(false, file.handle, iov, iovcnt, offset, cio__ntstatus_nt_read_file, nread));
}

cio_err cio__os_file_write_positional(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                      uint64_t offset, size_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL || (iov == NULL && iovcnt > 0))
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_write_positional, rw_positional(true, file.handle, (const cio_iovec *)(const void *)iov,
                                                            iovcnt, offset, cio__ntstatus_nt_write_file, nwritten));
}

cio_err cio__os_file_seek(void *ud, cio_file file, int whence, int64_t offset, uint64_t *pos)
{
    (void)ud;
    if (whence != 0 && whence != 1)
        return CIO_E_INVALID_ARGUMENT;
    if (!is_disk(file.handle))
        return CIO__IN_SET(file_seek, CIO_E_UNSEEKABLE);
    int64_t target = offset;
    if (whence == 1) {
        int64_t cur = 0;
        cio_err e = get_position(file.handle, &cur);
        if (e != CIO_OK)
            return CIO__IN_SET(file_seek, e);
        if ((offset > 0 && cur > INT64_MAX - offset) || cur + offset < 0)
            return CIO_E_INVALID_ARGUMENT;
        target = cur + offset;
    } else if ((uint64_t)offset > (uint64_t)INT64_MAX) {
        return CIO_E_INVALID_ARGUMENT;
    }
    cio_err e = set_position(file.handle, target);
    if (e == CIO_OK && pos != NULL)
        *pos = (uint64_t)target;
    return CIO__IN_SET(file_seek, e);
}

cio_err cio__os_file_set_length(void *ud, cio_file file, uint64_t length)
{
    (void)ud;
    if (length > (uint64_t)INT64_MAX)
        return CIO__IN_SET(file_set_length, CIO_E_FILE_TOO_BIG);
    cio_nt_file_end_of_file_information info = {(int64_t)length};
    return CIO__IN_SET(file_set_length, set_info(file.handle, &info, sizeof info, CIO_NT_FileEndOfFileInformation,
                                                 cio__ntstatus_nt_set_information_file));
}

cio_err cio__os_file_sync(void *ud, cio_file file)
{
    (void)ud;
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(file_sync, e);
    for (;;) {
        cio_nt_io_status_block iosb;
        int32_t st = CIO__SYS(NtFlushBuffersFile, file_sync)(file.handle, &iosb);
        if (NT_SUCCESS(st))
            break;
        if (cio__win_nt_retry(cio__ntstatus_nt_flush_buffers_file(st), &e))
            continue;
        return CIO__IN_SET(file_sync, e);
    }
    cio__t_syscall_end();
    return CIO_OK;
}

static int64_t nt_time_of(cio_timestamp_action action, cio_timestamp ts)
{
    if (action == CIO_TIMESTAMP_UNCHANGED)
        return 0; /* 0 leaves the time as it is */
    if (action == CIO_TIMESTAMP_NOW) {
        FILETIME ft;
        GetSystemTimePreciseAsFileTime(&ft);
        return (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
    }
    int64_t t = ts.ns / 100 + UNIX_EPOCH_AS_FILETIME;
    return t > 0 ? t : 1; /* before 1601: the earliest time NT can store */
}

cio_err cio__os_file_set_timestamps(void *ud, cio_file file, const cio_set_timestamps *ts)
{
    (void)ud;
    if (ts == NULL || ts->access_action > CIO_TIMESTAMP_SET || ts->modify_action > CIO_TIMESTAMP_SET)
        return CIO_E_INVALID_ARGUMENT;
    cio_nt_file_basic_information info;
    memset(&info, 0, sizeof info);
    info.LastAccessTime = nt_time_of(ts->access_action, ts->access);
    info.LastWriteTime = nt_time_of(ts->modify_action, ts->modify);
    if (info.LastAccessTime == 0 && info.LastWriteTime == 0)
        return CIO_OK;
    return CIO__IN_SET(file_set_timestamps, set_info(file.handle, &info, sizeof info, CIO_NT_FileBasicInformation,
                                                     cio__ntstatus_nt_set_basic_information));
}

/* ---- directory iteration ------------------------------------------------------------------------- */

#define NAME_UTF8_MAX (255u * 3u + 1u) /* the longest NTFS name as WTF-8, with its NUL */

typedef union dir_record {
    cio_nt_file_id_full_dir_information info;
    unsigned char bytes[sizeof(cio_nt_file_id_full_dir_information) + 256u * 2u];
} dir_record;

cio_err cio__os_dir_read(void *ud, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count)
{
    (void)ud;
    if (reader == NULL || count == NULL || (entries == NULL && max > 0) || reader->buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    size_t used = 0;
    while (*count < max && !reader->eof) {
        if (*count > 0 && reader->buf_len - used < NAME_UTF8_MAX)
            break;
        dir_record rec;
        cio_nt_io_status_block iosb;
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return CIO__IN_SET(dir_iterate, e);
        int32_t st;
        for (;;) {
            st = CIO__SYS(NtQueryDirectoryFile, dir_read)(reader->dir.handle, NULL, NULL, NULL, &iosb, &rec, sizeof rec,
                                                          CIO_NT_FileIdFullDirectoryInformation, 1, NULL, 0);
            if (NT_SUCCESS(st))
                break;
            if (cio__win_nt_retry(cio__ntstatus_nt_query_directory_file(st), &e))
                continue;
            if (e == CIO_OK) { /* mapped OK: NO_MORE_FILES, NO_SUCH_FILE */
                reader->eof = true;
                return CIO_OK;
            }
            return CIO__IN_SET(dir_iterate, e);
        }
        cio__t_syscall_end();
        const cio_nt_file_id_full_dir_information *r = &rec.info;
        size_t units = r->FileNameLength / 2;
        const uint16_t *name =
            (const uint16_t *)(const void *)(rec.bytes + offsetof(cio_nt_file_id_full_dir_information, FileName));
        if ((units == 1 && name[0] == '.') || (units == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        char *dst = (char *)reader->buf + used;
        size_t room = reader->buf_len - used, n = 0;
        if (room == 0 || cio__win_wtf16_to_wtf8(name, units, dst, room - 1, &n) != CIO_OK)
            return CIO__IN_SET(dir_iterate, CIO_E_SYSTEM_RESOURCES); /* a buffer below the documented minimum */
        dst[n] = '\0';
        used += n + 1;
        cio_dir_entry *out = &entries[(*count)++];
        out->name = dst;
        out->name_len = n;
        out->inode = (uint64_t)r->FileId;
        if ((r->FileAttributes & CIO_NT_FILE_ATTRIBUTE_REPARSE_POINT) && r->EaSize == CIO_NT_IO_REPARSE_TAG_SYMLINK)
            out->kind = CIO_FILE_KIND_SYM_LINK;
        else if (r->FileAttributes & CIO_NT_FILE_ATTRIBUTE_DIRECTORY)
            out->kind = CIO_FILE_KIND_DIRECTORY;
        else
            out->kind = CIO_FILE_KIND_FILE;
    }
    return CIO_OK;
}
