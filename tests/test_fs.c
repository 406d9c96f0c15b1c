/*
 * Files and directories (cio/fs.h) on every backend: Zig's std.Io file tests 1-6 with the same
 * expected values, directory creation/removal/rename/stat/access/iteration, streaming vs positional
 * and vectored I/O, the mapped errors for the usual mistakes, the program's own executable, and
 * Zig's Threaded test 6 (a read blocked on an empty pipe is interrupted by cancel).
 *
 * Each test works in a fresh directory made with mkdtemp under /tmp and does everything inside it
 * through cio; the directory is removed (through cio) at the end. On WASI (tests/wasi_run.mjs maps a
 * scratch directory as the guest's /tmp) what the target lacks skips with the reason: permission
 * bits, pipes, the executable's path.
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
#include "zero_write.h"
#if !defined(CIO_OS_WINDOWS)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "asserts.h"

/* ---- fixture: a fresh temporary directory --------------------------------------------------- */

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

static void fx_open(void **state, fixture *fx)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-fs"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, &iterate_opts, &fx->dir));
}

/* Removes everything inside `name` (a directory under parent), then `name` itself. Entries are
 * deleted while the directory is read, so the directory is read again until a pass finds nothing. */
static void rm_tree(cio_io io, cio_dir parent, const char *name)
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

static void fx_close(fixture *fx)
{
    cio_dir_close(fx->io, fx->dir);
    rm_tree(fx->io, cio_dir_cwd(), fx->path);
}

/* Creates (truncating) a file open for reading and writing; fails the test otherwise. */
static cio_file create_rw(cio_io io, cio_dir dir, const char *name)
{
    cio_create_file_options opts = CIO_CREATE_FILE_DEFAULTS;
    opts.read = true;
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, &opts, &f));
    return f;
}

static void write_file(cio_io io, cio_dir dir, const char *name, const char *content)
{
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, content, strlen(content)));
    cio_file_close(io, f);
}

/* Reads the whole file into buf (NUL-terminated); returns its length. */
static size_t read_file(cio_io io, cio_dir dir, const char *name, char *buf, size_t cap)
{
    cio_file f;
    size_t n;
    assert_ok(cio_dir_open_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_read_all(io, f, buf, cap - 1, &n));
    buf[n] = '\0';
    cio_file_close(io, f);
    return n;
}

static uint64_t position(cio_io io, cio_file f)
{
    uint64_t pos = UINT64_MAX;
    assert_ok(cio_file_position(io, f, &pos));
    return pos;
}

static uint64_t length(cio_io io, cio_file f)
{
    uint64_t len = UINT64_MAX;
    assert_ok(cio_file_length(io, f, &len));
    return len;
}

/* ---- Zig std.Io tests 1-6 ------------------------------------------------------------------- */

/* 1. write a file, read it, then delete it. */
static void test_write_read_delete(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    unsigned char data[1024];
    cio_random(io, data, sizeof data);
    const char *name = "temp_test_file.txt";

    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, "begin", 5));
    assert_ok(cio_file_write_all(io, f, data, sizeof data));
    assert_ok(cio_file_write_all(io, f, "end", 3));
    cio_file_close(io, f);

    cio_create_file_options excl = CIO_CREATE_FILE_DEFAULTS;
    excl.exclusive = true;
    assert_err(cio_dir_create_file(io, fx.dir, name, &excl, &f), CIO_E_PATH_ALREADY_EXISTS);

    assert_ok(cio_dir_open_file(io, fx.dir, name, NULL, &f));
    assert_int_equal(length(io, f), 1032);
    unsigned char got[2048];
    size_t n;
    assert_ok(cio_file_read_all(io, f, got, sizeof got, &n));
    assert_int_equal(n, 1032);
    assert_memory_equal(got, "begin", 5);
    assert_memory_equal(got + 5, data, sizeof data);
    assert_memory_equal(got + 5 + sizeof data, "end", 3);
    cio_file_close(io, f);

    assert_ok(cio_dir_delete_file(io, fx.dir, name));
    cio_stat st;
    assert_err(cio_dir_stat_file(io, fx.dir, name, 0, &st), CIO_E_FILE_NOT_FOUND);
    fx_close(&fx);
}

