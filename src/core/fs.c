/*
 * The public file and directory API of cio/fs.h: thin wrappers over the vtable slots, plus the few
 * loops that need nothing but the slots (write_all, read_all) and the non-vectored forms.
 *
 * Invariants:
 * - Every wrapper calls exactly the slot it is named after (read_all and write_all call the
 *   streaming slots repeatedly; seek_to/seek_by/position call file_seek; length calls file_stat) and
 *   adds no OS code: the backend owns every syscall, so the same wrapper serves every backend.
 * - A NULL where the API forbids one is the caller's bug: CIO__NULL_ARG (CIO_E_INVALID_ARGUMENT in
 *   every build, and a line on stderr in debug ones), checked here before the backend is asked.
 * - A wrapper returns the slot's result unchanged: CIO_OK, CIO_E_INVALID_ARGUMENT (other impossible
 *   arguments, never asserted: callers may test it), or a member of the function's error set, which
 *   debug builds check here as well (CIO__IN_SET), so a backend that strays is caught at the boundary.
 * - The non-vectored forms describe (buf, len) as one iovec; a NULL buf with len > 0 is
 *   InvalidArgument before the backend is asked.
 * - write_all (cio__write_all, shared with cio_stream_write_all) retries short writes until every
 *   byte is written or an error; one 0-byte write is retried, a second in a row is Unexpected (a
 *   sink that takes nothing and says nothing would otherwise be called forever). read_all reads
 *   until the buffer is full or a read returns 0 (the end).
 * - The only target-specific code is the handle value of the current directory and the standard
 *   streams (the #if below).
 */
#define _POSIX_C_SOURCE 200809L /* AT_FDCWD */
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "internal.h"

#if defined(CIO_OS_WINDOWS)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <fcntl.h>
#endif

/* The slot's result, set-checked in debug builds; InvalidArgument passes unchecked (see above). */

/* ---- handles ---------------------------------------------------------------------------------- */

#if defined(CIO_OS_WINDOWS)
/* NULL: the backend resolves relative paths against the process's current directory. */
cio_dir cio_dir_cwd(void)
{
    cio_dir d = {NULL};
    return d;
}

cio_file cio_file_stdin(void)
{
    cio_file f = {GetStdHandle(STD_INPUT_HANDLE)};
    return f;
}

cio_file cio_file_stdout(void)
{
    cio_file f = {GetStdHandle(STD_OUTPUT_HANDLE)};
    return f;
}

cio_file cio_file_stderr(void)
{
    cio_file f = {GetStdHandle(STD_ERROR_HANDLE)};
    return f;
}
#else
cio_dir cio_dir_cwd(void)
{
    cio_dir d = {AT_FDCWD};
    return d;
}

cio_file cio_file_stdin(void)
{
    cio_file f = {0};
    return f;
}

cio_file cio_file_stdout(void)
{
    cio_file f = {1};
    return f;
}

cio_file cio_file_stderr(void)
{
    cio_file f = {2};
    return f;
}
#endif

/* ---- directories ------------------------------------------------------------------------------ */

void cio_dir_reader_init(cio_dir_reader *reader, cio_dir dir, void *buffer, size_t len)
{
    if (reader == NULL)
        return;
    reader->dir = dir;
    reader->buf = (unsigned char *)buffer;
    reader->buf_len = buffer == NULL ? 0 : len;
    reader->pos = 0;
    reader->end = 0;
    reader->eof = false;
}

cio_err cio_dir_create_file(cio_io io, cio_dir dir, const char *path, const cio_create_file_options *options,
                            cio_file *out)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->dir_create_file(io.userdata, dir, path, options, out);
    return CIO__IN_SET(file_open, err);
}

cio_err cio_dir_open_file(cio_io io, cio_dir dir, const char *path, const cio_open_file_options *options, cio_file *out)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->dir_open_file(io.userdata, dir, path, options, out);
    return CIO__IN_SET(file_open, err);
}

