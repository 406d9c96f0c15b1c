/*
 * A pipe used as a cio_file has no positions: a positional read or write is Unseekable on every
 * backend, with nothing read or written (pread/pwrite's ESPIPE; the io_uring flavour, whose ring
 * would ignore the offset of a stream and read or write it in order, asks fstat first). Copies that
 * read their input at an offset (cio_file_write_file_positional, cio_net_write_file's library copy)
 * say so too rather than reading the stream (where the writer stays open: blocking for ever).
 * POSIX only (WASI has no pipes; Windows pipes are not cio_files here).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

#include "asserts.h"
#include "backends.h"
#include "os_helpers.h"

#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
#include <unistd.h>
#define HAVE_PIPE 1

/* Twice, so that the io_uring flavour's answer is seen both before and after it checked the
 * descriptor (nothing about a pipe is remembered). */
static void positional_on_pipe(cio_io io)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "hello", 5), 5);
    for (int round = 0; round < 2; round++) {
        char b[8];
        size_t n = 9;
        assert_err(cio_file_read_positional(io, (cio_file){p[0]}, b, sizeof b, 100, &n), CIO_E_UNSEEKABLE);
        assert_int_equal(n, 0);
        n = 9;
        assert_err(cio_file_write_positional(io, (cio_file){p[1]}, "abc", 3, 100, &n), CIO_E_UNSEEKABLE);
        assert_int_equal(n, 0);
    }
    char b[8];
    assert_int_equal(read(p[0], b, sizeof b), 5); /* the five bytes, and no more */
    assert_memory_equal(b, "hello", 5);
    close(p[0]);
    close(p[1]);
}
#endif

static void test_positional_on_pipe_unseekable(void **state)
{
    cio_io io = cio_test_io(state);
#ifdef HAVE_PIPE
    positional_on_pipe(io);
#else
    (void)io;
    CIO_SKIP("no pipes as cio_files on this target");
#endif
}

/* A descriptor number is judged anew once cio closed it: a regular file's (seekable, which the
 * io_uring flavour remembers) closed through cio, then a pipe that takes the same number, is
 * Unseekable. */
static void test_pipe_after_file_number(void **state)
{
    cio_io io = cio_test_io(state);
#ifdef HAVE_PIPE
    char dir[300];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-test-fspipe"));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    cio_create_file_options rw = CIO_CREATE_FILE_DEFAULTS;
    rw.read = true;
    cio_file f;
    assert_ok(cio_dir_create_file(io, d, "f", &rw, &f));
    size_t n = 0;
    char b[4];
    assert_ok(cio_file_write_positional(io, f, "0123456789", 10, 0, &n));
    assert_ok(cio_file_read_positional(io, f, b, sizeof b, 6, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(b, "6789", 4);
    int number = f.handle;
    assert_ok(cio_file_close(io, f));
    int p[2];
    assert_int_equal(pipe(p), 0);
    print_message("      the file was %d, the pipe is %d and %d\n", number, p[0], p[1]);
    if (p[0] != number && p[1] != number)
        fail_msg("the pipe did not take the closed file's number %d (another thread opened one?)", number);
    assert_int_equal(write(p[1], "hello", 5), 5);
    int end = p[0] == number ? p[0] : p[1];
    n = 9;
    cio_err e = end == p[0] ? cio_file_read_positional(io, (cio_file){end}, b, sizeof b, 0, &n)
                            : cio_file_write_positional(io, (cio_file){end}, "abc", 3, 0, &n);
    assert_err(e, CIO_E_UNSEEKABLE);
    assert_int_equal(n, 0);
    close(p[0]);
    close(p[1]);
    assert_ok(cio_dir_delete_file(io, d, "f"));
    assert_ok(cio_dir_close(io, d));
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), dir));
#else
    (void)io;
    CIO_SKIP("no pipes as cio_files on this target");
#endif
}

/* cio_net_write_file from a pipe whose writer stays open: the kernel's sendfile refuses a pipe, the
 * library's copy reads its input at an offset: Unseekable, nothing sent (not a read of the stream
 * that waits for the writer). */
static void test_net_write_file_from_pipe(void **state)
{
    cio_io io = cio_test_io(state);
#ifdef HAVE_PIPE
    cio_stream s[2];
    cio_err e = cio_net_socket_pair(io, s);
    if (e == CIO_E_NETWORK_DOWN || e == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no socket pair on this target");
    assert_ok(e);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "hello", 5), 5);
    uint64_t n = 9;
    e = cio_net_write_file(io, &s[0], (cio_file){p[0]}, 0, 5, &n);
    print_message("      net_write_file from a pipe: %s, %u bytes\n", cio_err_name(e), (unsigned)n);
    assert_err(e, CIO_E_UNSEEKABLE);
    assert_int_equal(n, 0);
    close(p[0]);
    close(p[1]);
    assert_ok(cio_stream_close(io, &s[0]));
    assert_ok(cio_stream_close(io, &s[1]));
#else
    (void)io;
    CIO_SKIP("no pipes as cio_files on this target");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_positional_on_pipe_unseekable),
        CIO_TESTS(test_pipe_after_file_number),
        CIO_TESTS(test_net_write_file_from_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
