/*
 * Fault injection at the links-and-metadata call sites (src/os/fs_links_posix.c,
 * fs_perms_posix.c, fs_linkfd_linux.c, fs_paths_linux.c, fs_lock_posix.c, the clock_getres sites of
 * time_posix.c/time_wasi.c): for each
 * site an EINTR storm (retried: the operation succeeds) and the errors the OS gives there (the exact
 * mapped cio error), with the file system checked afterwards and no descriptor leaked. Windows'
 * sites are NT calls covered by tests/test_faults_windows.c; this file is not built there.
 * Works in the fixture of tests/faults.h ("f": 1000 bytes, "d": a directory); what a case makes is
 * named "new" or "g", which fx_close removes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "faults_fs.h"

#if !defined(CIO_OS_WINDOWS)
typedef struct link_case {
    const char *site;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*check)(fx *f, cio_err err);
} link_case;

static void prep_link(fx *f)
{
    assert_ok(cio_dir_sym_link(f->io, f->dir, "f", "g", 0));
}

static cio_err run_sym_link(fx *f)
{
    return cio_dir_sym_link(f->io, f->dir, "f", "new", 0);
}

static void check_new_exists(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "new", CIO_STAT_NO_FOLLOW, &st),
               err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
}

static cio_err run_read_link(fx *f)
{
    char buf[64];
    size_t n = 0;
    cio_err err = cio_dir_read_link(f->io, f->dir, "g", buf, sizeof buf, &n);
    if (err == CIO_OK && (n != 1 || strcmp(buf, "f") != 0))
        fail_msg("read_link: '%s' (%lu), want 'f'", buf, (unsigned long)n);
    return err;
}

static cio_err run_hard_link(fx *f)
{
    return cio_dir_hard_link(f->io, f->dir, "f", f->dir, "new", 0);
}

static cio_err run_set_file_timestamps(fx *f)
{
    cio_set_timestamps ts;
    memset(&ts, 0, sizeof ts);
    ts.access_action = CIO_TIMESTAMP_UNCHANGED;
    ts.modify_action = CIO_TIMESTAMP_SET;
    ts.modify.ns = INT64_C(1600000000) * 1000000000;
    return cio_dir_set_timestamps(f->io, f->dir, "f", &ts, 0);
}

static void check_mtime(fx *f, cio_err err)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(f->io, f->dir, "f", 0, &st));
    if ((st.mtime.ns == INT64_C(1600000000) * 1000000000) != (err == CIO_OK))
        fail_msg("mtime %lld after %s", (long long)st.mtime.ns, cio_err_name(err));
}

static cio_err run_is_tty(fx *f)
{
    bool tty = true;
    cio_err err = cio_file_is_tty(f->io, f->file, &tty);
    if (err == CIO_OK && tty)
        fail_msg("a regular file is a terminal");
    return err;
}

static cio_err run_clock_resolution(fx *f)
{
    int64_t ns = -1;
    cio_err err = cio_clock_resolution(f->io, CIO_CLOCK_AWAKE, &ns);
    if (err == CIO_OK && ns < 1)
        fail_msg("resolution %lld", (long long)ns);
    if (err != CIO_OK && ns != 0)
        fail_msg("resolution %lld after %s", (long long)ns, cio_err_name(err));
    return err;
}

#if !defined(CIO_OS_WASI)
static cio_err run_file_set_permissions(fx *f)
{
    return cio_file_set_permissions(f->io, f->file, 0600);
}

static cio_err run_set_file_permissions(fx *f)
{
    return cio_dir_set_file_permissions(f->io, f->dir, "f", 0600, 0);
}

static void check_mode(fx *f, cio_err err)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(f->io, f->dir, "f", 0, &st));
    if ((st.mode == 0600) != (err == CIO_OK))
        fail_msg("mode %o after %s", (unsigned)st.mode, cio_err_name(err));
}

static cio_err run_file_set_owner(fx *f)
{
    return cio_file_set_owner(f->io, f->file, CIO_OWNER_UNCHANGED, CIO_OWNER_UNCHANGED);
}

static cio_err run_set_file_owner(fx *f)
{
    return cio_dir_set_file_owner(f->io, f->dir, "f", CIO_OWNER_UNCHANGED, CIO_OWNER_UNCHANGED, 0);
}
#endif

#if defined(CIO_OS_LINUX)
static cio_err run_file_hard_link(fx *f)
{
    return cio_file_hard_link(f->io, f->file, f->dir, "new");
}

static cio_err run_real_path_file(fx *f)
{
    char buf[512];
    size_t n = 0;
    cio_err err = cio_dir_real_path_file(f->io, f->dir, "f", buf, sizeof buf, &n);
    if (err == CIO_OK && (n < 2 || strcmp(buf + n - 2, "/f") != 0))
        fail_msg("real path '%s'", buf);
    return err;
}

static cio_err run_rename_preserve(fx *f)
{
    return cio_dir_rename_preserve(f->io, f->dir, "f", f->dir, "moved");
}
#endif

#if !defined(CIO_OS_WASI)
static cio_err run_lock(fx *f)
{
    cio_err err = cio_file_lock(f->io, f->file, CIO_LOCK_EXCLUSIVE);
    cio_file_unlock(f->io, f->file);
    return err;
}

static cio_err run_try_lock(fx *f)
{
    bool got = false;
    cio_err err = cio_file_try_lock(f->io, f->file, CIO_LOCK_SHARED, &got);
    if (err == CIO_OK && !got)
        fail_msg("try_lock: not acquired, nobody else holds it");
    cio_file_unlock(f->io, f->file);
    return err;
}

static void prep_locked(fx *f)
{
    prep_open_rw(f);
    assert_ok(cio_file_lock(f->io, f->file, CIO_LOCK_EXCLUSIVE));
}

static cio_err run_downgrade(fx *f)
{
    return cio_file_downgrade_lock(f->io, f->file);
}

/* An unlock whose flock fails leaves nothing to report (unlock never fails): the lock is dropped
 * by the close anyway. */
