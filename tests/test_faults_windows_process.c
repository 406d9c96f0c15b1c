/*
 * Fault injection through the OS call table, Windows: every call site of the process slots
 * (src/os/process_spawn_windows.c, process_cwd_windows.c): spawn (command line, environment block,
 * the three standard handles, the attribute list, CreateProcessW), spawn_path and cwd_dir (the
 * directory's path), wait, kill, and the working directory. Each case arms one site, runs the call,
 * checks the exact cio error (or that the call still works where a failure is ignored) and that no
 * handle is left behind and no child outlives the case. The children are tests/process_child.c
 * (cio_test_child.exe). Elsewhere this suite has nothing to run and skips.
 */
#include "faults.h"

#if defined(CIO_OS_WINDOWS)
#include "faults_windows.h"

static char exe[4096];
static char exe_dir[4096];

static void find_child(cio_io io)
{
    if (exe[0] != '\0')
        return;
    size_t n = 0;
    assert_ok(cio_process_executable_path(io, exe, sizeof exe, &n));
    while (n > 0 && exe[n - 1] != '\\' && exe[n - 1] != '/')
        n--;
    memcpy(exe_dir, exe, n);
    exe_dir[n > 0 ? n - 1 : 0] = '\0';
    snprintf(exe + n, sizeof exe - n, "cio_test_child.exe");
}

enum kind { K_SPAWN, K_SPAWN_PATH, K_WAIT, K_KILL, K_CWD_GET, K_CWD_SET_PATH, K_CWD_SET_DIR };

#define ANY_ERROR ((cio_err)-1) /* the call fails; which error depends on what the OS says next */

typedef struct pcase {
    const char *site;
    DWORD code; /* the error the site reports (GetLastError; ENOMEM for the C heap) */
    const char *code_name;
    enum kind kind;
    cio_err want;
} pcase;

