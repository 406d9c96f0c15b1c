/*
 * Links and metadata (cio/fs.h) on every backend: symbolic links (made, read, looping, dangling),
 * hard links counted by stat (by path and of an open file), permission bits and owners seen by stat,
 * timestamps by path, the directory's own stat, the terminal question and clock resolutions, real
 * paths and rename without replace.
 *
 * Each test works in a fresh temporary directory, through cio, and removes it at the end. What a
 * target lacks skips with the reason: WASI has no permission bits or owners, Wine 8 cannot make a
 * symbolic link (tests/test_faults_windows_links.c checks the reparse data through the call table), the BSDs and WASI
 * cannot name an open file; owners need root to change.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* posix_openpt, ptsname */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"
#if !defined(CIO_OS_WINDOWS)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "asserts.h"

typedef struct fixture {
    cio_io io;
    char path[300];
    cio_dir dir;
} fixture;

static const cio_open_dir_options iterate_opts = {true, false};

static void fx_open(void **state, fixture *fx)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-links"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, &iterate_opts, &fx->dir));
}

/* Deletes every entry (files, links, empty directories named in `dirs`) and the directory. */
static void fx_close(fixture *fx)
{
    cio_io io = fx->io;
    for (int pass = 0; pass < 2; pass++) {
        unsigned char buf[2048];
        cio_dir_reader r;
        cio_dir_reader_init(&r, fx->dir, buf, sizeof buf);
        cio_dir_entry e[16];
        size_t n;
        do {
            assert_ok(cio_dir_read(io, &r, e, 16, &n));
            for (size_t i = 0; i < n; i++) {
                if (e[i].kind == CIO_FILE_KIND_DIRECTORY)
                    (void)cio_dir_delete_dir(io, fx->dir, e[i].name);
                else
                    (void)cio_dir_delete_file(io, fx->dir, e[i].name);
            }
        } while (n > 0);
    }
    cio_dir_close(io, fx->dir);
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), fx->path));
}

static void write_file(cio_io io, cio_dir dir, const char *name, const char *content)
{
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, content, strlen(content)));
    cio_file_close(io, f);
}

/* Makes a symbolic link, or skips (after cleaning up) where the target cannot. */
static void sym_link_or_skip(fixture *fx, const char *target, const char *link)
{
    cio_err err = cio_dir_sym_link(fx->io, fx->dir, target, link, 0);
    if (err == CIO_E_OPERATION_UNSUPPORTED) {
        cio_stat st; /* and the entry it began is gone again */
        assert_err(cio_dir_stat_file(fx->io, fx->dir, link, CIO_STAT_NO_FOLLOW, &st), CIO_E_FILE_NOT_FOUND);
        fx_close(fx);
        CIO_SKIP("no symbolic links here: cio_dir_sym_link is OperationUnsupported (Wine 8 answers "
                 "FSCTL_SET_REPARSE_POINT with STATUS_NOT_SUPPORTED and has no reparse points; measured)");
    }
    assert_ok(err);
}

/* ---- symbolic links ---------------------------------------------------------------------------- */

static void test_sym_link_and_read_link(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "target", "twelve bytes");
    sym_link_or_skip(&fx, "target", "link");

    char buf[64];
    size_t n = 99;
    assert_ok(cio_dir_read_link(io, fx.dir, "link", buf, sizeof buf, &n));
    assert_int_equal(n, 6);
    assert_string_equal(buf, "target");

    /* Exactly too small (no room for the NUL) is NameTooLong, never a cut target. */
    assert_err(cio_dir_read_link(io, fx.dir, "link", buf, 6, &n), CIO_E_NAME_TOO_LONG);
    assert_int_equal(n, 0);
    assert_string_equal(buf, "");
    assert_ok(cio_dir_read_link(io, fx.dir, "link", buf, 7, &n));
    assert_string_equal(buf, "target");

    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "link", CIO_STAT_NO_FOLLOW, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_SYM_LINK);
    assert_ok(cio_dir_stat_file(io, fx.dir, "link", 0, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_FILE);
    assert_int_equal(st.size, 12);

    /* The usual mistakes. */
    assert_err(cio_dir_sym_link(io, fx.dir, "target", "link", 0), CIO_E_PATH_ALREADY_EXISTS);
    assert_err(cio_dir_sym_link(io, fx.dir, "target", "missing/link", 0), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_read_link(io, fx.dir, "target", buf, sizeof buf, &n), CIO_E_NOT_LINK);
    assert_err(cio_dir_read_link(io, fx.dir, "missing", buf, sizeof buf, &n), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_sym_link(io, fx.dir, "target", "x", 2u), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_dir_read_link(io, fx.dir, "link", buf, 0, &n), CIO_E_INVALID_ARGUMENT);
    fx_close(&fx);
}

