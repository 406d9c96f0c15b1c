/*
 * Fault injection through the OS call table, Windows files half (tests/test_faults.c explains the
 * method; its OS-neutral cases run on Windows too, its POSIX ones are skips there; the sockets,
 * clocks, futex, cancel and pool sites are in tests/test_faults_windows_os.c): every Windows call site
 * of spec/oscalls.yaml gets its faults here, in the call's own convention (an NTSTATUS returned by
 * ntdll, a Win32 error behind FALSE/NULL, a WSA error behind SOCKET_ERROR/INVALID_SOCKET):
 * STATUS_CANCELLED / WSAEINTR storms (retried; a cancel during an endless one still cancels), the
 * errors the OS gives at each site (the exact mapped cio error; the data read back), short
 * transfers, STATUS_DISK_FULL in the middle of cio_file_write_all, SHARING_VIOLATION retried with
 * backoff and then SharingViolation, too many open files and sockets, no memory and no thread (async
 * runs inline, concurrent is CIO_E_CONCURRENCY_UNAVAILABLE), a cancel whose kick fails.
 *
 * Leaks: GetProcessHandleCount answers 0 under Wine 8, so tests/faults.h counts the open handles by
 * probing handle values (fd_count) and the threads with a toolhelp snapshot (thread_count). Worker
 * threads may be born or retire during a case, so handle and thread counts are compared after the
 * pool has settled (settled_equal).
 */
#include "faults.h"
#include "faults_windows.h"
#include "faults_fs.h"

#include "cio/batch.h"
#include "cio/ntstatus.h"

#define ST(x) ((int)(CIO_NTSTATUS_##x))

int cio__win_rename_ex_known(bool forget); /* src/os/fs_windows_paths.c */
void cio__win_rename_ex_assume(int known);

/* The site a Threaded read or write reaches on this case's backend: the iocp flavour reads and writes
 * the files it opens (asynchronous handles) as overlapped NtReadFile/NtWriteFile on its port
 * (src/evented/fs_rw_iocp.c), with the same maps and retry rules. */
static const char *rw_site(void **state, const char *site)
{
    if (fx_backend_of(state) != FX_IOCP)
        return site;
    if (strcmp(site, "NtQueryInformationFile@io_query") == 0) {
        print_message("      not here: %s (the iocp flavour asks the handle's mode: test_iocp_files_faults)\n", site);
        return NULL;
    }
    if (strcmp(site, "NtReadFile@rw_once") == 0)
        return "NtReadFile@iocp_file_read";
    if (strcmp(site, "NtWriteFile@rw_once") == 0)
        return "NtWriteFile@iocp_file_write";
    return site;
}

/* ---- file system: the cases --------------------------------------------------------------------- */

typedef struct win_case {
    const char *name;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*check)(fx *f, cio_err err);
} win_case;

static cio_err run_open_missing(fx *f)
{
    cio_file h;
    return cio_dir_open_file(f->io, f->dir, "no/such", NULL, &h);
}

static cio_err run_open_dir_no_follow(fx *f)
{
    static const cio_open_dir_options o = {true, true};
    cio_dir d;
    cio_err err = cio_dir_open_dir(f->io, f->dir, "d", &o, &d);
    if (err == CIO_OK)
        cio_dir_close(f->io, d);
    return err;
}

static cio_err run_make_path(fx *f)
{
    bool created = false;
    cio_err err = cio_dir_create_dir_path(f->io, f->dir, "d/e", 0, &created);
    if (err == CIO_OK)
        assert_true(created);
    if (err == CIO_OK) /* again: it exists (is_directory checks it) */
        err = cio_dir_create_dir_path(f->io, f->dir, "d/e", 0, &created);
    return err;
}

static cio_err run_exe_open(fx *f)
{
    cio_file h;
    cio_err err = cio_process_executable_open(f->io, NULL, &h);
    if (err == CIO_OK) {
        unsigned char mz[2];
        size_t n = 0;
        assert_ok(cio_file_read_all(f->io, h, mz, 2, &n));
        assert_true(n == 2 && mz[0] == 'M' && mz[1] == 'Z');
        cio_file_close(f->io, h);
    }
    return err;
}

/* Links and metadata (src/os/fs_windows_links.c): a hard link "new" to "f". */
static cio_err run_hard_link(fx *f)
{
    return cio_dir_hard_link(f->io, f->dir, "f", f->dir, "new", 0);
}

static cio_err run_real_path(fx *f)
{
    char buf[1024];
    size_t n = 0;
    cio_err err = cio_dir_real_path_file(f->io, f->dir, "f", buf, sizeof buf, &n);
    if (err == CIO_OK && (n < 2 || strcmp(buf + n - 2, "\\f") != 0))
        fail_msg("real path '%s'", buf);
    return err;
}

