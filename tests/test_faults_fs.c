/*
 * Fault injection through the OS call table (spec/oscalls.yaml -> platform/internal/cio_oscalls*)
 * at the file-system call sites the Threaded backend routes, injected at one site at a time: EINTR
 * storms (retried transparently; a cancel during an endless storm still cancels), the errors the OS
 * can give there (the exact mapped cio error), short transfers (the *_all loops complete), ENOSPC in
 * the middle of a write_all, close. The other core sites (clocks, entropy, memory, the table) are
 * tests/test_faults.c; the Windows sites are tests/test_faults_windows.c (on Windows the POSIX cases
 * here are listed as skips). Shared helpers: tests/faults.h, tests/faults_fs.h.
 *
 * Every case checks that the fault really reached its site (the injector's counters), the exact
 * error, the data (read back), and that the process has as many descriptors and threads afterwards
 * as before (/proc/self/fd, /proc/self/task; heap blocks: LeakSanitizer in the sanitize run). A case
 * that passes prints "fault-covered: <call@site> <fault>"; build.py collects those lines into
 * build/fault-report.md against the full list of sites (platform/internal/callsites.tsv).
 *
 * Each case works in a fresh directory under /tmp; the table is reset before and after each case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "faults_fs.h"

#if !defined(CIO_OS_WINDOWS) /* the POSIX sites' cases; Windows': tests/test_faults_windows.c */
/* ---- file system cases: one operation per site ---------------------------------------------------
 * prep (no fault armed) -> arm -> run (the operation; returns its error) -> reset -> check (reads
 * back what run did; err is run's result). */

typedef struct fs_case {
    const char *site;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*check)(fx *f, cio_err err);
} fs_case;