/* cio_file_write_all over a sink that takes nothing (tests/zero_write.h wraps the backend's write
 * slot): one 0-byte write is retried and the data still arrives whole; a sink that keeps taking 0
 * bytes is CIO_E_UNEXPECTED after the second such write (not an endless loop), as is one that
 * claims more bytes than it was given. */
static void test_write_all_zero_writes(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f = create_rw(io, fx.dir, "zero");

    cio_io once = zero_write_io(io, 1, false);
    assert_ok(cio_file_write_all(once, f, "0123456789", 10));
    assert_int_equal(zero_write.calls, 2);
    assert_int_equal(length(io, f), 10);

    cio_io stuck = zero_write_io(io, UINT32_MAX, false);
    assert_err(cio_file_write_all(stuck, f, "abc", 3), CIO_E_UNEXPECTED);
    assert_int_equal(zero_write.calls, 2);
    assert_ok(cio_file_write_all(stuck, f, "", 0)); /* nothing to write: the slot is not asked */
    assert_int_equal(zero_write.calls, 2);

    cio_io over = zero_write_io(io, 0, true);
    assert_err(cio_file_write_all(over, f, "abc", 3), CIO_E_UNEXPECTED);
    assert_int_equal(zero_write.calls, 1);

    assert_int_equal(length(io, f), 10); /* the refused writes wrote nothing */
    cio_file_close(io, f);
    fx_close(&fx);
}

/* 2. File.Writer.seekTo */
static void test_seek_to(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, "file.txt", NULL, &f));
    unsigned char fives[8192];
    memset(fives, 0x55, sizeof fives);
    assert_ok(cio_file_write_all(io, f, fives, sizeof fives));
    assert_int_equal(position(io, f), 8192);
    assert_int_equal(length(io, f), 8192);
    assert_ok(cio_file_seek_to(io, f, 1234));
    assert_int_equal(position(io, f), 1234);
    assert_ok(cio_file_seek_by(io, f, -34));
    assert_int_equal(position(io, f), 1200);
    cio_file_close(io, f);
    fx_close(&fx);
}

/* 3. file discard: positional discard of 1024 hits the end after 4 bytes; from 0 again, 4 remain. */
static void test_discard(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f = create_rw(io, fx.dir, "input.txt");
    assert_ok(cio_file_write_all(io, f, "test", 4));

    unsigned char scratch[16];
    uint64_t off = 0;
    size_t n;
    do { /* discardAll(1024) */
        size_t want = 1024 - (size_t)off < sizeof scratch ? 1024 - (size_t)off : sizeof scratch;
        assert_ok(cio_file_read_positional(io, f, scratch, want, off, &n));
        off += n;
    } while (n > 0 && off < 1024);
    assert_int_equal(off, 4); /* EndOfStream before 1024 */

    assert_ok(cio_file_seek_to(io, f, 0));
    uint64_t remaining = 0; /* discardRemaining, streaming */
    do {
        assert_ok(cio_file_read_streaming(io, f, scratch, sizeof scratch, &n));
        remaining += n;
    } while (n > 0);
    assert_int_equal(remaining, 4);
    cio_file_close(io, f);
    fx_close(&fx);
}

/* 4. File.setLength never moves the offset. */
static void test_set_length(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f = create_rw(io, fx.dir, "file.txt");
    assert_int_equal(length(io, f), 0);
    assert_int_equal(position(io, f), 0);
    assert_ok(cio_file_set_length(io, f, 8192));
    assert_int_equal(length(io, f), 8192);
    assert_int_equal(position(io, f), 0);
    assert_ok(cio_file_seek_to(io, f, 100));
    assert_ok(cio_file_set_length(io, f, 4096));
    assert_int_equal(length(io, f), 4096);
    assert_int_equal(position(io, f), 100);
    assert_ok(cio_file_set_length(io, f, 0));
    assert_int_equal(length(io, f), 0);
    assert_int_equal(position(io, f), 100);
    cio_file_close(io, f);
    fx_close(&fx);
}

