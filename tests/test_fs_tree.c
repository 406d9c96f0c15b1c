/*
 * Whole files and trees (cio/fs_tree.h) on every backend: file-to-file copies (streaming and
 * positional), atomic files (link, replace, discard, a process killed before link, a reader racing
 * replace), mkdir -p's edges, copy_tree of a 10,000-file tree compared with its source, a canceled
 * copy_tree, delete_tree over links and read-only directories, ANSI escape codes and NO_COLOR.
 *
 * Each test works in a fresh temporary directory and removes it with cio_dir_delete_tree. What a
 * target lacks skips with the reason: fork (Windows, WASI), concurrency (WASI), symbolic links
 * (Wine 8), permission bits (WASI), pseudo-terminals.
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

typedef struct fixture {
    cio_io io;
    char path[300];
    cio_dir dir;
} fixture;

static const cio_open_dir_options iterate_opts = {true, false};

static void fx_open(void **state, fixture *fx)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-tree"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, &iterate_opts, &fx->dir));
}

static void fx_close(fixture *fx)
{
    cio_dir_close(fx->io, fx->dir);
    assert_ok(cio_dir_delete_tree(fx->io, cio_dir_cwd(), fx->path));
    cio_stat st;
    assert_err(cio_dir_stat_file(fx->io, cio_dir_cwd(), fx->path, CIO_STAT_NO_FOLLOW, &st), CIO_E_FILE_NOT_FOUND);
}

#if defined(CIO_OS_LINUX)
static bool under_valgrind(void)
{
    const char *v = getenv("CIO_TEST_VALGRIND");
    return v != NULL && v[0] == '1';
}
#endif

static double now_s(cio_io io)
{
    return (double)cio_now(io, CIO_CLOCK_AWAKE).ns / 1e9;
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)((i * 131u + seed * 7u + i / 253u) & 0xff);
}

static void put_file(cio_io io, cio_dir dir, const char *name, const void *data, size_t len)
{
    cio_file f;
    assert_ok(cio_dir_create_file(io, dir, name, NULL, &f));
    assert_ok(cio_file_write_all(io, f, data, len));
    cio_file_close(io, f);
}

/* The whole file into a heap buffer (*len its size). */
static unsigned char *get_file(cio_io io, cio_dir dir, const char *name, size_t *len)
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
static size_t count_entries(cio_io io, cio_dir dir, const char *prefix, size_t *with_prefix)
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

#if defined(HAVE_FORK)
/* Deletes everything in the directory at `path` (not the directory). */
static void empty_out(cio_io io, const char *path)
{
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), path, &iterate_opts, &d));
    unsigned char buf[4096];
    cio_dir_reader r;
    cio_dir_reader_init(&r, d, buf, sizeof buf);
    cio_dir_entry e[32];
    size_t n;
    do {
        assert_ok(cio_dir_read(io, &r, e, 32, &n));
        for (size_t i = 0; i < n; i++)
            assert_ok(cio_dir_delete_tree(io, d, e[i].name));
    } while (n > 0);
    cio_dir_close(io, d);
}
#endif

/* ---- file to file ------------------------------------------------------------------------------------------- */

#define SRC_LEN (300u * 1024u + 77u)

static void test_write_file_streaming(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    unsigned char *data = (unsigned char *)malloc(SRC_LEN);
    fill(data, SRC_LEN, 1);
    put_file(io, fx.dir, "src", data, SRC_LEN);
    cio_file in, out;
    assert_ok(cio_dir_open_file(io, fx.dir, "src", NULL, &in));
    assert_ok(cio_dir_create_file(io, fx.dir, "dst", NULL, &out));
    uint64_t n = 0;
    /* All of it from 0, then 5000 bytes from 1000 after it: out's position moves on. */
    assert_ok(cio_file_write_file_streaming(io, out, in, 0, UINT64_MAX, &n));
    assert_int_equal(n, SRC_LEN);
    assert_ok(cio_file_write_file_streaming(io, out, in, 1000, 5000, &n));
    assert_int_equal(n, 5000);
    uint64_t pos;
    assert_ok(cio_file_position(io, out, &pos));
    assert_int_equal(pos, SRC_LEN + 5000);
    /* From past the end: nothing. in's own position never moved. */
    assert_ok(cio_file_write_file_streaming(io, out, in, SRC_LEN + 10, 100, &n));
    assert_int_equal(n, 0);
    assert_ok(cio_file_position(io, in, &pos));
    assert_int_equal(pos, 0);
    cio_file_close(io, out);
    cio_file_close(io, in);
    size_t len;
    unsigned char *got = get_file(io, fx.dir, "dst", &len);
    assert_int_equal(len, SRC_LEN + 5000);
    assert_memory_equal(got, data, SRC_LEN);
    assert_memory_equal(got + SRC_LEN, data + 1000, 5000);
    free(got);
    free(data);
    fx_close(&fx);
}

