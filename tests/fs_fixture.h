/*
 * The file-system suites' fixture (test_fs.c, test_fs_io.c): a fresh directory made with mkdtemp
 * under /tmp, opened for iteration and removed (through cio) at the end, and the small helpers that
 * create, write, read and measure files in it. Include after backends.h, os_helpers.h and asserts.h.
 */
#ifndef CIO_TESTS_FS_FIXTURE_H
#define CIO_TESTS_FS_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "cio.h"
#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
#include <unistd.h> /* geteuid */
#endif

typedef struct fixture {
    cio_io io;
    char path[300]; /* absolute */
    cio_dir dir;
} fixture;

static const cio_open_dir_options iterate_opts = {true, false};

#if defined(CIO_OS_WASI)
#define running_as_root() false /* no user ids */
#elif defined(CIO_OS_WINDOWS)
#define running_as_root() false /* a read-only attribute binds every user */
#else
#define running_as_root() (geteuid() == 0)
#endif

static inline void fx_open(void **state, fixture *fx)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-fs"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, &iterate_opts, &fx->dir));
}

/* Removes everything inside `name` (a directory under parent), then `name` itself. Entries are
 * deleted while the directory is read, so the directory is read again until a pass finds nothing. */
static inline void rm_tree(cio_io io, cio_dir parent, const char *name)
{
    for (;;) {
        cio_dir d;
        assert_ok(cio_dir_open_dir(io, parent, name, &iterate_opts, &d));
        unsigned char buf[2048];
        cio_dir_reader r;
        cio_dir_reader_init(&r, d, buf, sizeof buf);
        cio_dir_entry e[16];
        size_t n, removed = 0;
        do {
            assert_ok(cio_dir_read(io, &r, e, 16, &n));
            for (size_t i = 0; i < n; i++, removed++) {
                if (e[i].kind == CIO_FILE_KIND_DIRECTORY)
                    rm_tree(io, d, e[i].name);
                else
                    assert_ok(cio_dir_delete_file(io, d, e[i].name));
            }
        } while (n > 0);
        cio_dir_close(io, d);
        if (removed == 0)
            break;
    }
    assert_ok(cio_dir_delete_dir(io, parent, name));
}

static inline void fx_close(fixture *fx)
{
    cio_dir_close(fx->io, fx->dir);
    rm_tree(fx->io, cio_dir_cwd(), fx->path);
}

/* Creates (truncating) a file open for reading and writing; fails the test otherwise. */
static inline cio_file create_rw(cio_io io, cio_dir dir, const char *name)
{
    cio_create_file_options opts = CIO_CREATE_FILE_DEFAULTS;
    opts.read = true;
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, &opts, &f));
    return f;
}

static inline void write_file(cio_io io, cio_dir dir, const char *name, const char *content)
{
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, content, strlen(content)));
    cio_file_close(io, f);
}

/* Reads the whole file into buf (NUL-terminated); returns its length. */
static inline size_t read_file(cio_io io, cio_dir dir, const char *name, char *buf, size_t cap)
{
    cio_file f;
    size_t n;
    assert_ok(cio_dir_open_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_read_all(io, f, buf, cap - 1, &n));
    buf[n] = '\0';
    cio_file_close(io, f);
    return n;
}

static inline uint64_t position(cio_io io, cio_file f)
{
    uint64_t pos = UINT64_MAX;
    assert_ok(cio_file_position(io, f, &pos));
    return pos;
}

static inline uint64_t length(cio_io io, cio_file f)
{
    uint64_t len = UINT64_MAX;
    assert_ok(cio_file_length(io, f, &len));
    return len;
}

#endif
