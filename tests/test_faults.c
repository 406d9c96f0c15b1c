/*
 * Fault injection through the OS call table (spec/oscalls.yaml -> platform/internal/cio_oscalls*):
 * every call site the Threaded backend routes gets its faults here, injected at that one site:
 * EINTR storms (retried transparently; a cancel during an endless storm still cancels), the errors
 * the OS can give there (the exact mapped cio error), short transfers (the *_all loops complete),
 * EMFILE/ENFILE (no descriptor leaks), ENOMEM and thread-creation failure (async degrades to
 * inline, concurrent says CIO_E_CONCURRENCY_UNAVAILABLE).
 *
 * Every case checks that the fault really reached its site (the injector's counters), the exact
 * error, the data (read back), and that the process has as many descriptors and threads afterwards
 * as before (/proc/self/fd, /proc/self/task; heap blocks: LeakSanitizer in the sanitize run). A case
 * that passes prints "fault-covered: <call@site> <fault>"; build.py collects those lines into
 * build/fault-report.md against the full list of sites (platform/internal/callsites.tsv), naming
 * every site no case covers.
 *
 * Each case works in a fresh directory under /tmp; the table is reset before and after each case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "internal/cio_oscalls_test.h"

#define assert_err(expr, want)                                                                          \
    do {                                                                                                \
        cio_err got_ = (expr);                                                                          \
        cio_err want_ = (want);                                                                         \
        if (got_ != want_)                                                                              \
            fail_msg("%s: got %s, want %s", #expr, cio_err_name(got_), cio_err_name(want_));            \
    } while (0)
#define assert_ok(expr) assert_err((expr), CIO_OK)

/* ---- counting descriptors and threads --------------------------------------------------------- */

static int count_dir(const char *path)
{
#if defined(CIO_OS_LINUX)
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* opendir's own descriptor (or nothing, for task/) is not the program's */
#else
    (void)path;
    return 0; /* no /proc: nothing to compare */
#endif
}

static int fd_count(void)
{
    return count_dir("/proc/self/fd");
}

#if defined(CIO_OS_LINUX)
/* The program's threads (opendir's descriptor is not in task/: add back the one count_dir drops). */
static int thread_count(void)
{
    return count_dir("/proc/self/task") + 1;
}
#endif

/* Sleeps without going through cio (the table may be storming at cio's sleep). */
static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* A passing case names what it covered (build.py reads these lines). The fault must have been
 * injected at that site. */
static void covered(const char *site, const char *fault)
{
    if (cio__fault_injected(site) == 0)
        fail_msg("%s: the %s fault was never injected (the operation did not reach the site)", site, fault);
    print_message("fault-covered: %s %s\n", site, fault);
}

/* ---- the fixture: a fresh directory with a few files --------------------------------------------- */

#define DATA_LEN 20000
static unsigned char data[DATA_LEN];

typedef struct fx {
    cio_io io;
    char path[64];
    cio_dir dir;
    cio_file file; /* "f" opened read-write by cases that need it */
    bool file_open;
    cio_stream a, b; /* a connected TCP pair for the stream cases */
    cio_server server;
    cio_socket udp1, udp2;
    int fds, threads;
} fx;

#if defined(CIO_OS_WASI)
static char *wasi_mkdtemp(char *tmpl)
{
    size_t len = strlen(tmpl);
    for (int attempt = 0; attempt < 100; attempt++) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
        unsigned char r[6];
        if (getentropy(r, sizeof r) != 0)
            return NULL;
        for (size_t i = 0; i < 6; i++)
            tmpl[len - 6 + i] = chars[r[i] % (sizeof chars - 1)];
        if (mkdir(tmpl, 0700) == 0)
            return tmpl;
    }
    return NULL;
}
#define mkdtemp wasi_mkdtemp
#endif

static const cio_open_dir_options iterate_opts = {true, false};

static void write_file(fx *f, const char *name, size_t len)
{
    cio_file h;
    assert_ok(cio_dir_create_file(f->io, f->dir, name, NULL, &h));
    assert_ok(cio_file_write_all(f->io, h, data, len));
    cio_file_close(f->io, h);
}

/* The file's whole content, read back without any fault armed. */
static size_t read_back(fx *f, const char *name, unsigned char *buf, size_t cap)
{
    cio_file h;
    size_t n = 0;
    assert_ok(cio_dir_open_file(f->io, f->dir, name, NULL, &h));
    assert_ok(cio_file_read_all(f->io, h, buf, cap, &n));
    cio_file_close(f->io, h);
    return n;
}

static void fx_open(void **state, fx *f)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < DATA_LEN; i++)
        data[i] = (unsigned char)(i * 7 + i / 251);
    cio__fault_reset();
    f->io = cio_test_io(state);
    strcpy(f->path, "/tmp/cio-test-faults-XXXXXX");
    assert_non_null(mkdtemp(f->path));
    assert_ok(cio_dir_open_dir(f->io, cio_dir_cwd(), f->path, &iterate_opts, &f->dir));
    write_file(f, "f", 1000);
    assert_ok(cio_dir_create_dir(f->io, f->dir, "d", 0));
    f->fds = fd_count();
}

/* Removes what the cases leave (names are known) and the directory. */
static void fx_close(fx *f)
{
    cio__fault_reset();
    if (f->file_open)
        cio_file_close(f->io, f->file);
    static const char *const files[] = {"f", "g", "h", "new", "moved"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        (void)cio_dir_delete_file(f->io, f->dir, files[i]);
    static const char *const dirs[] = {"d/e", "d", "d2", "e"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        (void)cio_dir_delete_dir(f->io, f->dir, dirs[i]);
    cio_dir_close(f->io, f->dir);
    assert_ok(cio_dir_delete_dir(f->io, cio_dir_cwd(), f->path));
}

/* ---- file system cases: one operation per site ---------------------------------------------------
 * prep (no fault armed) -> arm -> run (the operation; returns its error) -> reset -> check (reads
 * back what run did; err is run's result). */

typedef struct fs_case {
    const char *site;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*check)(fx *f, cio_err err);
} fs_case;

static void prep_open_rw(fx *f)
{
    static const cio_open_file_options rw = {CIO_OPEN_READ_WRITE, false, false};
    assert_ok(cio_dir_open_file(f->io, f->dir, "f", &rw, &f->file));
    f->file_open = true;
}

static void prep_none(fx *f)
{
    (void)f;
}

static void check_none(fx *f, cio_err err)
{
    (void)f;
    (void)err;
}

static cio_err run_open_file(fx *f)
{
    cio_file h;
    cio_err err = cio_dir_open_file(f->io, f->dir, "f", NULL, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

static cio_err run_open_file_no_dir(fx *f)
{
    static const cio_open_file_options o = {CIO_OPEN_READ_ONLY, false, true}; /* forbid_directory: fstat */
    cio_file h;
    cio_err err = cio_dir_open_file(f->io, f->dir, "f", &o, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

static cio_err run_create_file(fx *f)
{
    cio_file h;
    cio_err err = cio_dir_create_file(f->io, f->dir, "new", NULL, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

static void check_created(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "new", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
}

static cio_err run_open_dir(fx *f)
{
    cio_dir d;
    cio_err err = cio_dir_open_dir(f->io, f->dir, "d", NULL, &d);
    if (err == CIO_OK)
        cio_dir_close(f->io, d);
    return err;
}

static cio_err run_create_dir(fx *f)
{
    return cio_dir_create_dir(f->io, f->dir, "e", 0);
}

static void check_dir_made(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "e", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
}

static cio_err run_stat_file(fx *f)
{
    cio_stat st;
    cio_err err = cio_dir_stat_file(f->io, f->dir, "f", 0, &st);
    if (err == CIO_OK && st.size != 1000)
        fail_msg("stat: size %llu, want 1000", (unsigned long long)st.size);
    return err;
}

static cio_err run_rename(fx *f)
{
    return cio_dir_rename(f->io, f->dir, "f", f->dir, "moved");
}

static void check_renamed(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "moved", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_stat_file(f->io, f->dir, "f", 0, &st), err == CIO_OK ? CIO_E_FILE_NOT_FOUND : CIO_OK);
}

static cio_err run_delete_file(fx *f)
{
    return cio_dir_delete_file(f->io, f->dir, "f");
}

static void check_deleted(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "f", 0, &st), err == CIO_OK ? CIO_E_FILE_NOT_FOUND : CIO_OK);
}

static cio_err run_delete_dir(fx *f)
{
    return cio_dir_delete_dir(f->io, f->dir, "d");
}

static void check_dir_deleted(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "d", 0, &st), err == CIO_OK ? CIO_E_FILE_NOT_FOUND : CIO_OK);
}

static cio_err run_access(fx *f)
{
    return cio_dir_access(f->io, f->dir, "f", CIO_ACCESS_READ);
}

static cio_err run_read_all(fx *f)
{
    unsigned char buf[1200];
    size_t n = 0;
    cio_err err = cio_file_read_all(f->io, f->file, buf, sizeof buf, &n);
    if (err == CIO_OK && (n != 1000 || memcmp(buf, data, 1000) != 0))
        fail_msg("read_all: %zu bytes or different data", n);
    return err;
}

static cio_err run_write_all(fx *f)
{
    return cio_file_write_all(f->io, f->file, data, DATA_LEN);
}

static void check_written(fx *f, cio_err err)
{
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(f, "f", buf, sizeof buf);
    if (err == CIO_OK) {
        assert_int_equal(n, DATA_LEN);
        assert_memory_equal(buf, data, DATA_LEN);
    } else {
        assert_int_equal(n, 1000); /* nothing of it: the 1000 bytes of before */
        assert_memory_equal(buf, data, 1000);
    }
}

static cio_err run_read_positional(fx *f)
{
    unsigned char buf[600];
    size_t done = 0;
    while (done < sizeof buf) {
        size_t n = 0;
        cio_err err = cio_file_read_positional(f->io, f->file, buf + done, sizeof buf - done, 100 + done, &n);
        if (err != CIO_OK)
            return err;
        if (n == 0)
            fail_msg("read_positional: end of file at %zu", done);
        done += n;
    }
    assert_memory_equal(buf, data + 100, sizeof buf);
    return CIO_OK;
}

static cio_err run_write_positional(fx *f)
{
    size_t done = 0;
    while (done < DATA_LEN) {
        size_t n = 0;
        cio_err err = cio_file_write_positional(f->io, f->file, data + done, DATA_LEN - done, done, &n);
        if (err != CIO_OK)
            return err;
        done += n;
    }
    return CIO_OK;
}

static void check_written_positional(fx *f, cio_err err)
{
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(f, "f", buf, sizeof buf);
    assert_int_equal(n, err == CIO_OK ? DATA_LEN : 1000);
    assert_memory_equal(buf, data, n);
}

static cio_err run_seek(fx *f)
{
    cio_err err = cio_file_seek_to(f->io, f->file, 500);
    if (err != CIO_OK)
        return err;
    unsigned char b;
    size_t n;
    assert_ok(cio_file_read_streaming(f->io, f->file, &b, 1, &n));
    assert_int_equal(n, 1);
    assert_int_equal(b, data[500]);
    return CIO_OK;
}

static cio_err run_set_length(fx *f)
{
    return cio_file_set_length(f->io, f->file, 10);
}

static void check_length(fx *f, cio_err err)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(f->io, f->dir, "f", 0, &st));
    assert_int_equal(st.size, err == CIO_OK ? 10 : 1000);
}