static cio_err run_real_path_cwd(fx *f)
{
    char buf[1024];
    size_t n = 0;
    return cio_dir_real_path(f->io, cio_dir_cwd(), buf, sizeof buf, &n);
}

static cio_err run_rename_preserve(fx *f)
{
    return cio_dir_rename_preserve(f->io, f->dir, "f", f->dir, "moved");
}

/* The device_io_control operation: FSCTL_PIPE_PEEK on a pipe with 5 bytes waiting (both ends
 * closed afterwards: nothing leaks). */
static cio_err run_device_io_control(fx *f)
{
    HANDLE r, w;
    assert_true(CreatePipe(&r, &w, NULL, 0));
    DWORD wrote = 0;
    assert_true(WriteFile(w, "hello", 5, &wrote, NULL));
    struct {
        ULONG state, available, messages, length;
    } peek = {0, 0, 0, 0};
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_DEVICE_IO_CONTROL;
    op.u.device_io_control.file.handle = r;
    op.u.device_io_control.code = 0x0011400Cul; /* FSCTL_PIPE_PEEK */
    op.u.device_io_control.out = &peek;
    op.u.device_io_control.out_len = sizeof peek;
    cio_err err = cio_operate(f->io, &op);
    if (err == CIO_OK)
        err = op.err;
    if (err == CIO_OK)
        assert_int_equal(peek.available, 5);
    CloseHandle(r);
    CloseHandle(w);
    return err;
}

/* Locks (src/os/fs_windows_lock.c): an exclusive lock taken and released; a try. */
static cio_err run_lock(fx *f)
{
    cio_err err = cio_file_lock(f->io, f->file, CIO_LOCK_EXCLUSIVE);
    cio_file_unlock(f->io, f->file);
    return err;
}

static cio_err run_try_lock_held(fx *f)
{
    bool got = true;
    cio_err err = cio_file_try_lock(f->io, f->file, CIO_LOCK_SHARED, &got);
    if (err == CIO_OK && got)
        fail_msg("try_lock: acquired although LockFileEx said the lock is held");
    cio_file_unlock(f->io, f->file);
    return err;
}

static void prep_locked(fx *f)
{
    prep_open_rw(f);
    assert_ok(cio_file_lock(f->io, f->file, CIO_LOCK_EXCLUSIVE));
}

/* An unlock whose UnlockFileEx fails reports nothing (unlock never fails); the close releases it. */
static cio_err run_unlock(fx *f)
{
    cio_file_unlock(f->io, f->file);
    return CIO_OK;
}

static const win_case cases[] = {
    {"lock", prep_open_rw, run_lock, check_none},
    {"try_lock_held", prep_open_rw, run_try_lock_held, check_none},
    {"unlock", prep_locked, run_unlock, check_none},
    {"hard_link", NULL, run_hard_link, check_created},
    {"real_path", NULL, run_real_path, check_none},
    {"real_path_cwd", NULL, run_real_path_cwd, check_none},
    {"rename_preserve", NULL, run_rename_preserve, check_renamed},
    {"open_file", NULL, run_open_file, check_none},
    {"open_no_follow", NULL, run_open_no_follow, check_none},
    {"open_missing", NULL, run_open_missing, check_none},
    {"create_file", NULL, run_create_file, check_created},
    {"open_dir", NULL, run_open_dir, check_none},
    {"open_dir_no_follow", NULL, run_open_dir_no_follow, check_none},
    {"create_dir", NULL, run_create_dir, check_dir_made},
    {"make_path", NULL, run_make_path, check_none},
    {"stat_file", NULL, run_stat_file, check_none},
    {"rename", NULL, run_rename, check_renamed},
    {"delete_file", NULL, run_delete_file, check_deleted},
    {"delete_dir", NULL, run_delete_dir, check_dir_deleted},
    {"access", NULL, run_access, check_none},
    {"read_all", prep_open_rw, run_read_all, check_none},
    {"write_all", prep_open_rw, run_write_all, check_written},
    {"read_positional", prep_open_rw, run_read_positional, check_none},
    {"write_positional", prep_open_rw, run_write_positional, check_written},
    {"seek", prep_open_rw, run_seek, check_none},
    {"set_length", prep_open_rw, run_set_length, check_length},
    {"sync", prep_open_rw, run_sync, check_none},
    {"file_stat", prep_open_rw, run_file_stat, check_none},
    {"set_timestamps", prep_open_rw, run_set_timestamps, check_timestamps},
    {"iterate", prep_many, run_iterate, check_many_cleanup},
    {"exe_open", NULL, run_exe_open, check_none},
    {"device_io_control", NULL, run_device_io_control, check_none},
};

static const win_case *case_of(const char *name)
{
    return (const win_case *)case_named(cases, sizeof cases / sizeof cases[0], sizeof cases[0], name);
}

