/*
 * Backends agree (issue 22): a table of error paths of the public API, each run on every backend
 * (Threaded, Evented io_uring, Evented readiness) against the same fixture, each expecting one and
 * the same error everywhere. A backend that answers differently fails with the case's name and both
 * errors: a difference is a bug, whichever side it is on. The suites of each subsystem check their
 * own errors per backend as well; this table gathers the paths where the backends do the work by
 * different means (io_uring operations, readiness plus nonblocking calls, the helper pool, plain
 * blocking calls), so that a new path is one row.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

typedef struct fixture {
    cio_io io;
    cio_dir dir; /* a fresh directory: "file" (4 bytes), "sub/" (holding "inner") */
    cio_file ro; /* "file" open for reading only */
    cio_file wo; /* "file" open for writing only */
} fixture;

typedef cio_err (*case_fn)(fixture *fx);

static cio_err open_missing(fixture *fx)
{
    cio_file f;
    return cio_dir_open_file(fx->io, fx->dir, "missing", NULL, &f);
}

static cio_err open_dir_forbidden(fixture *fx)
{
    cio_open_file_options o = {.mode = CIO_OPEN_READ_ONLY, .forbid_directory = true};
    cio_file f;
    cio_err err = cio_dir_open_file(fx->io, fx->dir, "sub", &o, &f);
    if (err == CIO_OK)
        cio_file_close(fx->io, f);
    return err;
}

static cio_err open_through_file(fixture *fx)
{
    cio_file f;
    return cio_dir_open_file(fx->io, fx->dir, "file/x", NULL, &f);
}

static cio_err create_exclusive_existing(fixture *fx)
{
    cio_create_file_options o = {.exclusive = true};
    cio_file f;
    return cio_dir_create_file(fx->io, fx->dir, "file", &o, &f);
}

static cio_err create_in_missing_dir(fixture *fx)
{
    cio_file f;
    return cio_dir_create_file(fx->io, fx->dir, "nowhere/file", NULL, &f);
}

static cio_err mkdir_existing(fixture *fx)
{
    return cio_dir_create_dir(fx->io, fx->dir, "sub", 0755);
}

static cio_err rmdir_not_empty(fixture *fx)
{
    return cio_dir_delete_dir(fx->io, fx->dir, "sub");
}

static cio_err rmdir_file(fixture *fx)
{
    return cio_dir_delete_dir(fx->io, fx->dir, "file");
}

static cio_err unlink_missing(fixture *fx)
{
    return cio_dir_delete_file(fx->io, fx->dir, "missing");
}

static cio_err opendir_file(fixture *fx)
{
    cio_dir d;
    return cio_dir_open_dir(fx->io, fx->dir, "file", NULL, &d);
}

static cio_err opendir_missing(fixture *fx)
{
    cio_dir d;
    return cio_dir_open_dir(fx->io, fx->dir, "missing", NULL, &d);
}

static cio_err stat_missing(fixture *fx)
{
    cio_stat st;
    return cio_dir_stat_file(fx->io, fx->dir, "missing", 0, &st);
}

static cio_err rename_missing(fixture *fx)
{
    return cio_dir_rename(fx->io, fx->dir, "missing", fx->dir, "other");
}

static cio_err read_write_only(fixture *fx)
{
    unsigned char b[4];
    size_t n;
    return cio_file_read_streaming(fx->io, fx->wo, b, sizeof b, &n);
}

static cio_err write_read_only(fixture *fx)
{
    size_t n;
    return cio_file_write_streaming(fx->io, fx->ro, "abcd", 4, &n);
}

static cio_err pread_write_only(fixture *fx)
{
    unsigned char b[4];
    size_t n;
    return cio_file_read_positional(fx->io, fx->wo, b, sizeof b, 0, &n);
}

static cio_err pwrite_read_only(fixture *fx)
{
    size_t n;
    return cio_file_write_positional(fx->io, fx->ro, "abcd", 4, 0, &n);
}

static cio_err pread_offset_max_write_only(fixture *fx)
{
    unsigned char b[4];
    size_t n;
    return cio_file_read_positional(fx->io, fx->wo, b, sizeof b, UINT64_MAX, &n);
}

static cio_err pwrite_offset_max_read_only(fixture *fx)
{
    size_t n;
    return cio_file_write_positional(fx->io, fx->ro, "abcd", 4, UINT64_MAX, &n);
}

static cio_err read_invalid_handle(fixture *fx)
{
    unsigned char b[4];
    size_t n;
    return cio_file_read_streaming(fx->io, CIO_FILE_INVALID, b, sizeof b, &n);
}

static cio_err write_invalid_handle(fixture *fx)
{
    size_t n;
    return cio_file_write_streaming(fx->io, CIO_FILE_INVALID, "x", 1, &n);
}

static cio_err null_path(fixture *fx)
{
    cio_file f;
    return cio_dir_open_file(fx->io, fx->dir, NULL, NULL, &f);
}

static cio_err futex_timeout(fixture *fx)
{
    CIO_ATOMIC(uint32_t) word = 0;
    cio_err err;
    do /* a spurious wake-up is CIO_OK: wait again */
        err = cio_futex_wait(fx->io, &word, 0, cio_timeout_ms(5));
    while (err == CIO_OK);
    return err;
}

static cio_err queue_get_closed(fixture *fx)
{
    int buf[2];
    cio_queue q;
    cio_queue_init(&q, buf, sizeof buf[0], 2);
    cio_queue_close(fx->io, &q);
    int v;
    size_t got;
    return cio_queue_get(fx->io, &q, &v, 1, 1, &got);
}

static cio_err concurrent_null_fn(fixture *fx)
{
    cio_future f;
    return cio_concurrent(fx->io, NULL, NULL, 0, &f);
}