/* Reads f from the start to its end: exactly the `len` bytes of `want`. */
static void assert_file_holds(cio_io io, cio_file f, const char *want, size_t len)
{
    char buf[100];
    size_t n;
    assert_ok(cio_file_seek_to(io, f, 0));
    assert_ok(cio_file_read_all(io, f, buf, sizeof buf, &n));
    assert_int_equal(n, len);
    assert_memory_equal(buf, want, len);
}

/* 5. legacy setLength: truncation and zero-extension of "ninebytes". */
static void test_legacy_set_length(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f = create_rw(io, fx.dir, "file");
    assert_ok(cio_file_write_all(io, f, "ninebytes", 9));

    assert_ok(cio_file_set_length(io, f, 9));
    assert_file_holds(io, f, "ninebytes", 9);

    assert_ok(cio_file_set_length(io, f, 13));
    assert_int_equal(length(io, f), 13);
    assert_file_holds(io, f, "ninebytes\0\0\0\0", 13);

    assert_ok(cio_file_set_length(io, f, 4));
    assert_file_holds(io, f, "nine", 4);

    assert_ok(cio_file_set_length(io, f, 0));
    assert_int_equal(length(io, f), 0);
    assert_ok(cio_file_seek_to(io, f, 0));
    char buf[8];
    size_t n;
    assert_ok(cio_file_read_streaming(io, f, buf, sizeof buf, &n));
    assert_int_equal(n, 0);
    cio_file_close(io, f);
    fx_close(&fx);
}

/* 6. setTimestamps: five seconds back; mtime (and atime) strictly smaller afterwards. */
static void test_set_timestamps(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, "just_a_temporary_file.txt", NULL, &f));
    cio_stat before, after;
    assert_ok(cio_file_stat(io, f, &before));
    cio_set_timestamps ts;
    memset(&ts, 0, sizeof ts);
    ts.access_action = before.has_atime ? CIO_TIMESTAMP_SET : CIO_TIMESTAMP_UNCHANGED;
    ts.access.ns = before.atime.ns - INT64_C(5000000000);
    ts.modify_action = CIO_TIMESTAMP_SET;
    ts.modify.ns = before.mtime.ns - INT64_C(5000000000);
    assert_ok(cio_file_set_timestamps(io, f, &ts));
    assert_ok(cio_file_stat(io, f, &after));
    assert_true(after.mtime.ns < before.mtime.ns);
#if defined(CIO_OS_WASI)
    /* Node's WASI (uvwasi) sets file times to whole seconds, dropping the nanoseconds. */
    assert_true(after.mtime.ns <= ts.modify.ns && ts.modify.ns - after.mtime.ns < INT64_C(1000000000));
#else
    assert_int_equal(after.mtime.ns, ts.modify.ns);
#endif
    if (before.has_atime && after.has_atime)
        assert_true(after.atime.ns < before.atime.ns);

    ts.access_action = CIO_TIMESTAMP_UNCHANGED;
    ts.modify_action = CIO_TIMESTAMP_NOW;
    assert_ok(cio_file_set_timestamps(io, f, &ts));
    cio_stat now;
    assert_ok(cio_file_stat(io, f, &now));
    assert_true(now.mtime.ns > after.mtime.ns);
    cio_file_close(io, f);
    fx_close(&fx);
}

/* ---- directories ---------------------------------------------------------------------------- */

static void assert_kind(cio_io io, cio_dir dir, const char *path, cio_file_kind kind)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, dir, path, CIO_STAT_NO_FOLLOW, &st));
    assert_int_equal(st.kind, kind);
}

