/*
 * Fault injection through the OS call table (spec/oscalls.yaml -> platform/internal/cio_oscalls*):
 * every call site the Threaded backend routes gets its faults here, injected at that one site:
 * EINTR storms (retried transparently; a cancel during an endless storm still cancels), the errors
 * the OS can give there (the exact mapped cio error), short transfers (the *_all loops complete),
 * EMFILE/ENFILE (no descriptor leaks), ENOMEM and thread-creation failure (async degrades to
 * inline, concurrent says CIO_E_CONCURRENCY_UNAVAILABLE). This file: files and directories, clocks,
 * entropy, memory in the core, the table itself; tests/test_faults_os.c (Linux): sockets, futexes,
 * the worker pool, signals; tests/test_faults_windows.c: the Windows sites (on Windows the POSIX
 * cases here are listed as skips). Shared helpers: tests/faults.h.
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

/* ---- clocks, sleep, entropy, futex -------------------------------------------------------------- */

static void test_time_and_entropy(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_io io = f.io;
#if defined(CIO_OS_LINUX)
    const char *now_site = "clock_gettime@now", *sleep_site = "clock_nanosleep@sleep";
    const char *secure_site = "getrandom@random_secure", *seed_site = "getrandom@os_seed";
#else
    const char *now_site = "clock_gettime@now", *sleep_site = "clock_nanosleep@wasi_sleep";
    const char *secure_site = "getentropy@wasi_random_secure", *seed_site = "getentropy@wasi_os_seed";
#endif
    /* a clock that fails reads as 0 (documented: cio_now has no error) */
    assert_true(cio__fault_errno(now_site, EINVAL, 0, 1) == 1);
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns == 0);
    cio__sys_reset();
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns > 0);
    covered(now_site, "EINVAL");

    /* a sleep interrupted 20 times still sleeps its whole time, no longer (Evented: the test's
     * thread is a fiber of the instance and sleeps on a loop timer, no system call: fx_site says so) */
    if (fx_site(state, sleep_site) != NULL) {
        assert_true(cio__fault_errno(sleep_site, EINTR, 0, 20) == 1);
        int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
        assert_ok(cio_sleep(io, cio_timeout_ms(20)));
        int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
        cio__sys_reset();
        assert_true(ms >= 20 && ms < 5000);
        covered(sleep_site, "EINTR");
    }

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
        random_in_task_despite(io, seed_site, EAGAIN);
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
#endif /* !CIO_OS_WINDOWS: the POSIX sites' cases */

/* ---- tasks: ENOMEM and no threads ---------------------------------------------------------------- */

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
    if (fx_backend_of(state) != FX_THREADED) { /* Evented runs async inline when it gets no fiber */
        assert_true(cio__fault_errno("mmap@block_region", ENOMEM, 0, -1) == 1);
        assert_true(cio__fault_errno("posix_memalign@fiber_alloc", ENOMEM, 0, -1) == 1);
    }
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
    if (fx_backend_of(state) != FX_THREADED)
        covered("posix_memalign@fiber_alloc", "ENOMEM");
}

/* cio_select: no memory for a large context (async runs inline on the caller's context, concurrent
 * is unavailable) or for a large result (the task cannot run; the select fails: await reports
 * CIO_E_OUT_OF_MEMORY instead of waiting forever, after canceling and awaiting every other task). */
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

/* A select task that announces it runs, then sleeps until canceled; `finished` says it returned. */
typedef struct select_blocker {
    cio_io io;
    _Atomic(uint32_t) *started, *finished;
} select_blocker;

static cio_err select_blocker_fn(void *context, void *result)
{
    select_blocker *b = (select_blocker *)context;
    ((big_result *)result)->value = -1;
    atomic_store(b->started, 1);
    cio_futex_wake(b->io, b->started, 1);
    cio_err err = cio_sleep(b->io, CIO_TIMEOUT_NONE);
    atomic_store(b->finished, 1);
    return err;
}

typedef struct select_awaiter {
    cio_io io;
    cio_select *sel;
    big_result *r;
    cio_err *err;
    _Atomic(uint32_t) *done;
} select_awaiter;