static cio_err run_unlock(fx *f)
{
    cio_file_unlock(f->io, f->file);
    return CIO_OK;
}
#endif

static const link_case cases[] = {
    {"symlinkat@sym_link", prep_none, run_sym_link, check_new_exists},
    {"readlinkat@read_link", prep_link, run_read_link, check_none},
    {"linkat@hard_link", prep_none, run_hard_link, check_new_exists},
    {"utimensat@set_timestamps", prep_none, run_set_file_timestamps, check_mtime},
    {"isatty@is_tty", prep_open_rw, run_is_tty, check_none},
    {"clock_getres@clock_resolution", prep_none, run_clock_resolution, check_none},
#if !defined(CIO_OS_WASI)
    {"fchmod@set_permissions", prep_open_rw, run_file_set_permissions, check_mode},
    {"fchmodat@set_file_permissions", prep_none, run_set_file_permissions, check_mode},
    {"fchown@set_owner", prep_open_rw, run_file_set_owner, check_none},
    {"fchownat@set_file_owner", prep_none, run_set_file_owner, check_none},
#endif
#if defined(CIO_OS_LINUX)
    {"linkat@link_fd", prep_open_rw, run_file_hard_link, check_new_exists},
    {"readlinkat@real_path", prep_none, run_real_path_file, check_none},
    {"openat@real_path_open", prep_none, run_real_path_file, check_none},
    {"close@real_path_close", prep_none, run_real_path_file, check_none},
    {"renameat2@rename_preserve", prep_none, run_rename_preserve, check_renamed},
    {"flock@lock", prep_open_rw, run_lock, check_none},
    {"flock@try_lock", prep_open_rw, run_try_lock, check_none},
    {"flock@downgrade_lock", prep_locked, run_downgrade, check_none},
    {"flock@unlock", prep_locked, run_unlock, check_none},
#endif
};

static const link_case *case_of(const char *site)
{
    return (const link_case *)case_named(cases, sizeof cases / sizeof cases[0], sizeof cases[0], site);
}

/* The case of `site` with errno `err` injected `count` times; the call must return `want`. */
static void link_fault(void **state, const char *site, int err, int count, cio_err want, const char *fault)
{
    const link_case *c = case_of(site);
    fx f;
    fx_open(state, &f);
    c->prep(&f);
    int fds = fd_count();
    unsigned injected = run_with_fault(&f, c->run, site, c->site, 'e', err, count, 0, want, fault);
    if (count > 0 && injected != (unsigned)count)
        fail_msg("%s: %u faults injected, want %d", site, injected, count);
    c->check(&f, want);
    assert_int_equal(fd_count(), fds);
    covered(site, fault);
    fx_close(&f);
}

/* The calls that cannot block and so run outside the cancellation bracket: EINTR is not theirs. */
static bool no_bracket(const char *site)
{
    return strncmp(site, "isatty@", 7) == 0 || strncmp(site, "clock_getres@", 13) == 0 ||
           strncmp(site, "close@", 6) == 0 || strcmp(site, "flock@unlock") == 0;
}

static void test_links_eintr_storms(void **state)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!no_bracket(cases[i].site))
            link_fault(state, cases[i].site, EINTR, 50, CIO_OK, "EINTR");
}