static void test_create_dir_path(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    bool created = false;
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "a/b/c", 0, &created));
    assert_true(created);
    assert_kind(io, fx.dir, "a/b/c", CIO_FILE_KIND_DIRECTORY);
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "a/b/c", 0, &created));
    assert_false(created);
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "a//b///d/", 0, &created));
    assert_true(created);
    assert_kind(io, fx.dir, "a/b/d", CIO_FILE_KIND_DIRECTORY);
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "single", 0, NULL));
    assert_kind(io, fx.dir, "single", CIO_FILE_KIND_DIRECTORY);

    char abs[400];
    snprintf(abs, sizeof abs, "%s/abs/p/q", fx.path);
    assert_ok(cio_dir_create_dir_path(io, cio_dir_cwd(), abs, 0, &created));
    assert_true(created);
    assert_kind(io, fx.dir, "abs/p/q", CIO_FILE_KIND_DIRECTORY);

    write_file(io, fx.dir, "a/file", "x");
    assert_err(cio_dir_create_dir_path(io, fx.dir, "a/file/x/y", 0, NULL), CIO_E_NOT_DIR);
    assert_err(cio_dir_create_dir_path(io, fx.dir, "a/file", 0, NULL), CIO_E_NOT_DIR);
    assert_err(cio_dir_create_dir(io, fx.dir, "a", 0), CIO_E_PATH_ALREADY_EXISTS);
    assert_err(cio_dir_create_dir(io, fx.dir, "missing/x", 0), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_create_dir(io, fx.dir, "plain", 0));
    assert_kind(io, fx.dir, "plain", CIO_FILE_KIND_DIRECTORY);
    fx_close(&fx);
}

static void test_create_dir_path_open(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_dir d;
    assert_ok(cio_dir_create_dir_path_open(io, fx.dir, "x/y/z", &iterate_opts, &d));
    write_file(io, d, "inside", "hello");
    cio_dir_close(io, d);
    assert_kind(io, fx.dir, "x/y/z/inside", CIO_FILE_KIND_FILE);

    /* It exists now: opened, not recreated. */
    assert_ok(cio_dir_create_dir_path_open(io, fx.dir, "x/y/z", &iterate_opts, &d));
    char buf[16];
    assert_int_equal(read_file(io, d, "inside", buf, sizeof buf), 5);
    assert_string_equal(buf, "hello");
    cio_dir_close(io, d);

    write_file(io, fx.dir, "x/file", "x");
    assert_err(cio_dir_create_dir_path_open(io, fx.dir, "x/file/sub", NULL, &d), CIO_E_NOT_DIR);
    assert_err(cio_dir_create_dir_path_open(io, fx.dir, "x/file", NULL, &d), CIO_E_NOT_DIR);
    fx_close(&fx);
}

static void test_rename_replaces(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "old", "A");
    write_file(io, fx.dir, "new", "BB");
    assert_ok(cio_dir_rename(io, fx.dir, "old", fx.dir, "new"));
    char buf[16];
    assert_int_equal(read_file(io, fx.dir, "new", buf, sizeof buf), 1);
    assert_string_equal(buf, "A");
    cio_stat st;
    assert_err(cio_dir_stat_file(io, fx.dir, "old", 0, &st), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_rename(io, fx.dir, "old", fx.dir, "other"), CIO_E_FILE_NOT_FOUND);

    /* Across directory handles. */
    cio_dir sub;
    assert_ok(cio_dir_create_dir_path_open(io, fx.dir, "sub", NULL, &sub));
    assert_ok(cio_dir_rename(io, fx.dir, "new", sub, "moved"));
    assert_kind(io, fx.dir, "sub/moved", CIO_FILE_KIND_FILE);
    cio_dir_close(io, sub);
    fx_close(&fx);
}

static void test_delete_dir(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    assert_ok(cio_dir_create_dir(io, fx.dir, "d", 0));
    write_file(io, fx.dir, "d/f", "x");
    assert_err(cio_dir_delete_dir(io, fx.dir, "d"), CIO_E_DIR_NOT_EMPTY);
    assert_err(cio_dir_delete_dir(io, fx.dir, "d/f"), CIO_E_NOT_DIR);
    assert_err(cio_dir_delete_file(io, fx.dir, "d"), CIO_E_IS_DIR);
    assert_ok(cio_dir_delete_file(io, fx.dir, "d/f"));
    assert_err(cio_dir_delete_file(io, fx.dir, "d/f"), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_delete_dir(io, fx.dir, "d"));
    assert_err(cio_dir_delete_dir(io, fx.dir, "d"), CIO_E_FILE_NOT_FOUND);
    fx_close(&fx);
}