static cio_err select_await_task(void *context)
{
    select_awaiter *a = (select_awaiter *)context;
    *a->err = cio_select_await(a->io, a->sel, a->r);
    atomic_store(a->done, 1);
    cio_futex_wake(a->io, a->done, 1);
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

    /* The select fails: a task blocked until canceled, then one whose result finds no memory. The
     * await (in a task of its own, so that a hang fails the test rather than stopping it) reports
     * OutOfMemory, and by then the blocked task has been canceled and has returned. */
    cio_select_init(&sel, buf, sizeof buf[0], 4);
    static _Atomic(uint32_t) started, finished, done;
    atomic_store(&started, 0);
    atomic_store(&finished, 0);
    atomic_store(&done, 0);
    select_blocker b = {io, &started, &finished};
    cio_err err = cio_select_concurrent(io, &sel, select_blocker_fn, &b, sizeof b);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) { /* single-threaded: the failure alone, inline */
        assert_true(cio__fault_errno("malloc@select_result", ENOMEM, 0, -1) == 1);
        cio_select_async(io, &sel, select_fn, &c, sizeof c);
        cio__sys_reset();
        assert_err(cio_select_await(io, &sel, &r), CIO_E_OUT_OF_MEMORY);
        assert_false(cio_select_cancel(io, &sel, &r));
        return;
    }
    assert_ok(err);
    while (atomic_load(&started) == 0) /* past its result's malloc */
        (void)cio_futex_wait(io, &started, 0, cio_timeout_ms(100));
    assert_true(cio__fault_errno("malloc@select_result", ENOMEM, 0, -1) == 1);
    cio_select_async(io, &sel, select_fn, &c, sizeof c);
    cio_err await_err = CIO_E_UNEXPECTED;
    select_awaiter a = {io, &sel, &r, &await_err, &done};
    cio_future fa;
    assert_ok(cio_concurrent(io, select_await_task, &a, sizeof a, &fa));
    cio_timestamp until = {cio_now(io, CIO_CLOCK_AWAKE).ns + 20 * (int64_t)1000000000};
    while (atomic_load(&done) == 0 && cio_now(io, CIO_CLOCK_AWAKE).ns < until.ns)
        (void)cio_futex_wait(io, &done, 0, cio_timeout_ms(100));
    cio__sys_reset();
    if (atomic_load(&done) == 0) {
        (void)cio_cancel(io, &fa);
        cio_select_cancel_discard(io, &sel);
        fail_msg("cio_select_await still waits 20 s after a task found no memory for its result");
    }
    assert_ok(cio_await(io, &fa));
    assert_err(await_err, CIO_E_OUT_OF_MEMORY);
    assert_int_equal(atomic_load(&finished), 1);                     /* canceled and awaited before await returned */
    assert_false(cio_select_cancel(io, &sel, &r));                   /* the blocker's late result was dropped */
    assert_err(cio_select_await(io, &sel, &r), CIO_E_OUT_OF_MEMORY); /* the select stays failed */
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
    /* no hosts file, and resolv.conf cannot be read into memory: SystemResources as well, not
     * ResolvConfParseFailed (the file is fine; memory is what ran out) */
    assert_ok(cio_dir_create_file(f.io, f.dir, "g", NULL, &h)); /* a name fx_close removes */
    static const char conf[] = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";
    assert_ok(cio_file_write_all(f.io, h, conf, sizeof conf - 1));
    cio_file_close(f.io, h);
    char resolv[96];
    snprintf(resolv, sizeof resolv, "%s/g", f.path);
    o.hosts_file = "/nonexistent/hosts";
    o.resolv_conf = resolv;
    cio_queue_init(&q, results, sizeof results[0], 16);
    cio__fault_reset();
    assert_true(cio__fault_errno("malloc@resolve_read_file", ENOMEM, 0, -1) == 1);
    err = cio_hostname_lookup(f.io, "box.test", &o, &q);
    unsigned hits = cio__fault_hits("malloc@resolve_read_file");
    cio__sys_reset();
    assert_err(err, CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(hits, 1);
    assert_int_equal(fd_count(), fds);
    fx_close(&f);
}

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
#if defined(CIO_OS_WINDOWS)
    assert_int_equal(cio__sys_override("wsa_bind@no_such_site", NULL), 0);
    /* wsa_bind's sites: listen_ip, bind_ip, listen_unix (net_windows.c) and iocp_connect_bind (the
     * Evented connect, src/evented/net_iocp.c) */
    assert_int_equal(cio__sys_override("wsa_bind", NULL), 4);
    assert_int_equal(cio__fault_errno("wsa_bind", WSAEADDRINUSE, 0, 1), 4);
    cio__fault_reset();
    assert_true(atomic_load(&cio__sys.wsa_bind__listen_ip) == cio__sys_default.wsa_bind);
#else
    assert_int_equal(cio__sys_override("openat@no_such_site", NULL), 0);
    /* openat's sites: open_file, create_file, open_dir (fs_posix.c) and, on Linux, spawn_devnull
     * (process_spawn_posix.c), real_path_open and create_tmp_file (fs_copy_linux.c) */
#if defined(CIO_OS_LINUX)
    int openat_sites = 6;
#else
    int openat_sites = 3;
#endif
    assert_int_equal(cio__sys_override("openat", NULL), openat_sites);
    assert_int_equal(cio__fault_errno("openat", EMFILE, 0, 1), openat_sites);
    cio__fault_reset();
    assert_true(atomic_load(&cio__sys.openat__open_file) == cio__sys_default.openat);
#endif
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
#if defined(CIO_OS_WINDOWS)
        CIO_POSIX_ONLY(test_fs_eintr_storms),
        CIO_POSIX_ONLY(test_fs_errors),
        CIO_POSIX_ONLY(test_fs_short_transfers),
        CIO_POSIX_ONLY(test_fs_enospc_mid_write_all),
        CIO_POSIX_ONLY(test_fs_close),
        CIO_POSIX_ONLY(test_cancel_during_eintr_storm),
        CIO_TESTS(test_resolve_memory_fails),
        CIO_POSIX_ONLY(test_time_and_entropy),
#else
        CIO_TESTS(test_fs_eintr_storms),
        CIO_TESTS(test_fs_errors),
        CIO_TESTS(test_fs_short_transfers),
        CIO_TESTS(test_fs_enospc_mid_write_all),
        CIO_TESTS(test_fs_close),
        CIO_TESTS(test_cancel_during_eintr_storm),
        CIO_TESTS(test_resolve_memory_fails),
        CIO_TESTS(test_time_and_entropy),
#endif
        CIO_TESTS(test_inline_copy_fails),
        CIO_TESTS(test_select_memory_fails),
#if defined(CIO_OS_WASI)
        cmocka_unit_test(test_threaded_create_faults),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
