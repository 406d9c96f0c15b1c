/*
 * Trees (cio/fs_tree.h) on every backend: mkdir -p's edges, copy_tree of a 10,000-file tree
 * compared with its source, a canceled copy_tree, delete_tree over links and read-only directories,
 * ANSI escape codes and NO_COLOR. File-to-file copies and atomic files are test_fs_atomic.c.
 *
 * Each test works in a fresh temporary directory and removes it with cio_dir_delete_tree. What a
 * target lacks skips with the reason: concurrency (WASI), symbolic links (Wine 8), permission bits
 * (WASI), pseudo-terminals.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* posix_openpt, ptsname, setenv */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends.h"
#include "os_helpers.h"
#if !defined(CIO_OS_WINDOWS)
#include <fcntl.h>
#include <unistd.h>
#endif
#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
#include <signal.h>
#include <sys/wait.h>
#define HAVE_FORK 1
#endif

#include "asserts.h"
#include "fs_tree_helpers.h"

#if defined(CIO_OS_LINUX)
static bool under_valgrind(void)
{
    const char *v = getenv("CIO_TEST_VALGRIND");
    return v != NULL && v[0] == '1';
}
#endif

/* ---- mkdir -p ----------------------------------------------------------------------------------------------- */

typedef struct mkp_ctx {
    cio_io io;
    cio_dir dir;
} mkp_ctx;

static cio_err mkp_task(void *p)
{
    mkp_ctx *c = (mkp_ctx *)p;
    return cio_dir_create_dir_path(c->io, c->dir, "race/a/b/c/d", 0, NULL);
}

static void test_make_path_edges(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    bool created = false;
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "a/b/c", 0, &created));
    assert_true(created);
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "a/b/c/", 0, &created));
    assert_false(created);
    put_file(io, fx.dir, "a/file", "x", 1);
    assert_err(cio_dir_create_dir_path(io, fx.dir, "a/file/x/y", 0, &created), CIO_E_NOT_DIR);
    assert_err(cio_dir_create_dir_path(io, fx.dir, "a/file", 0, &created), CIO_E_NOT_DIR);
    /* Eight tasks making the same path at once all succeed. */
    mkp_ctx c = {io, fx.dir};
    cio_future f[8];
    size_t started = 0;
    for (size_t i = 0; i < 8; i++) {
        f[i] = (cio_future){NULL, CIO_OK, 0};
        cio_err err = cio_concurrent(io, mkp_task, &c, sizeof c, &f[i]);
        if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
            break;
        assert_ok(err);
        started++;
    }
    for (size_t i = 0; i < started; i++)
        assert_ok(cio_await(io, &f[i]));
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, fx.dir, "a/b/c", 0, &st));
    if (started > 0) {
        assert_ok(cio_dir_stat_file(io, fx.dir, "race/a/b/c/d", 0, &st));
        assert_int_equal(st.kind, CIO_FILE_KIND_DIRECTORY);
    }
    fx_close(&fx);
    if (started == 0)
        CIO_SKIP("no concurrency here: the racing part did not run");
}

/* ---- trees -------------------------------------------------------------------------------------------------- */

#define BASE_TIME INT64_C(1500000000)

static bool have_perms(void)
{
#if defined(CIO_OS_WASI) || defined(CIO_OS_WINDOWS)
    return false;
#else
    return true;
#endif
}

/* A tree of `dirs` directories of `per_dir` files with varied sizes, modes and times, two symbolic
 * links per directory (one dangling), an empty directory and a directory of mode 0750. Returns
 * whether links were made. */
