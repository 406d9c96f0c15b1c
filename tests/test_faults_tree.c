/*
 * Fault injection at the whole-file call sites (src/os/fs_copy_linux.c, src/os/fs_ansi_posix.c):
 * copy_file_range's refusals (EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, EBADF) make the library copy by hand
 * and the copy still equals the source; its real errors are mapped; a short copy_file_range goes on;
 * O_TMPFILE's absence (EISDIR, EOPNOTSUPP) makes the atomic file use a named temporary and still
 * link whole; isatty's "no" and EBADF. Each with an EINTR storm (retried) where the call blocks, the
 * file system checked afterwards and no descriptor leaked. On Windows: SetConsoleMode's failures, on
 * the process's console (CONOUT$) or, with none (Wine under build.py), in a child run with
 * CREATE_NO_WINDOW, which gets a console of its own.
 * Works in the fixture of tests/faults.h ("f": 1000 bytes, "d": a directory); what a case makes is
 * named "new", which fx_close removes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "faults_fs.h"

typedef struct tree_case {
    const char *site;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*check)(fx *f, cio_err err);
} tree_case;

#if defined(CIO_OS_LINUX)
/* "f" (1000 bytes) copied to "new" through cio_file_write_file_positional. */
static cio_err run_write_file(fx *f)
{
    static const cio_open_file_options ro = {CIO_OPEN_READ_ONLY, false, false};
    cio_file in, out;
    assert_ok(cio_dir_open_file(f->io, f->dir, "f", &ro, &in));
    assert_ok(cio_dir_create_file(f->io, f->dir, "new", NULL, &out));
    uint64_t n = 0;
    cio_err err = cio_file_write_file_positional(f->io, out, 0, in, 0, UINT64_MAX, &n);
    if (err == CIO_OK && n != 1000)
        fail_msg("write_file: %llu bytes, want 1000", (unsigned long long)n);
    cio_file_close(f->io, out);
    cio_file_close(f->io, in);
    return err;
}

/* On success "new" equals "f". */
static void check_copied(fx *f, cio_err err)
{
    if (err != CIO_OK)
        return;
    unsigned char buf[2000];
    assert_int_equal(read_back(f, "new", buf, sizeof buf), 1000);
    assert_memory_equal(buf, data, 1000);
}

/* An atomic file "new" (no replace: O_TMPFILE where it can) written and linked. */
static cio_err run_atomic(fx *f)
{
    cio_file_atomic af;
    cio_err err = cio_dir_create_file_atomic(f->io, f->dir, "new", NULL, &af);
    if (err == CIO_OK)
        err = cio_file_write_all(f->io, af.file, data, 1000);
    if (err == CIO_OK)
        err = cio_file_atomic_link(f->io, &af);
    cio_file_atomic_discard(f->io, &af);
    return err;
}

/* "new" is whole after success and absent after failure; no temporary is left either way. */
static void check_atomic(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "new", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
    check_copied(f, err);
    cio_dir_reader r;
    unsigned char buf[2048];
    cio_dir_reader_init(&r, f->dir, buf, sizeof buf);
    cio_dir_entry e[16];
    size_t n;
    do {
        assert_ok(cio_dir_read(f->io, &r, e, 16, &n));
        for (size_t i = 0; i < n; i++)
            if (strncmp(e[i].name, ".cio-atomic-", 12) == 0)
                fail_msg("a temporary stayed: %s", e[i].name);
    } while (n > 0);
}
#endif

#if !defined(CIO_OS_WINDOWS)
static cio_err run_supports_ansi(fx *f)
{
    bool yes = true;
    cio_err err = cio_file_supports_ansi_escape_codes(f->io, f->file, &yes);
    if (err == CIO_OK && yes)
        fail_msg("a regular file said it takes escape codes");
    return err;
}

static cio_err run_enable_ansi(fx *f)
{
    return cio_file_enable_ansi_escape_codes(f->io, f->file);
}

static const tree_case cases[] = {
    {"isatty@ansi_tty", prep_open_rw, run_supports_ansi, check_none},
#if defined(CIO_OS_LINUX)
    {"copy_file_range@write_file_copy", prep_none, run_write_file, check_copied},
    {"openat@create_tmp_file", prep_none, run_atomic, check_atomic},
#endif
};

static const tree_case *case_of(const char *site)
{
    return (const tree_case *)case_named(cases, sizeof cases / sizeof cases[0], sizeof cases[0], site);
}