static void test_stat_file_symlink(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "target", "twelve bytes");
#if defined(CIO_OS_WINDOWS)
    if (!cio_test_symlink(fx.path, "target", "link")) {
        fx_close(&fx);
        CIO_SKIP("Wine cannot make a symbolic link that resolves (CreateSymbolicLinkA)");
    }
#else
    assert_int_equal(symlinkat("target", fx.dir.handle, "link"), 0);
#endif

    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "link", 0, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_FILE);
    assert_int_equal(st.size, 12);
    assert_true(st.has_atime);
    assert_true(st.nlink >= 1);
    assert_true(st.mtime.ns > INT64_C(1500000000) * 1000000000);
    uint64_t target_inode = st.inode;

    assert_ok(cio_dir_stat_file(io, fx.dir, "link", CIO_STAT_NO_FOLLOW, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_SYM_LINK);
    assert_int_equal(st.size, strlen("target"));
    assert_int_not_equal(st.inode, target_inode);

    /* The open file agrees with the path. */
    cio_file f;
    assert_ok(cio_dir_open_file(io, fx.dir, "target", NULL, &f));
    assert_ok(cio_file_stat(io, f, &st));
    assert_int_equal(st.inode, target_inode);
    assert_int_equal(st.kind, CIO_FILE_KIND_FILE);
    cio_file_close(io, f);

    /* Opening through the link: followed by default, SymLinkLoop when not allowed. */
    cio_open_file_options nofollow = {CIO_OPEN_READ_ONLY, true, false};
    assert_err(cio_dir_open_file(io, fx.dir, "link", &nofollow, &f), CIO_E_SYM_LINK_LOOP);
    assert_ok(cio_dir_open_file(io, fx.dir, "link", NULL, &f));
    cio_file_close(io, f);

    /* forbid_directory: IsDir for a directory, fine for a file. */
    assert_ok(cio_dir_create_dir(io, fx.dir, "dir", 0));
    cio_open_file_options nodir = {CIO_OPEN_READ_ONLY, false, true};
    assert_err(cio_dir_open_file(io, fx.dir, "dir", &nodir, &f), CIO_E_IS_DIR);
    assert_ok(cio_dir_open_file(io, fx.dir, "target", &nodir, &f));
    cio_file_close(io, f);
    assert_kind(io, fx.dir, "dir", CIO_FILE_KIND_DIRECTORY);
    fx_close(&fx);
}

static void test_access(void **state)
{
#if defined(CIO_OS_WASI)
    CIO_SKIP("WASI has no permission bits: faccessat only checks that the file exists");
#endif
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_create_file_options opts = CIO_CREATE_FILE_DEFAULTS;
    opts.permissions = 0444;
    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, "readonly", &opts, &f));
    cio_file_close(io, f);
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "readonly", 0, &st));
    assert_int_equal(st.mode & 0222, 0);

    assert_ok(cio_dir_access(io, fx.dir, "readonly", 0));
    assert_ok(cio_dir_access(io, fx.dir, "readonly", CIO_ACCESS_READ));
#if defined(CIO_OS_WINDOWS)
    /* No execute bit on Windows: executing is an ACL right every file grants its owner. */
    assert_ok(cio_dir_access(io, fx.dir, "readonly", CIO_ACCESS_EXECUTE));
#else
    /* No execute bit at all: denied even to root. */
    assert_err(cio_dir_access(io, fx.dir, "readonly", CIO_ACCESS_EXECUTE), CIO_E_ACCESS_DENIED);
#endif
    if (!running_as_root()) /* root may write anything */
        assert_err(cio_dir_access(io, fx.dir, "readonly", CIO_ACCESS_WRITE), CIO_E_ACCESS_DENIED);
    assert_err(cio_dir_access(io, fx.dir, "missing", 0), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_access(io, fx.dir, "readonly", 8), CIO_E_INVALID_ARGUMENT);
    assert_ok(cio_dir_access(io, fx.dir, ".", CIO_ACCESS_READ | CIO_ACCESS_WRITE | CIO_ACCESS_EXECUTE));
    fx_close(&fx);
}

