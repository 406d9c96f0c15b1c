/*
 * Files (cio/fs.h) on every backend, the I/O half of test_fs.c: streaming vs positional and
 * vectored I/O, reading a directory handle, the mapped errors for the usual mistakes and bad
 * inputs, the program's own executable and the standard streams, Zig's Threaded test 6 (a read
 * blocked on an empty pipe is interrupted by cancel), FIFO opens that wait for a writer, and the NT
 * specifics (sharing violations, "." and "..", no-follow on a regular file).
 *
 * Each test works in a fresh directory (tests/fs_fixture.h) under /tmp and does everything inside it
 * through cio; the directory is removed (through cio) at the end. On WASI what the target lacks
 * skips with the reason: permission bits, pipes, the executable's path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, symlinkat, pipe2 */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "null_arg.h"
#include "os_helpers.h"
#if !defined(CIO_OS_WINDOWS)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "asserts.h"
#include "fs_fixture.h"

/* ---- files ---------------------------------------------------------------------------------- */

static void test_streaming_vs_positional(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f = create_rw(io, fx.dir, "digits");
    assert_ok(cio_file_write_all(io, f, "0123456789", 10));
    assert_ok(cio_file_seek_to(io, f, 0));

    char buf[16];
    size_t n;
    assert_ok(cio_file_read_positional(io, f, buf, 3, 5, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "567", 3);
    assert_int_equal(position(io, f), 0); /* positional reads leave the offset alone */

    assert_ok(cio_file_read_streaming(io, f, buf, 4, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "0123", 4);
    assert_int_equal(position(io, f), 4);

    size_t w;
    assert_ok(cio_file_write_positional(io, f, "AB", 2, 8, &w));
    assert_int_equal(w, 2);
    assert_int_equal(position(io, f), 4);
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 0, &n));
    assert_int_equal(n, 10);
    assert_memory_equal(buf, "01234567AB", 10);

    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 10, &n)); /* at the end */
    assert_int_equal(n, 0);
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 1000, &n)); /* past it */
    assert_int_equal(n, 0);
    assert_ok(cio_file_sync(io, f));
    cio_file_close(io, f);
    fx_close(&fx);
}