static bool build_tree(cio_io io, cio_dir root, int dirs, int per_dir, size_t big)
{
    unsigned char *buf = (unsigned char *)malloc(big + 64);
    static const uint32_t modes[] = {0600, 0644, 0755, 0400, 0640};
    bool links = true;
    for (int d = 0; d < dirs; d++) {
        char dn[32];
        snprintf(dn, sizeof dn, "d%d", d);
        assert_ok(cio_dir_create_dir(io, root, dn, 0));
        cio_dir sub;
        assert_ok(cio_dir_open_dir(io, root, dn, &iterate_opts, &sub));
        for (int i = 0; i < per_dir; i++) {
            char fn[32];
            snprintf(fn, sizeof fn, "f%d", i);
            size_t len = i % 50 == 0 ? big : (size_t)(i % 97);
            fill(buf, len, (unsigned)(d * 100003 + i));
            cio_file f;
            assert_ok(cio_dir_create_file(io, sub, fn, NULL, &f));
            assert_ok(cio_file_write_all(io, f, buf, len));
            if (have_perms())
                assert_ok(cio_file_set_permissions(io, f, modes[i % 5]));
            cio_set_timestamps ts = {CIO_TIMESTAMP_SET,
                                     {(BASE_TIME + i) * 1000000000 + 123},
                                     CIO_TIMESTAMP_SET,
                                     {(BASE_TIME + d * 100000 + i) * 1000000000 + 456000}};
            assert_ok(cio_file_set_timestamps(io, f, &ts));
            cio_file_close(io, f);
        }
        if (links) {
            cio_err err = cio_dir_sym_link(io, sub, "f1", "link", 0);
            if (err == CIO_E_OPERATION_UNSUPPORTED)
                links = false;
            else
                assert_ok(err);
            if (links)
                assert_ok(cio_dir_sym_link(io, sub, "nowhere", "dangling", 0));
        }
        cio_set_timestamps dts = {CIO_TIMESTAMP_UNCHANGED, {0}, CIO_TIMESTAMP_SET, {(BASE_TIME - d) * 1000000000}};
        assert_ok(cio_dir_set_timestamps(io, root, dn, &dts, 0));
        cio_dir_close(io, sub);
    }
    assert_ok(cio_dir_create_dir_path(io, root, "empty/inner", 0, NULL));
    if (have_perms())
        assert_ok(cio_dir_set_file_permissions(io, root, "empty", 0750, 0));
    free(buf);
    return links;
}

/* The copy's mtime is the source's (Node's WASI sets times by path in whole seconds: utimes, lutimes). */
static void check_mtime(const char *name, const cio_stat *sa, const cio_stat *sb)
{
    int64_t grain = 1;
#if defined(CIO_OS_WASI)
    if (sa->kind != CIO_FILE_KIND_FILE)
        grain = 1000000000;
#endif
    if (sa->mtime.ns / grain != sb->mtime.ns / grain)
        fail_msg("%s: mtime %lld, copy %lld", name, (long long)sa->mtime.ns, (long long)sb->mtime.ns);
}

/* Compares two trees entry by entry (kind, size, content, mode, mtime, link target); returns the
 * number of regular files compared. */
static size_t compare_tree(cio_io io, cio_dir a, cio_dir b)
{
    size_t files = 0;
    unsigned char rbuf[4096];
    cio_dir_reader r;
    cio_dir_reader_init(&r, a, rbuf, sizeof rbuf);
    cio_dir_entry e[32];
    size_t n;
    do {
        assert_ok(cio_dir_read(io, &r, e, 32, &n));
        for (size_t i = 0; i < n; i++) {
            const char *name = e[i].name;
            cio_stat sa, sb;
            assert_ok(cio_dir_stat_file(io, a, name, CIO_STAT_NO_FOLLOW, &sa));
            cio_err err = cio_dir_stat_file(io, b, name, CIO_STAT_NO_FOLLOW, &sb);
            if (err != CIO_OK)
                fail_msg("%s: missing in the copy (%s)", name, cio_err_name(err));
            assert_int_equal(sa.kind, sb.kind);
            if (have_perms() && sa.kind != CIO_FILE_KIND_SYM_LINK && sa.mode != sb.mode)
                fail_msg("%s: mode %o, copy %o", name, (unsigned)sa.mode, (unsigned)sb.mode);
            check_mtime(name, &sa, &sb);
            if (sa.kind == CIO_FILE_KIND_FILE) {
                assert_int_equal(sa.size, sb.size);
                size_t la, lb;
                unsigned char *ca = get_file(io, a, name, &la);
                unsigned char *cb = get_file(io, b, name, &lb);
                assert_int_equal(la, lb);
                if (la > 0 && memcmp(ca, cb, la) != 0)
                    fail_msg("%s: contents differ", name);
                free(ca);
                free(cb);
                files++;
            } else if (sa.kind == CIO_FILE_KIND_SYM_LINK) {
                char ta[512], tb[512];
                size_t na, nb;
                assert_ok(cio_dir_read_link(io, a, name, ta, sizeof ta, &na));
                assert_ok(cio_dir_read_link(io, b, name, tb, sizeof tb, &nb));
                assert_int_equal(na, nb);
                assert_string_equal(ta, tb);
            } else if (sa.kind == CIO_FILE_KIND_DIRECTORY) {
                cio_dir da, db;
                assert_ok(cio_dir_open_dir(io, a, name, &iterate_opts, &da));
                assert_ok(cio_dir_open_dir(io, b, name, &iterate_opts, &db));
                files += compare_tree(io, da, db);
                cio_dir_close(io, db);
                cio_dir_close(io, da);
            }
        }
    } while (n > 0);
    return files;
}