cio_err cio_dir_open_dir(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options, cio_dir *out)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->dir_open_dir(io.userdata, dir, path, options, out);
    return CIO__IN_SET(dir_open, err);
}

cio_err cio_dir_create_dir(cio_io io, cio_dir dir, const char *path, uint32_t permissions)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    cio_err err = CIO__VT(io)->dir_create_dir(io.userdata, dir, path, permissions);
    return CIO__IN_SET(dir_create_dir, err);
}

cio_err cio_dir_create_dir_path(cio_io io, cio_dir dir, const char *path, uint32_t permissions, bool *created)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    cio_err err = CIO__VT(io)->dir_create_dir_path(io.userdata, dir, path, permissions, created);
    return CIO__IN_SET(dir_make_path, err);
}

cio_err cio_dir_create_dir_path_open(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options,
                                     cio_dir *out)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->dir_create_dir_path_open(io.userdata, dir, path, options, out);
    return CIO__IN_SET(dir_make_open_path, err);
}

cio_err cio_dir_rename(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    if (old_path == NULL)
        return CIO__NULL_ARG("old_path");
    if (new_path == NULL)
        return CIO__NULL_ARG("new_path");
    cio_err err = CIO__VT(io)->dir_rename(io.userdata, old_dir, old_path, new_dir, new_path);
    return CIO__IN_SET(dir_rename, err);
}

cio_err cio_dir_delete_file(cio_io io, cio_dir dir, const char *path)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    cio_err err = CIO__VT(io)->dir_delete_file(io.userdata, dir, path);
    return CIO__IN_SET(dir_delete_file, err);
}

cio_err cio_dir_delete_dir(cio_io io, cio_dir dir, const char *path)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    cio_err err = CIO__VT(io)->dir_delete_dir(io.userdata, dir, path);
    return CIO__IN_SET(dir_delete_dir, err);
}

cio_err cio_dir_stat_file(cio_io io, cio_dir dir, const char *path, unsigned flags, cio_stat *out)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->dir_stat_file(io.userdata, dir, path, flags, out);
    return CIO__IN_SET(dir_stat_file, err);
}

cio_err cio_dir_access(cio_io io, cio_dir dir, const char *path, unsigned mode)
{
    if (path == NULL)
        return CIO__NULL_ARG("path");
    cio_err err = CIO__VT(io)->dir_access(io.userdata, dir, path, mode);
    return CIO__IN_SET(dir_access, err);
}

cio_err cio_dir_read(cio_io io, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count)
{
    if (reader == NULL)
        return CIO__NULL_ARG("reader");
    if (count == NULL)
        return CIO__NULL_ARG("count");
    if (entries == NULL && max > 0)
        return CIO__NULL_ARG("entries");
    cio_err err = CIO__VT(io)->dir_read(io.userdata, reader, entries, max, count);
    return CIO__IN_SET(dir_iterate, err);
}

cio_err cio_dir_close(cio_io io, cio_dir dir)
{
    if (dir.handle == CIO_HANDLE_INVALID)
        return cio__close_result(__func__, (long long)(intptr_t)dir.handle, CIO_E_NOT_OPEN);
    cio_err err = CIO__VT(io)->dir_close(io.userdata, dir);
    return cio__close_result(__func__, (long long)(intptr_t)dir.handle, CIO__IN_SET(close, err));
}

/* ---- files: streaming ------------------------------------------------------------------------- */

cio_err cio_file_read_streaming_v(cio_io io, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread)
{
    if (nread == NULL)
        return CIO__NULL_ARG("nread");
    if (iov == NULL && iovcnt > 0)
        return CIO__NULL_ARG("iov");
    *nread = 0;
    if (file.handle == CIO_HANDLE_INVALID) /* the same answer on every OS (WASI may say EINVAL) */
        return CIO_E_NOT_OPEN_FOR_READING;
    cio_err err = CIO__VT(io)->file_read_streaming(io.userdata, file, iov, iovcnt, nread);
    return CIO__IN_SET(file_reader, err);
}

