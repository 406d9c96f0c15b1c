/*
 * Renames to names of every length on every backend: a one-character target (on Windows the
 * FILE_RENAME_INFORMATION then holds less name than the struct's own FileName[1] padding, and NT
 * checks the length against the whole struct) and a 200-character one (past any fixed buffer),
 * through cio_dir_rename and cio_dir_rename_preserve; the content arrives and the old name is gone.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_rename_one_char),
        CIO_TESTS(test_rename_long_name),
        CIO_TESTS(test_rename_preserve_one_char),
        CIO_TESTS(test_rename_preserve_long_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