static void test_copy_tree_equal(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    /* 10,000 files on Linux; a tenth where each file costs much more (Wine, WASI under Node, valgrind). */
#if defined(CIO_OS_LINUX)
    int dirs = under_valgrind() ? 2 : 10;
#else
    int dirs = 1;
#endif
    assert_ok(cio_dir_create_dir(io, fx.dir, "src", 0));
    cio_dir src;
    assert_ok(cio_dir_open_dir(io, fx.dir, "src", &iterate_opts, &src));
    double t0 = now_s(io);
    bool links = build_tree(io, src, dirs, 1000, 200000);
    double t1 = now_s(io);
    assert_ok(cio_dir_copy_tree(io, fx.dir, "src", fx.dir, "copy/of/src", NULL));
    double t2 = now_s(io);
    cio_dir dst;
    assert_ok(cio_dir_open_dir(io, fx.dir, "copy/of/src", &iterate_opts, &dst));
    size_t files = compare_tree(io, src, dst);
    assert_int_equal(files, (size_t)dirs * 1000);
    cio_stat sa, sb;
    assert_ok(cio_dir_stat(io, src, &sa));
    assert_ok(cio_dir_stat(io, dst, &sb));
    check_mtime("the root", &sa, &sb);
    size_t tmp;
    assert_int_equal(count_entries(io, dst, ".cio-atomic-", &tmp), (size_t)dirs + 1);
    assert_int_equal(tmp, 0);
    print_message("      %lu files%s: built in %.2f s, copied in %.2f s, compared in %.2f s\n", (unsigned long)files,
                  links ? " and links" : " (no symbolic links here)", t1 - t0, t2 - t1, now_s(io) - t2);
    /* Again over the copy: PathAlreadyExists, then replace succeeds. */
    assert_err(cio_dir_copy_tree(io, fx.dir, "src", fx.dir, "copy/of/src", NULL), CIO_E_PATH_ALREADY_EXISTS);
    cio_copy_tree_options rep = {.concurrency = 1, .replace = true};
    assert_ok(cio_dir_copy_tree(io, fx.dir, "src", fx.dir, "copy/of/src", &rep));
    cio_dir_close(io, dst);
    cio_dir_close(io, src);
    /* Fresh handles: a read directory handle stays at its end. */
    assert_ok(cio_dir_open_dir(io, fx.dir, "src", &iterate_opts, &src));
    assert_ok(cio_dir_open_dir(io, fx.dir, "copy/of/src", &iterate_opts, &dst));
    assert_int_equal(compare_tree(io, src, dst), files);
    cio_dir_close(io, dst);
    cio_dir_close(io, src);
    fx_close(&fx);
    if (!links)
        CIO_SKIP("the copy was checked without symbolic links, which this target cannot make");
}

typedef struct copy_ctx {
    cio_io io;
    cio_dir dir;
} copy_ctx;

static cio_err copy_task(void *p)
{
    copy_ctx *c = (copy_ctx *)p;
    return cio_dir_copy_tree(c->io, c->dir, "src", c->dir, "dst", NULL);
}

/* Every file in the copy equals its source (a partial one fails); returns how many there are. */
static size_t check_no_partial(cio_io io, cio_dir src, cio_dir dst, size_t *temps)
{
    size_t files = 0;
    unsigned char rbuf[4096];
    cio_dir_reader r;
    cio_dir_reader_init(&r, dst, rbuf, sizeof rbuf);
    cio_dir_entry e[32];
    size_t n;
    do {
        assert_ok(cio_dir_read(io, &r, e, 32, &n));
        for (size_t i = 0; i < n; i++) {
            if (strncmp(e[i].name, ".cio-atomic-", 12) == 0) {
                ++*temps;
                continue;
            }
            cio_stat st;
            assert_ok(cio_dir_stat_file(io, dst, e[i].name, CIO_STAT_NO_FOLLOW, &st));
            if (st.kind == CIO_FILE_KIND_DIRECTORY) {
                cio_dir s, d;
                assert_ok(cio_dir_open_dir(io, src, e[i].name, &iterate_opts, &s));
                assert_ok(cio_dir_open_dir(io, dst, e[i].name, &iterate_opts, &d));
                files += check_no_partial(io, s, d, temps);
                cio_dir_close(io, d);
                cio_dir_close(io, s);
            } else if (st.kind == CIO_FILE_KIND_FILE) {
                size_t la, lb;
                unsigned char *ca = get_file(io, src, e[i].name, &la);
                unsigned char *cb = get_file(io, dst, e[i].name, &lb);
                if (la != lb || (la > 0 && memcmp(ca, cb, la) != 0))
                    fail_msg("%s: a partial file in the canceled copy (%lu of %lu bytes)", e[i].name, (unsigned long)lb,
                             (unsigned long)la);
                free(ca);
                free(cb);
                files++;
            }
        }
    } while (n > 0);
    return files;
}