static void test_vectored(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f = create_rw(io, fx.dir, "vec");

    cio_const_iovec out[3] = {{"ab", 2}, {"", 0}, {"cdef", 4}};
    size_t n;
    assert_ok(cio_file_write_streaming_v(io, f, out, 3, &n));
    assert_int_equal(n, 6);

    char a[3], b[3];
    cio_iovec in[2] = {{a, 3}, {b, 3}};
    assert_ok(cio_file_read_positional_v(io, f, in, 2, 0, &n));
    assert_int_equal(n, 6);
    assert_memory_equal(a, "abc", 3);
    assert_memory_equal(b, "def", 3);

    cio_const_iovec more[2] = {{"gh", 2}, {"ij", 2}};
    assert_ok(cio_file_write_positional_v(io, f, more, 2, 6, &n));
    assert_int_equal(n, 4);
    assert_int_equal(position(io, f), 6);
    char c[1], d[8];
    cio_iovec in2[2] = {{c, 1}, {d, 8}};
    assert_ok(cio_file_read_streaming_v(io, f, in2, 2, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(c, "g", 1);
    assert_memory_equal(d, "hij", 3);
    assert_ok(cio_file_read_streaming_v(io, f, in2, 2, &n));
    assert_int_equal(n, 0);

    /* More buffers than IOV_MAX: clamped to a partial write, never an error. */
    enum { MANY = 5000 };
    cio_const_iovec *many = (cio_const_iovec *)calloc(MANY, sizeof *many);
    assert_non_null(many);
    for (size_t i = 0; i < MANY; i++) {
        many[i].base = "z";
        many[i].len = 1;
    }
    assert_ok(cio_file_write_streaming_v(io, f, many, MANY, &n));
    assert_true(n >= 1 && n <= MANY);
    size_t total = n;
    while (total < MANY) { /* the caller's loop finishes the job */
        assert_ok(cio_file_write_streaming_v(io, f, many + total, MANY - total, &n));
        total += n;
    }
    assert_ok(cio_file_write_positional_v(io, f, many, MANY, 0, &n));
    assert_true(n >= 1 && n <= MANY);
    free(many);
    assert_int_equal(length(io, f), 10 + MANY);
    cio_file_close(io, f);
    fx_close(&fx);
}

/* Reading a directory handle as a file: the map's IsDir (EISDIR) or NotOpenForReading (EBADF). On
 * WASI a handle without the right (ENOTCAPABLE) is AccessDenied, Zig's WASI meaning of it. */
#if defined(CIO_OS_WASI)
#define NOT_READABLE(err) ((err) == CIO_E_IS_DIR || (err) == CIO_E_NOT_OPEN_FOR_READING || (err) == CIO_E_ACCESS_DENIED)
#define NOT_OPEN_FOR_WRITING CIO_E_ACCESS_DENIED
#elif defined(CIO_OS_WINDOWS)
/* NtReadFile on a directory: STATUS_INVALID_DEVICE_REQUEST (IsDir); NtWriteFile without write
 * access: STATUS_ACCESS_DENIED (AccessDenied), as Zig maps them. */
#define NOT_READABLE(err) ((err) == CIO_E_IS_DIR)
#define NOT_OPEN_FOR_WRITING CIO_E_ACCESS_DENIED
#else
#define NOT_READABLE(err) ((err) == CIO_E_IS_DIR || (err) == CIO_E_NOT_OPEN_FOR_READING)
#define NOT_OPEN_FOR_WRITING CIO_E_NOT_OPEN_FOR_WRITING
#endif
static void test_read_directory_handle(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_dir d;
    assert_ok(cio_dir_create_dir_path_open(io, fx.dir, "d", &iterate_opts, &d));
    cio_file as_file = {d.handle};
    char buf[8];
    size_t n = 99;
    cio_err err = cio_file_read_streaming(io, as_file, buf, sizeof buf, &n);
    assert_true(NOT_READABLE(err));
    assert_int_equal(n, 0);
    err = cio_file_read_positional(io, as_file, buf, sizeof buf, 0, &n);
    assert_true(NOT_READABLE(err));
    cio_dir_close(io, d);

    /* Opening a directory for writing is IsDir too; a read-only file is not open for writing. */
    cio_open_file_options wr = {CIO_OPEN_WRITE_ONLY, false, false};
    cio_file f;
    assert_err(cio_dir_open_file(io, fx.dir, "d", &wr, &f), CIO_E_IS_DIR);
    write_file(io, fx.dir, "ro", "data");
    assert_ok(cio_dir_open_file(io, fx.dir, "ro", NULL, &f));
    assert_err(cio_file_write_streaming(io, f, "x", 1, &n), NOT_OPEN_FOR_WRITING);
    cio_file_close(io, f);
    fx_close(&fx);
}

static void test_open_missing(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    cio_dir d;
    assert_err(cio_dir_open_file(io, fx.dir, "does_not_exist", NULL, &f), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_open_file(io, fx.dir, "no/such/dir/file", NULL, &f), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_open_dir(io, fx.dir, "does_not_exist", NULL, &d), CIO_E_FILE_NOT_FOUND);
    write_file(io, fx.dir, "plain", "");
    assert_err(cio_dir_open_dir(io, fx.dir, "plain", NULL, &d), CIO_E_NOT_DIR);
    assert_err(cio_dir_open_file(io, fx.dir, "plain/x", NULL, &f), CIO_E_NOT_DIR);
    fx_close(&fx);
}

static void test_bad_inputs(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    cio_dir d;
    cio_stat st;
    size_t n;

    /* NULL paths and outputs: the assertion of a debug build (InvalidArgument in release builds). */
    assert_null_arg(cio_dir_open_file(io, fx.dir, NULL, NULL, &f));
    assert_null_arg(cio_dir_open_file(io, fx.dir, "x", NULL, NULL));
    assert_null_arg(cio_dir_create_file(io, fx.dir, NULL, NULL, &f));
    assert_null_arg(cio_dir_create_file(io, fx.dir, "x", NULL, NULL));
    assert_null_arg(cio_dir_open_dir(io, fx.dir, NULL, NULL, &d));
    assert_null_arg(cio_dir_create_dir(io, fx.dir, NULL, 0));
    assert_null_arg(cio_dir_create_dir_path(io, fx.dir, NULL, 0, NULL));
    assert_null_arg(cio_dir_create_dir_path_open(io, fx.dir, NULL, NULL, &d));
    assert_null_arg(cio_dir_rename(io, fx.dir, NULL, fx.dir, "x"));
    assert_null_arg(cio_dir_rename(io, fx.dir, "x", fx.dir, NULL));
    assert_null_arg(cio_dir_delete_file(io, fx.dir, NULL));
    assert_null_arg(cio_dir_delete_dir(io, fx.dir, NULL));
    assert_null_arg(cio_dir_stat_file(io, fx.dir, NULL, 0, &st));
    assert_null_arg(cio_dir_stat_file(io, fx.dir, ".", 0, NULL));
    assert_null_arg(cio_dir_access(io, fx.dir, NULL, 0));
    assert_null_arg(cio_dir_read(io, NULL, NULL, 0, &n));
    assert_null_arg(cio_process_executable_path(io, NULL, 10, &n));
    write_file(io, fx.dir, "x", "data");
    assert_ok(cio_dir_open_file(io, fx.dir, "x", NULL, &f));
    assert_null_arg(cio_file_read_streaming(io, f, NULL, 5, &n));
    assert_null_arg(cio_file_read_streaming(io, f, &n, 1, NULL));
    assert_null_arg(cio_file_read_all(io, f, NULL, 5, &n));
    assert_null_arg(cio_file_write_all(io, f, NULL, 5));
    assert_null_arg(cio_file_position(io, f, NULL));
    assert_null_arg(cio_file_length(io, f, NULL));
    assert_null_arg(cio_file_stat(io, f, NULL));
    assert_null_arg(cio_file_set_timestamps(io, f, NULL));
    cio_file_close(io, f);

    /* A 5000-byte path: NameTooLong before the OS is asked. */
    char *long_path = (char *)malloc(5001);
    assert_non_null(long_path);
    memset(long_path, 'a', 5000);
    long_path[5000] = '\0';
    assert_err(cio_dir_open_file(io, fx.dir, long_path, NULL, &f), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_create_file(io, fx.dir, long_path, NULL, &f), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_open_dir(io, fx.dir, long_path, NULL, &d), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_create_dir(io, fx.dir, long_path, 0), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_create_dir_path(io, fx.dir, long_path, 0, NULL), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_create_dir_path_open(io, fx.dir, long_path, NULL, &d), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_rename(io, fx.dir, "x", fx.dir, long_path), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_delete_file(io, fx.dir, long_path), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_delete_dir(io, fx.dir, long_path), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_stat_file(io, fx.dir, long_path, 0, &st), CIO_E_NAME_TOO_LONG);
    assert_err(cio_dir_access(io, fx.dir, long_path, 0), CIO_E_NAME_TOO_LONG);
    /* One component longer than NAME_MAX but a short path: the OS says NameTooLong. */
    long_path[300] = '\0';
    assert_err(cio_dir_open_file(io, fx.dir, long_path, NULL, &f), CIO_E_NAME_TOO_LONG);
    free(long_path);

    /* The empty path names nothing. */
    assert_err(cio_dir_open_file(io, fx.dir, "", NULL, &f), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_stat_file(io, fx.dir, "", 0, &st), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_create_dir(io, fx.dir, "", 0), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_create_dir_path(io, fx.dir, "", 0, NULL), CIO_E_FILE_NOT_FOUND);
    fx_close(&fx);
}

/* ---- the executable and the standard streams -------------------------------------------------- */

static void test_executable_path(void **state)
{
    cio_io io = cio_test_io(state);
    char buf[PATH_MAX];
    size_t n = 0;
#if defined(CIO_OS_WASI)
    assert_err(cio_process_executable_path(io, buf, sizeof buf, &n), CIO_E_OPERATION_UNSUPPORTED);
    CIO_SKIP("a WASI program has no path of its own");
#endif
    assert_ok(cio_process_executable_path(io, buf, sizeof buf, &n));
    assert_int_equal(strlen(buf), n);
#if defined(CIO_OS_WINDOWS)
    assert_true(buf[1] == ':' && buf[2] == '\\'); /* a drive-absolute DOS path */
    assert_true(n >= 14);
    assert_string_equal(buf + n - 14, "test_fs_io.exe");
#else
    assert_true(buf[0] == '/');
    assert_true(n >= 10);
    assert_string_equal(buf + n - 10, "test_fs_io");
#endif

    /* Exactly too small (no room for the NUL) and much too small: NameTooLong, never truncated. */
    char small[PATH_MAX];
    assert_err(cio_process_executable_path(io, small, n, NULL), CIO_E_NAME_TOO_LONG);
    assert_err(cio_process_executable_path(io, small, 4, NULL), CIO_E_NAME_TOO_LONG);
    assert_err(cio_process_executable_path(io, small, 0, NULL), CIO_E_NAME_TOO_LONG);
    assert_ok(cio_process_executable_path(io, small, n + 1, NULL));
    assert_string_equal(small, buf);
}

static void test_executable_open(void **state)
{
    cio_io io = cio_test_io(state);
    cio_file f;
#if defined(CIO_OS_WASI)
    assert_err(cio_process_executable_open(io, NULL, &f), CIO_E_OPERATION_UNSUPPORTED);
    CIO_SKIP("a WASI program cannot open its own module");
#endif
    assert_ok(cio_process_executable_open(io, NULL, &f));
    char magic[4];
    size_t n;
    assert_ok(cio_file_read_all(io, f, magic, sizeof magic, &n));
    assert_int_equal(n, 4);
#if defined(CIO_OS_WINDOWS)
    assert_memory_equal(magic, "MZ", 2);
#else
    assert_memory_equal(magic,
                        "\x7f"
                        "ELF",
                        4);
#endif
    cio_stat st;
    assert_ok(cio_file_stat(io, f, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_FILE);
    assert_true(st.size > 4);
    cio_file_close(io, f);
}

static void test_stdout(void **state)
{
    cio_io io = cio_test_io(state);
    static const char msg[] = "test_fs_io: hello from cio_file_stdout\n";
    assert_ok(cio_file_write_all(io, cio_file_stdout(), msg, sizeof msg - 1));
}

/* ---- Zig Threaded test 6: cancel a read blocked on an empty pipe ---------------------------- */

#if !defined(CIO_OS_WASI) /* no pipes */
typedef struct pipe_ctx {
    cio_io io;
    cio_handle fd;
} pipe_ctx;

static cio_err read_one_byte(void *context)
{
    pipe_ctx *c = (pipe_ctx *)context;
    cio_file f = {c->fd};
    unsigned char b;
    size_t n = 0;
    cio_err err = cio_file_read_streaming(c->io, f, &b, 1, &n);
    return err == CIO_OK ? CIO_E_UNEXPECTED : err; /* data or the end: the read was not blocked */
}
#endif

static void test_cancel_blocked_pipe_read(void **state)
{
    cio_io io = cio_test_io(state);
#if defined(CIO_OS_WASI)
    CIO_REQUIRE_THREADS(io); /* and no pipes either */
#else
#if defined(CIO_OS_WINDOWS)
    HANDLE fds[2];
    assert_true(CreatePipe(&fds[0], &fds[1], NULL, 0));
#else
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
#endif
    cio_file r = {fds[0]}, w = {fds[1]};
    pipe_ctx ctx = {io, fds[0]};
    cio_future fut;
    cio_err err = cio_concurrent(io, read_one_byte, &ctx, sizeof ctx, &fut);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_file_close(io, r);
        cio_file_close(io, w);
    }
    CIO_REQUIRE_CONCURRENT(err);
    assert_ok(cio_sleep(io, cio_timeout_ms(10)));
    assert_err(cio_cancel(io, &fut), CIO_E_CANCELED);
    cio_file_close(io, r);
    cio_file_close(io, w);
#endif
}

/* ---- opens that wait: a FIFO opened for reading waits for a writer (and is canceled there) ----- */

/* A reader of the FIFO running in a concurrent task: the byte it read and the count. */
typedef struct fifo_read {
    char got;
    size_t n;
    cio_future fut;
} fifo_read;

#if !defined(CIO_OS_WASI) && !defined(CIO_OS_WINDOWS) /* no FIFOs */
typedef struct fifo_ctx {
    cio_io io;
    cio_dir dir;
    char *got; /* the task runs on a copy of the context */
    size_t *n;
} fifo_ctx;

/* Opens the FIFO "fifo" for reading and reads a byte. */
static cio_err fifo_reader(void *context)
{
    fifo_ctx *c = (fifo_ctx *)context;
    cio_file f;
    cio_err err = cio_dir_open_file(c->io, c->dir, "fifo", NULL, &f);
    if (err != CIO_OK)
        return err;
    err = cio_file_read_streaming(c->io, f, c->got, 1, c->n);
    cio_file_close(c->io, f);
    return err;
}

/* Opens the fixture where the target has FIFOs; a skip elsewhere. */
static void fx_open_for_fifo(void **state, fixture *fx)
{
    fx_open(state, fx);
}

/* Makes the FIFO "fifo" in the fixture's directory, starts fifo_reader on it in a concurrent task
 * (a skip where there is none) and gives it `ms` to block in its open. */
static void start_fifo_reader(fixture *fx, fifo_read *r, int64_t ms)
{
    char path[400];
    snprintf(path, sizeof path, "%s/fifo", fx->path);
    assert_int_equal(mkfifo(path, 0600), 0);
    r->got = 0;
    r->n = 0;
    fifo_ctx ctx = {fx->io, fx->dir, &r->got, &r->n};
    CIO_REQUIRE_CONCURRENT(cio_concurrent(fx->io, fifo_reader, &ctx, sizeof ctx, &r->fut));
    assert_ok(cio_sleep(fx->io, cio_timeout_ms(ms)));
}
#else
static void fx_open_for_fifo(void **state, fixture *fx)
{
    (void)fx;
    (void)cio_test_io(state);
    CIO_SKIP("no FIFOs on this target");
}

static void start_fifo_reader(fixture *fx, fifo_read *r, int64_t ms)
{
    (void)fx;
    (void)r;
    (void)ms;
    fail_msg("no FIFOs on this target"); /* not reached: fx_open_for_fifo skipped */
}
#endif

/* The open of a FIFO's read end blocks until a writer opens it, as open(2) does: the byte written
 * afterwards is read (an open that did not wait would read the end of file at once). */
static void test_fifo_open_waits_for_writer(void **state)
{
    fixture fx;
    fx_open_for_fifo(state, &fx);
    cio_io io = fx.io;
    fifo_read r;
    start_fifo_reader(&fx, &r, 30);
    cio_open_file_options wo = {CIO_OPEN_WRITE_ONLY, false, false};
    cio_file w;
    assert_ok(cio_dir_open_file(io, fx.dir, "fifo", &wo, &w));
    assert_ok(cio_file_write_all(io, w, "z", 1));
    assert_ok(cio_await(io, &r.fut));
    cio_file_close(io, w);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.got, 'z');
    fx_close(&fx);
}

/* An open blocked on a FIFO with no writer is canceled: Canceled promptly, no descriptor left. */
static void test_cancel_blocked_fifo_open(void **state)
{
    fixture fx;
    fx_open_for_fifo(state, &fx);
    cio_io io = fx.io;
    int handles = cio_test_count_handles();
    fifo_read r;
    start_fifo_reader(&fx, &r, 20);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_cancel(io, &r.fut), CIO_E_CANCELED);
    assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns - t0 < INT64_C(1000000000));
    assert_int_equal(cio_test_count_handles(), handles);
    fx_close(&fx);
}