/* A handle opened without the right: Linux and the BSDs say EBADF (NotOpenForReading/Writing);
 * Windows (ERROR_ACCESS_DENIED) and WASI (ENOTCAPABLE: the descriptor lacks the right) say
 * AccessDenied, as Zig's maps do. The OS's answer, not a backend's: every backend of one target
 * must still give the same one. */
#if defined(CIO_OS_WINDOWS) || defined(CIO_OS_WASI)
#define NOT_OPEN_FOR_READING CIO_E_ACCESS_DENIED
#define NOT_OPEN_FOR_WRITING CIO_E_ACCESS_DENIED
#else
#define NOT_OPEN_FOR_READING CIO_E_NOT_OPEN_FOR_READING
#define NOT_OPEN_FOR_WRITING CIO_E_NOT_OPEN_FOR_WRITING
#endif

typedef struct error_case {
    const char *name;
    case_fn run;
    cio_err want;
} error_case;

static const error_case cases[] = {
    {"open a missing file", open_missing, CIO_E_FILE_NOT_FOUND},
    {"open a directory with forbid_directory", open_dir_forbidden, CIO_E_IS_DIR},
    {"open a path through a file", open_through_file, CIO_E_NOT_DIR},
    {"create an existing file exclusively", create_exclusive_existing, CIO_E_PATH_ALREADY_EXISTS},
    {"create a file in a missing directory", create_in_missing_dir, CIO_E_FILE_NOT_FOUND},
    {"create an existing directory", mkdir_existing, CIO_E_PATH_ALREADY_EXISTS},
    {"delete a directory that is not empty", rmdir_not_empty, CIO_E_DIR_NOT_EMPTY},
    {"delete a file as a directory", rmdir_file, CIO_E_NOT_DIR},
    {"delete a missing file", unlink_missing, CIO_E_FILE_NOT_FOUND},
    {"open a file as a directory", opendir_file, CIO_E_NOT_DIR},
    {"open a missing directory", opendir_missing, CIO_E_FILE_NOT_FOUND},
    {"stat a missing file", stat_missing, CIO_E_FILE_NOT_FOUND},
    {"rename a missing file", rename_missing, CIO_E_FILE_NOT_FOUND},
    {"read a file open for writing only", read_write_only, NOT_OPEN_FOR_READING},
    {"write a file open for reading only", write_read_only, NOT_OPEN_FOR_WRITING},
    {"positional read of a file open for writing only", pread_write_only, NOT_OPEN_FOR_READING},
    {"positional write of a file open for reading only", pwrite_read_only, NOT_OPEN_FOR_WRITING},
    {"positional read at UINT64_MAX, write-only file", pread_offset_max_write_only, CIO_E_INVALID_ARGUMENT},
    {"positional write at UINT64_MAX, read-only file", pwrite_offset_max_read_only, CIO_E_INVALID_ARGUMENT},
    {"read through CIO_FILE_INVALID", read_invalid_handle, CIO_E_NOT_OPEN_FOR_READING},
    {"write through CIO_FILE_INVALID", write_invalid_handle, CIO_E_NOT_OPEN_FOR_WRITING},
    {"a NULL path", null_path, CIO_E_INVALID_ARGUMENT},
    {"a futex wait that times out", futex_timeout, CIO_E_TIMEOUT},
    {"get from a closed, empty queue", queue_get_closed, CIO_E_CLOSED},
    {"concurrent with a NULL function", concurrent_null_fn, CIO_E_INVALID_ARGUMENT},
};

static void test_error_paths_agree(void **state)
{
    fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.io = cio_test_io(state);
    char path[256];
    assert_true(cio_test_make_tmp_dir(path, sizeof path, "cio-agree"));
    assert_ok(cio_dir_open_dir(fx.io, cio_dir_cwd(), path, NULL, &fx.dir));
    cio_file f;
    assert_ok(cio_dir_create_file(fx.io, fx.dir, "file", NULL, &f));
    size_t n;
    assert_ok(cio_file_write_streaming(fx.io, f, "data", 4, &n));
    cio_file_close(fx.io, f);
    assert_ok(cio_dir_create_dir(fx.io, fx.dir, "sub", 0755));
    assert_ok(cio_dir_create_file(fx.io, fx.dir, "sub/inner", NULL, &f));
    cio_file_close(fx.io, f);
    cio_open_file_options ro = {.mode = CIO_OPEN_READ_ONLY}, wo = {.mode = CIO_OPEN_WRITE_ONLY};
    assert_ok(cio_dir_open_file(fx.io, fx.dir, "file", &ro, &fx.ro));
    assert_ok(cio_dir_open_file(fx.io, fx.dir, "file", &wo, &fx.wo));
    size_t wrong = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio_err got = cases[i].run(&fx);
        if (got != cases[i].want) {
            print_message("      %s: %s, want %s\n", cases[i].name, cio_err_name(got), cio_err_name(cases[i].want));
            wrong++;
        }
    }
    print_message("      %lu error paths, %lu disagree\n", (unsigned long)(sizeof cases / sizeof cases[0]),
                  (unsigned long)wrong);
    cio_file_close(fx.io, fx.ro);
    cio_file_close(fx.io, fx.wo);
    assert_ok(cio_dir_delete_file(fx.io, fx.dir, "sub/inner"));
    assert_ok(cio_dir_delete_dir(fx.io, fx.dir, "sub"));
    assert_ok(cio_dir_delete_file(fx.io, fx.dir, "file"));
    cio_dir_close(fx.io, fx.dir);
    assert_ok(cio_dir_delete_dir(fx.io, cio_dir_cwd(), path));
    assert_int_equal(wrong, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_error_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