/* Whether a directory of the copy in `dir`/dst (d0..d3, made by build_tree) has an entry yet. */
static bool copy_in_flight(cio_io io, cio_dir dir)
{
    for (int d = 0; d < 4; d++) {
        char name[32];
        snprintf(name, sizeof name, "dst/d%d", d);
        cio_dir sub;
        if (cio_dir_open_dir(io, dir, name, &iterate_opts, &sub) != CIO_OK)
            continue;
        size_t n = count_entries(io, sub, "", NULL);
        cio_dir_close(io, sub);
        if (n > 0)
            return true;
    }
    return false;
}

static void test_copy_tree_canceled(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    assert_ok(cio_dir_create_dir(io, fx.dir, "src", 0));
    cio_dir src;
    assert_ok(cio_dir_open_dir(io, fx.dir, "src", &iterate_opts, &src));
    (void)build_tree(io, src, 4, 500, 1u << 20);
    copy_ctx c = {io, fx.dir};
    /* The cancel comes as soon as file jobs are seen in flight (a destination directory has an
     * entry: a file or its temporary), not after a fixed sleep: on tmpfs (a bare Debian's /tmp in
     * fresh-check) the 2,000 files were copied in about 30 ms, and a copy that ends before the
     * cancel returns Ok. If one still does (a stall between the look and the cancel), the copy is
     * deleted and the scenario runs again. */
    int attempt = 0;
    for (;;) {
        cio_future fut = {NULL, CIO_OK, 0};
        cio_err err = cio_concurrent(io, copy_task, &c, sizeof c, &fut);
        if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
            cio_dir_close(io, src);
            fx_close(&fx);
            CIO_SKIP("no concurrency here to cancel a copy in flight");
        }
        assert_ok(err);
        for (int i = 0; i < 5000 && !copy_in_flight(io, fx.dir); i++)
            assert_ok(cio_sleep(io, cio_timeout_ms(1)));
        err = cio_cancel(io, &fut);
        if (err == CIO_OK && ++attempt < 3) {
            print_message("      the copy ended before the cancel reached it; once more\n");
            assert_ok(cio_dir_delete_tree(io, fx.dir, "dst"));
            continue;
        }
        assert_err(err, CIO_E_CANCELED);
        break;
    }
    cio_dir dst;
    assert_ok(cio_dir_open_dir(io, fx.dir, "dst", &iterate_opts, &dst));
    size_t temps = 0;
    size_t files = check_no_partial(io, src, dst, &temps);
    print_message("      canceled in flight: %lu of 2000 files copied, %lu temporaries left\n", (unsigned long)files,
                  (unsigned long)temps);
    assert_true(files < 2000);
    assert_int_equal(temps, 0);
    cio_dir_close(io, dst);
    cio_dir_close(io, src);
    fx_close(&fx);
}

static void test_delete_tree(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    /* Outside the tree: a file and a directory the tree's links point to; they must survive. */
    put_file(io, fx.dir, "keep", "kept", 4);
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "keepdir/inner", 0, NULL));
    put_file(io, fx.dir, "keepdir/inner/x", "x", 1);
    assert_ok(cio_dir_create_dir_path(io, fx.dir, "t/a/b/c", 0, NULL));
    put_file(io, fx.dir, "t/a/one", "1", 1);
    put_file(io, fx.dir, "t/a/b/c/two", "22", 2);
    assert_ok(cio_dir_create_dir(io, fx.dir, "t/ro", 0));
    put_file(io, fx.dir, "t/ro/inside", "3", 1);
#if defined(CIO_OS_WASI)
    /* Node's WASI refuses a link target with "..", which is what points out of the tree. */
    bool links = false;
    const char *no_links = "links out of the tree: Node's WASI refuses a target with \"..\"";
#else
    bool links = true;
    const char *no_links = "checked without symbolic links, which this target cannot make";
    cio_err err = cio_dir_sym_link(io, fx.dir, "../../keep", "t/a/to_file", 0);
    if (err == CIO_E_OPERATION_UNSUPPORTED)
        links = false;
    else
        assert_ok(err);
