/*
 * Renames to names of every length on every backend: a one-character target (on Windows the
 * FILE_RENAME_INFORMATION then holds less name than the struct's own FileName[1] padding, and NT
 * checks the length against the whole struct) and a 200-character one (past any fixed buffer),
 * through cio_dir_rename and cio_dir_rename_preserve; the content arrives and the old name is gone.
 * A rename (and an atomic file's replace) over a target another handle has open: POSIX replaces it,
 * the open handle still reading the old file; Windows does the same with FileRenameInformationEx's
 * POSIX semantics (Windows 10 1607+), and where NT lacks that class (Wine 8), the classic rename
 * refuses (AccessDenied) and nothing changes (src/os/fs_windows_paths.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#include "asserts.h"

#if defined(CIO_OS_WINDOWS)
int cio__win_rename_ex_known(bool forget); /* src/os/fs_windows_paths.c: 1 POSIX semantics, -1 none */
#endif

static void make(cio_io io, cio_dir dir, const char *name, const char *content)
{
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, content, strlen(content)));
    cio_file_close(io, f);
}

static void expect(cio_io io, cio_dir dir, const char *name, const char *content)
{
    cio_file f;
    char buf[64];
    size_t n = 0;
    assert_ok(cio_dir_open_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_read_all(io, f, buf, sizeof buf, &n));
    cio_file_close(io, f);
    assert_int_equal(n, strlen(content));
    assert_memory_equal(buf, content, n);
}

static void rename_to(void **state, size_t len, bool preserve)
{
    cio_io io = cio_test_io(state);
    char path[300];
    assert_true(cio_test_make_tmp_dir(path, sizeof path, "cio-test-rename"));
    cio_dir dir;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), path, NULL, &dir));
    char name[256];
    assert_true(len < sizeof name);
    for (size_t i = 0; i < len; i++)
        name[i] = (char)('a' + i % 26);
    name[len] = '\0';
    make(io, dir, "source", "renamed content");
    if (preserve) {
        cio_err err = cio_dir_rename_preserve(io, dir, "source", dir, name);
        if (err == CIO_E_OPERATION_UNSUPPORTED) {
            assert_ok(cio_dir_delete_file(io, dir, "source"));
            cio_dir_close(io, dir);
            assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), path));
            CIO_SKIP("rename without replace is OperationUnsupported on this target");
        }
        assert_ok(err);
    } else {
        make(io, dir, name, "old"); /* replaced */
        assert_ok(cio_dir_rename(io, dir, "source", dir, name));
    }
    expect(io, dir, name, "renamed content");
    cio_stat st;
    assert_err(cio_dir_stat_file(io, dir, "source", 0, &st), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_delete_file(io, dir, name));
    cio_dir_close(io, dir);
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), path));
}

static void test_rename_one_char(void **state)
{
    rename_to(state, 1, false);
}

static void test_rename_long_name(void **state)
{
    rename_to(state, 200, false);
}

static void test_rename_preserve_one_char(void **state)
{
    rename_to(state, 1, true);
}

static void test_rename_preserve_long_name(void **state)
{
    rename_to(state, 200, true);
}

/* Reads all of f from offset 0 into buf (a NUL after it). */
static void read_back(cio_io io, cio_file f, char *buf, size_t len)
{
    size_t n = 0;
    assert_ok(cio_file_read_positional(io, f, buf, len - 1, 0, &n));
    buf[n] = '\0';
}

/* Whether a rename may replace a target another handle has open here: everywhere but a Windows
 * (Wine 8) without FileRenameInformationEx, asked after a rename was made. */
static bool replaces_open_target(void)
{
#if defined(CIO_OS_WINDOWS)
    return cio__win_rename_ex_known(false) > 0;
#else
    return true;
#endif
}

static void test_rename_over_open_target(void **state)
{
    cio_io io = cio_test_io(state);
    char path[300];
    assert_true(cio_test_make_tmp_dir(path, sizeof path, "cio-test-rename"));
    cio_dir dir;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), path, NULL, &dir));
    make(io, dir, "target", "old");
    make(io, dir, "source", "new content");
    cio_file held;
    assert_ok(cio_dir_open_file(io, dir, "target", NULL, &held));
    cio_err err = cio_dir_rename(io, dir, "source", dir, "target");
    bool posix = replaces_open_target();
    print_message("rename over an open target: %s (%s)\n", cio_err_name(err),
                  posix ? "replaced, as POSIX" : "no POSIX semantics here");
    char buf[64];
    if (posix) {
        assert_ok(err);
        expect(io, dir, "target", "new content");
        cio_stat st;
        assert_err(cio_dir_stat_file(io, dir, "source", 0, &st), CIO_E_FILE_NOT_FOUND);
    } else {
        assert_err(err, CIO_E_ACCESS_DENIED);
        expect(io, dir, "target", "old");
        expect(io, dir, "source", "new content");
        assert_ok(cio_dir_delete_file(io, dir, "source"));
    }
    read_back(io, held, buf, sizeof buf);
    assert_string_equal(buf, "old"); /* the open handle keeps the file it opened */
    /* An atomic file's replace is that rename too. */
    cio_create_file_atomic_options o = {0};
    o.replace = true;
    cio_file_atomic af;
    assert_ok(cio_dir_create_file_atomic(io, dir, "target", &o, &af));
    assert_ok(cio_file_write_all(io, af.file, "atomic", 6));
    err = cio_file_atomic_replace(io, &af);
    cio_file_atomic_discard(io, &af);
    if (posix) {
        assert_ok(err);
        expect(io, dir, "target", "atomic");
    } else {
        assert_err(err, CIO_E_ACCESS_DENIED);
        expect(io, dir, "target", "old");
    }
    read_back(io, held, buf, sizeof buf);
    assert_string_equal(buf, "old");
    cio_file_close(io, held);
    assert_ok(cio_dir_delete_file(io, dir, "target"));
    cio_dir_close(io, dir);
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), path)); /* the discarded temporary is gone too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_rename_one_char),          CIO_TESTS(test_rename_long_name),
        CIO_TESTS(test_rename_preserve_one_char), CIO_TESTS(test_rename_preserve_long_name),
        CIO_TESTS(test_rename_over_open_target),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
