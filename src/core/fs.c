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
    CIO__REQUIRE(path, out);
    return CIO__IN_SET(file_open, CIO__VT(io)->dir_create_file(io.userdata, dir, path, options, out));
}

cio_err cio_dir_open_file(cio_io io, cio_dir dir, const char *path, const cio_open_file_options *options, cio_file *out)
{
    CIO__REQUIRE(path, out);
    return CIO__IN_SET(file_open, CIO__VT(io)->dir_open_file(io.userdata, dir, path, options, out));
}

cio_err cio_dir_open_dir(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options, cio_dir *out)
{
    CIO__REQUIRE(path, out);
    return CIO__IN_SET(dir_open, CIO__VT(io)->dir_open_dir(io.userdata, dir, path, options, out));
}

cio_err cio_dir_create_dir(cio_io io, cio_dir dir, const char *path, uint32_t permissions)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_create_dir, CIO__VT(io)->dir_create_dir(io.userdata, dir, path, permissions));
}

cio_err cio_dir_create_dir_path(cio_io io, cio_dir dir, const char *path, uint32_t permissions, bool *created)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_make_path, CIO__VT(io)->dir_create_dir_path(io.userdata, dir, path, permissions, created));
}

cio_err cio_dir_create_dir_path_open(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options,
                                     cio_dir *out)
{
    CIO__REQUIRE(path, out);
    return CIO__IN_SET(dir_make_open_path, CIO__VT(io)->dir_create_dir_path_open(io.userdata, dir, path, options, out));
}

cio_err cio_dir_rename(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    CIO__REQUIRE(old_path, new_path);
    return CIO__IN_SET(dir_rename, CIO__VT(io)->dir_rename(io.userdata, old_dir, old_path, new_dir, new_path));
}

cio_err cio_dir_delete_file(cio_io io, cio_dir dir, const char *path)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_delete_file, CIO__VT(io)->dir_delete_file(io.userdata, dir, path));
}

cio_err cio_dir_delete_dir(cio_io io, cio_dir dir, const char *path)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_delete_dir, CIO__VT(io)->dir_delete_dir(io.userdata, dir, path));
}

cio_err cio_dir_stat_file(cio_io io, cio_dir dir, const char *path, unsigned flags, cio_stat *out)
{
    CIO__REQUIRE(path, out);
    return CIO__IN_SET(dir_stat_file, CIO__VT(io)->dir_stat_file(io.userdata, dir, path, flags, out));
}

cio_err cio_dir_access(cio_io io, cio_dir dir, const char *path, unsigned mode)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_access, CIO__VT(io)->dir_access(io.userdata, dir, path, mode));
}

cio_err cio_dir_read(cio_io io, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count)
{
    CIO__REQUIRE(reader, count);
    CIO__REQUIRE_BUF(entries, max);
    return CIO__IN_SET(dir_iterate, CIO__VT(io)->dir_read(io.userdata, reader, entries, max, count));
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
    CIO__REQUIRE(nread);
    CIO__REQUIRE_BUF(iov, iovcnt);
    *nread = 0;
    if (file.handle == CIO_HANDLE_INVALID) /* the same answer on every OS (WASI may say EINVAL) */
        return CIO_E_NOT_OPEN_FOR_READING;
    return CIO__IN_SET(file_reader, CIO__VT(io)->file_read_streaming(io.userdata, file, iov, iovcnt, nread));
}

cio_err cio_file_read_streaming(cio_io io, cio_file file, void *buf, size_t len, size_t *nread)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_iovec iov = {buf, len};
    return cio_file_read_streaming_v(io, file, &iov, 1, nread);
}

cio_err cio_file_write_streaming_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                   size_t *nwritten)
{
    CIO__REQUIRE(nwritten);
    CIO__REQUIRE_BUF(iov, iovcnt);
    *nwritten = 0;
    if (file.handle == CIO_HANDLE_INVALID) /* the same answer on every OS (WASI may say EINVAL) */
        return CIO_E_NOT_OPEN_FOR_WRITING;
    return CIO__IN_SET(file_write_streaming,
                       CIO__VT(io)->file_write_streaming(io.userdata, file, iov, iovcnt, nwritten));
}