#endif
    if (links) {
        assert_ok(cio_dir_sym_link(io, fx.dir, "../../keepdir", "t/a/to_dir", CIO_SYM_LINK_DIRECTORY));
        assert_ok(cio_dir_sym_link(io, fx.dir, "missing", "t/dangling", 0));
    }
    if (have_perms()) {
        assert_ok(cio_dir_set_file_permissions(io, fx.dir, "t/ro/inside", 0400, 0));
        assert_ok(cio_dir_set_file_permissions(io, fx.dir, "t/ro", 0500, 0));
    }
    assert_ok(cio_dir_delete_tree(io, fx.dir, "t"));
    cio_stat st;
    assert_err(cio_dir_stat_file(io, fx.dir, "t", CIO_STAT_NO_FOLLOW, &st), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_dir_stat_file(io, fx.dir, "keep", 0, &st));
    assert_ok(cio_dir_stat_file(io, fx.dir, "keepdir/inner/x", 0, &st));
    /* A missing path is fine; a single file or link is deleted. */
    assert_ok(cio_dir_delete_tree(io, fx.dir, "t"));
    if (links) {
        assert_ok(cio_dir_sym_link(io, fx.dir, "keepdir", "dirlink", CIO_SYM_LINK_DIRECTORY));
        assert_ok(cio_dir_delete_tree(io, fx.dir, "dirlink"));
        assert_ok(cio_dir_stat_file(io, fx.dir, "keepdir/inner/x", 0, &st));
    }
    assert_ok(cio_dir_delete_tree(io, fx.dir, "keep"));
    assert_err(cio_dir_stat_file(io, fx.dir, "keep", 0, &st), CIO_E_FILE_NOT_FOUND);
    fx_close(&fx);
    if (!links)
        CIO_SKIP(no_links);
}

/* ---- ANSI escape codes -------------------------------------------------------------------------------------- */

static void set_env(const char *name, const char *value)
{
#if defined(CIO_OS_WINDOWS)
    _putenv_s(name, value == NULL ? "" : value);
#else
    if (value == NULL)
        unsetenv(name);
    else
        setenv(name, value, 1);
#endif
}

static void test_ansi_escape_codes(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_file f;
    assert_ok(cio_dir_create_file(io, fx.dir, "plain", NULL, &f));
    bool yes = true;
    assert_ok(cio_file_supports_ansi_escape_codes(io, f, &yes));
    assert_false(yes);
    assert_err(cio_file_enable_ansi_escape_codes(io, f), CIO_E_NOT_TERMINAL_DEVICE);
    set_env("NO_COLOR", NULL);
    set_env("CLICOLOR_FORCE", NULL);
    assert_int_equal(cio_tty_config_detect(io, f), CIO_TTY_NO_COLOR);
    set_env("CLICOLOR_FORCE", "1");
    assert_int_equal(cio_tty_config_detect(io, f), CIO_TTY_ESCAPE_CODES);
    set_env("NO_COLOR", "1");
    assert_int_equal(cio_tty_config_detect(io, f), CIO_TTY_NO_COLOR);
    set_env("NO_COLOR", NULL);
    set_env("CLICOLOR_FORCE", NULL);
    cio_file_close(io, f);
    fx_close(&fx);
#if defined(CIO_OS_WINDOWS) || defined(CIO_OS_WASI)
    CIO_SKIP("no pseudo-terminal to check the terminal side here (checked: a file, NO_COLOR, CLICOLOR_FORCE)");
#else
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        CIO_SKIP("no pseudo-terminals here (posix_openpt)");
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    assert_true(slave >= 0);
    cio_file pty = {slave};
    assert_ok(cio_file_supports_ansi_escape_codes(io, pty, &yes));
    assert_true(yes);
    assert_ok(cio_file_enable_ansi_escape_codes(io, pty));
    assert_int_equal(cio_tty_config_detect(io, pty), CIO_TTY_ESCAPE_CODES);
    set_env("NO_COLOR", "yes");
    assert_int_equal(cio_tty_config_detect(io, pty), CIO_TTY_NO_COLOR);
    set_env("NO_COLOR", NULL);
    close(slave);
    close(master);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_make_path_edges), CIO_TESTS(test_copy_tree_equal),   CIO_TESTS(test_copy_tree_canceled),
        CIO_TESTS(test_delete_tree),     CIO_TESTS(test_ansi_escape_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