/* One case with one fault at `site`: 'e' the error `code` (count times, -1 forever), 's' transfers of
 * at most `max` bytes. The exact result, the data (check), no handle leaked. */
static void win_fault(void **state, const char *site, const char *what, char mode, int code, int count, size_t max,
                      cio_err want, const char *fault)
{
    site = rw_site(state, site);
    if (site == NULL)
        return;
    fx f;
    fx_open(state, &f);
    const win_case *c = case_of(what);
    if (c->prep != NULL)
        c->prep(&f);
    /* A rename's classic class (info_set): where NT has FileRenameInformationEx (Windows 10 1607+)
     * dir_rename would not reach it, so the case runs as on an NT without it (Wine 8 is one). */
    bool classic = strcmp(site, "NtSetInformationFile@info_set") == 0 && strcmp(what, "rename") == 0;
    if (classic)
        cio__win_rename_ex_assume(-1);
    int handles = fd_count();
    unsigned injected = run_with_fault(&f, c->run, site, what, mode, code, count, max, want, fault);
    if (classic)
        (void)cio__win_rename_ex_known(true); /* the next rename asks NT again */
    if (mode == 'e' && count > 0 && injected != (unsigned)count)
        fail_msg("%s (%s): %u faults injected, want %d", site, what, injected, count);
    c->check(&f, want);
    case_done(&f, handles, site, what, fault);
}

typedef struct win_error {
    const char *site;
    const char *what;
    int code;
    const char *name;
    cio_err want;
} win_error;

#define W(site, what, code, want)                   \
    {                                               \
        site, what, ST(code), "STATUS_" #code, want \
    }

/* STATUS_CANCELLED is the NT call's EINTR (a cancel's CancelSynchronousIo, or a stray one): 50 in a
 * row are retried and the operation completes. */
static void test_win_fs_cancelled_storms(void **state)
{
    static const struct {
        const char *site, *what;
    } storms[] = {
        {"NtCreateFile@win_open", "open_file"},
        {"NtCreateFile@win_open", "create_file"},
        {"NtCreateFile@win_open", "open_dir"},
        {"NtReadFile@rw_once", "read_all"},
        {"NtWriteFile@rw_once", "write_all"},
        {"NtReadFile@rw_once", "read_positional"},
        {"NtWriteFile@rw_once", "write_positional"},
        {"NtQueryInformationFile@info_query", "stat_file"},
        {"NtSetInformationFile@info_set", "rename"},
        {"NtSetInformationFile@info_set", "delete_file"},
        {"NtQueryInformationFile@io_query", "read_positional"},
        {"NtSetInformationFile@io_set", "seek"},
        {"NtSetInformationFile@io_set", "set_length"},
        {"NtFlushBuffersFile@file_sync", "sync"},
        {"NtQueryDirectoryFile@dir_read", "iterate"},
    };
    for (size_t i = 0; i < sizeof storms / sizeof storms[0]; i++)
        win_fault(state, storms[i].site, storms[i].what, 'e', ST(CANCELLED), 50, 0, CIO_OK, "STATUS_CANCELLED");
}