static void test_write_file_positional(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    unsigned char *data = (unsigned char *)malloc(SRC_LEN);
    fill(data, SRC_LEN, 2);
    put_file(io, fx.dir, "src", data, SRC_LEN);
    cio_file in, out;
    assert_ok(cio_dir_open_file(io, fx.dir, "src", NULL, &in));
    cio_create_file_options rw = CIO_CREATE_FILE_DEFAULTS;
    rw.read = true;
    assert_ok(cio_dir_create_file(io, fx.dir, "dst", &rw, &out));
    uint64_t n = 0;
    assert_ok(cio_file_write_file_positional(io, out, 4096, in, 1000, 70000, &n));
    assert_int_equal(n, 70000);
    /* A range that runs past the end of in stops there. */
    assert_ok(cio_file_write_file_positional(io, out, 100000, in, SRC_LEN - 10, 1000, &n));
    assert_int_equal(n, 10);
    uint64_t pos, len64;
    assert_ok(cio_file_position(io, out, &pos));
    assert_int_equal(pos, 0);
    assert_ok(cio_file_length(io, out, &len64));
    assert_int_equal(len64, 100010);
    unsigned char *buf = (unsigned char *)malloc(100010);
    size_t got = 0;
    assert_ok(cio_file_read_positional(io, out, buf, 100010, 0, &got));
    assert_int_equal(got, 100010);
    for (size_t i = 0; i < 4096; i++)
        assert_int_equal(buf[i], 0); /* the hole before out_offset */
    assert_memory_equal(buf + 4096, data + 1000, 70000);
    assert_memory_equal(buf + 100000, data + SRC_LEN - 10, 10);
    assert_err(cio_file_write_file_positional(io, out, UINT64_MAX, in, 0, 10, &n), CIO_E_INVALID_ARGUMENT);
    free(buf);
    cio_file_close(io, out);
    cio_file_close(io, in);
    free(data);
    fx_close(&fx);
}

/* ---- atomic files ------------------------------------------------------------------------------------------- */

static void test_atomic_link(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_create_file_atomic_options o = {.permissions = 0640, .make_path = true};
    cio_file_atomic af;
    assert_ok(cio_dir_create_file_atomic(io, fx.dir, "sub/deeper/cfg", &o, &af));
    assert_ok(cio_file_write_all(io, af.file, "new contents", 12));
    cio_stat st;
    /* Nothing at the destination before link. */
    assert_err(cio_dir_stat_file(io, fx.dir, "sub/deeper/cfg", 0, &st), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_file_atomic_link(io, &af));
    cio_file_atomic_discard(io, &af);
    size_t len;
    unsigned char *got = get_file(io, fx.dir, "sub/deeper/cfg", &len);
    assert_int_equal(len, 12);
    assert_memory_equal(got, "new contents", 12);
    free(got);
    cio_dir sub;
    assert_ok(cio_dir_open_dir(io, fx.dir, "sub/deeper", &iterate_opts, &sub));
    size_t tmp;
    assert_int_equal(count_entries(io, sub, ".cio-atomic-", &tmp), 1);

    /* link refuses an existing destination and leaves it as it was; discard leaves no temporary. */
    assert_ok(cio_dir_create_file_atomic(io, sub, "cfg", NULL, &af));
    assert_ok(cio_file_write_all(io, af.file, "other", 5));
    assert_err(cio_file_atomic_link(io, &af), CIO_E_PATH_ALREADY_EXISTS);
    cio_file_atomic_discard(io, &af);
    got = get_file(io, sub, "cfg", &len);
    assert_int_equal(len, 12);
    free(got);
    assert_int_equal(count_entries(io, sub, ".cio-atomic-", &tmp), 1);

    /* Without make_path a missing parent is FileNotFound; discard of a failed create is harmless. */
    assert_err(cio_dir_create_file_atomic(io, fx.dir, "nope/cfg", NULL, &af), CIO_E_FILE_NOT_FOUND);
    cio_file_atomic_discard(io, &af);
    assert_err(cio_dir_create_file_atomic(io, fx.dir, "sub/", NULL, &af), CIO_E_BAD_PATH_NAME);
    cio_dir_close(io, sub);
    fx_close(&fx);
}