static cio_err run_sync(fx *f)
{
    return cio_file_sync(f->io, f->file);
}

static cio_err run_file_stat(fx *f)
{
    cio_stat st;
    cio_err err = cio_file_stat(f->io, f->file, &st);
    if (err == CIO_OK)
        assert_int_equal(st.size, 1000);
    return err;
}

static cio_err run_set_timestamps(fx *f)
{
    cio_set_timestamps ts;
    memset(&ts, 0, sizeof ts);
    ts.access_action = CIO_TIMESTAMP_SET;
    ts.access.ns = INT64_C(1000000000) * 1000000;
    ts.modify_action = CIO_TIMESTAMP_SET;
    ts.modify.ns = INT64_C(1000000000) * 2000000;
    return cio_file_set_timestamps(f->io, f->file, &ts);
}

static void check_timestamps(fx *f, cio_err err)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(f->io, f->dir, "f", 0, &st));
    if (err == CIO_OK)
        assert_true(st.mtime.ns == INT64_C(1000000000) * 2000000);
    else
        assert_true(st.mtime.ns != INT64_C(1000000000) * 2000000);
}

static void prep_many(fx *f)
{
    char name[16];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "d/x%02d", i);
        write_file(f, name, 1);
    }
}

static cio_err iterate(fx *f, unsigned *seen)
{
    cio_dir d;
    cio_err err = cio_dir_open_dir(f->io, f->dir, "d", &iterate_opts, &d);
    if (err != CIO_OK)
        return err;
    _Alignas(8) unsigned char buf[1024];
    cio_dir_reader r;
    cio_dir_reader_init(&r, d, buf, sizeof buf);
    *seen = 0;
    for (;;) {
        cio_dir_entry e[4];
        size_t n = 0;
        err = cio_dir_read(f->io, &r, e, 4, &n);
        if (err != CIO_OK || n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            unsigned k = (unsigned)atoi(e[i].name + 1);
            if (e[i].name[0] != 'x' || k >= 20 || (*seen & (1u << k)))
                fail_msg("dir_read: unexpected or repeated entry %s", e[i].name);
            *seen |= 1u << k;
        }
    }
    cio_dir_close(f->io, d);
    return err;
}

static cio_err run_iterate(fx *f)
{
    unsigned seen = 0;
    cio_err err = iterate(f, &seen);
    if (err == CIO_OK && seen != (1u << 20) - 1)
        fail_msg("dir_read: saw %#x, want every entry once", seen);
    return err;
}

static void check_many_cleanup(fx *f, cio_err err)
{
    (void)err;
    char name[16];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "d/x%02d", i);
        assert_ok(cio_dir_delete_file(f->io, f->dir, name));
    }
}

#if defined(CIO_OS_LINUX)
static cio_err run_exe_path(fx *f)
{
    char buf[4096];
    size_t n = 0;
    cio_err err = cio_process_executable_path(f->io, buf, sizeof buf, &n);
    if (err == CIO_OK)
        assert_true(n > 0 && buf[0] == '/');
    return err;
}
#endif

static void fs_fault(void **state, const char *site, char mode, int err, int count, size_t max, cio_err want,
                     const char *fault);