cio_err cio_file_read_streaming(cio_io io, cio_file file, void *buf, size_t len, size_t *nread)
{
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    cio_iovec iov = {buf, len};
    return cio_file_read_streaming_v(io, file, &iov, 1, nread);
}

cio_err cio_file_write_streaming_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                   size_t *nwritten)
{
    if (nwritten == NULL)
        return CIO__NULL_ARG("nwritten");
    if (iov == NULL && iovcnt > 0)
        return CIO__NULL_ARG("iov");
    *nwritten = 0;
    if (file.handle == CIO_HANDLE_INVALID) /* the same answer on every OS (WASI may say EINVAL) */
        return CIO_E_NOT_OPEN_FOR_WRITING;
    cio_err err = CIO__VT(io)->file_write_streaming(io.userdata, file, iov, iovcnt, nwritten);
    return CIO__IN_SET(file_write_streaming, err);
}

cio_err cio_file_write_streaming(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten)
{
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    cio_const_iovec iov = {buf, len};
    return cio_file_write_streaming_v(io, file, &iov, 1, nwritten);
}

cio_err cio__write_all(cio_io io, const void *target, cio__write_fn write, const void *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t done = 0;
    bool stalled = false; /* the previous write took 0 bytes */
    while (done < len) {
        size_t n = 0;
        cio_err err = write(io, target, p + done, len - done, &n);
        if (err != CIO_OK)
            return err;
        if (n > len - done || (n == 0 && stalled))
            return CIO_E_UNEXPECTED;
        stalled = n == 0;
        done += n; /* a short write: go again */
    }
    return CIO_OK;
}

static cio_err write_file(cio_io io, const void *target, const void *buf, size_t len, size_t *n)
{
    return cio_file_write_streaming(io, *(const cio_file *)target, buf, len, n);
}

cio_err cio_file_write_all(cio_io io, cio_file file, const void *buf, size_t len)
{
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    return cio__write_all(io, &file, write_file, buf, len);
}

cio_err cio_file_read_all(cio_io io, cio_file file, void *buf, size_t len, size_t *nread)
{
    if (nread == NULL)
        return CIO__NULL_ARG("nread");
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    *nread = 0;
    unsigned char *p = (unsigned char *)buf;
    size_t done = 0;
    while (done < len) {
        size_t n = 0;
        cio_err err = cio_file_read_streaming(io, file, p + done, len - done, &n);
        *nread = done + n;
        if (err != CIO_OK)
            return err;
        if (n == 0)
            break; /* the end */
        done += n;
    }
    return CIO_OK;
}

/* ---- files: positional ------------------------------------------------------------------------ */

cio_err cio_file_read_positional_v(cio_io io, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                   size_t *nread)
{
    if (nread == NULL)
        return CIO__NULL_ARG("nread");
    if (iov == NULL && iovcnt > 0)
        return CIO__NULL_ARG("iov");
    if (offset > (uint64_t)INT64_MAX) /* no OS takes it; io_uring and preadv2 would read "-1" as "here" */
        return cio__invalid_arg(__func__, "offset above INT64_MAX");
    cio_err err = CIO__VT(io)->file_read_positional(io.userdata, file, iov, iovcnt, offset, nread);
    return CIO__IN_SET(file_read_positional, err);
}

cio_err cio_file_read_positional(cio_io io, cio_file file, void *buf, size_t len, uint64_t offset, size_t *nread)
{
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    cio_iovec iov = {buf, len};
    return cio_file_read_positional_v(io, file, &iov, 1, offset, nread);
}

cio_err cio_file_write_positional_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    uint64_t offset, size_t *nwritten)
{
    if (nwritten == NULL)
        return CIO__NULL_ARG("nwritten");
    if (iov == NULL && iovcnt > 0)
        return CIO__NULL_ARG("iov");
    if (offset > (uint64_t)INT64_MAX) /* no OS takes it; io_uring and preadv2 would read "-1" as "here" */
        return cio__invalid_arg(__func__, "offset above INT64_MAX");
    cio_err err = CIO__VT(io)->file_write_positional(io.userdata, file, iov, iovcnt, offset, nwritten);
    return CIO__IN_SET(file_write_positional, err);
}