static void test_atomic_discard(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    for (int replace = 0; replace < 2; replace++) {
        cio_create_file_atomic_options o = {.replace = replace != 0};
        cio_file_atomic af;
        assert_ok(cio_dir_create_file_atomic(io, fx.dir, "x", &o, &af));
        assert_ok(cio_file_write_all(io, af.file, "abandoned", 9));
        cio_file_atomic_discard(io, &af);
        assert_int_equal(count_entries(io, fx.dir, "", NULL), 0);
    }
    fx_close(&fx);
}

#if defined(HAVE_FORK)
/* The child: an atomic file written and then the process killed before link/replace. */
static void crash_child(const char *dir_path, bool replace)
{
    cio_threaded *t = NULL;
    if (cio_threaded_create(NULL, &t) != CIO_OK)
        _exit(2);
    cio_io io = cio_threaded_io(t);
    cio_dir dir;
    if (cio_dir_open_dir(io, cio_dir_cwd(), dir_path, NULL, &dir) != CIO_OK)
        _exit(3);
    cio_create_file_atomic_options o = {.replace = replace};
    cio_file_atomic af;
    if (cio_dir_create_file_atomic(io, dir, "precious", &o, &af) != CIO_OK)
        _exit(4);
    static unsigned char block[65536];
    memset(block, 'z', sizeof block);
    for (int i = 0; i < 16; i++)
        if (cio_file_write_all(io, af.file, block, sizeof block) != CIO_OK)
            _exit(5);
    kill(getpid(), SIGKILL); /* between write and link */
    _exit(6);
}
#endif

static void test_atomic_crash_before_link(void **state)
{
#if !defined(HAVE_FORK)
    (void)state;
    CIO_SKIP("no fork here to kill a writer between write and link (Windows, WASI)");
#else
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    for (int replace = 0; replace < 2; replace++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            crash_child(fx.path, replace != 0);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
            fail_msg("child (replace %d) ended with status %#x, not killed by SIGKILL", replace, status);
        cio_stat st;
        assert_err(cio_dir_stat_file(io, fx.dir, "precious", CIO_STAT_NO_FOLLOW, &st), CIO_E_FILE_NOT_FOUND);
        size_t tmp;
        size_t all = count_entries(io, fx.dir, ".cio-atomic-", &tmp);
        /* Only a named temporary may stay (replace, or no O_TMPFILE here); it is never the destination. */
        assert_int_equal(all, tmp);
        print_message("      replace %d: %lu entries left (named temporaries)\n", replace, (unsigned long)all);
#if defined(CIO_OS_LINUX)
        if (!replace && all != 0)
            print_message("      note: no O_TMPFILE on this file system (a named temporary stayed)\n");
#endif
        empty_out(io, fx.path);
    }
    fx_close(&fx);
#endif
}

#define CFG_LEN (256u * 1024u)

typedef struct reader_ctx {
    cio_io io;
    cio_dir dir;
    atomic_int *stop;
    atomic_int *reads;
    atomic_int *bad;
} reader_ctx;

static cio_err reader_task(void *p)
{
    reader_ctx *c = (reader_ctx *)p;
    unsigned char *buf = (unsigned char *)malloc(CFG_LEN + 1);
    while (!atomic_load(c->stop)) {
        cio_file f;
        cio_err err = cio_dir_open_file(c->io, c->dir, "cfg", NULL, &f);
        if (err != CIO_OK) {
            atomic_fetch_add(c->bad, 1); /* the name must always be there */
            continue;
        }
        size_t n = 0;
        err = cio_file_read_all(c->io, f, buf, CFG_LEN + 1, &n);
        cio_file_close(c->io, f);
        bool uniform = err == CIO_OK && n == CFG_LEN;
        for (size_t i = 1; uniform && i < n; i++)
            uniform = buf[i] == buf[0];
        if (!uniform)
            atomic_fetch_add(c->bad, 1);
        atomic_fetch_add(c->reads, 1);
    }
    free(buf);
    return CIO_OK;
}