#if defined(CIO_OS_WASI)
static cio_err run_open_no_follow(fx *f)
{
    static const cio_open_file_options o = {CIO_OPEN_READ_ONLY, true, false}; /* no_follow_symlinks */
    cio_file h;
    cio_err err = cio_dir_open_file(f->io, f->dir, "f", &o, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

static cio_err run_set_now(fx *f)
{
    cio_set_timestamps ts;
    memset(&ts, 0, sizeof ts);
    ts.access_action = CIO_TIMESTAMP_UNCHANGED;
    ts.modify_action = CIO_TIMESTAMP_NOW;
    return cio_file_set_timestamps(f->io, f->file, &ts);
}

/* The WASI half's own calls: the entry stat (hosts that give no inode/kind) and the no-follow
 * check swallow their errors by design (the entry keeps inode 0 / kind Unknown; the open itself
 * reports); a clock that fails for UTIME_NOW leaves that time unchanged instead of handing the host
 * a value it rejects. */
static void test_wasi_fs_faults(void **state)
{
    fs_fault(state, "fstatat@wasi_check_no_follow", 'e', ENOMEM, 1, 0, CIO_OK, "ENOMEM");
    static const fs_case entry_stat = {"fstatat@wasi_entry_stat", prep_many, run_iterate, check_many_cleanup};
    fx f;
    fx_open(state, &f);
    entry_stat.prep(&f);
    assert_true(cio__fault_errno("fstatat@wasi_entry_stat", ENOENT, 0, -1) == 1);
    cio_err err = entry_stat.run(&f);
    unsigned hits = cio__fault_hits("fstatat@wasi_entry_stat");
    cio__sys_reset();
    assert_ok(err);
    entry_stat.check(&f, err);
    if (hits == 0) {
        fx_close(&f);
        CIO_SKIP("this host gives every entry its inode and kind: the entry stat is never made");
    }
    covered("fstatat@wasi_entry_stat", "ENOENT");
    fx_close(&f);
    static const fs_case now = {"clock_gettime@wasi_adjust_times", prep_open_rw, run_set_now, check_none};
    fx_open(state, &f);
    now.prep(&f);
    assert_true(cio__fault_errno(now.site, EINVAL, 0, 1) == 1);
    assert_ok(now.run(&f));
    cio__sys_reset();
    covered(now.site, "EINVAL");
    fx_close(&f);
}
#endif

static const fs_case fs_cases[] = {
    {"openat@open_file", prep_none, run_open_file, check_none},
    {"openat@create_file", prep_none, run_create_file, check_created},
    {"openat@open_dir", prep_none, run_open_dir, check_none},
    {"fstat@fstat_fd", prep_none, run_open_file_no_dir, check_none},
    {"mkdirat@mkdir_at", prep_none, run_create_dir, check_dir_made},
    {"fstatat@stat_at", prep_none, run_stat_file, check_none},
    {"renameat@rename", prep_none, run_rename, check_renamed},
    {"unlinkat@delete_file", prep_none, run_delete_file, check_deleted},
    {"unlinkat@delete_dir", prep_none, run_delete_dir, check_dir_deleted},
    {"faccessat@access", prep_none, run_access, check_none},
    {"readv@file_read_streaming", prep_open_rw, run_read_all, check_none},
    {"writev@file_write_streaming", prep_open_rw, run_write_all, check_written},
    {"preadv@file_read_positional", prep_open_rw, run_read_positional, check_none},
    {"pwritev@file_write_positional", prep_open_rw, run_write_positional, check_written_positional},
    {"lseek@file_seek", prep_open_rw, run_seek, check_none},
    {"ftruncate@file_set_length", prep_open_rw, run_set_length, check_length},
    {"fsync@file_sync", prep_open_rw, run_sync, check_none},
    {"fstat@fstat_fd", prep_open_rw, run_file_stat, check_none},
    {"futimens@file_set_timestamps", prep_open_rw, run_set_timestamps, check_timestamps},
#if defined(CIO_OS_LINUX)
    {"getdents64@read_dents", prep_many, run_iterate, check_many_cleanup},
    {"readlinkat@executable_path", prep_none, run_exe_path, check_none},
#endif
#if defined(CIO_OS_WASI)
    {"wasi_fd_readdir@readdir_call", prep_many, run_iterate, check_many_cleanup},
    {"fstatat@wasi_check_no_follow", prep_none, run_open_no_follow, check_none},
#endif
};

static const fs_case *fs_case_of(const char *site)
{
    for (size_t i = 0; i < sizeof fs_cases / sizeof fs_cases[0]; i++)
        if (strcmp(fs_cases[i].site, site) == 0)
            return &fs_cases[i];
    fail_msg("no file-system case for %s", site);
    return NULL;
}

/* The case of `site` with fault `mode`: 'e' errno err (count times, -1 forever), 's' short transfers
 * of at most `max` bytes. Checks the result, the data, the descriptors. */
static void fs_fault(void **state, const char *site, char mode, int err, int count, size_t max, cio_err want,
                     const char *fault)
{
    fx f;
    fx_open(state, &f);
    const fs_case *c = fs_case_of(site);
    c->prep(&f);
    int fds = fd_count();
    if (mode == 'e')
        assert_true(cio__fault_errno(site, err, 0, count) == 1);
    else
        assert_true(cio__fault_short(site, max, 0, count) == 1);
    cio_err got = c->run(&f);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (got != want)
        fail_msg("%s with %s: got %s, want %s", site, fault, cio_err_name(got), cio_err_name(want));
    if (mode == 'e' && count > 0 && injected != (unsigned)count)
        fail_msg("%s: %u faults injected, want %d", site, injected, count);
    c->check(&f, got);
    assert_int_equal(fd_count(), fds);
    covered(site, fault);
    fx_close(&f);
}

/* EINTR storms: 50 interruptions in a row, then the call succeeds. */
static void test_fs_eintr_storms(void **state)
{
    for (size_t i = 0; i < sizeof fs_cases / sizeof fs_cases[0]; i++) {
        if (strcmp(fs_cases[i].site, "readlinkat@executable_path") == 0 && access("/proc/self/exe", F_OK) != 0)
            continue;
        fs_fault(state, fs_cases[i].site, 'e', EINTR, 50, 0, CIO_OK, "EINTR");
    }
}

typedef struct fs_error_case {
    const char *site;
    int err;
    const char *name;
    cio_err want;
} fs_error_case;

#define E(site, e, want) {site, e, #e, want}

static const fs_error_case fs_errors[] = {
    E("openat@open_file", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("openat@open_file", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("openat@open_file", EACCES, CIO_E_ACCESS_DENIED),
    E("openat@create_file", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("openat@create_file", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("openat@create_file", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("openat@open_dir", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("openat@open_dir", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("fstat@fstat_fd", ENOMEM, CIO_E_SYSTEM_RESOURCES), /* open_file(forbid_directory): the fd is closed */
    E("mkdirat@mkdir_at", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("mkdirat@mkdir_at", EDQUOT, CIO_E_DISK_QUOTA),
    E("fstatat@stat_at", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("renameat@rename", EXDEV, CIO_E_CROSS_DEVICE),
    E("renameat@rename", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("unlinkat@delete_file", EBUSY, CIO_E_FILE_BUSY),
    E("unlinkat@delete_file", EROFS, CIO_E_READ_ONLY_FILE_SYSTEM),
    E("unlinkat@delete_dir", EBUSY, CIO_E_FILE_BUSY),
    E("faccessat@access", EROFS, CIO_E_READ_ONLY_FILE_SYSTEM),
    E("faccessat@access", EACCES, CIO_E_ACCESS_DENIED),
    E("readv@file_read_streaming", EIO, CIO_E_INPUT_OUTPUT),
    E("readv@file_read_streaming", EAGAIN, CIO_E_WOULD_BLOCK),
    E("writev@file_write_streaming", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("writev@file_write_streaming", EDQUOT, CIO_E_DISK_QUOTA),
    E("writev@file_write_streaming", EAGAIN, CIO_E_WOULD_BLOCK),
    E("preadv@file_read_positional", EIO, CIO_E_INPUT_OUTPUT),
    E("pwritev@file_write_positional", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("pwritev@file_write_positional", EFBIG, CIO_E_FILE_TOO_BIG),
    E("lseek@file_seek", ESPIPE, CIO_E_UNSEEKABLE),
    E("ftruncate@file_set_length", EFBIG, CIO_E_FILE_TOO_BIG),
    E("ftruncate@file_set_length", EIO, CIO_E_INPUT_OUTPUT),
    E("fsync@file_sync", EIO, CIO_E_INPUT_OUTPUT),
    E("fsync@file_sync", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("futimens@file_set_timestamps", EPERM, CIO_E_PERMISSION_DENIED),
#if defined(CIO_OS_LINUX)
    E("getdents64@read_dents", EACCES, CIO_E_ACCESS_DENIED),
    E("readlinkat@executable_path", EACCES, CIO_E_ACCESS_DENIED),
#endif
#if defined(CIO_OS_WASI)
    E("wasi_fd_readdir@readdir_call", EACCES, CIO_E_ACCESS_DENIED),
#endif
};

static void test_fs_errors(void **state)
{
    for (size_t i = 0; i < sizeof fs_errors / sizeof fs_errors[0]; i++) {
        const fs_error_case *c = &fs_errors[i];
        if (strcmp(c->site, "readlinkat@executable_path") == 0 && access("/proc/self/exe", F_OK) != 0)
            continue;
        fs_fault(state, c->site, 'e', c->err, 1, 0, c->want, c->name);
    }
}

/* Short reads and writes: every call moves at most 7 bytes (dir reads: 64-byte buffers); the loops
 * above the slots complete with the right data. */
static void test_fs_short_transfers(void **state)
{
    static const char *const sites[] = {
        "readv@file_read_streaming", "writev@file_write_streaming", "preadv@file_read_positional",
        "pwritev@file_write_positional",
    };
    for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++)
        fs_fault(state, sites[i], 's', 0, -1, 7, CIO_OK, "short");
#if defined(CIO_OS_LINUX)
    fs_fault(state, "getdents64@read_dents", 's', 0, -1, 64, CIO_OK, "short");
#endif
}

/* ENOSPC in the middle of cio_file_write_all: the first three writes get 4000 bytes each through,
 * the fourth fails. The exact error comes back, and the file holds those 12000 bytes exactly once. */
static _Atomic int enospc_calls;

static ssize_t writev_then_enospc(int fd, const struct iovec *iov, int iovcnt)
{
    if (atomic_fetch_add(&enospc_calls, 1) >= 3) {
        errno = ENOSPC;
        return -1;
    }
    struct iovec one = iov[0];
    (void)iovcnt;
    if (one.iov_len > 4000)
        one.iov_len = 4000;
    return (cio__sys_default.writev)(fd, &one, 1);
}

static ssize_t pwritev_then_enospc(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    if (atomic_fetch_add(&enospc_calls, 1) >= 3) {
        errno = ENOSPC;
        return -1;
    }
    struct iovec one = iov[0];
    (void)iovcnt;
    if (one.iov_len > 4000)
        one.iov_len = 4000;
    return (cio__sys_default.pwritev)(fd, &one, 1, offset);
}

static void test_fs_enospc_mid_write_all(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_file h;
    assert_ok(cio_dir_create_file(f.io, f.dir, "g", NULL, &h));
    atomic_store(&enospc_calls, 0);
    cio__sys_set(writev__file_write_streaming, writev_then_enospc);
    assert_err(cio_file_write_all(f.io, h, data, DATA_LEN), CIO_E_NO_SPACE_LEFT);
    cio__sys_reset();
    assert_int_equal(atomic_load(&enospc_calls), 4);
    cio_file_close(f.io, h);
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(&f, "g", buf, sizeof buf);
    assert_int_equal(n, 12000);
    assert_memory_equal(buf, data, 12000);
    print_message("fault-covered: writev@file_write_streaming ENOSPC-mid-write_all\n");

    /* the same through positional writes at an offset: bytes before the fault are where they belong */
    assert_ok(cio_dir_create_file(f.io, f.dir, "h", NULL, &h));
    atomic_store(&enospc_calls, 0);
    cio__sys_set(pwritev__file_write_positional, pwritev_then_enospc);
    size_t done = 0;
    cio_err err = CIO_OK;
    while (done < DATA_LEN && err == CIO_OK) {
        size_t w = 0;
        err = cio_file_write_positional(f.io, h, data + done, DATA_LEN - done, 100 + done, &w);
        done += w;
    }
    cio__sys_reset();
    assert_err(err, CIO_E_NO_SPACE_LEFT);
    assert_int_equal(done, 12000);
    cio_file_close(f.io, h);
    n = read_back(&f, "h", buf, sizeof buf);
    assert_int_equal(n, 12100);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(buf[i], 0);
    assert_memory_equal(buf + 100, data, 12000);
    print_message("fault-covered: pwritev@file_write_positional ENOSPC-mid-write\n");
    assert_int_equal(fd_count(), f.fds);
    fx_close(&f);
}

/* close: EINTR (and EIO) are reported after the descriptor is gone; cio never retries the close
 * (which could close a descriptor another thread just got) and loses no descriptor. */
static void test_fs_close(void **state)
{
    static const int errs[] = {EINTR, EIO};
    static const char *const names[] = {"EINTR", "EIO"};
    for (size_t i = 0; i < 2; i++) {
        fx f;
        fx_open(state, &f);
        cio_file h;
        assert_ok(cio_dir_open_file(f.io, f.dir, "f", NULL, &h));
#if defined(CIO_OS_LINUX)
        assert_int_equal(fd_count(), f.fds + 1);
#endif
        assert_true(cio__fault_errno("close@fs_close_fd", errs[i], 0, 1) == 1);
        cio_file_close(f.io, h);
        assert_int_equal(cio__fault_hits("close@fs_close_fd"), 1); /* not retried */
        cio__sys_reset();
        assert_int_equal(fd_count(), f.fds);
        covered("close@fs_close_fd", names[i]);
        fx_close(&f);
    }
}

/* A cancel during an endless EINTR storm still cancels: the task spins in the bracket until the
 * request arrives, then returns CIO_E_CANCELED. */
typedef struct storm_ctx {
    cio_io io;
    cio_file file;
    _Atomic int *started;
} storm_ctx;

static cio_err storm_read_task(void *p)
{
    storm_ctx *c = (storm_ctx *)p;
    atomic_store(c->started, 1);
    unsigned char b[16];
    size_t n;
    return cio_file_read_streaming(c->io, c->file, b, sizeof b, &n);
}

#if defined(CIO_OS_LINUX)
static cio_err storm_sleep_task(void *p)
{
    storm_ctx *c = (storm_ctx *)p;
    atomic_store(c->started, 1);
    return cio_sleep(c->io, cio_timeout_ms(60000));
}
#endif

static void cancel_during_storm(void **state, const char *site, cio_task_fn fn)
{
    fx f;
    fx_open(state, &f);
    CIO_REQUIRE_THREADS(f.io);
    cio_file h;
    assert_ok(cio_dir_open_file(f.io, f.dir, "f", NULL, &h));
    _Atomic int started = 0;
    storm_ctx c = {f.io, h, &started};
    assert_true(cio__fault_errno(site, EINTR, 0, -1) == 1);
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(f.io, fn, &c, sizeof c, &fut));
    while (atomic_load(&started) == 0 || cio__fault_injected(site) < 100)
        pause_ms(1); /* not cio_sleep: its own site may be the one storming */
    assert_err(cio_cancel(f.io, &fut), CIO_E_CANCELED);
    covered(site, "EINTR-storm+cancel");
    cio__sys_reset();
    cio_file_close(f.io, h);
    fx_close(&f);
}

static void test_cancel_during_eintr_storm(void **state)
{
    cancel_during_storm(state, "readv@file_read_streaming", storm_read_task);
#if defined(CIO_OS_LINUX)
    cancel_during_storm(state, "clock_nanosleep@sleep", storm_sleep_task);
#endif
}

/* ---- network (Linux) ------------------------------------------------------------------------------ */
#if defined(CIO_OS_LINUX)
#include <sys/socket.h>
#include <sys/un.h>

static void net_pair(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_listen(f->io, &lo, NULL, &f->server));
    assert_ok(cio_net_connect(f->io, &f->server.address, NULL, &f->a));
    assert_ok(cio_server_accept(f->io, &f->server, &f->b));
}

static void net_unpair(fx *f)
{
    cio_stream_close(f->io, &f->a);
    cio_stream_close(f->io, &f->b);
    cio_server_close(f->io, &f->server);
}

typedef struct net_case {
    const char *site;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*done)(fx *f); /* closes what prep opened */
} net_case;

static cio_err run_listen(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server s;
    cio_err err = cio_net_listen(f->io, &lo, NULL, &s);
    if (err == CIO_OK)
        cio_server_close(f->io, &s);
    return err;
}

static void prep_listener(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_listen(f->io, &lo, NULL, &f->server));
}

static void done_listener(fx *f)
{
    cio_server_close(f->io, &f->server);
}

static cio_err run_connect(fx *f)
{
    cio_stream s;
    cio_connect_options o;
    memset(&o, 0, sizeof o);
    o.timeout = cio_timeout_ms(5000);
    cio_err err = cio_net_connect(f->io, &f->server.address, &o, &s);
    if (err == CIO_OK) {
        cio_stream peer;
        assert_ok(cio_server_accept(f->io, &f->server, &peer));
        cio_stream_close(f->io, &peer);
        cio_stream_close(f->io, &s);
    }
    return err;
}

static void prep_pending(fx *f)
{
    prep_listener(f);
    assert_ok(cio_net_connect(f->io, &f->server.address, NULL, &f->a));
}

static void done_pending(fx *f)
{
    cio_stream_close(f->io, &f->a);
    cio_server_close(f->io, &f->server);
}

static cio_err run_accept(fx *f)
{
    cio_stream s;
    cio_err err = cio_server_accept(f->io, &f->server, &s);
    if (err == CIO_OK)
        cio_stream_close(f->io, &s);
    return err;
}

static cio_err run_bind(fx *f)
{
    (void)f;
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_socket s;
    cio_bind_options o = {true, false, false, true}; /* reuse_address, broadcast: two setsockopts */
    cio_err err = cio_net_bind(f->io, &lo, &o, &s);
    if (err == CIO_OK)
        cio_socket_close(f->io, &s);
    return err;
}

static void unix_path(fx *f, cio_unix_address *a)
{
    char p[128];
    snprintf(p, sizeof p, "%s/sock", f->path);
    assert_ok(cio_unix_address_from_path(p, a));
}

static cio_err run_unix_listen(fx *f)
{
    cio_unix_address a;
    unix_path(f, &a);
    cio_server s;
    cio_err err = cio_unix_listen(f->io, &a, NULL, &s);
    if (err == CIO_OK)
        cio_server_close(f->io, &s);
    char p[128];
    snprintf(p, sizeof p, "%s/sock", f->path);
    unlink(p);
    return err;
}

static void prep_unix_listener(fx *f)
{
    cio_unix_address a;
    unix_path(f, &a);
    assert_ok(cio_unix_listen(f->io, &a, NULL, &f->server));
}

static void done_unix_listener(fx *f)
{
    cio_server_close(f->io, &f->server);
    char p[128];
    snprintf(p, sizeof p, "%s/sock", f->path);
    unlink(p);
}

static cio_err run_unix_connect(fx *f)
{
    cio_unix_address a;
    unix_path(f, &a);
    cio_stream s;
    cio_err err = cio_unix_connect(f->io, &a, &s);
    if (err == CIO_OK) {
        cio_stream peer;
        assert_ok(cio_server_accept(f->io, &f->server, &peer));
        cio_stream_close(f->io, &peer);
        cio_stream_close(f->io, &s);
    }
    return err;
}

static void prep_pair(fx *f)
{
    net_pair(f);
}

static void done_pair(fx *f)
{
    net_unpair(f);
}

/* a -> b: 20000 bytes written with write_all, read with read loops; both must match. */
static cio_err run_stream_write(fx *f)
{
    cio_err err = cio_stream_write_all(f->io, &f->a, data, DATA_LEN);
    if (err != CIO_OK)
        return err;
    static unsigned char buf[DATA_LEN];
    size_t done = 0;
    while (done < DATA_LEN) {
        size_t n = 0;
        assert_ok(cio_stream_read(f->io, &f->b, buf + done, DATA_LEN - done, &n));
        assert_true(n > 0);
        done += n;
    }
    assert_memory_equal(buf, data, DATA_LEN);
    return CIO_OK;
}

static cio_err run_stream_read(fx *f)
{
    assert_ok(cio_stream_write_all(f->io, &f->a, data, 5000));
    static unsigned char buf[5000];
    size_t done = 0;
    while (done < 5000) {
        size_t n = 0;
        cio_err err = cio_stream_read(f->io, &f->b, buf + done, 5000 - done, &n);
        if (err != CIO_OK)
            return err;
        assert_true(n > 0);
        done += n;
    }
    assert_memory_equal(buf, data, 5000);
    return CIO_OK;
}

static cio_err run_shutdown(fx *f)
{
    cio_err err = cio_stream_shutdown(f->io, &f->a, CIO_SHUTDOWN_SEND);
    if (err == CIO_OK) {
        unsigned char b;
        size_t n = 1;
        assert_ok(cio_stream_read(f->io, &f->b, &b, 1, &n));
        assert_int_equal(n, 0); /* the peer sees the end */
    }
    return err;
}

static void prep_udp(fx *f)
{
    cio_ip_address lo = cio_ip4_loopback(0);
    assert_ok(cio_net_bind(f->io, &lo, NULL, &f->udp1));
    assert_ok(cio_net_bind(f->io, &lo, NULL, &f->udp2));
}

static void done_udp(fx *f)
{
    cio_socket_close(f->io, &f->udp1);
    cio_socket_close(f->io, &f->udp2);
}

static cio_err run_send(fx *f)
{
    size_t n = 0;
    cio_err err = cio_socket_send_to(f->io, &f->udp1, &f->udp2.address, data, 100, &n);
    if (err != CIO_OK)
        return err;
    assert_int_equal(n, 100);
    unsigned char buf[200];
    size_t got = 0;
    assert_ok(cio_socket_receive_timeout(f->io, &f->udp2, buf, sizeof buf, &got, NULL, cio_timeout_ms(5000)));
    assert_int_equal(got, 100);
    assert_memory_equal(buf, data, 100);
    return CIO_OK;
}

static cio_err run_receive(fx *f)
{
    size_t n = 0;
    assert_ok(cio_socket_send_to(f->io, &f->udp1, &f->udp2.address, data, 100, &n));
    unsigned char buf[200];
    size_t got = 0;
    cio_err err = cio_socket_receive_from(f->io, &f->udp2, buf, sizeof buf, &got, NULL);
    if (err == CIO_OK) {
        assert_int_equal(got, 100);
        assert_memory_equal(buf, data, 100);
    }
    return err;
}

static cio_err run_receive_timeout(fx *f)
{
    size_t n = 0;
    assert_ok(cio_socket_send_to(f->io, &f->udp1, &f->udp2.address, data, 100, &n));
    unsigned char buf[200];
    size_t got = 0;
    cio_err err = cio_socket_receive_timeout(f->io, &f->udp2, buf, sizeof buf, &got, NULL, cio_timeout_ms(5000));
    if (err == CIO_OK) {
        assert_int_equal(got, 100);
        assert_memory_equal(buf, data, 100);
    }
    return err;
}

static const net_case net_cases[] = {
    {"socket@listen_ip", prep_none, run_listen, prep_none},
    {"setsockopt@set_int_option", prep_none, run_listen, prep_none},
    {"bind@listen_ip", prep_none, run_listen, prep_none},
    {"listen@listen_ip", prep_none, run_listen, prep_none},
    {"getsockname@local_address", prep_none, run_listen, prep_none},
    {"accept4@accept", prep_pending, run_accept, done_pending},
    {"socket@connect_ip", prep_listener, run_connect, done_listener},
    {"connect@connect_nonblocking", prep_listener, run_connect, done_listener},
    {"poll@poll_one", prep_listener, run_connect, done_listener},
    {"fcntl@set_blocking", prep_listener, run_connect, done_listener},
    {"readv@net_read", prep_pair, run_stream_read, done_pair},
    {"sendmsg@net_write", prep_pair, run_stream_write, done_pair},
    {"shutdown@net_shutdown", prep_pair, run_shutdown, done_pair},
    {"socket@bind_ip", prep_none, run_bind, prep_none},
    {"bind@bind_ip", prep_none, run_bind, prep_none},
    {"sendmsg@net_send", prep_udp, run_send, done_udp},
    {"recvmmsg@net_receive", prep_udp, run_receive, done_udp},
    {"socket@listen_unix", prep_none, run_unix_listen, prep_none},
    {"bind@listen_unix", prep_none, run_unix_listen, prep_none},
    {"listen@listen_unix", prep_none, run_unix_listen, prep_none},
    {"socket@connect_unix", prep_unix_listener, run_unix_connect, done_unix_listener},
    {"connect@connect_unix", prep_unix_listener, run_unix_connect, done_unix_listener},
};

static const net_case *net_case_of(const char *site)
{
    for (size_t i = 0; i < sizeof net_cases / sizeof net_cases[0]; i++)
        if (strcmp(net_cases[i].site, site) == 0)
            return &net_cases[i];
    fail_msg("no network case for %s", site);
    return NULL;
}

static void net_fault_with(void **state, const net_case *c, const char *site, char mode, int err, int count,
                           size_t max, cio_err want, const char *fault)
{
    fx f;
    fx_open(state, &f);
    c->prep(&f);
    int fds = fd_count();
    if (mode == 'e')
        assert_true(cio__fault_errno(site, err, 0, count) == 1);
    else
        assert_true(cio__fault_short(site, max, 0, count) == 1);
    cio_err got = c->run(&f);
    cio__sys_reset();
    if (got != want)
        fail_msg("%s with %s: got %s, want %s", site, fault, cio_err_name(got), cio_err_name(want));
    assert_int_equal(fd_count(), fds);
    covered(site, fault);
    c->done(&f);
    fx_close(&f);
}

static void net_fault(void **state, const char *site, char mode, int err, int count, size_t max, cio_err want,
                      const char *fault)
{
    net_fault_with(state, net_case_of(site), site, mode, err, count, max, want, fault);
}

static void test_net_eintr_storms(void **state)
{
    for (size_t i = 0; i < sizeof net_cases / sizeof net_cases[0]; i++) {
        if (strcmp(net_cases[i].site, "fcntl@set_blocking") == 0)
            continue; /* not a retry site: F_GETFL/F_SETFL never sleep, EINTR is not theirs */
        net_fault(state, net_cases[i].site, 'e', EINTR, 50, 0, CIO_OK, "EINTR");
    }
    /* the timed receive: poll, then recvmmsg(MSG_DONTWAIT) */
    static const net_case timed = {"poll@poll_one", prep_udp, run_receive_timeout, done_udp};
    net_fault_with(state, &timed, "poll@poll_one", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
    net_fault_with(state, &timed, "recvmmsg@net_receive", 'e', EINTR, 50, 0, CIO_OK, "EINTR");
}

typedef struct net_error_case {
    const char *site;
    int err;
    const char *name;
    cio_err want;
} net_error_case;

static const net_error_case net_errors[] = {
    E("socket@listen_ip", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@listen_ip", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("socket@listen_ip", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("setsockopt@set_int_option", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("bind@listen_ip", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("listen@listen_ip", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("getsockname@local_address", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("accept4@accept", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("accept4@accept", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("accept4@accept", ECONNABORTED, CIO_E_CONNECTION_ABORTED),
    E("socket@connect_ip", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@connect_ip", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("connect@connect_nonblocking", ECONNREFUSED, CIO_E_CONNECTION_REFUSED),
    E("connect@connect_nonblocking", ENETUNREACH, CIO_E_NETWORK_UNREACHABLE),
    E("connect@connect_nonblocking", ETIMEDOUT, CIO_E_TIMEOUT),
    E("poll@poll_one", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("fcntl@set_blocking", ENOMEM, CIO_E_UNEXPECTED), /* fcntl has no mapped error but bugs */
    E("readv@net_read", ECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    E("readv@net_read", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("sendmsg@net_write", EPIPE, CIO_E_BROKEN_PIPE),
    E("sendmsg@net_write", ECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    E("shutdown@net_shutdown", ENOTCONN, CIO_E_SOCKET_UNCONNECTED),
    E("shutdown@net_shutdown", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("socket@bind_ip", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@bind_ip", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("bind@bind_ip", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("sendmsg@net_send", EMSGSIZE, CIO_E_MESSAGE_OVERSIZE),
    E("sendmsg@net_send", ENOBUFS, CIO_E_SYSTEM_RESOURCES),
    E("recvmmsg@net_receive", ENOMEM, CIO_E_SYSTEM_RESOURCES),
    E("socket@listen_unix", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@listen_unix", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("bind@listen_unix", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("listen@listen_unix", EADDRINUSE, CIO_E_ADDRESS_IN_USE),
    E("socket@connect_unix", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("socket@connect_unix", ENFILE, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED),
    E("connect@connect_unix", ECONNREFUSED, CIO_E_CONNECTION_REFUSED),
};

static void test_net_errors(void **state)
{
    for (size_t i = 0; i < sizeof net_errors / sizeof net_errors[0]; i++) {
        const net_error_case *c = &net_errors[i];
        net_fault(state, c->site, 'e', c->err, 1, 0, c->want, c->name);
    }
    /* EAGAIN on a timed receive: readable yet nothing to take: wait again, then the datagram */
    static const net_case timed = {"recvmmsg@net_receive", prep_udp, run_receive_timeout, done_udp};
    net_fault_with(state, &timed, "recvmmsg@net_receive", 'e', EAGAIN, 3, 0, CIO_OK, "EAGAIN");
}

static void test_net_short_transfers(void **state)
{
    net_fault(state, "readv@net_read", 's', 0, -1, 7, CIO_OK, "short");
    net_fault(state, "sendmsg@net_write", 's', 0, -1, 7, CIO_OK, "short");
}

/* close of a socket: EINTR is not retried, nothing leaks */
static void test_net_close(void **state)
{
    fx f;
    fx_open(state, &f);
    prep_listener(&f);
    assert_true(cio__fault_errno("close@net_close_fd", EINTR, 0, 1) == 1);
    cio_server_close(f.io, &f.server);
    assert_int_equal(cio__fault_hits("close@net_close_fd"), 1);
    cio__sys_reset();
    assert_int_equal(fd_count(), f.fds);
    covered("close@net_close_fd", "EINTR");
    fx_close(&f);
}
#endif /* CIO_OS_LINUX */

/* ---- clocks, sleep, entropy, futex -------------------------------------------------------------- */

typedef struct seed_ctx {
    cio_io io;
    unsigned char out[32];
} seed_ctx;

static cio_err seed_task(void *p)
{
    seed_ctx *c = *(seed_ctx **)p;
    cio_random(c->io, c->out, sizeof c->out);
    return CIO_OK;
}

static void test_time_and_entropy(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_io io = f.io;
#if defined(CIO_OS_LINUX)
    const char *now_site = "clock_gettime@now", *sleep_site = "clock_nanosleep@sleep";
    const char *secure_site = "getrandom@random_secure", *seed_site = "getrandom@os_seed";
#else
    const char *now_site = "clock_gettime@wasi_now", *sleep_site = "clock_nanosleep@wasi_sleep";
    const char *secure_site = "getentropy@wasi_random_secure", *seed_site = "getentropy@wasi_os_seed";
#endif
    /* a clock that fails reads as 0 (documented: cio_now has no error) */
    assert_true(cio__fault_errno(now_site, EINVAL, 0, 1) == 1);
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns == 0);
    cio__sys_reset();
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns > 0);
    covered(now_site, "EINVAL");

    /* a sleep interrupted 20 times still sleeps its whole time, no longer */
    assert_true(cio__fault_errno(sleep_site, EINTR, 0, 20) == 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
    cio__sys_reset();
    assert_true(ms >= 20 && ms < 5000);
    covered(sleep_site, "EINTR");

    /* random_secure: interrupted and short reads still fill the buffer; no entropy is an error */
    unsigned char buf[300];
    memset(buf, 0, sizeof buf);
    assert_true(cio__fault_errno(secure_site, EINTR, 0, 20) == 1);
    assert_ok(cio_random_secure(io, buf, sizeof buf));
    cio__sys_reset();
    covered(secure_site, "EINTR");
    assert_true(cio__fault_errno(secure_site, ENOSYS, 0, 1) == 1);
    assert_err(cio_random_secure(io, buf, sizeof buf), CIO_E_ENTROPY_UNAVAILABLE);
    cio__sys_reset();
    covered(secure_site, "ENOSYS");
#if defined(CIO_OS_LINUX)
    memset(buf, 0, sizeof buf);
    assert_true(cio__fault_short(secure_site, 5, 0, -1) == 1);
    assert_ok(cio_random_secure(io, buf, sizeof buf));
    cio__sys_reset();
    assert_true(cio__fault_injected(secure_site) >= sizeof buf / 5);
    size_t zeros = 0;
    for (size_t i = 0; i < sizeof buf; i++)
        zeros += buf[i] == 0;
    assert_true(zeros < 20); /* filled to the end */
    covered(secure_site, "short");
#endif
    assert_true(cio__fault_errno(secure_site, EAGAIN, 0, 1) == 1);
    assert_err(cio_random_secure(io, buf, sizeof buf), CIO_E_ENTROPY_UNAVAILABLE);
    cio__sys_reset();
    covered(secure_site, "EAGAIN");

    /* cio_random's seed: with no OS entropy it falls back and still produces output (on a thread
     * that has not seeded yet: a fresh worker) */
    if (CIO_HAVE_THREADS) {
        seed_ctx sc;
        memset(&sc, 0, sizeof sc);
        sc.io = io;
        seed_ctx *p = &sc;
        assert_true(cio__fault_errno(seed_site, EAGAIN, 0, -1) == 1);
        cio_future fut;
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, seed_task, &p, sizeof p, &fut));
        assert_ok(cio_await(io, &fut));
        cio__sys_reset();
        size_t z = 0;
        for (size_t i = 0; i < sizeof sc.out; i++)
            z += sc.out[i] == 0;
        assert_true(z < 8);
        covered(seed_site, "EAGAIN");
    }
    fx_close(&f);
}

#if defined(CIO_OS_WASI)
/* Single-threaded: the only thread's generator is seeded on its first use, which is here (this
 * test runs first). No entropy: the fallback seed still gives output. */
static void test_wasi_seed(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    assert_true(cio__fault_errno("getentropy@wasi_os_seed", EIO, 0, -1) == 1);
    unsigned char out[32];
    memset(out, 0, sizeof out);
    cio_random(io, out, sizeof out);
    cio__sys_reset();
    size_t z = 0;
    for (size_t i = 0; i < sizeof out; i++)
        z += out[i] == 0;
    assert_true(z < 8);
    covered("getentropy@wasi_os_seed", "EIO");
}
#endif

#if defined(CIO_OS_LINUX)
static void test_futex(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    _Atomic(uint32_t) word = 0;
    /* a timed wait interrupted 20 times still times out at its deadline */
    assert_true(cio__fault_errno("futex@futex_wait", EINTR, 0, 20) == 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_futex_wait(io, &word, 0, cio_timeout_ms(30)), CIO_E_TIMEOUT);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
    cio__sys_reset();
    assert_true(ms >= 29 && ms < 5000);
    covered("futex@futex_wait", "EINTR");
    /* EAGAIN: the value already differed: a (spurious) wake-up, never an error */
    assert_true(cio__fault_errno("futex@futex_wait", EAGAIN, 0, 1) == 1);
    assert_ok(cio_futex_wait(io, &word, 0, CIO_TIMEOUT_NONE));
    cio__sys_reset();
    covered("futex@futex_wait", "EAGAIN");
    /* a failing wake is ignored (there is nothing a waker could do) */
    assert_true(cio__fault_errno("futex@futex_wake", EFAULT, 0, 1) == 1);
    cio_futex_wake(io, &word, 1);
    cio__sys_reset();
    covered("futex@futex_wake", "EFAULT");
}
#endif

/* ---- tasks: ENOMEM and no threads ---------------------------------------------------------------- */

typedef struct sum_ctx {
    int a, b;
    int *out;
    char pad[300]; /* larger than an inline copy (run_inline mallocs) */
} sum_ctx;

static cio_err sum_task(void *p)
{
    sum_ctx *c = (sum_ctx *)p;
    *c->out = c->a + c->b;
    return (cio_err)(c->a + c->b == 5 ? CIO_OK : CIO_E_UNEXPECTED);
}

#if defined(CIO_OS_LINUX)
/* With `site` failing every time: async still runs the task (inline) with the right result,
 * concurrent is CIO_E_CONCURRENCY_UNAVAILABLE, group_async runs inline, group_concurrent is
 * unavailable. No thread or descriptor is left behind. */
static void tasks_degrade(void **state, const char *site, int err, const char *fault)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    cio_threaded *t = cio_test_threaded(state);
    int fds = fd_count(), threads = thread_count();
    assert_true(cio__fault_errno(site, err, 0, -1) >= 1);
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    cio_future f = cio_async(io, sum_task, &c, sizeof c);
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    cio_future g;
    assert_err(cio_concurrent(io, sum_task, &c, sizeof c, &g), CIO_E_CONCURRENCY_UNAVAILABLE);
    cio_group grp = CIO_GROUP_INIT;
    out = 0;
    cio_group_async(io, &grp, sum_task, &c, sizeof c);
    assert_int_equal(out, 5); /* it ran inline, before group_async returned */
    assert_err(cio_group_concurrent(io, &grp, sum_task, &c, sizeof c), CIO_E_CONCURRENCY_UNAVAILABLE);
    assert_ok(cio_group_await(io, &grp));
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (injected == 0)
        fail_msg("%s: never reached", site);
    (void)t;
    assert_int_equal(fd_count(), fds);
    assert_int_equal(thread_count(), threads);
    covered(site, fault);
}

static void test_task_allocation_fails(void **state)
{
    tasks_degrade(state, "posix_memalign@task_alloc", ENOMEM, "ENOMEM");
}

static void test_thread_creation_fails(void **state)
{
    tasks_degrade(state, "pthread_create@enqueue", EAGAIN, "EAGAIN");
}

static void test_thread_attr_fails(void **state)
{
    tasks_degrade(state, "pthread_attr_init@enqueue", ENOMEM, "ENOMEM");
}

static void test_group_record_fails(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    assert_true(cio__fault_errno("calloc@group_get", ENOMEM, 0, -1) == 1);
    cio_group grp = CIO_GROUP_INIT;
    cio_group_async(io, &grp, sum_task, &c, sizeof c);
    assert_int_equal(out, 5);
    assert_err(cio_group_concurrent(io, &grp, sum_task, &c, sizeof c), CIO_E_CONCURRENCY_UNAVAILABLE);
    assert_ok(cio_group_await(io, &grp));
    cio__sys_reset();
    covered("calloc@group_get", "ENOMEM");
}

/* A pool whose worker cannot read the clock for its idle deadline: the worker retires at once
 * instead of waiting; every task still completes. */
static void test_worker_clock_fails(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    assert_true(cio__fault_errno("clock_gettime@worker_idle", EINVAL, 0, -1) == 1);
    for (int i = 0; i < 5; i++) {
        int out = 0;
        sum_ctx c;
        memset(&c, 0, sizeof c);
        c.a = 2;
        c.b = 3;
        c.out = &out;
        cio_future f;
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, sum_task, &c, sizeof c, &f));
        assert_ok(cio_await(io, &f));
        assert_int_equal(out, 5);
    }
    /* let the workers reach their idle wait (and fail the clock) */
    for (int i = 0; i < 200 && cio__fault_injected("clock_gettime@worker_idle") == 0; i++)
        (void)cio_sleep(io, cio_timeout_ms(5));
    cio__sys_reset();
    covered("clock_gettime@worker_idle", "EINVAL");
}

/* The cancel signal fails to be sent a few times: the canceler's backoff signals again. */
static cio_err long_sleep_task(void *p)
{
    cio_io io = *(cio_io *)p;
    return cio_sleep(io, cio_timeout_ms(60000));
}

static void test_cancel_signal_fails(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, long_sleep_task, &io, sizeof io, &f));
    (void)cio_sleep(io, cio_timeout_ms(20)); /* into its clock_nanosleep */
    assert_true(cio__fault_errno("pthread_kill@signal_if_blocked", ESRCH, 0, 3) == 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_true((cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000 < 5000);
    cio__sys_reset();
    covered("pthread_kill@signal_if_blocked", "ESRCH");
}

/* The worker's signal mask cannot be changed: the task still runs (its cancel signal may stay
 * blocked; nothing else depends on it). */
static void test_worker_sigmask_fails(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    assert_true(cio__fault_errno("pthread_sigmask@signals_unblock", EINVAL, 0, -1) == 1);
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, sum_task, &c, sizeof c, &f));
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    cio__sys_reset();
    covered("pthread_sigmask@signals_unblock", "EINVAL");
}

/* cio_threaded_create on its own (no other instance alive, so the signal handlers are installed
 * here): no memory, no signal handler, no sysconf answers. */
static void test_threaded_create_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    int fds = fd_count();
    cio_threaded *t = NULL;
    assert_true(cio__fault_errno("calloc@threaded_create", ENOMEM, 0, 1) == 1);
    assert_err(cio_threaded_create(NULL, &t), CIO_E_SYSTEM_RESOURCES);
    assert_null(t);
    covered("calloc@threaded_create", "ENOMEM");
    cio__fault_reset();
    assert_true(cio__fault_errno("sigaction@signals_acquire", EINVAL, 0, 1) == 1);
    assert_err(cio_threaded_create(NULL, &t), CIO_E_UNEXPECTED);
    covered("sigaction@signals_acquire", "EINVAL");
    cio__fault_reset();
    /* sysconf without answers: one CPU assumed, a 4096-byte page; the pool works */
    assert_true(cio__fault_errno("sysconf", EINVAL, 0, -1) == 2);
    assert_ok(cio_threaded_create(NULL, &t));
    cio__sys_reset();
    cio_io io = cio_threaded_io(t);
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    cio_future f;
    assert_ok(cio_concurrent(io, sum_task, &c, sizeof c, &f));
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    covered("sysconf@cpu_count", "EINVAL");
    covered("sysconf@page_size", "EINVAL");
    /* restoring the handlers fails: ignored, destroy completes */
    assert_true(cio__fault_errno("sigaction@signals_release", EINVAL, 0, -1) == 1);
    cio_threaded_destroy(t);
    cio__sys_reset();
    covered("sigaction@signals_release", "EINVAL");
    cio__fault_reset();
    assert_int_equal(fd_count(), fds);
}
#endif /* CIO_OS_LINUX */

#if defined(CIO_OS_WASI)
static void test_threaded_create_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    cio_threaded *t = NULL;
    assert_true(cio__fault_errno("calloc@wasi_threaded_create", ENOMEM, 0, 1) == 1);
    assert_err(cio_threaded_create(NULL, &t), CIO_E_SYSTEM_RESOURCES);
    assert_null(t);
    covered("calloc@wasi_threaded_create", "ENOMEM");
    cio__fault_reset();
}
#endif

/* Inline runs of a large context copy it to aligned memory; without memory they run on the
 * caller's bytes, with the same result. */
static void test_inline_copy_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    cio_threaded *t = cio_test_threaded(state);
    if (t != NULL)
        cio_threaded_set_async_limit(t, 0); /* async always inline */
    assert_true(cio__fault_errno("malloc@run_inline", ENOMEM, 0, -1) == 1);
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    cio_future f = cio_async(io, sum_task, &c, sizeof c);
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    cio__sys_reset();
    covered("malloc@run_inline", "ENOMEM");
}

/* cio_select: no memory for a large context (async runs inline on the caller's context, concurrent
 * is unavailable) or for a large result (the task posts nothing; cancel finds nothing). */
typedef struct big_result {
    int value;
    char pad[400];
} big_result;

typedef struct big_ctx {
    int value;
    char pad[600];
} big_ctx;

static cio_err select_fn(void *context, void *result)
{
    big_ctx *c = (big_ctx *)context;
    ((big_result *)result)->value = c->value;
    return CIO_OK;
}

static void test_select_memory_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    static big_result buf[4];
    cio_select sel;
    cio_select_init(&sel, buf, sizeof buf[0], 4);
    big_ctx c;
    memset(&c, 0, sizeof c);
    c.value = 42;
    assert_true(cio__fault_errno("malloc@select_blob", ENOMEM, 0, -1) == 1);
    cio_select_async(io, &sel, select_fn, &c, sizeof c);
    assert_err(cio_select_concurrent(io, &sel, select_fn, &c, sizeof c), CIO_E_CONCURRENCY_UNAVAILABLE);
    cio__sys_reset();
    big_result r;
    assert_ok(cio_select_await(io, &sel, &r));
    assert_int_equal(r.value, 42);
    covered("malloc@select_blob", "ENOMEM");
    assert_false(cio_select_cancel(io, &sel, &r));

    cio_select_init(&sel, buf, sizeof buf[0], 4);
    assert_true(cio__fault_errno("malloc@select_result", ENOMEM, 0, -1) == 1);
    cio_select_async(io, &sel, select_fn, &c, sizeof c);
    assert_false(cio_select_cancel(io, &sel, &r)); /* nothing was posted */
    cio__sys_reset();
    covered("malloc@select_result", "ENOMEM");
}

/* The hosts file cannot be read into memory: the lookup says SystemResources (rather than asking
 * DNS as if there were no hosts file), leaks nothing. */
static void test_resolve_memory_fails(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_file h;
    assert_ok(cio_dir_create_file(f.io, f.dir, "h", NULL, &h));
    static const char line[] = "127.0.0.9 box.test\n";
    assert_ok(cio_file_write_all(f.io, h, line, sizeof line - 1));
    cio_file_close(f.io, h);
    char hosts[96];
    snprintf(hosts, sizeof hosts, "%s/h", f.path);
    int fds = fd_count();
    static cio_lookup_result results[16];
    cio_queue q;
    cio_queue_init(&q, results, sizeof results[0], 16);
    cio_lookup_options o;
    memset(&o, 0, sizeof o);
    o.hosts_file = hosts;
    o.resolv_conf = "/nonexistent/resolv.conf";
    assert_true(cio__fault_errno("malloc@resolve_read_file", ENOMEM, 0, -1) == 1);
    cio_err err = cio_hostname_lookup(f.io, "box.test", &o, &q);
    cio__sys_reset();
    assert_err(err, CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(fd_count(), fds);
    covered("malloc@resolve_read_file", "ENOMEM");
    /* and with memory, the same lookup finds the address in the file */
    cio_queue_init(&q, results, sizeof results[0], 16);
    assert_ok(cio_hostname_lookup(f.io, "box.test", &o, &q));
    cio_lookup_result r;
    assert_ok(cio_queue_get_one(f.io, &q, &r));
    assert_int_equal(r.kind, CIO_LOOKUP_ADDRESS);
    assert_int_equal(r.address.bytes[3], 9);
    fx_close(&f);
}

#if defined(CIO_OS_LINUX)
/* cio_sig_*: the OS refusing is the mapped error */
static void test_signal_calls_fail(void **state)
{
    (void)state;
    cio__fault_reset();
    struct cio_sigaction act;
    memset(&act, 0, sizeof act);
    act.handler = CIO_SIG_HANDLER_IGNORE;
    assert_true(cio__fault_errno("sigaction@sig_action", EINVAL, 0, 1) == 1);
    assert_err(cio_sigaction(CIO_SIG_USR2, &act, NULL), CIO_E_INVALID_SIGNAL);
    covered("sigaction@sig_action", "EINVAL");
    assert_true(cio__fault_errno("raise@sig_raise", EINVAL, 0, 1) == 1);
    assert_err(cio_sig_raise(CIO_SIG_USR2), CIO_E_UNEXPECTED);
    covered("raise@sig_raise", "EINVAL");
    assert_true(cio__fault_errno("kill@sig_kill", EPERM, 0, 1) == 1);
    assert_err(cio_sig_kill((long)getpid(), CIO_SIG_USR2), CIO_E_PERMISSION_DENIED);
    covered("kill@sig_kill", "EPERM");
    assert_true(cio__fault_errno("pthread_sigmask@sig_mask", EINVAL, 0, 1) == 1);
    cio_sigset set;
    cio_sigset_empty(&set);
    assert_err(cio_sig_mask(CIO_SIG_BLOCK, &set, NULL), CIO_E_UNEXPECTED);
    covered("pthread_sigmask@sig_mask", "EINVAL");
    cio__fault_reset();
}
#endif

/* The table itself: every site has a name, overriding by call name reaches all its sites, and reset
 * puts the defaults back. */
static void test_table(void **state)
{
    (void)state;
    cio__fault_reset();
    size_t n = cio__sys_site_count();
    assert_true(n > 10);
    for (size_t i = 0; i < n; i++)
        assert_non_null(strchr(cio__sys_site_name(i), '@'));
    assert_null(cio__sys_site_name(n));
    assert_int_equal(cio__sys_override("no_such_call", NULL), 0);
    assert_int_equal(cio__sys_override("openat@no_such_site", NULL), 0);
    assert_int_equal(cio__sys_override("openat", NULL), 3);
    assert_int_equal(cio__fault_errno("openat", EMFILE, 0, 1), 3);
    cio__fault_reset();
    assert_true(atomic_load(&cio__sys.openat__open_file) == cio__sys_default.openat);
}

/* The release forms of the argument and bug checks (tests/null_arg_release.c, built with NDEBUG):
 * a clean error, no assertion. */
cio_err cio_test_release_null_arg(void);
cio_err cio_test_release_bug(void);

static void test_release_checks(void **state)
{
    (void)state;
    assert_err(cio_test_release_null_arg(), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_test_release_bug(), CIO_E_UNEXPECTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(CIO_OS_WASI)
        CIO_TESTS(test_wasi_seed),
        CIO_TESTS(test_wasi_fs_faults),
#endif
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_release_checks),
        CIO_TESTS(test_fs_eintr_storms),
        CIO_TESTS(test_fs_errors),
        CIO_TESTS(test_fs_short_transfers),
        CIO_TESTS(test_fs_enospc_mid_write_all),
        CIO_TESTS(test_fs_close),
        CIO_TESTS(test_cancel_during_eintr_storm),
#if defined(CIO_OS_LINUX)
        CIO_TESTS(test_net_eintr_storms),
        CIO_TESTS(test_net_errors),
        CIO_TESTS(test_net_short_transfers),
        CIO_TESTS(test_net_close),
        CIO_TESTS(test_futex),
        CIO_TESTS(test_task_allocation_fails),
        CIO_TESTS(test_thread_creation_fails),
        CIO_TESTS(test_thread_attr_fails),
        CIO_TESTS(test_group_record_fails),
        CIO_TESTS(test_worker_clock_fails),
        CIO_TESTS(test_cancel_signal_fails),
        CIO_TESTS(test_worker_sigmask_fails),
        cmocka_unit_test(test_signal_calls_fail),
#endif
        CIO_TESTS(test_resolve_memory_fails),
        CIO_TESTS(test_time_and_entropy),
        CIO_TESTS(test_inline_copy_fails),
        CIO_TESTS(test_select_memory_fails),
        cmocka_unit_test(test_threaded_create_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