static void test_sym_link_loop_and_dangling(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    sym_link_or_skip(&fx, "b", "a");
    assert_ok(cio_dir_sym_link(io, fx.dir, "a", "b", 0));
    assert_ok(cio_dir_sym_link(io, fx.dir, "missing", "dangling", 0));

    /* A loop: following it never ends. */
    cio_stat st;
    cio_file f;
    assert_err(cio_dir_stat_file(io, fx.dir, "a", 0, &st), CIO_E_SYM_LINK_LOOP);
    assert_err(cio_dir_open_file(io, fx.dir, "a", NULL, &f), CIO_E_SYM_LINK_LOOP);
    assert_ok(cio_dir_stat_file(io, fx.dir, "a", CIO_STAT_NO_FOLLOW, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_SYM_LINK);

    /* A dangling link exists as a link, not as a file, and reads back. */
    assert_err(cio_dir_stat_file(io, fx.dir, "dangling", 0, &st), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_stat_file(io, fx.dir, "dangling", CIO_STAT_NO_FOLLOW, &st));
    assert_int_equal(st.kind, CIO_FILE_KIND_SYM_LINK);
    char buf[32];
    size_t n;
    assert_ok(cio_dir_read_link(io, fx.dir, "dangling", buf, sizeof buf, &n));
    assert_string_equal(buf, "missing");
    fx_close(&fx);
}

/* ---- hard links ---------------------------------------------------------------------------------- */

static void test_hard_link_counted(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "f", "hello");
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    uint64_t inode = st.inode;
    assert_int_equal(st.nlink, 1);

    cio_err err = cio_dir_hard_link(io, fx.dir, "f", fx.dir, "g", 0);
    if (err == CIO_E_OPERATION_UNSUPPORTED || err == CIO_E_PERMISSION_DENIED) {
        fx_close(&fx);
        CIO_SKIP("this file system has no hard links");
    }
    assert_ok(err);
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    assert_int_equal(st.nlink, 2);
    assert_ok(cio_dir_stat_file(io, fx.dir, "g", 0, &st));
    assert_int_equal(st.nlink, 2);
    assert_int_equal(st.inode, inode);
    assert_int_equal(st.size, 5);

    assert_err(cio_dir_hard_link(io, fx.dir, "f", fx.dir, "g", 0), CIO_E_PATH_ALREADY_EXISTS);
    assert_err(cio_dir_hard_link(io, fx.dir, "missing", fx.dir, "h", 0), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_hard_link(io, fx.dir, "f", fx.dir, "h", 8u), CIO_E_INVALID_ARGUMENT);

    assert_ok(cio_dir_delete_file(io, fx.dir, "g"));
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    assert_int_equal(st.nlink, 1);
    fx_close(&fx);
}

static void test_file_hard_link(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, "f", NULL, &f));
    assert_ok(cio_file_write_all(io, f, "abc", 3));
    cio_err err = cio_file_hard_link(io, f, fx.dir, "named");
    if (err == CIO_E_OPERATION_UNSUPPORTED) {
        cio_file_close(io, f);
        fx_close(&fx);
        CIO_SKIP("an open file cannot be given a name here (Linux and Windows only)");
    }
    assert_ok(err);
    assert_err(cio_file_hard_link(io, f, fx.dir, "named"), CIO_E_PATH_ALREADY_EXISTS);
    cio_file_close(io, f);
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "named", 0, &st));
    assert_int_equal(st.size, 3);
    assert_int_equal(st.nlink, 2);
    fx_close(&fx);
}

/* ---- permissions and owners -------------------------------------------------------------------- */