static const pcase cases[] = {
    {"malloc@spawn_cmdline", ENOMEM, "ENOMEM", K_SPAWN, CIO_E_OUT_OF_MEMORY},
    {"malloc@spawn_wide", ENOMEM, "ENOMEM", K_SPAWN, CIO_E_OUT_OF_MEMORY},
    {"calloc@spawn_env", ENOMEM, "ENOMEM", K_SPAWN, CIO_E_OUT_OF_MEMORY},
    {"GetEnvironmentStringsW@spawn_env", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", K_SPAWN,
     CIO_E_OUT_OF_MEMORY},
    {"malloc@win_spawn_env", ENOMEM, "ENOMEM", K_SPAWN, CIO_E_OUT_OF_MEMORY},
    {"CreateFileW@spawn_null", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_SPAWN, CIO_E_ACCESS_DENIED},
    {"CreatePipe@spawn_pipe", ERROR_TOO_MANY_OPEN_FILES, "ERROR_TOO_MANY_OPEN_FILES", K_SPAWN,
     CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
    {"DuplicateHandle@spawn_stdio", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", K_SPAWN,
     CIO_E_SYSTEM_RESOURCES},
    {"malloc@spawn_attrs", ENOMEM, "ENOMEM", K_SPAWN, CIO_E_OUT_OF_MEMORY},
    {"InitializeProcThreadAttributeList@spawn_size", ERROR_INVALID_PARAMETER, "ERROR_INVALID_PARAMETER", K_SPAWN,
     ANY_ERROR},
    {"InitializeProcThreadAttributeList@spawn", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", K_SPAWN,
     CIO_E_SYSTEM_RESOURCES},
    {"UpdateProcThreadAttribute@spawn", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", K_SPAWN,
     CIO_E_SYSTEM_RESOURCES},
    {"CreateProcessW@spawn", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", K_SPAWN, CIO_E_SYSTEM_RESOURCES},
    {"CreateProcessW@spawn", ERROR_BAD_EXE_FORMAT, "ERROR_BAD_EXE_FORMAT", K_SPAWN, CIO_E_INVALID_EXE},
    /* a code no map names: Unexpected, with the code kept for cio_last_os_error */
    {"CreateProcessW@spawn", ERROR_GEN_FAILURE, "ERROR_GEN_FAILURE", K_SPAWN, CIO_E_UNEXPECTED},
    {"CloseHandle@spawn_close", ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE", K_SPAWN, CIO_OK},
    {"malloc@spawn_program", ENOMEM, "ENOMEM", K_SPAWN_PATH, CIO_E_OUT_OF_MEMORY},
    {"malloc@dir_wpath", ENOMEM, "ENOMEM", K_SPAWN_PATH, CIO_E_SYSTEM_RESOURCES},
    {"GetFinalPathNameByHandleW@dir_wpath", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_SPAWN_PATH,
     CIO_E_ACCESS_DENIED},
    {"WaitForSingleObjectEx@child_wait", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_WAIT, CIO_E_ACCESS_DENIED},
    {"GetExitCodeProcess@child_wait", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_WAIT, CIO_OK},
    {"TerminateProcess@child_kill", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_KILL, CIO_OK},
    {"WaitForSingleObjectEx@child_kill", ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE", K_KILL, CIO_OK},
    {"malloc@current_path", ENOMEM, "ENOMEM", K_CWD_GET, CIO_E_UNEXPECTED},
    {"GetCurrentDirectoryW@current_path", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_CWD_GET, CIO_E_UNEXPECTED},
    {"malloc@set_current_path", ENOMEM, "ENOMEM", K_CWD_SET_PATH, CIO_E_SYSTEM_RESOURCES},
    {"SetCurrentDirectoryW@set_current_path", ERROR_PATH_NOT_FOUND, "ERROR_PATH_NOT_FOUND", K_CWD_SET_PATH,
     CIO_E_FILE_NOT_FOUND},
    {"SetCurrentDirectoryW@set_current_path", ERROR_GEN_FAILURE, "ERROR_GEN_FAILURE", K_CWD_SET_PATH, CIO_E_UNEXPECTED},
    {"SetCurrentDirectoryW@set_current_dir", ERROR_ACCESS_DENIED, "ERROR_ACCESS_DENIED", K_CWD_SET_DIR,
     CIO_E_ACCESS_DENIED},
    {"malloc@dir_wpath", ENOMEM, "ENOMEM-set_current_dir", K_CWD_SET_DIR, CIO_E_UNEXPECTED},
    {"GetFinalPathNameByHandleW@dir_wpath", ERROR_PATH_NOT_FOUND, "ERROR_PATH_NOT_FOUND", K_CWD_SET_DIR,
     CIO_E_FILE_NOT_FOUND},
};

/* Reads the pipe to its end; the bytes read. */
static size_t drain(cio_io io, cio_file f)
{
    char buf[256];
    size_t total = 0, n = 0;
    while (cio_file_read_streaming(io, f, buf, sizeof buf, &n) == CIO_OK && n > 0)
        total += n;
    return total;
}

/* A spawn with every part armed sites can fail in: an added environment, a working directory, stdin
 * ignored (the null device), stdout a pipe, stderr inherited. The child says "hello" and exits 3. */
static cio_err run_spawn(cio_io io, const pcase *c, bool at_dir)
{
    char dir[512];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-fault-proc"));
    const char *argv_full[] = {exe, "args", "hello", NULL};
    const char *argv_rel[] = {"cio_test_child", "args", "hello", NULL};
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = at_dir ? argv_rel : argv_full;
    o.env_mode = CIO_ENV_ADD;
    o.env = (const char *const[]){"CIO_FAULT_PROC=1", NULL};
    o.cwd = dir;
    o.stdio[0].kind = CIO_STDIO_IGNORE;
    o.stdio[1].kind = CIO_STDIO_PIPE;
    cio_dir d = cio_dir_cwd();
    if (at_dir)
        assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), exe_dir, NULL, &d));
    assert_true(cio__fault_errno(c->site, (int)c->code, 0, 1) >= 1);
    cio_child ch;
    cio_err err = at_dir ? cio_process_spawn_path(io, d, &o, &ch) : cio_process_spawn(io, &o, &ch);
    covered(c->site, c->code_name); /* checks that the fault was injected */
    cio__fault_reset();
    if (at_dir)
        cio_dir_close(io, d);
    if (err == CIO_OK) {
        assert_true(drain(io, ch.stdio[1]) > 0);
        cio_file_close(io, ch.stdio[1]);
        cio_term t;
        assert_ok(cio_child_wait(io, &ch, &t));
        assert_int_equal(t.kind, CIO_TERM_EXITED);
    } else {
        assert_int_equal(ch.id, 0);
        assert_null(ch.handle);
        assert_null(ch.stdio[1].handle);
    }
    (void)RemoveDirectoryA(dir);
    return err;
}

static cio_err run_wait_or_kill(cio_io io, const pcase *c)
{
    const char *argv[] = {exe, c->kind == K_WAIT ? "exit" : "sleep", c->kind == K_WAIT ? "3" : "200", NULL};
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    cio_child ch;
    assert_ok(cio_process_spawn(io, &o, &ch));
    assert_true(cio__fault_errno(c->site, (int)c->code, 0, 1) >= 1);
    cio_err err = CIO_OK;
    cio_term t;
    if (c->kind == K_WAIT) {
        err = cio_child_wait(io, &ch, &t);
        if (err == CIO_OK) /* GetExitCodeProcess failed: the child ended, how is not known */
            assert_int_equal(t.kind, CIO_TERM_UNKNOWN);
    } else {
        cio_child_kill(io, &ch); /* TerminateProcess failing: the wait still ends when the sleep does */
    }
    covered(c->site, c->code_name); /* checks that the fault was injected */
    cio__fault_reset();
    if (ch.id != 0)
        cio_child_kill(io, &ch); /* a failed wait leaves the child to kill */
    assert_int_equal(ch.id, 0);
    assert_null(ch.handle);
    return err;
}

static cio_err run_cwd(cio_io io, const pcase *c)
{
    char before[1024], now[1024], dir[512];
    assert_ok(cio_process_current_path(io, before, sizeof before, NULL));
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-fault-cwd"));
    cio_dir d = cio_dir_cwd();
    if (c->kind == K_CWD_SET_DIR)
        assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    assert_true(cio__fault_errno(c->site, (int)c->code, 0, 1) >= 1);
    cio_err err = c->kind == K_CWD_GET        ? cio_process_current_path(io, now, sizeof now, NULL)
                  : c->kind == K_CWD_SET_PATH ? cio_process_set_current_path(io, dir)
                                              : cio_process_set_current_dir(io, d);
    covered(c->site, c->code_name); /* checks that the fault was injected */
    cio__fault_reset();
    if (c->kind == K_CWD_SET_DIR)
        cio_dir_close(io, d);
    assert_ok(cio_process_current_path(io, now, sizeof now, NULL));
    assert_string_equal(now, before); /* the failed change changed nothing */
    (void)RemoveDirectoryA(dir);
    return err;
}

static void test_win_process_faults(void **state)
{
    cio_io io = cio_test_io(state);
    find_child(io);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pcase *c = &cases[i];
        warm_up(io); /* each case: Evented runs these calls on its helper pool, whose idle workers retire */
        int handles = fd_count();
        cio_err err;
        cio_clear_last_os_error();
        switch (c->kind) {
        case K_SPAWN:
        case K_SPAWN_PATH: err = run_spawn(io, c, c->kind == K_SPAWN_PATH); break;
        case K_WAIT:
        case K_KILL: err = run_wait_or_kill(io, c); break;
        default: err = run_cwd(io, c); break;
        }
        if (c->want == ANY_ERROR) {
            if (err == CIO_OK)
                fail_msg("%s with %s: succeeded", c->site, c->code_name);
        } else if (err != c->want) {
            fail_msg("%s with %s: %s, expected %s", c->site, c->code_name, cio_err_name(err), cio_err_name(c->want));
        }
        if (err == CIO_E_UNEXPECTED && c->code == ERROR_GEN_FAILURE && *state == &cio_test_backend_threaded) {
            /* Threaded runs the call on this thread, which recorded the Win32 code */
            cio_os_error os = cio_last_os_error();
            if (os.kind != CIO_OS_ERROR_WIN32 || os.code != ERROR_GEN_FAILURE)
                fail_msg("%s with %s: last OS error kind %d code %lld", c->site, c->code_name, (int)os.kind,
                         (long long)os.code);
        }
        if (!settled_at_most(fd_count, handles))
            fail_msg("%s with %s: %d handles open, %d before", c->site, c->code_name, fd_count(), handles);
    }
}

/* The same spawn, wait and directory calls with nothing armed: what the cases change is the site. */
static void test_win_process_unarmed(void **state)
{
    cio_io io = cio_test_io(state);
    find_child(io);
    warm_up(io);
    int handles = fd_count();
    char dir[512];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-fault-unarmed"));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), exe_dir, NULL, &d));
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = (const char *const[]){"cio_test_child", "exit", "9", NULL};
    cio_child ch;
    assert_ok(cio_process_spawn_path(io, d, &o, &ch));
    cio_term t;
    assert_ok(cio_child_wait(io, &ch, &t));
    assert_int_equal(t.code, 9);
    cio_dir_close(io, d);
    (void)RemoveDirectoryA(dir);
    assert_handles(handles);
}
#else
static void test_win_process_faults(void **state)
{
    (void)state;
    CIO_SKIP("the Windows process call sites (test_faults_process.c has this target's)");
}

static void test_win_process_unarmed(void **state)
{
    (void)state;
    CIO_SKIP("the Windows process call sites (test_faults_process.c has this target's)");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_win_process_unarmed),
        CIO_TESTS(test_win_process_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