cio_err cio_file_write_positional(cio_io io, cio_file file, const void *buf, size_t len, uint64_t offset,
                                  size_t *nwritten)
{
    if (buf == NULL && len > 0)
        return CIO__NULL_ARG("buf");
    cio_const_iovec iov = {buf, len};
    return cio_file_write_positional_v(io, file, &iov, 1, offset, nwritten);
}

/* ---- files: offset, size, metadata ------------------------------------------------------------ */

cio_err cio_file_seek_to(cio_io io, cio_file file, uint64_t offset)
{
    /* The slot reads whence 0's offset back as a uint64: the conversion is only a carrier. */
    cio_err err = CIO__VT(io)->file_seek(io.userdata, file, 0, (int64_t)offset, NULL);
    return CIO__IN_SET(file_seek, err);
}

cio_err cio_file_seek_by(cio_io io, cio_file file, int64_t delta)
{
    cio_err err = CIO__VT(io)->file_seek(io.userdata, file, 1, delta, NULL);
    return CIO__IN_SET(file_seek, err);
}

cio_err cio_file_position(cio_io io, cio_file file, uint64_t *pos)
{
    if (pos == NULL)
        return CIO__NULL_ARG("pos");
    cio_err err = CIO__VT(io)->file_seek(io.userdata, file, 1, 0, pos);
    return CIO__IN_SET(file_seek, err);
}

cio_err cio_file_length(cio_io io, cio_file file, uint64_t *length)
{
    if (length == NULL)
        return CIO__NULL_ARG("length");
    cio_stat st;
    cio_err err = CIO__VT(io)->file_stat(io.userdata, file, &st);
    if (err == CIO_OK)
        *length = st.size;
    return CIO__IN_SET(file_length, err);
}

cio_err cio_file_set_length(cio_io io, cio_file file, uint64_t length)
{
    cio_err err = CIO__VT(io)->file_set_length(io.userdata, file, length);
    return CIO__IN_SET(file_set_length, err);
}

cio_err cio_file_stat(cio_io io, cio_file file, cio_stat *out)
{
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->file_stat(io.userdata, file, out);
    return CIO__IN_SET(file_stat, err);
}

cio_err cio_file_sync(cio_io io, cio_file file)
{
    cio_err err = CIO__VT(io)->file_sync(io.userdata, file);
    return CIO__IN_SET(file_sync, err);
}

cio_err cio_file_set_timestamps(cio_io io, cio_file file, const cio_set_timestamps *ts)
{
    if (ts == NULL)
        return CIO__NULL_ARG("ts");
    cio_err err = CIO__VT(io)->file_set_timestamps(io.userdata, file, ts);
    return CIO__IN_SET(file_set_timestamps, err);
}

cio_err cio_file_close(cio_io io, cio_file file)
{
    if (file.handle == CIO_HANDLE_INVALID)
        return cio__close_result(__func__, (long long)(intptr_t)file.handle, CIO_E_NOT_OPEN);
    cio_err err = CIO__VT(io)->file_close(io.userdata, file);
    return cio__close_result(__func__, (long long)(intptr_t)file.handle, CIO__IN_SET(close, err));
}

/* ---- the executable --------------------------------------------------------------------------- */

cio_err cio_process_executable_open(cio_io io, const cio_open_file_options *options, cio_file *out)
{
    if (out == NULL)
        return CIO__NULL_ARG("out");
    cio_err err = CIO__VT(io)->process_executable_open(io.userdata, options, out);
    return CIO__IN_SET(process_executable_open, err);
}

cio_err cio_process_executable_path(cio_io io, char *buf, size_t len, size_t *out_len)
{
    if (buf == NULL)
        return CIO__NULL_ARG("buf");
    cio_err err = CIO__VT(io)->process_executable_path(io.userdata, buf, len, out_len);
    return CIO__IN_SET(process_executable_path, err);
}