#if defined(CIO_OS_WINDOWS)
/* ---- NT specifics: sharing violations are retried, then SharingViolation; "." and ".." ---------- */

static void test_windows_sharing_violation(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "locked", "data");
    char full[400];
    snprintf(full, sizeof full, "%s\\locked", fx.path);
    /* Another opener that shares nothing: every open is refused while it lives. */
    HANDLE h = CreateFileA(full, GENERIC_READ, 0, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    assert_true(h != INVALID_HANDLE_VALUE);
    cio_file f;
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_dir_open_file(io, fx.dir, "locked", NULL, &f), CIO_E_SHARING_VIOLATION);
    int64_t waited = cio_now(io, CIO_CLOCK_AWAKE).ns - t0;
    assert_true(waited >= INT64_C(100000000)); /* backed off (1 + 2 + ... ms) before giving up */
    CloseHandle(h);
    /* Gone: the same open works at once. */
    assert_ok(cio_dir_open_file(io, fx.dir, "locked", NULL, &f));
    cio_file_close(io, f);
    fx_close(&fx);
}

static void test_windows_dot_names(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    assert_err(cio_dir_open_file(io, fx.dir, ".", NULL, &f), CIO_E_IS_DIR);
    assert_err(cio_dir_open_file(io, fx.dir, "..", NULL, &f), CIO_E_IS_DIR);
    assert_err(cio_dir_create_file(io, fx.dir, ".", NULL, &f), CIO_E_IS_DIR);
    /* As components they resolve: a\..\b is b. */
    assert_ok(cio_dir_create_dir(io, fx.dir, "a", 0));
    write_file(io, fx.dir, "b", "bee");
    char buf[8];
    assert_int_equal(read_file(io, fx.dir, "a\\..\\b", buf, sizeof buf), 3);
    assert_int_equal(read_file(io, fx.dir, "./a/../b", buf, sizeof buf), 3);
    /* An absolute path ignores the directory handle. */
    char full[400];
    snprintf(full, sizeof full, "%s\\b", fx.path);
    cio_dir other;
    assert_ok(cio_dir_open_dir(io, fx.dir, "a", NULL, &other));
    assert_int_equal(read_file(io, other, full, buf, sizeof buf), 3);
    cio_dir_close(io, other);
    fx_close(&fx);
}