static void test_permissions_seen_by_stat(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "f", "x");
    cio_err err = cio_dir_set_file_permissions(io, fx.dir, "f", 0600, 0);
    if (err == CIO_E_OPERATION_UNSUPPORTED) {
        fx_close(&fx);
        CIO_SKIP("no permission bits on this target (WASI)");
    }
    assert_ok(err);
    cio_stat st;
#if defined(CIO_OS_WINDOWS)
    /* Windows keeps one bit of it: read-only, when no write bit is given. */
    assert_ok(cio_dir_set_file_permissions(io, fx.dir, "f", 0444, 0));
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    assert_int_equal(st.mode & 0222, 0);
    cio_file f;
    assert_ok(cio_dir_open_file(io, fx.dir, "f", NULL, &f));
    assert_ok(cio_file_set_permissions(io, f, 0666));
    cio_file_close(io, f);
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    assert_int_equal(st.mode & 0222, 0222);
#else
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    assert_int_equal(st.mode, 0600);
    cio_file f;
    assert_ok(cio_dir_open_file(io, fx.dir, "f", NULL, &f));
    assert_ok(cio_file_set_permissions(io, f, 0640));
    assert_ok(cio_file_stat(io, f, &st));
    assert_int_equal(st.mode, 0640);
    cio_file_close(io, f);

    assert_ok(cio_dir_create_dir(io, fx.dir, "d", 0700));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, fx.dir, "d", NULL, &d));
    assert_ok(cio_dir_set_permissions(io, d, 0750));
    assert_ok(cio_dir_stat(io, d, &st));
    assert_int_equal(st.mode, 0750);
    assert_int_equal(st.kind, CIO_FILE_KIND_DIRECTORY);
    cio_dir_close(io, d);
#endif
    assert_err(cio_dir_set_file_permissions(io, fx.dir, "f", 010000, 0), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_dir_set_file_permissions(io, fx.dir, "missing", 0600, 0), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_set_file_permissions(io, fx.dir, "f", 0600, 4u), CIO_E_INVALID_ARGUMENT);
    fx_close(&fx);
}

static void test_owner(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "f", "x");
    cio_err err = cio_dir_set_file_owner(io, fx.dir, "f", CIO_OWNER_UNCHANGED, CIO_OWNER_UNCHANGED, 0);
    if (err == CIO_E_OPERATION_UNSUPPORTED) {
        fx_close(&fx);
        CIO_SKIP("no owners on this target (Windows, WASI)");
    }
    assert_ok(err);
#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
    struct stat os;
    if (geteuid() == 0) {
        assert_ok(cio_dir_set_file_owner(io, fx.dir, "f", 1234, 5678, 0));
        assert_int_equal(fstatat(fx.dir.handle, "f", &os, 0), 0);
        assert_int_equal(os.st_uid, 1234);
        assert_int_equal(os.st_gid, 5678);
        cio_file f;
        assert_ok(cio_dir_open_file(io, fx.dir, "f", NULL, &f));
        assert_ok(cio_file_set_owner(io, f, CIO_OWNER_UNCHANGED, 4321));
        cio_file_close(io, f);
        assert_int_equal(fstatat(fx.dir.handle, "f", &os, 0), 0);
        assert_int_equal(os.st_uid, 1234);
        assert_int_equal(os.st_gid, 4321);
        assert_ok(cio_dir_set_owner(io, fx.dir, CIO_OWNER_UNCHANGED, CIO_OWNER_UNCHANGED));
    } else {
        /* Unprivileged: giving a file away is not permitted. */
        assert_err(cio_dir_set_file_owner(io, fx.dir, "f", 0, CIO_OWNER_UNCHANGED, 0), CIO_E_PERMISSION_DENIED);
        assert_int_equal(fstatat(fx.dir.handle, "f", &os, 0), 0);
        assert_int_equal(os.st_uid, geteuid());
    }
#endif
    assert_err(cio_dir_set_file_owner(io, fx.dir, "missing", CIO_OWNER_UNCHANGED, CIO_OWNER_UNCHANGED, 0),
               CIO_E_FILE_NOT_FOUND);
    fx_close(&fx);
}

/* ---- timestamps, the directory's stat, terminals, clocks ---------------------------------------- */