static cio_err run_open_file_no_dir(fx *f)
{
    static const cio_open_file_options o = {CIO_OPEN_READ_ONLY, false, true}; /* forbid_directory: fstat */
    cio_file h;
    cio_err err = cio_dir_open_file(f->io, f->dir, "f", &o, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
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
    {"pwritev@file_write_positional", prep_open_rw, run_write_positional, check_written},
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
    return (const fs_case *)case_named(fs_cases, sizeof fs_cases / sizeof fs_cases[0], sizeof fs_cases[0], site);
}

/* The case of `site` with fault `mode`: 'e' errno err (count times, -1 forever), 's' short transfers
 * of at most `max` bytes. Checks the result, the data, the descriptors. */
static void fs_fault(void **state, const char *site, char mode, int err, int count, size_t max, cio_err want,
                     const char *fault)
{
    const fs_case *c = fs_case_of(site);
    site = fx_site(state, site);
    if (site == NULL)
        return;
    /* The epoll flavour's RWF_NOWAIT attempt: EAGAIN is "not ready", not an error: the read or
     * write then runs on the helper pool and succeeds. */
    if (err == EAGAIN && strstr(site, "@nowait_") != NULL)
        want = CIO_OK;
#if CIO_HAVE_EVENTED && defined(CIO_OS_LINUX)
    /* A short RWF_NOWAIT write where the file system refuses those writes anyway would shorten
     * nothing: shorten the write the helper pool makes instead. */
    if (mode == 's' && strcmp(site, "pwritev2@nowait_write") == 0 && !fx_nowait_writes()) {
        print_message("      %s: this file system refuses RWF_NOWAIT writes (EOPNOTSUPP): short writes at %s, "
                      "on the helper pool\n",
                      site, c->site);
        site = c->site;
    }
#endif
    fx f;
    fx_open(state, &f);
    c->prep(&f);
    int fds = fd_count();
    unsigned injected = run_with_fault(&f, c->run, site, c->site, mode, err, count, max, want, fault);
    if (mode == 'e' && count > 0 && injected != (unsigned)count)
        fail_msg("%s: %u faults injected, want %d", site, injected, count);
    c->check(&f, want); /* run_with_fault checked that the call returned it */
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

static const errno_case fs_errors[] = {
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
        const errno_case *c = &fs_errors[i];
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
        "readv@file_read_streaming",
        "writev@file_write_streaming",
        "preadv@file_read_positional",
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

/* What every stand-in below does first: from the fourth call on, ENOSPC (true); before, *one is
 * the first buffer cut to 4000 bytes, for the real call. */
static bool enospc_or_first_4000(const struct iovec *iov, struct iovec *one)
{
    if (atomic_fetch_add(&enospc_calls, 1) >= 3) {
        errno = ENOSPC;
        return true;
    }
    *one = iov[0];
    if (one->iov_len > 4000)
        one->iov_len = 4000;
    return false;
}

static ssize_t writev_then_enospc(int fd, const struct iovec *iov, int iovcnt)
{
    struct iovec one;
    (void)iovcnt;
    return enospc_or_first_4000(iov, &one) ? -1 : (cio__sys_default.writev)(fd, &one, 1);
}

static ssize_t pwritev_then_enospc(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
    struct iovec one;
    (void)iovcnt;
    return enospc_or_first_4000(iov, &one) ? -1 : (cio__sys_default.pwritev)(fd, &one, 1, offset);
}

#if CIO_HAVE_EVENTED
/* The epoll flavour's writes: the RWF_NOWAIT attempt is the call that fails (offset -1: streaming). */
/* It stands in for a file system that takes RWF_NOWAIT writes (ext4 answers EOPNOTSUPP to buffered
 * ones): the first three each write 4000 bytes, the fourth fails. */
static ssize_t pwritev2_then_enospc(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
    (void)flags;
    (void)iovcnt;
    struct iovec one;
    if (enospc_or_first_4000(iov, &one))
        return -1;
    return offset == -1 ? (cio__sys_default.writev)(fd, &one, 1) : (cio__sys_default.pwritev)(fd, &one, 1, offset);
}
#endif

/* Puts the stand-in for backend b's streaming (or positional) writes in place, its count at 0. */
static void arm_enospc(fx_backend b, bool positional)
{
    atomic_store(&enospc_calls, 0);
#if CIO_HAVE_EVENTED
    if (b == FX_EPOLL) {
        cio__sys_set(pwritev2__nowait_write, pwritev2_then_enospc);
        return;
    }
#else
    (void)b;
#endif
    if (positional)
        cio__sys_set(pwritev__file_write_positional, pwritev_then_enospc);
    else
        cio__sys_set(writev__file_write_streaming, writev_then_enospc);
}

static void test_fs_enospc_mid_write_all(void **state)
{
    fx_backend b = fx_backend_of(state);
    if (b == FX_URING) {
        (void)cio_test_io(state);
        CIO_SKIP("io_uring writes are ring operations: their results come in completions, not through a "
                 "routed call (the epoll flavour runs this case)");
    }
    const char *stream_site = b == FX_EPOLL ? "pwritev2@nowait_write" : "writev@file_write_streaming";
    const char *pos_site = b == FX_EPOLL ? "pwritev2@nowait_write" : "pwritev@file_write_positional";
    fx f;
    fx_open(state, &f);
    cio_file h;
    assert_ok(cio_dir_create_file(f.io, f.dir, "g", NULL, &h));
    arm_enospc(b, false);
    assert_err(cio_file_write_all(f.io, h, data, DATA_LEN), CIO_E_NO_SPACE_LEFT);
    cio__sys_reset();
    assert_int_equal(atomic_load(&enospc_calls), 4);
    cio_file_close(f.io, h);
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(&f, "g", buf, sizeof buf);
    assert_int_equal(n, 12000);
    assert_memory_equal(buf, data, 12000);
    print_message("fault-covered: %s ENOSPC-mid-write_all\n", stream_site);

    /* the same through positional writes at an offset: bytes before the fault are where they belong */
    assert_ok(cio_dir_create_file(f.io, f.dir, "h", NULL, &h));
    arm_enospc(b, true);
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
    print_message("fault-covered: %s ENOSPC-mid-write\n", pos_site);
    assert_int_equal(fd_count(), f.fds);
    fx_close(&f);
}

/* close: EINTR (and EIO) are reported after the descriptor is gone; cio never retries the close
 * (which could close a descriptor another thread just got) and loses no descriptor. */
static void test_fs_close(void **state)
{
    static const int errs[] = {EINTR, EIO};
    static const char *const names[] = {"EINTR", "EIO"};
    static const cio_err want[] = {CIO_OK, CIO_E_INPUT_OUTPUT}; /* EINTR: closed all the same */
    for (size_t i = 0; i < 2; i++) {
        fx f;
        fx_open(state, &f);
        cio_file h;
        assert_ok(cio_dir_open_file(f.io, f.dir, "f", NULL, &h));
#if defined(CIO_OS_LINUX)
        assert_int_equal(fd_count(), f.fds + 1);
#endif
        assert_true(cio__fault_errno("close@fs_close_fd", errs[i], 0, 1) == 1);
        assert_err(cio_file_close(f.io, h), want[i]);
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
    site = fx_site(state, site);
    if (site == NULL)
        return;
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
    CIO_REQUIRE_THREADS(cio_test_io(state));
    cancel_during_storm(state, "readv@file_read_streaming", storm_read_task);
#if defined(CIO_OS_LINUX)
    cancel_during_storm(state, "clock_nanosleep@sleep", storm_sleep_task);
#endif
    /* every file-system site: cancel during its endless storm; nothing leaks, nothing changed */
    for (size_t i = 0; i < sizeof fs_cases / sizeof fs_cases[0]; i++) {
        const fs_case *c = &fs_cases[i];
        if (strcmp(c->site, "readlinkat@executable_path") == 0 && access("/proc/self/exe", F_OK) != 0)
            continue;
        const char *site = fx_site(state, c->site);
        if (site == NULL)
            continue;
        fx f;
        fx_open(state, &f);
        c->prep(&f);
        int fds = fd_count();
        storm_then_cancel(&f, site, c->run);
        assert_int_equal(fd_count(), fds);
        c->check(&f, CIO_E_CANCELED);
        covered(site, "EINTR-storm+cancel");
        fx_close(&f);
    }
}

#endif /* !CIO_OS_WINDOWS: the POSIX sites' cases */

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(CIO_OS_WASI)
        CIO_TESTS(test_wasi_fs_faults),
#endif
#if defined(CIO_OS_WINDOWS)
        CIO_POSIX_ONLY(test_fs_eintr_storms),
        CIO_POSIX_ONLY(test_fs_errors),
        CIO_POSIX_ONLY(test_fs_short_transfers),
        CIO_POSIX_ONLY(test_fs_enospc_mid_write_all),
        CIO_POSIX_ONLY(test_fs_close),
        CIO_POSIX_ONLY(test_cancel_during_eintr_storm),
#else
        CIO_TESTS(test_fs_eintr_storms),
        CIO_TESTS(test_fs_errors),
        CIO_TESTS(test_fs_short_transfers),
        CIO_TESTS(test_fs_enospc_mid_write_all),
        CIO_TESTS(test_fs_close),
        CIO_TESTS(test_cancel_during_eintr_storm),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