static const win_error fs_errors[] = {
    W("NtCreateFile@win_open", "open_file", TOO_MANY_OPENED_FILES, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    W("NtCreateFile@win_open", "open_file", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtCreateFile@win_open", "open_file", INSUFFICIENT_RESOURCES, CIO_E_SYSTEM_RESOURCES),
    W("NtCreateFile@win_open", "create_file", DISK_FULL, CIO_E_NO_SPACE_LEFT),
    W("NtCreateFile@win_open", "create_file", TOO_MANY_OPENED_FILES, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    W("NtCreateFile@win_open", "create_file", MEDIA_WRITE_PROTECTED, CIO_E_READ_ONLY_FILE_SYSTEM),
    W("NtCreateFile@win_open", "open_dir", TOO_MANY_OPENED_FILES, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    W("NtCreateFile@win_open", "create_dir", DISK_FULL, CIO_E_NO_SPACE_LEFT),
    W("NtReadFile@rw_once", "read_all", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtReadFile@rw_once", "read_all", INSUFFICIENT_RESOURCES, CIO_E_SYSTEM_RESOURCES),
    W("NtWriteFile@rw_once", "write_all", DISK_FULL, CIO_E_NO_SPACE_LEFT),
    W("NtWriteFile@rw_once", "write_all", FILE_LOCK_CONFLICT, CIO_E_LOCK_VIOLATION),
    W("NtReadFile@rw_once", "read_positional", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtWriteFile@rw_once", "write_positional", DISK_FULL, CIO_E_NO_SPACE_LEFT),
    W("NtQueryInformationFile@io_query", "read_positional", ACCESS_DENIED, CIO_E_UNSEEKABLE),
    W("NtSetInformationFile@io_set", "seek", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtSetInformationFile@io_set", "set_length", DISK_FULL, CIO_E_FILE_TOO_BIG),
    W("NtSetInformationFile@io_set", "set_timestamps", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtFlushBuffersFile@file_sync", "sync", DISK_FULL, CIO_E_NO_SPACE_LEFT),
    W("NtFlushBuffersFile@file_sync", "sync", UNEXPECTED_NETWORK_ERROR, CIO_E_INPUT_OUTPUT),
    W("NtQueryDirectoryFile@dir_read", "iterate", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtQueryDirectoryFile@dir_read", "iterate", INSUFFICIENT_RESOURCES, CIO_E_SYSTEM_RESOURCES),
    W("NtQueryInformationFile@info_query", "stat_file", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtQueryInformationFile@info_query", "file_stat", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtSetInformationFile@info_set", "rename", NOT_SAME_DEVICE, CIO_E_CROSS_DEVICE),
    W("NtSetInformationFile@info_set", "hard_link", OBJECT_NAME_COLLISION, CIO_E_PATH_ALREADY_EXISTS),
    W("NtSetInformationFile@info_set", "hard_link", NOT_SAME_DEVICE, CIO_E_CROSS_DEVICE),
    W("NtSetInformationFile@info_set", "hard_link", TOO_MANY_LINKS, CIO_E_LINK_QUOTA_EXCEEDED),
    W("NtSetInformationFile@info_set", "rename_preserve", OBJECT_NAME_COLLISION, CIO_E_PATH_ALREADY_EXISTS),
    W("NtSetInformationFile@info_set", "rename", ACCESS_DENIED, CIO_E_ACCESS_DENIED),
    W("NtSetInformationFile@info_set", "delete_file", SHARING_VIOLATION, CIO_E_FILE_BUSY),
    W("NtSetInformationFile@info_set", "delete_dir", DIRECTORY_NOT_EMPTY, CIO_E_DIR_NOT_EMPTY),
};

static void test_win_fs_errors(void **state)
{
    for (size_t i = 0; i < sizeof fs_errors / sizeof fs_errors[0]; i++) {
        const win_error *e = &fs_errors[i];
        win_fault(state, e->site, e->what, 'e', e->code, 1, 0, e->want, e->name);
    }
    /* the end of the file (or a pipe's writer gone) is not an error: the read is the end */
    fx f;
    fx_open(state, &f);
    prep_open_rw(&f);
    static const int ends[] = {ST(END_OF_FILE), ST(PIPE_BROKEN)};
    static const char *const names[] = {"STATUS_END_OF_FILE", "STATUS_PIPE_BROKEN"};
    const char *read_site = rw_site(state, "NtReadFile@rw_once");
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(cio__fault_errno(read_site, ends[i], 0, 1), 1);
        unsigned char buf[64];
        size_t n = 99;
        assert_ok(cio_file_read_streaming(f.io, f.file, buf, sizeof buf, &n));
        cio__sys_reset();
        assert_int_equal(n, 0);
        covered(read_site, names[i]);
    }
    fx_close(&f);
}

/* SHARING_VIOLATION and DELETE_PENDING on an open are retried with backoff (1, 2, 4 ... ms, nine
 * tries), then SharingViolation; a violation that clears in time is not an error at all. */
static void test_win_sharing_violation_backoff(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_io io = f.io;
    int handles = fd_count();
    assert_int_equal(cio__fault_errno("NtCreateFile@win_open", ST(SHARING_VIOLATION), 0, -1), 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(run_open_file(&f), CIO_E_SHARING_VIOLATION);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
    unsigned tries = cio__fault_injected("NtCreateFile@win_open");
    cio__sys_reset();
    assert_int_equal(tries, 9);
    if (ms < 255)
        fail_msg("backoff: gave up after %lld ms, want at least 1 + 2 + ... + 128 = 255", (long long)ms);
    covered("NtCreateFile@win_open", "STATUS_SHARING_VIOLATION-backoff");
    cio__fault_reset();

    assert_int_equal(cio__fault_errno("NtCreateFile@win_open", ST(DELETE_PENDING), 0, -1), 1);
    assert_err(run_create_file(&f), CIO_E_SHARING_VIOLATION);
    cio__sys_reset();
    check_created(&f, CIO_E_SHARING_VIOLATION);
    covered("NtCreateFile@win_open", "STATUS_DELETE_PENDING-backoff");
    cio__fault_reset();

    assert_int_equal(cio__fault_errno("NtCreateFile@win_open", ST(SHARING_VIOLATION), 0, 3), 1);
    assert_ok(run_open_file(&f));
    assert_int_equal(cio__fault_injected("NtCreateFile@win_open"), 3);
    cio__sys_reset();
    covered("NtCreateFile@win_open", "STATUS_SHARING_VIOLATION-cleared");
    assert_handles(handles);
    fx_close(&f);
}

/* Short transfers (7 bytes a call): the loops above the slots complete with the right data. */
static void test_win_fs_short_transfers(void **state)
{
    win_fault(state, "NtReadFile@rw_once", "read_all", 's', 0, -1, 7, CIO_OK, "short");
    win_fault(state, "NtWriteFile@rw_once", "write_all", 's', 0, -1, 7, CIO_OK, "short");
    win_fault(state, "NtReadFile@rw_once", "read_positional", 's', 0, -1, 7, CIO_OK, "short");
    win_fault(state, "NtWriteFile@rw_once", "write_positional", 's', 0, -1, 7, CIO_OK, "short");
}

/* STATUS_DISK_FULL in the middle of cio_file_write_all: three writes of 4000 bytes get through, the
 * fourth fails. NoSpaceLeft comes back, and the file holds those 12000 bytes exactly once; the same
 * through positional writes at an offset. */
static _Atomic int disk_full_calls;

static int32_t write_then_disk_full(void *h, void *event, void *apc, void *apc_context, cio_nt_io_status_block *iosb,
                                    const void *buf, uint32_t len, int64_t *offset, uint32_t *key)
{
    if (atomic_fetch_add(&disk_full_calls, 1) >= 3)
        return (int32_t)CIO_NTSTATUS_DISK_FULL;
    return (cio__sys_default.NtWriteFile)(h, event, apc, apc_context, iosb, buf, len > 4000 ? 4000 : len, offset, key);
}

static void test_win_disk_full_mid_write_all(void **state)
{
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    cio_file h;
    assert_ok(cio_dir_create_file(f.io, f.dir, "g", NULL, &h));
    bool iocp = fx_backend_of(state) == FX_IOCP; /* the file is asynchronous: fs_rw_iocp.c's site */
    const char *site = iocp ? "NtWriteFile@iocp_file_write" : "NtWriteFile@rw_once";
    atomic_store(&disk_full_calls, 0);
    if (iocp)
        cio__sys_set(NtWriteFile__iocp_file_write, write_then_disk_full);
    else
        cio__sys_set(NtWriteFile__rw_once, write_then_disk_full);
    write_all_until_full(&f, h, "g");
    assert_int_equal(atomic_load(&disk_full_calls), 4);
    print_message("fault-covered: %s STATUS_DISK_FULL-mid-write_all\n", site);

    assert_ok(cio_dir_create_file(f.io, f.dir, "h", NULL, &h));
    atomic_store(&disk_full_calls, 0);
    if (iocp)
        cio__sys_set(NtWriteFile__iocp_file_write, write_then_disk_full);
    else
        cio__sys_set(NtWriteFile__rw_once, write_then_disk_full);
    write_positional_until_full(&f, h, "h");
    print_message("fault-covered: %s STATUS_DISK_FULL-mid-write_positional\n", site);
    assert_handles(handles);
    fx_close(&f);
}

/* dir_rename with POSIX semantics (src/os/fs_windows_paths.c): FileRenameInformationEx at
 * NtSetInformationFile@rename_ex first, the classic FileRenameInformation at @info_set when the
 * answer says the OS (remembered) or the file system (that call only) lacks it. Wine 8 lacks it
 * (STATUS_NOT_IMPLEMENTED), so the other cases take the fallback; each case here first makes
 * dir_rename forget what it learned, so that the site is asked, and injects its answer once: the
 * result, whether the classic call ran, what is remembered, the file system, no handle leaked. */
static void rename_ex_case(void **state, int code, int count, const char *fault, cio_err want, unsigned classic_calls,
                           int known)
{
    static const char site[] = "NtSetInformationFile@rename_ex";
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    (void)cio__win_rename_ex_known(true);
    assert_int_equal(cio__fault_errno(site, code, 0, count), 1);
    assert_int_equal(cio__fault_watch("NtSetInformationFile@info_set"), 1);
    cio_err err = run_rename(&f);
    unsigned injected = cio__fault_injected(site);
    unsigned classic = cio__fault_hits("NtSetInformationFile@info_set");
    cio__sys_reset();
    if (err != want)
        fail_msg("rename with %s at %s: got %s, want %s", fault, site, cio_err_name(err), cio_err_name(want));
    assert_int_equal(injected, (unsigned)count);
    if (classic != classic_calls)
        fail_msg("rename with %s at %s: %u classic renames, want %u", fault, site, classic, classic_calls);
    assert_int_equal(cio__win_rename_ex_known(false), known);
    check_renamed(&f, want);
    if (known < 0) {
        /* Remembered: the next rename goes straight to the classic class. */
        unsigned before = cio__fault_hits(site); /* the counters outlive cio__sys_reset */
        assert_int_equal(cio__fault_watch(site), 1);
        assert_ok(cio_dir_rename(f.io, f.dir, "moved", f.dir, "g"));
        unsigned asked = cio__fault_hits(site) - before;
        cio__sys_reset();
        assert_int_equal(asked, 0);
    }
    case_done(&f, handles, site, "rename", fault);
}

static void test_win_rename_posix_semantics(void **state)
{
    /* NT without the class (Windows before 10 1607; Wine 8 says NOT_IMPLEMENTED): remembered. */
    rename_ex_case(state, ST(NOT_IMPLEMENTED), 1, "STATUS_NOT_IMPLEMENTED", CIO_OK, 1, -1);
    rename_ex_case(state, ST(INVALID_INFO_CLASS), 1, "STATUS_INVALID_INFO_CLASS", CIO_OK, 1, -1);
    /* A file system without it (FAT) or refusing a flag: this call falls back, nothing is remembered. */
    rename_ex_case(state, ST(INVALID_PARAMETER), 1, "STATUS_INVALID_PARAMETER", CIO_OK, 1, 0);
    rename_ex_case(state, ST(NOT_SUPPORTED), 1, "STATUS_NOT_SUPPORTED", CIO_OK, 1, 0);
    /* A real failure is the rename's answer, through nt_rename; no classic rename after it. */
    rename_ex_case(state, ST(ACCESS_DENIED), 1, "STATUS_ACCESS_DENIED", CIO_E_ACCESS_DENIED, 0, 0);
    rename_ex_case(state, ST(NOT_SAME_DEVICE), 1, "STATUS_NOT_SAME_DEVICE", CIO_E_CROSS_DEVICE, 0, 0);
    rename_ex_case(state, ST(SHARING_VIOLATION), 1, "STATUS_SHARING_VIOLATION", CIO_E_FILE_BUSY, 0, 0);
    rename_ex_case(state, ST(DIRECTORY_NOT_EMPTY), 1, "STATUS_DIRECTORY_NOT_EMPTY", CIO_E_DIR_NOT_EMPTY, 0, 0);
    /* STATUS_CANCELLED is retried at the site; Wine's own answer then sends it to the classic class. */
    rename_ex_case(state, ST(CANCELLED), 50, "STATUS_CANCELLED", CIO_OK, 1, -1);
}

/* NtClose reports a failure after the handle is gone (fail: ntstatus, after: true): every operation
 * still completes, nothing retries the close, no handle leaks. Covers each site an operation
 * reaches. */
static void test_win_close_fails(void **state)
{
    static const char *const sites[] = {
        "NtClose@open_file_link", "NtClose@open_dir_link", "NtClose@create_dir", "NtClose@is_directory",
        "NtClose@rename",         "NtClose@delete_path",   "NtClose@stat_file",  "NtClose@access",
        "NtClose@dir_close",      "NtClose@file_close",
    };
    static const char *const ops[] = {
        "open_no_follow", "open_dir_no_follow", "create_dir", "make_path", "rename",    "delete_file",
        "delete_dir",     "stat_file",          "access",     "open_dir",  "open_file", "iterate",
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        fx f;
        fx_open(state, &f);
        const win_case *c = case_of(ops[i]);
        if (c->prep != NULL)
            c->prep(&f);
        int handles = fd_count();
        assert_int_equal(cio__fault_errno("NtClose", ST(INVALID_HANDLE), 0, -1), 10);
        cio_err err = c->run(&f);
        unsigned injected[10];
        for (size_t k = 0; k < 10; k++)
            injected[k] = cio__fault_injected(sites[k]);
        cio__sys_reset();
        if (err != CIO_OK)
            fail_msg("%s with every NtClose failing: %s", ops[i], cio_err_name(err));
        c->check(&f, err);
        assert_handles(handles);
        for (size_t k = 0; k < 10; k++)
            if (injected[k] > 0)
                print_message("fault-covered: %s STATUS_INVALID_HANDLE-after-close\n", sites[k]);
        fx_close(&f);
    }
}

/* The no-follow directory open whose reparse-tag query fails closes its handle (NtClose@open_dir_link,
 * failing after the close too): the query's error comes back, no handle leaks. */
static void test_win_open_dir_link_close(void **state)
{
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    assert_int_equal(cio__fault_errno("NtQueryInformationFile@info_query", ST(ACCESS_DENIED), 0, 1), 1);
    assert_int_equal(cio__fault_errno("NtClose@open_dir_link", ST(INVALID_HANDLE), 0, -1), 1);
    assert_err(run_open_dir_no_follow(&f), CIO_E_ACCESS_DENIED);
    unsigned closes = cio__fault_injected("NtClose@open_dir_link");
    cio__sys_reset();
    assert_int_equal(closes, 1);
    assert_handles(handles);
    covered("NtClose@open_dir_link", "STATUS_INVALID_HANDLE-after-close");
    covered("NtQueryInformationFile@info_query", "STATUS_ACCESS_DENIED-reparse-tag");
    fx_close(&f);
}

/* No memory in the file system half: SystemResources, nothing changed, nothing leaked; the
 * refinement of FileNotFound needs no memory to stay correct; the current directory is not needed
 * for a path relative to a directory handle. */
/* LockFileEx and UnlockFileEx: the errors try_once maps, its event, a lock held by another (ERROR_LOCK_VIOLATION:
 * the blocking lock waits and tries again; try_lock says "not acquired"), an unlock that fails. */
static void test_win_lock_faults(void **state)
{
    win_fault(state, "LockFileEx@lock", "lock", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0, CIO_E_SYSTEM_RESOURCES,
              "ERROR_NOT_ENOUGH_MEMORY");
    win_fault(state, "LockFileEx@lock", "lock", 'e', ERROR_NOT_SUPPORTED, 1, 0, CIO_E_FILE_LOCKS_UNSUPPORTED,
              "ERROR_NOT_SUPPORTED");
    win_fault(state, "LockFileEx@lock", "lock", 'e', ERROR_ACCESS_DENIED, 1, 0, CIO_E_UNEXPECTED,
              "ERROR_ACCESS_DENIED");
    win_fault(state, "LockFileEx@lock", "lock", 'e', ERROR_LOCK_VIOLATION, 3, 0, CIO_OK, "ERROR_LOCK_VIOLATION");
    win_fault(state, "LockFileEx@lock", "try_lock_held", 'e', ERROR_LOCK_VIOLATION, 1, 0, CIO_OK,
              "ERROR_LOCK_VIOLATION-try");
    win_fault(state, "UnlockFileEx@unlock", "unlock", 'e', ERROR_NOT_LOCKED, 1, 0, CIO_OK, "ERROR_NOT_LOCKED");
    /* the attempt's event (no completion packet): none to be had is SystemResources with no lock
     * taken; its close failing changes nothing (the injector closes it first) */
    win_fault(state, "CreateEventW@lock_event", "lock", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0, CIO_E_SYSTEM_RESOURCES,
              "ERROR_NOT_ENOUGH_MEMORY");
    win_fault(state, "CloseHandle@lock_event", "lock", 'e', ERROR_INVALID_HANDLE, 1, 0, CIO_OK, "ERROR_INVALID_HANDLE");
}

static void test_win_fs_memory(void **state)
{
    win_fault(state, "malloc@win_path_convert", "open_file", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
    win_fault(state, "malloc@win_refine_not_found", "open_missing", 'e', ENOMEM, 1, 0, CIO_E_FILE_NOT_FOUND, "ENOMEM");
    win_fault(state, "malloc@win_create_dir_path", "make_path", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
    win_fault(state, "calloc@win_rename_info", "rename", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
    win_fault(state, "calloc@win_link_info", "hard_link", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
    win_fault(state, "calloc@win_rename_preserve_info", "rename_preserve", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES,
              "ENOMEM");
    win_fault(state, "malloc@win_real_path", "real_path", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
    win_fault(state, "GetFinalPathNameByHandleW@real_path", "real_path", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0,
              CIO_E_SYSTEM_RESOURCES, "ERROR_NOT_ENOUGH_MEMORY");
    win_fault(state, "GetFinalPathNameByHandleW@real_path", "real_path", 'e', ERROR_ACCESS_DENIED, 1, 0,
              CIO_E_ACCESS_DENIED, "ERROR_ACCESS_DENIED");
    win_fault(state, "GetCurrentDirectoryW@real_path_cwd", "real_path_cwd", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0,
              CIO_E_SYSTEM_RESOURCES, "ERROR_NOT_ENOUGH_MEMORY");
    win_fault(state, "malloc@exe_open", "exe_open", 'e', ENOMEM, 1, 0, CIO_E_SYSTEM_RESOURCES, "ENOMEM");
    win_fault(state, "GetCurrentDirectoryW@win_path_convert", "open_file", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0, CIO_OK,
              "ERROR_NOT_ENOUGH_MEMORY");
    win_fault(state, "GetCurrentDirectoryW@exe_open", "exe_open", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0, CIO_OK,
              "ERROR_NOT_ENOUGH_MEMORY");
}

/* DeviceIoControl (the device_io_control operation): a Win32 error behind FALSE. An aborted call
 * (CancelSynchronousIo with no request behind it) is made again; the others are mapped. */
static void test_win_device_io_control(void **state)
{
    win_fault(state, "DeviceIoControl@device_io_control", "device_io_control", 'e', ERROR_OPERATION_ABORTED, 50, 0,
              CIO_OK, "ERROR_OPERATION_ABORTED");
    win_fault(state, "DeviceIoControl@device_io_control", "device_io_control", 'e', ERROR_INVALID_FUNCTION, 1, 0,
              CIO_E_OPERATION_UNSUPPORTED, "ERROR_INVALID_FUNCTION");
    win_fault(state, "DeviceIoControl@device_io_control", "device_io_control", 'e', ERROR_ACCESS_DENIED, 1, 0,
              CIO_E_ACCESS_DENIED, "ERROR_ACCESS_DENIED");
    win_fault(state, "DeviceIoControl@device_io_control", "device_io_control", 'e', ERROR_NOT_ENOUGH_MEMORY, 1, 0,
              CIO_E_SYSTEM_RESOURCES, "ERROR_NOT_ENOUGH_MEMORY");
}

/* A cancel during an endless STATUS_CANCELLED storm still cancels (the storm never hides the
 * request), and leaves no handle behind. */
typedef struct storm_run_w {
    cio_err (*run)(fx *f);
    fx *f;
} storm_run_w;

static cio_err storm_task(void *p)
{
    storm_run_w *s = (storm_run_w *)p;
    return s->run(s->f);
}

static void storm_cancel(void **state, const char *site, const char *what, int code, unsigned need, const char *fault)
{
    site = rw_site(state, site);
    if (site == NULL)
        return;
    fx f;
    fx_open(state, &f);
    CIO_REQUIRE_THREADS(f.io);
    const win_case *c = case_of(what);
    if (c->prep != NULL)
        c->prep(&f);
    warm_up(f.io);
    int handles = fd_count();
    assert_int_equal(cio__fault_errno(site, code, 0, -1), 1);
    storm_run_w s = {c->run, &f};
    cio_future fut;
    cio_err err = cio_concurrent(f.io, storm_task, &s, sizeof s, &fut);
    if (err != CIO_OK)
        cio__sys_reset();
    CIO_REQUIRE_CONCURRENT(err);
    for (int waited = 0; cio__fault_injected(site) < need && waited < 10000; waited++)
        pause_ms(1);
    err = cio_cancel(f.io, &fut);
    unsigned n = cio__fault_injected(site);
    cio__sys_reset();
    if (n < need)
        fail_msg("%s: the storm did not reach the site (%u)", site, n);
    if (err != CIO_E_CANCELED)
        fail_msg("%s: canceled during a storm: got %s, want Canceled", site, cio_err_name(err));
    c->check(&f, CIO_E_CANCELED);
    if (!settled_at_most(fd_count, handles))
        fail_msg("%s (%s): %d handles open, %d before", site, what, fd_count(), handles);
    covered(site, fault);
    fx_close(&f);
}

static void test_win_cancel_during_storm(void **state)
{
    static const char *const storm = "STATUS_CANCELLED-storm+cancel";
    storm_cancel(state, "NtReadFile@rw_once", "read_all", ST(CANCELLED), 100, storm);
    storm_cancel(state, "NtWriteFile@rw_once", "write_all", ST(CANCELLED), 100, storm);
    storm_cancel(state, "NtCreateFile@win_open", "open_file", ST(CANCELLED), 100, storm);
    storm_cancel(state, "NtFlushBuffersFile@file_sync", "sync", ST(CANCELLED), 100, storm);
    storm_cancel(state, "NtQueryDirectoryFile@dir_read", "iterate", ST(CANCELLED), 100, storm);
    (void)cio__win_rename_ex_known(true); /* so that dir_rename asks FileRenameInformationEx */
    storm_cancel(state, "NtSetInformationFile@rename_ex", "rename", ST(CANCELLED), 100, storm);
    /* a cancel during the sharing violation's backoff (its sleeps are cancelable) */
    storm_cancel(state, "NtCreateFile@win_open", "create_file", ST(SHARING_VIOLATION), 3,
                 "STATUS_SHARING_VIOLATION-backoff+cancel");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_win_fs_cancelled_storms),       CIO_TESTS(test_win_fs_errors),
        CIO_TESTS(test_win_sharing_violation_backoff), CIO_TESTS(test_win_fs_short_transfers),
        CIO_TESTS(test_win_disk_full_mid_write_all),   CIO_TESTS(test_win_close_fails),
        CIO_TESTS(test_win_open_dir_link_close),       CIO_TESTS(test_win_fs_memory),
        CIO_TESTS(test_win_device_io_control),         CIO_TESTS(test_win_lock_faults),
        CIO_TESTS(test_win_cancel_during_storm),       CIO_TESTS(test_win_rename_posix_semantics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