cio_err cio_file_write_streaming(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten)
{
    CIO__REQUIRE_BUF(buf, len);
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
    CIO__REQUIRE_BUF(buf, len);
    return cio__write_all(io, &file, write_file, buf, len);
}

cio_err cio_file_read_all(cio_io io, cio_file file, void *buf, size_t len, size_t *nread)
{
    CIO__REQUIRE(nread);
    CIO__REQUIRE_BUF(buf, len);
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
    CIO__REQUIRE(nread);
    CIO__REQUIRE_BUF(iov, iovcnt);
    CIO__REQUIRE_OFFSET(offset);
    return CIO__IN_SET(file_read_positional,
                       CIO__VT(io)->file_read_positional(io.userdata, file, iov, iovcnt, offset, nread));
}

cio_err cio_file_read_positional(cio_io io, cio_file file, void *buf, size_t len, uint64_t offset, size_t *nread)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_iovec iov = {buf, len};
    return cio_file_read_positional_v(io, file, &iov, 1, offset, nread);
}

cio_err cio_file_write_positional_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    uint64_t offset, size_t *nwritten)
{
    CIO__REQUIRE(nwritten);
    CIO__REQUIRE_BUF(iov, iovcnt);
    CIO__REQUIRE_OFFSET(offset);
    return CIO__IN_SET(file_write_positional,
                       CIO__VT(io)->file_write_positional(io.userdata, file, iov, iovcnt, offset, nwritten));
}

cio_err cio_file_write_positional(cio_io io, cio_file file, const void *buf, size_t len, uint64_t offset,
                                  size_t *nwritten)
{
    CIO__REQUIRE_BUF(buf, len);
    cio_const_iovec iov = {buf, len};
    return cio_file_write_positional_v(io, file, &iov, 1, offset, nwritten);
}

/* ---- files: offset, size, metadata ------------------------------------------------------------ */

cio_err cio_file_seek_to(cio_io io, cio_file file, uint64_t offset)
{
    /* The slot reads whence 0's offset back as a uint64: the conversion is only a carrier. */
    return CIO__IN_SET(file_seek, CIO__VT(io)->file_seek(io.userdata, file, 0, (int64_t)offset, NULL));
}

cio_err cio_file_seek_by(cio_io io, cio_file file, int64_t delta)
{
    return CIO__IN_SET(file_seek, CIO__VT(io)->file_seek(io.userdata, file, 1, delta, NULL));
}

cio_err cio_file_position(cio_io io, cio_file file, uint64_t *pos)
{
    CIO__REQUIRE(pos);
    return CIO__IN_SET(file_seek, CIO__VT(io)->file_seek(io.userdata, file, 1, 0, pos));
}

cio_err cio_file_length(cio_io io, cio_file file, uint64_t *length)
{
    CIO__REQUIRE(length);
    cio_stat st;
    cio_err err = CIO__VT(io)->file_stat(io.userdata, file, &st);
    if (err == CIO_OK)
        *length = st.size;
    return CIO__IN_SET(file_length, err);
}

cio_err cio_file_set_length(cio_io io, cio_file file, uint64_t length)
{
    return CIO__IN_SET(file_set_length, CIO__VT(io)->file_set_length(io.userdata, file, length));
}

cio_err cio_file_stat(cio_io io, cio_file file, cio_stat *out)
{
    CIO__REQUIRE(out);
    return CIO__IN_SET(file_stat, CIO__VT(io)->file_stat(io.userdata, file, out));
}

cio_err cio_file_sync(cio_io io, cio_file file)
{
    return CIO__IN_SET(file_sync, CIO__VT(io)->file_sync(io.userdata, file));
}

cio_err cio_file_set_timestamps(cio_io io, cio_file file, const cio_set_timestamps *ts)
{
    CIO__REQUIRE(ts);
    return CIO__IN_SET(file_set_timestamps, CIO__VT(io)->file_set_timestamps(io.userdata, file, ts));
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
    CIO__REQUIRE(out);
    return CIO__IN_SET(process_executable_open, CIO__VT(io)->process_executable_open(io.userdata, options, out));
}

cio_err cio_process_executable_path(cio_io io, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE(buf);
    return CIO__IN_SET(process_executable_path, CIO__VT(io)->process_executable_path(io.userdata, buf, len, out_len));
}