/* no_follow_symlinks on a regular file: opened with FILE_OPEN_REPARSE_POINT (no synchronous flag),
 * found not to be a link, reopened synchronously: streaming reads keep their position. */
static void test_windows_no_follow_regular_file(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "plain", "abcdef");
    cio_open_file_options nf = {CIO_OPEN_READ_ONLY, true, false};
    cio_file f;
    assert_ok(cio_dir_open_file(io, fx.dir, "plain", &nf, &f));
    char buf[4];
    size_t n = 0;
    assert_ok(cio_file_read_streaming(io, f, buf, 3, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "abc", 3);
    assert_ok(cio_file_read_streaming(io, f, buf, 3, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "def", 3);
    assert_ok(cio_file_read_positional(io, f, buf, 2, 1, &n));
    assert_int_equal(n, 2);
    assert_memory_equal(buf, "bc", 2);
    assert_int_equal(position(io, f), 6);
    cio_file_close(io, f);
    fx_close(&fx);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_streaming_vs_positional),
        CIO_TESTS(test_vectored),
        CIO_TESTS(test_read_directory_handle),
        CIO_TESTS(test_open_missing),
        CIO_TESTS(test_bad_inputs),
        CIO_TESTS(test_executable_path),
        CIO_TESTS(test_executable_open),
        CIO_TESTS(test_stdout),
        CIO_TESTS(test_cancel_blocked_pipe_read),
        CIO_TESTS(test_fifo_open_waits_for_writer),
        CIO_TESTS(test_cancel_blocked_fifo_open),
#if defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_windows_sharing_violation),
        CIO_TESTS(test_windows_dot_names),
        CIO_TESTS(test_windows_no_follow_regular_file),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