static void test_set_timestamps_by_path(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "f", "x");
    cio_set_timestamps ts;
    memset(&ts, 0, sizeof ts);
    ts.access_action = CIO_TIMESTAMP_SET;
    ts.access.ns = INT64_C(1500000000) * 1000000000;
    ts.modify_action = CIO_TIMESTAMP_SET;
    ts.modify.ns = INT64_C(1600000000) * 1000000000 + 500000000;
    assert_ok(cio_dir_set_timestamps(io, fx.dir, "f", &ts, 0));
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "f", 0, &st));
    assert_true(st.mtime.ns == ts.modify.ns || st.mtime.ns == INT64_C(1600000000) * 1000000000);
    assert_true(st.atime.ns / 1000000000 == 1500000000);
    assert_err(cio_dir_set_timestamps(io, fx.dir, "missing", &ts, 0), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_set_timestamps(io, fx.dir, "f", &ts, 2u), CIO_E_INVALID_ARGUMENT);
    fx_close(&fx);
}

static void test_dir_stat(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    assert_ok(cio_dir_create_dir(io, fx.dir, "d", 0));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, fx.dir, "d", NULL, &d));
    cio_stat by_handle, by_path;
    assert_ok(cio_dir_stat(io, d, &by_handle));
    assert_ok(cio_dir_stat_file(io, fx.dir, "d", 0, &by_path));
    assert_int_equal(by_handle.kind, CIO_FILE_KIND_DIRECTORY);
    assert_int_equal(by_handle.inode, by_path.inode);
    cio_dir_close(io, d);
    fx_close(&fx);
}

static void test_is_tty(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, "f", NULL, &f));
    bool tty = true;
    assert_ok(cio_file_is_tty(io, f, &tty));
    assert_false(tty);
    cio_file_close(io, f);
    fx_close(&fx);
#if defined(CIO_OS_LINUX)
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        CIO_SKIP("no pseudo-terminals here (posix_openpt)");
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    assert_true(slave >= 0);
    cio_file pty = {slave};
    assert_ok(cio_file_is_tty(io, pty, &tty));
    assert_true(tty);
    close(slave);
    close(master);
#endif
}

static void test_clock_resolution(void **state)
{
    cio_io io = cio_test_io(state);
    static const cio_clock clocks[] = {CIO_CLOCK_REAL, CIO_CLOCK_AWAKE, CIO_CLOCK_BOOT, CIO_CLOCK_CPU_PROCESS,
                                       CIO_CLOCK_CPU_THREAD};
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        int64_t ns = -1;
        cio_err err = cio_clock_resolution(io, clocks[i], &ns);
        if (err == CIO_E_CLOCK_UNAVAILABLE && clocks[i] >= CIO_CLOCK_CPU_PROCESS) {
            assert_int_equal(ns, 0);
            continue; /* a host without CPU clocks (WASI under Node) */
        }
        assert_ok(err);
        assert_true(ns >= 1 && ns <= INT64_C(1000000000));
    }
    int64_t ns;
    assert_err(cio_clock_resolution(io, (cio_clock)99, &ns), CIO_E_INVALID_ARGUMENT);
}

/* ---- real paths and rename without replace ----------------------------------------------------- */