static const errno_case errors[] = {
    E("symlinkat@sym_link", EEXIST, CIO_E_PATH_ALREADY_EXISTS),
    E("symlinkat@sym_link", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("symlinkat@sym_link", EROFS, CIO_E_READ_ONLY_FILE_SYSTEM),
    E("readlinkat@read_link", EINVAL, CIO_E_NOT_LINK),
    E("readlinkat@read_link", EACCES, CIO_E_ACCESS_DENIED),
    E("linkat@hard_link", EXDEV, CIO_E_CROSS_DEVICE),
    E("linkat@hard_link", EMLINK, CIO_E_LINK_QUOTA_EXCEEDED),
    E("linkat@hard_link", EPERM, CIO_E_PERMISSION_DENIED),
    E("utimensat@set_timestamps", EPERM, CIO_E_PERMISSION_DENIED),
    E("utimensat@set_timestamps", EROFS, CIO_E_READ_ONLY_FILE_SYSTEM),
    /* isatty's "no" is its failure: an injected one reads as "not a terminal" */
    E("isatty@is_tty", ENOTTY, CIO_OK),
    E("clock_getres@clock_resolution", EINVAL, CIO_E_CLOCK_UNAVAILABLE),
#if !defined(CIO_OS_WASI)
    E("fchmod@set_permissions", EPERM, CIO_E_PERMISSION_DENIED),
    E("fchmod@set_permissions", EROFS, CIO_E_READ_ONLY_FILE_SYSTEM),
    E("fchmodat@set_file_permissions", ENOTSUP, CIO_E_OPERATION_UNSUPPORTED),
    E("fchmodat@set_file_permissions", EACCES, CIO_E_ACCESS_DENIED),
    E("fchown@set_owner", EPERM, CIO_E_PERMISSION_DENIED),
    E("fchownat@set_file_owner", EPERM, CIO_E_PERMISSION_DENIED),
    E("fchownat@set_file_owner", ENOENT, CIO_E_FILE_NOT_FOUND),
#endif
#if defined(CIO_OS_LINUX)
    E("linkat@link_fd", EXDEV, CIO_E_CROSS_DEVICE),
    E("readlinkat@real_path", ENOENT, CIO_E_FILE_NOT_FOUND), /* /proc not mounted */
    E("readlinkat@real_path", ENAMETOOLONG, CIO_E_NAME_TOO_LONG),
    E("openat@real_path_open", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("openat@real_path_open", EACCES, CIO_E_ACCESS_DENIED),
    E("close@real_path_close", EINTR, CIO_OK), /* the descriptor is gone all the same */
    E("renameat2@rename_preserve", EEXIST, CIO_E_PATH_ALREADY_EXISTS),
    E("renameat2@rename_preserve", EINVAL, CIO_E_OPERATION_UNSUPPORTED),
    E("renameat2@rename_preserve", ENOSYS, CIO_E_OPERATION_UNSUPPORTED),
    E("renameat2@rename_preserve", EXDEV, CIO_E_CROSS_DEVICE),
    E("flock@lock", ENOLCK, CIO_E_SYSTEM_RESOURCES),
    E("flock@lock", EOPNOTSUPP, CIO_E_FILE_LOCKS_UNSUPPORTED),
    E("flock@try_lock", ENOLCK, CIO_E_SYSTEM_RESOURCES),
    E("flock@downgrade_lock", ENOLCK, CIO_E_SYSTEM_RESOURCES),
    E("flock@unlock", ENOLCK, CIO_OK),
#endif
};

static void test_links_errors(void **state)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        link_fault(state, errors[i].site, errors[i].err, 1, errors[i].want, errors[i].name);
}

#if defined(CIO_OS_LINUX)
/* linkat(AT_EMPTY_PATH) without CAP_DAC_READ_SEARCH says ENOENT: the /proc/self/fd name is linked
 * instead (its own site), and a failure there is the caller's error. */
static void test_link_fd_fallback(void **state)
{
    fx f;
    fx_open(state, &f);
    prep_open_rw(&f);
    assert_int_equal(cio__fault_errno("linkat@link_fd", ENOENT, 0, 1), 1);
    assert_ok(run_file_hard_link(&f));
    assert_int_equal(cio__fault_injected("linkat@link_fd"), 1);
    cio__sys_reset();
    check_new_exists(&f, CIO_OK);
    covered("linkat@link_fd", "ENOENT");
    /* The fallback's own failure is what the caller sees. */
    assert_int_equal(cio__fault_errno("linkat@link_fd", ENOENT, 0, -1), 1);
    assert_int_equal(cio__fault_errno("linkat@link_proc", EXDEV, 0, 1), 1);
    assert_err(run_file_hard_link(&f), CIO_E_CROSS_DEVICE);
    assert_int_equal(cio__fault_injected("linkat@link_proc"), 1);
    covered("linkat@link_proc", "EXDEV");
    cio__sys_reset();
    fx_close(&f);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_links_eintr_storms),
        CIO_TESTS(test_links_errors),
#if defined(CIO_OS_LINUX)
        CIO_TESTS(test_link_fd_fallback),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