#if defined(CIO_OS_WINDOWS)
static int replace_refusals;
#endif

static void replace_once(cio_io io, cio_dir dir, unsigned char byte, unsigned char *block)
{
    cio_create_file_atomic_options o = {.replace = true};
    cio_file_atomic af;
    assert_ok(cio_dir_create_file_atomic(io, dir, "cfg", &o, &af));
    memset(block, byte, CFG_LEN);
    for (size_t off = 0; off < CFG_LEN; off += 4096) /* many small writes: a torn file would show */
        assert_ok(cio_file_write_all(io, af.file, block + off, 4096));
    cio_err err = cio_file_atomic_replace(io, &af);
#if defined(CIO_OS_WINDOWS)
    /* NT's rename (without POSIX semantics) refuses to replace a file another handle has open:
     * AccessDenied while the reader holds it; replace may be called again (the temporary stays). */
    for (int i = 0; i < 1000 && err == CIO_E_ACCESS_DENIED; i++) {
        replace_refusals++;
        assert_ok(cio_sleep(io, cio_timeout_ms(1)));
        err = cio_file_atomic_replace(io, &af);
    }
#endif
    assert_ok(err);
    cio_file_atomic_discard(io, &af);
}

static void test_atomic_replace_reader(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    unsigned char *block = (unsigned char *)malloc(CFG_LEN);
    replace_once(io, fx.dir, 'A', block);
    atomic_int stop = 0, reads = 0, bad = 0;
    reader_ctx c = {io, fx.dir, &stop, &reads, &bad};
    cio_future fut = {NULL, CIO_OK, 0};
    cio_err err = cio_concurrent(io, reader_task, &c, sizeof c, &fut);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        free(block);
        fx_close(&fx);
        CIO_SKIP("no concurrency here for a reader beside the writer");
    }
    assert_ok(err);
    int rounds = 0;
    double t0 = now_s(io);
    while (rounds < 300 && (atomic_load(&reads) < 50 || rounds < 50) && now_s(io) - t0 < 20.0)
        replace_once(io, fx.dir, (unsigned char)('A' + (++rounds % 26)), block);
    atomic_store(&stop, 1);
    assert_ok(cio_await(io, &fut));
    print_message("      %d replaces, %d reads, %d torn or missing\n", rounds, atomic_load(&reads), atomic_load(&bad));
#if defined(CIO_OS_WINDOWS)
    print_message("      %d replaces refused while the reader had the file open (NT rename)\n", replace_refusals);
#endif
    assert_int_equal(atomic_load(&bad), 0);
    assert_true(atomic_load(&reads) > 0);
    size_t tmp;
    assert_int_equal(count_entries(io, fx.dir, ".cio-atomic-", &tmp), 1);
    free(block);
    fx_close(&fx);
}

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
    cio_future fut = {NULL, CIO_OK, 0};
    cio_err err = cio_concurrent(io, copy_task, &c, sizeof c, &fut);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_dir_close(io, src);
        fx_close(&fx);
        CIO_SKIP("no concurrency here to cancel a copy in flight");
    }
    assert_ok(err);
    assert_ok(cio_sleep(io, cio_timeout_ms(30)));
    err = cio_cancel(io, &fut);
    assert_err(err, CIO_E_CANCELED);
    cio_dir dst;
    assert_ok(cio_dir_open_dir(io, fx.dir, "dst", &iterate_opts, &dst));
    size_t temps = 0;
    size_t files = check_no_partial(io, src, dst, &temps);
    print_message("      canceled after 30 ms: %lu of 2000 files copied, %lu temporaries left\n", (unsigned long)files,
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
        CIO_TESTS(test_write_file_streaming),
        CIO_TESTS(test_write_file_positional),
        CIO_TESTS(test_atomic_link),
        CIO_TESTS(test_atomic_discard),
        CIO_TESTS(test_atomic_crash_before_link),
        CIO_TESTS(test_atomic_replace_reader),
        CIO_TESTS(test_make_path_edges),
        CIO_TESTS(test_copy_tree_equal),
        CIO_TESTS(test_copy_tree_canceled),
        CIO_TESTS(test_delete_tree),
        CIO_TESTS(test_ansi_escape_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