/* 50 files, a directory and a symlink, read back 7 at a time through a small, unaligned buffer. */
static void test_dir_iteration(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    enum { FILES = 50 };
    char name[32];
    for (int i = 0; i < FILES; i++) {
        snprintf(name, sizeof name, "file_%02d", i);
        write_file(io, fx.dir, name, name);
    }
    assert_ok(cio_dir_create_dir(io, fx.dir, "subdir", 0));
#if defined(CIO_OS_WINDOWS)
    bool have_link = cio_test_symlink(fx.path, "file_00", "symlink");
#else
    assert_int_equal(symlinkat("file_00", fx.dir.handle, "symlink"), 0);
    bool have_link = true;
#endif

    int seen[FILES] = {0};
    int seen_dir = 0, seen_link = 0, batches = 0;
    static unsigned char raw[1024 + 8];
    cio_dir_reader r;
    cio_dir_reader_init(&r, fx.dir, raw + 3, 1024);
    cio_dir_entry e[7];
    size_t n;
    for (;;) {
        assert_ok(cio_dir_read(io, &r, e, 7, &n));
        if (n == 0)
            break;
        assert_true(n <= 7);
        batches++;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(strlen(e[i].name), e[i].name_len);
            assert_true(e[i].inode != 0);
            int k;
            if (strcmp(e[i].name, "subdir") == 0) {
                assert_int_equal(e[i].kind, CIO_FILE_KIND_DIRECTORY);
                seen_dir++;
            } else if (strcmp(e[i].name, "symlink") == 0) {
                assert_int_equal(e[i].kind, CIO_FILE_KIND_SYM_LINK);
                seen_link++;
            } else if (sscanf(e[i].name, "file_%d", &k) == 1 && k >= 0 && k < FILES) {
                snprintf(name, sizeof name, "file_%02d", k);
                assert_string_equal(e[i].name, name);
                assert_int_equal(e[i].kind, CIO_FILE_KIND_FILE);
                seen[k]++;
            } else {
                fail_msg("unexpected entry \"%s\"", e[i].name);
            }
        }
    }
    for (int i = 0; i < FILES; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(seen_dir, 1);
    assert_int_equal(seen_link, have_link ? 1 : 0);
    if (!have_link)
        print_message("      note: listed without a symlink: Wine cannot make one that resolves\n");
    assert_true(batches >= (FILES + 1 + (have_link ? 1 : 0) + 6) / 7);
    /* At the end it stays at the end. */
    assert_ok(cio_dir_read(io, &r, e, 7, &n));
    assert_int_equal(n, 0);

    /* An empty directory: nothing, not even . and .. */
    cio_dir sub;
    assert_ok(cio_dir_open_dir(io, fx.dir, "subdir", &iterate_opts, &sub));
    cio_dir_reader_init(&r, sub, raw, sizeof raw);
    assert_ok(cio_dir_read(io, &r, e, 7, &n));
    assert_int_equal(n, 0);
    cio_dir_close(io, sub);
    fx_close(&fx);
}

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
    assert_true(n >= 11);
    assert_string_equal(buf + n - 11, "test_fs.exe");
#else
    assert_true(buf[0] == '/');
    assert_true(n >= 7);
    assert_string_equal(buf + n - 7, "test_fs");
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
    static const char msg[] = "test_fs: hello from cio_file_stdout\n";
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
        CIO_TESTS(test_write_read_delete),
        CIO_TESTS(test_write_all_zero_writes),
        CIO_TESTS(test_seek_to),
        CIO_TESTS(test_discard),
        CIO_TESTS(test_set_length),
        CIO_TESTS(test_legacy_set_length),
        CIO_TESTS(test_set_timestamps),
        CIO_TESTS(test_create_dir_path),
        CIO_TESTS(test_create_dir_path_open),
        CIO_TESTS(test_rename_replaces),
        CIO_TESTS(test_delete_dir),
        CIO_TESTS(test_stat_file_symlink),
        CIO_TESTS(test_access),
        CIO_TESTS(test_dir_iteration),
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