/* The case of `site` with errno `err` injected `count` times; the call must return `want`. */
static void tree_fault(void **state, const char *site, int err, int count, cio_err want, const char *fault)
{
    const tree_case *c = case_of(site);
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

static void test_tree_eintr_storms(void **state)
{
#if defined(CIO_OS_LINUX)
    tree_fault(state, "copy_file_range@write_file_copy", EINTR, 50, CIO_OK, "EINTR");
    tree_fault(state, "openat@create_tmp_file", EINTR, 50, CIO_OK, "EINTR");
#else
    (void)state;
    CIO_SKIP("no blocking whole-file call site here (copy_file_range and O_TMPFILE are Linux's)");
#endif
}

static const errno_case errors[] = {
    E("isatty@ansi_tty", ENOTTY, CIO_OK), /* "no" is isatty's failure */
    E("isatty@ansi_tty", EBADF, CIO_E_INVALID_ARGUMENT),
#if defined(CIO_OS_LINUX)
    /* The kernel's refusals: the library copies by hand and the copy is whole. */
    E("copy_file_range@write_file_copy", EXDEV, CIO_OK),
    E("copy_file_range@write_file_copy", EINVAL, CIO_OK),
    E("copy_file_range@write_file_copy", ENOSYS, CIO_OK),
    E("copy_file_range@write_file_copy", EOPNOTSUPP, CIO_OK),
    E("copy_file_range@write_file_copy", EBADF, CIO_OK),
    E("copy_file_range@write_file_copy", ENOSPC, CIO_E_NO_SPACE_LEFT),
    E("copy_file_range@write_file_copy", EIO, CIO_E_INPUT_OUTPUT),
    E("copy_file_range@write_file_copy", EFBIG, CIO_E_FILE_TOO_BIG),
    /* No O_TMPFILE (an old kernel: EISDIR; a file system without it: EOPNOTSUPP): a named temporary. */
    E("openat@create_tmp_file", EISDIR, CIO_OK),
    E("openat@create_tmp_file", EOPNOTSUPP, CIO_OK),
    E("openat@create_tmp_file", EINVAL, CIO_OK),
    E("openat@create_tmp_file", EACCES, CIO_E_ACCESS_DENIED),
    E("openat@create_tmp_file", EMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    E("openat@create_tmp_file", ENOSPC, CIO_E_NO_SPACE_LEFT),
#endif
};

static void test_tree_errors(void **state)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        tree_fault(state, errors[i].site, errors[i].err, 1, errors[i].want, errors[i].name);
}

/* enable's "no" for a file that is not a terminal, with isatty's failure injected or not. */
static void test_enable_ansi_not_terminal(void **state)
{
    fx f;
    fx_open(state, &f);
    prep_open_rw(&f);
    assert_err(run_enable_ansi(&f), CIO_E_NOT_TERMINAL_DEVICE);
    run_with_fault(&f, run_enable_ansi, "isatty@ansi_tty", "enable", 'e', ENOTTY, 1, 0, CIO_E_NOT_TERMINAL_DEVICE,
                   "ENOTTY");
    fx_close(&f);
}

#endif /* !CIO_OS_WINDOWS */

#if defined(CIO_OS_WINDOWS)
/* SetConsoleMode@enable_ansi needs a console. A suite run by build.py under Wine has none (its
 * output goes to pipes; AllocConsole's conhost wants a window, which Wine cannot make without a
 * display, and its console answers no GetConsoleMode), so when CONOUT$ is no console the test runs
 * this program again as "--console-child" with CREATE_NO_WINDOW: Windows and Wine give such a
 * child a console of its own with no window (Wine: a headless conhost), on which the child does the
 * checks. Its output goes to a file, whose fault-covered lines are printed here. */
static bool console_child; /* this process is that child */

static cio_err run_enable_ansi_console(fx *f)
{
    return cio_file_enable_ansi_escape_codes(f->io, f->file);
}

/* Whether the console's output mode has virtual terminal processing, by the OS and by supports. */
static bool console_vt(fx *f, HANDLE h)
{
    DWORD mode = 0;
    assert_true(GetConsoleMode(h, &mode));
    bool yes = !(mode & 0x0004);
    assert_ok(cio_file_supports_ansi_escape_codes(f->io, f->file, &yes));
    assert_int_equal(yes, (mode & 0x0004) != 0);
    return yes;
}

/* SetConsoleMode refusing virtual terminal processing: ERROR_INVALID_PARAMETER (a console that cannot,
 * before Windows 10 1511) is NotTerminalDevice; any other failure is Unexpected. The mode is left
 * off; then the real call: Ok with the mode on, or NotTerminalDevice with it off. */
static void ansi_console_checks(void **state, HANDLE h, DWORD mode)
{
    static const struct {
        int code;
        const char *name;
        cio_err want;
    } faults[] = {
        {ERROR_INVALID_PARAMETER, "ERROR_INVALID_PARAMETER", CIO_E_NOT_TERMINAL_DEVICE},
        {ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE", CIO_E_UNEXPECTED},
        {ERROR_GEN_FAILURE, "ERROR_GEN_FAILURE", CIO_E_UNEXPECTED},
    };
    static const char site[] = "SetConsoleMode@enable_ansi";
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        fx f;
        fx_open(state, &f);
        f.file = (cio_file){h};                                /* not f.file_open: fx_close leaves it */
        assert_true(SetConsoleMode(h, mode & ~(DWORD)0x0004)); /* off, so that enable has to ask */
        assert_false(console_vt(&f, h));
        unsigned n = run_with_fault(&f, run_enable_ansi_console, site, "enable", 'e', faults[i].code, 1, 0,
                                    faults[i].want, faults[i].name);
        assert_int_equal(n, 1);
        assert_false(console_vt(&f, h)); /* refused: nothing changed */
        covered(site, faults[i].name);
        fx_close(&f);
    }
    fx f;
    fx_open(state, &f);
    f.file = (cio_file){h};
    cio_err err = cio_file_enable_ansi_escape_codes(f.io, f.file);
    print_message("enable on a console: %s\n", cio_err_name(err));
    if (err != CIO_E_NOT_TERMINAL_DEVICE)
        assert_ok(err);
    assert_int_equal(console_vt(&f, h), err == CIO_OK);
    assert_err(cio_file_enable_ansi_escape_codes(f.io, f.file), err); /* again: the same answer */
    (void)SetConsoleMode(h, mode);
    fx_close(&f);
}

/* Runs this program as "--console-child" with CREATE_NO_WINDOW, its output into a file; prints the
 * child's fault-covered lines (all of its output when it failed) and fails when the child did. */
static void run_console_child(void)
{
    wchar_t exe[MAX_PATH], dir[MAX_PATH], out[MAX_PATH], cmd[MAX_PATH + 32];
    assert_true(GetModuleFileNameW(NULL, exe, MAX_PATH) > 0);
    assert_true(GetTempPathW(MAX_PATH, dir) > 0);
    assert_true(GetTempFileNameW(dir, L"cio", 0, out) != 0);
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE log = CreateFileW(out, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &sa,
                             CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    assert_true(log != INVALID_HANDLE_VALUE);
    swprintf(cmd, sizeof cmd / sizeof cmd[0], L"\"%ls\" --console-child", exe);
    STARTUPINFOW si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdOutput = log;
    si.hStdError = log;
    PROCESS_INFORMATION pi;
    BOOL made = CreateProcessW(exe, cmd, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi);
    DWORD made_err = GetLastError();
    CloseHandle(log);
    if (!made) {
        DeleteFileW(out);
        fail_msg("CreateProcessW of the console child: error %lu", (unsigned long)made_err);
    }
    DWORD waited = WaitForSingleObject(pi.hProcess, 120000);
    DWORD code = 1;
    if (waited != WAIT_OBJECT_0)
        TerminateProcess(pi.hProcess, 1);
    else
        GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    FILE *fp = _wfopen(out, L"r");
    char line[512];
    while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
        if (strncmp(line, "fault-covered: ", 15) == 0 || strncmp(line, "enable on", 9) == 0)
            print_message("%s", line);
        else if (code != 0)
            print_message("  child| %s", line);
    if (fp != NULL)
        fclose(fp);
    DeleteFileW(out);
    if (waited != WAIT_OBJECT_0)
        fail_msg("the console child did not end in 120 s");
    if (code != 0)
        fail_msg("the console child (CREATE_NO_WINDOW) failed: exit %lu", (unsigned long)code);
}

static void test_enable_ansi_console(void **state)
{
    (void)cio_test_io(state);
    HANDLE h = CreateFileW(L"CONOUT$", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, 0, NULL);
    DWORD mode = 0;
    if (h != INVALID_HANDLE_VALUE && GetConsoleMode(h, &mode)) {
        ansi_console_checks(state, h, mode);
        CloseHandle(h);
        return;
    }
    if (h != INVALID_HANDLE_VALUE)
        CloseHandle(h);
    if (console_child)
        fail_msg("no console in the CREATE_NO_WINDOW child either (CONOUT$: error %lu)", (unsigned long)GetLastError());
    run_console_child();
}
#endif

#if defined(CIO_OS_LINUX)
/* copy_file_range moving a few bytes a call: the slot goes on until the whole range went. */
static void test_write_file_short(void **state)
{
    fx f;
    fx_open(state, &f);
    assert_int_equal(cio__fault_short("copy_file_range@write_file_copy", 7, 0, -1), 1);
    assert_ok(run_write_file(&f));
    assert_true(cio__fault_injected("copy_file_range@write_file_copy") >= 1000 / 7);
    cio__sys_reset();
    check_copied(&f, CIO_OK);
    covered("copy_file_range@write_file_copy", "short");
    fx_close(&f);
}
#endif

int main(int argc, char **argv)
{
#if defined(CIO_OS_WINDOWS)
    console_child = argc == 2 && strcmp(argv[1], "--console-child") == 0;
#else
    (void)argc;
    (void)argv;
#endif
    const struct CMUnitTest tests[] = {
#if defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_enable_ansi_console),
#else
        CIO_TESTS(test_tree_eintr_storms),
        CIO_TESTS(test_tree_errors),
        CIO_TESTS(test_enable_ansi_not_terminal),
#endif
#if defined(CIO_OS_LINUX)
        CIO_TESTS(test_write_file_short),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
