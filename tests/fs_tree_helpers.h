/*
 * The whole-file and tree suites' fixture (test_fs_tree.c, test_fs_atomic.c): a fresh temporary
 * directory removed with cio_dir_delete_tree (and checked gone), a seconds clock, and helpers that
 * fill, write, read back and count files. Include after backends.h, os_helpers.h and asserts.h.
 */
#ifndef CIO_TESTS_FS_TREE_HELPERS_H
#define CIO_TESTS_FS_TREE_HELPERS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

typedef struct fixture {
    cio_io io;
    char path[300];
    cio_dir dir;
} fixture;

static const cio_open_dir_options iterate_opts = {true, false};

static inline void fx_open(void **state, fixture *fx)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-tree"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, &iterate_opts, &fx->dir));
}

static inline void fx_close(fixture *fx)
{
    cio_dir_close(fx->io, fx->dir);
    assert_ok(cio_dir_delete_tree(fx->io, cio_dir_cwd(), fx->path));
    cio_stat st;
    assert_err(cio_dir_stat_file(fx->io, cio_dir_cwd(), fx->path, CIO_STAT_NO_FOLLOW, &st), CIO_E_FILE_NOT_FOUND);
}

static inline double now_s(cio_io io)
{
    return (double)cio_now(io, CIO_CLOCK_AWAKE).ns / 1e9;
}

static inline void fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)((i * 131u + seed * 7u + i / 253u) & 0xff);
}

static inline void put_file(cio_io io, cio_dir dir, const char *name, const void *data, size_t len)
{
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, data, len));
    cio_file_close(io, f);
}

/* The whole file into a heap buffer (*len its size). */
static inline unsigned char *get_file(cio_io io, cio_dir dir, const char *name, size_t *len)
{
    cio_file f;
    assert_ok(cio_dir_open_file(io, dir, name, NULL, &f));
    uint64_t size;
    assert_ok(cio_file_length(io, f, &size));
    unsigned char *buf = (unsigned char *)malloc((size_t)size + 1);
    assert_non_null(buf);
    size_t n = 0;
    assert_ok(cio_file_read_all(io, f, buf, (size_t)size, &n));
    assert_int_equal(n, (size_t)size);
    cio_file_close(io, f);
    *len = n;
    return buf;
}

/* Entries of an open directory, "." and ".." left out; names starting with `prefix` counted apart. */
static inline size_t count_entries(cio_io io, cio_dir dir, const char *prefix, size_t *with_prefix)
{
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, dir, ".", &iterate_opts, &d));
    unsigned char buf[4096];
    cio_dir_reader r;
    cio_dir_reader_init(&r, d, buf, sizeof buf);
    cio_dir_entry e[32];
    size_t n, total = 0;
    if (with_prefix != NULL)
        *with_prefix = 0;
    do {
        assert_ok(cio_dir_read(io, &r, e, 32, &n));
        for (size_t i = 0; i < n; i++) {
            total++;
            if (with_prefix != NULL && strncmp(e[i].name, prefix, strlen(prefix)) == 0)
                ++*with_prefix;
        }
    } while (n > 0);
    cio_dir_close(io, d);
    return total;
}

#endif