/* The final component of a path (either separator). */
static const char *base_name(const char *p)
{
    const char *b = p;
    for (; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

static void test_real_path(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "f", "x");
    assert_ok(cio_dir_create_dir(io, fx.dir, "d", 0));
    char dir_path[1024], buf[1024];
    size_t n = 0;
    cio_err err = cio_dir_real_path(io, fx.dir, dir_path, sizeof dir_path, &n);
    if (err == CIO_E_OPERATION_UNSUPPORTED) {
        fx_close(&fx);
        CIO_SKIP("this OS cannot tell a handle's path (the BSDs, WASI)");
    }
    assert_ok(err);
    assert_int_equal(n, strlen(dir_path));
    assert_string_equal(base_name(dir_path), base_name(fx.path)); /* /tmp may itself be a link */

    /* The same directory through an open file in it, by path, and through ".." of a subdirectory. */
    cio_file f;
    assert_ok(cio_dir_open_file(io, fx.dir, "f", NULL, &f));
    assert_ok(cio_file_real_path(io, f, buf, sizeof buf, &n));
    cio_file_close(io, f);
    assert_string_equal(base_name(buf), "f");
    assert_int_equal(n, strlen(dir_path) + 2);
    assert_memory_equal(buf, dir_path, strlen(dir_path));
    assert_ok(cio_dir_real_path_file(io, fx.dir, "d/../f", buf, sizeof buf, &n));
    assert_string_equal(base_name(buf), "f");
    assert_memory_equal(buf, dir_path, strlen(dir_path));

    /* A symbolic link resolves to its target (where links can be made). */
    if (cio_dir_sym_link(io, fx.dir, "f", "link", 0) == CIO_OK) {
        assert_ok(cio_dir_real_path_file(io, fx.dir, "link", buf, sizeof buf, &n));
        assert_string_equal(base_name(buf), "f");
    }

    /* Never a cut path: too small is NameTooLong. */
    assert_err(cio_dir_real_path(io, fx.dir, buf, strlen(dir_path), &n), CIO_E_NAME_TOO_LONG);
    assert_int_equal(n, 0);
    assert_ok(cio_dir_real_path(io, fx.dir, buf, strlen(dir_path) + 1, &n));
    assert_string_equal(buf, dir_path);
    assert_err(cio_dir_real_path_file(io, fx.dir, "missing", buf, sizeof buf, &n), CIO_E_FILE_NOT_FOUND);

    /* The current directory has a path too. */
    assert_ok(cio_dir_real_path(io, cio_dir_cwd(), buf, sizeof buf, &n));
    assert_true(n > 0);
    fx_close(&fx);
}

static void test_rename_preserve(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    write_file(io, fx.dir, "a", "first");
    write_file(io, fx.dir, "b", "second");
    cio_err err = cio_dir_rename_preserve(io, fx.dir, "a", fx.dir, "b");
    cio_stat st;
#if defined(CIO_OS_WASI)
    /* WASI preview 1 has no atomic form: refused, never done as a check and a rename. */
    assert_err(err, CIO_E_OPERATION_UNSUPPORTED);
#endif
    if (err == CIO_E_OPERATION_UNSUPPORTED) {
        /* Nothing moved, and a free target is refused the same way (no check-then-rename). */
        assert_ok(cio_dir_stat_file(io, fx.dir, "b", 0, &st));
        assert_int_equal(st.size, 6);
        assert_err(cio_dir_rename_preserve(io, fx.dir, "a", fx.dir, "c"), CIO_E_OPERATION_UNSUPPORTED);
        assert_ok(cio_dir_stat_file(io, fx.dir, "a", 0, &st));
        assert_int_equal(st.size, 5);
        assert_err(cio_dir_stat_file(io, fx.dir, "c", 0, &st), CIO_E_FILE_NOT_FOUND);
        fx_close(&fx);
#if !defined(CIO_OS_WASI)
        CIO_SKIP("no atomic rename without replace on this file system");
#endif
        return;
    }
    /* An existing target is refused, and both files are as they were. */
    assert_err(err, CIO_E_PATH_ALREADY_EXISTS);
    assert_ok(cio_dir_stat_file(io, fx.dir, "a", 0, &st));
    assert_int_equal(st.size, 5);
    assert_ok(cio_dir_stat_file(io, fx.dir, "b", 0, &st));
    assert_int_equal(st.size, 6);

    /* A free name is taken. */
    assert_ok(cio_dir_rename_preserve(io, fx.dir, "a", fx.dir, "c"));
    assert_err(cio_dir_stat_file(io, fx.dir, "a", 0, &st), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_stat_file(io, fx.dir, "c", 0, &st));
    assert_int_equal(st.size, 5);
    assert_err(cio_dir_rename_preserve(io, fx.dir, "missing", fx.dir, "d"), CIO_E_FILE_NOT_FOUND);
    fx_close(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_sym_link_and_read_link),
        CIO_TESTS(test_sym_link_loop_and_dangling),
        CIO_TESTS(test_hard_link_counted),
        CIO_TESTS(test_file_hard_link),
        CIO_TESTS(test_permissions_seen_by_stat),
        CIO_TESTS(test_owner),
        CIO_TESTS(test_set_timestamps_by_path),
        CIO_TESTS(test_dir_stat),
        CIO_TESTS(test_is_tty),
        CIO_TESTS(test_clock_resolution),
        CIO_TESTS(test_real_path),
        CIO_TESTS(test_rename_preserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
