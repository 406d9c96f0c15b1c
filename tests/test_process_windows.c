/*
 * Child processes on Windows (cio/process.h; test_process.c has the POSIX suite): spawn, exit
 * codes, exec errors, the command line's quoting (every argument arrives as given), the .bat/.cmd
 * refusal, pipes (10 MiB both ways through a cat), environment and working directory, 200 children
 * awaited concurrently, a canceled wait, kill, no handle of the parent's reaching a child, no handle
 * left behind. The children are tests/process_child.c (cio_test_child.exe, built with the suites:
 * no cmd.exe). Elsewhere this suite has nothing to run and skips.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
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

#include "asserts.h"
#include "backends.h"
#include "os_helpers.h"

#if defined(CIO_OS_WINDOWS)
static char child_exe[4096];

static const char *child_path(cio_io io)
{
    if (child_exe[0] == '\0') {
        size_t n = 0;
        assert_ok(cio_process_executable_path(io, child_exe, sizeof child_exe, &n));
        while (n > 0 && child_exe[n - 1] != '\\' && child_exe[n - 1] != '/')
            n--;
        snprintf(child_exe + n, sizeof child_exe - n, "cio_test_child.exe");
    }
    return child_exe;
}

static cio_spawn_options opts(const char *const *argv)
{
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    return o;
}

static size_t read_to_end(cio_io io, cio_file f, char *buf, size_t cap)
{
    size_t got = 0;
    for (;;) {
        size_t n = 0;
        assert_ok(cio_file_read_streaming(io, f, buf + got, cap - 1 - got, &n));
        if (n == 0)
            break;
        got += n;
        assert_true(got < cap - 1);
    }
    buf[got] = '\0';
    return got;
}

static cio_term capture(cio_io io, cio_spawn_options *o, char *buf, size_t cap)
{
    o->stdio[1].kind = CIO_STDIO_PIPE;
    cio_child c;
    assert_ok(cio_process_spawn(io, o, &c));
    read_to_end(io, c.stdio[1], buf, cap);
    cio_file_close(io, c.stdio[1]);
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    return t;
}

static cio_term run(cio_io io, const char *const *argv)
{
    cio_spawn_options o = opts(argv);
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_true(c.id > 0);
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(c.id, 0);
    assert_null(c.handle);
    return t;
}

#define BEGIN(io)                     \
    const char *exe = child_path(io); \
    int handles_at_start_ = cio_test_count_handles()
#define END() assert_int_equal(cio_test_count_handles(), handles_at_start_)

static void test_exit_codes_and_errors(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    cio_term t = run(io, (const char *const[]){exe, "exit", "0", NULL});
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    assert_int_equal(t.code, 0);
    t = run(io, (const char *const[]){exe, "exit", "1", NULL});
    assert_int_equal(t.code, 1);
    t = run(io, (const char *const[]){exe, "exit", "42", NULL});
    assert_int_equal(t.code, 42);
    cio_child c;
    assert_err(cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){"cio-no-such-4711.exe", NULL}},
                                 &c),
               CIO_E_FILE_NOT_FOUND);
    assert_int_equal(c.id, 0);
    /* not an executable: a text file */
    char dir[512], path[600];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-proc"));
    snprintf(path, sizeof path, "%s\\notexe.exe", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("garbage, not a program\n", f);
    fclose(f);
    cio_err err = cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){path, NULL}}, &c);
    assert_true(err == CIO_E_INVALID_EXE || err == CIO_E_ACCESS_DENIED);
    remove(path);
    /* a directory */
    err = cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){dir, NULL}}, &c);
    assert_true(err == CIO_E_ACCESS_DENIED || err == CIO_E_FILE_NOT_FOUND || err == CIO_E_INVALID_EXE);
    (void)RemoveDirectoryA(dir);
    /* a batch script with an argument cmd.exe would interpret: refused before anything runs */
    assert_err(cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){"x.bat", "a&calc", NULL}}, &c),
               CIO_E_INVALID_BATCH_SCRIPT_ARG);
    assert_err(cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){"X.CMD. ", "\"q\"", NULL}}, &c),
               CIO_E_INVALID_BATCH_SCRIPT_ARG);
    assert_err(cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){"a\"b.exe", NULL}}, &c),
               CIO_E_INVALID_NAME);
    END();
}

static void test_quoting(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    static const char *const args[] = {"plain",   "",          "a b", "x\"y", "back\\slash\\", "end\\\\",
                                       "\\\\\"q", "tab\there", "  ",  "\"",   "a\\b\\\\c",     "ü ñ"};
    const char *argv[20];
    size_t k = 0;
    argv[k++] = exe;
    argv[k++] = "args";
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    char out[4096], want[4096];
    size_t w = 0;
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        w += (size_t)snprintf(want + w, sizeof want - w, "%s\n", args[i]);
    cio_spawn_options o = opts(argv);
    cio_term t = capture(io, &o, out, sizeof out);
    assert_int_equal(t.code, 0);
    assert_string_equal(out, want);
    END();
}

#define CAT_BYTES (10u * 1024u * 1024u)

static unsigned char pattern(size_t i)
{
    return (unsigned char)((i * 7u + (i >> 13)) & 0xffu);
}

struct feed_ctx {
    cio_io io;
    cio_file file;
};

static cio_err feed(void *p)
{
    struct feed_ctx *a = (struct feed_ctx *)p;
    static unsigned char chunk[65536];
    cio_err err = CIO_OK;
    for (size_t off = 0; off < CAT_BYTES && err == CIO_OK; off += sizeof chunk) {
        for (size_t i = 0; i < sizeof chunk; i++)
            chunk[i] = pattern(off + i);
        err = cio_file_write_all(a->io, a->file, chunk, sizeof chunk);
    }
    cio_file_close(a->io, a->file);
    return err;
}

static void test_cat_both_ways(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    cio_spawn_options o = opts((const char *const[]){exe, "cat", NULL});
    o.stdio[0].kind = CIO_STDIO_PIPE;
    o.stdio[1].kind = CIO_STDIO_PIPE;
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_null(c.stdio[2].handle);
    struct feed_ctx ctx = {io, c.stdio[0]};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, feed, &ctx, sizeof ctx, &f));
    static unsigned char buf[1 << 16];
    size_t total = 0;
    bool same = true;
    for (;;) {
        size_t n = 0;
        assert_ok(cio_file_read_streaming(io, c.stdio[1], buf, sizeof buf, &n));
        if (n == 0)
            break;
        for (size_t i = 0; i < n && same; i++)
            same = buf[i] == pattern(total + i);
        total += n;
    }
    assert_ok(cio_await(io, &f));
    assert_true(same);
    assert_int_equal(total, CAT_BYTES);
    cio_file_close(io, c.stdio[1]);
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 0);
    END();
}

static void test_env_cwd_and_inheritance(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    char out[4096];
    _putenv("CIO_T_OLD=old");
    cio_spawn_options o = opts((const char *const[]){exe, "env", "CIO_T_NEW", NULL});
    o.env_mode = CIO_ENV_ADD;
    o.env = (const char *const[]){"CIO_T_NEW=new", NULL};
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "new");
    o = opts((const char *const[]){exe, "env", "CIO_T_OLD", NULL});
    o.env_mode = CIO_ENV_ADD;
    o.env = (const char *const[]){"cio_t_old=replaced", NULL}; /* names are case-insensitive */
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "replaced");
    o = opts((const char *const[]){exe, "env", "CIO_T_OLD", NULL});
    o.env_mode = CIO_ENV_REPLACE;
    o.env = (const char *const[]){"A=1", NULL};
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "(unset)");
    o = opts((const char *const[]){exe, "env", "CIO_T_OLD", NULL});
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "old");
    _putenv("CIO_T_OLD=");
    /* working directory */
    char dir[512];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-proc-cwd"));
    o = opts((const char *const[]){exe, "cwd", NULL});
    o.cwd = dir;
    capture(io, &o, out, sizeof out);
    assert_non_null(strstr(out, "cio-proc-cwd"));
    (void)RemoveDirectoryA(dir);
    /* a pipe of another live child is not inheritable: its handle value is nothing in a child */
    cio_spawn_options co = opts((const char *const[]){exe, "cat", NULL});
    co.stdio[0].kind = CIO_STDIO_PIPE;
    co.stdio[1].kind = CIO_STDIO_PIPE;
    cio_child other;
    assert_ok(cio_process_spawn(io, &co, &other));
    char hex[32];
    snprintf(hex, sizeof hex, "%llx", (unsigned long long)(uintptr_t)other.stdio[0].handle);
    o = opts((const char *const[]){exe, "probe", hex, NULL});
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "closed");
    cio_file_close(io, other.stdio[0]);
    cio_file_close(io, other.stdio[1]);
    cio_term t;
    assert_ok(cio_child_wait(io, &other, &t));
    END();
}

/* spawn_path: a program relative to an open directory (".exe" added when missing), no search;
 * cwd_dir: the child's working directory as an open directory. */
static void test_dirs(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    char exe_dir[4096];
    snprintf(exe_dir, sizeof exe_dir, "%s", exe);
    *strrchr(exe_dir, '\\') = '\0';
    cio_dir bin;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), exe_dir, NULL, &bin));
    cio_child c;
    cio_term t;
    cio_spawn_options o = opts((const char *const[]){"cio_test_child.exe", "exit", "5", NULL});
    assert_ok(cio_process_spawn_path(io, bin, &o, &c));
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 5);
    o = opts((const char *const[]){"cio_test_child", "exit", "6", NULL});
    assert_ok(cio_process_spawn_path(io, bin, &o, &c));
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 6);
    o = opts((const char *const[]){"cio-no-such-4711", NULL});
    assert_err(cio_process_spawn_path(io, bin, &o, &c), CIO_E_FILE_NOT_FOUND);
    assert_int_equal(c.id, 0);
    /* an absolute program ignores the directory */
    char dir[512], out[4096];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-proc-dirs"));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    o = opts((const char *const[]){exe, "exit", "7", NULL});
    assert_ok(cio_process_spawn_path(io, d, &o, &c));
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 7);
    /* the working directory as an open directory */
    o = opts((const char *const[]){exe, "cwd", NULL});
    o.cwd_dir = &d;
    capture(io, &o, out, sizeof out);
    assert_non_null(strstr(out, "cio-proc-dirs"));
    cio_dir_close(io, d);
    cio_dir_close(io, bin);
    (void)RemoveDirectoryA(dir);
    /* replace: Windows has no exec (Zig's std.process.can_replace is false there) */
    o = opts((const char *const[]){exe, "exit", "0", NULL});
    assert_err(cio_process_replace(io, &o), CIO_E_OPERATION_UNSUPPORTED);
    END();
}

#define MANY 200

struct wait_ctx {
    cio_io io;
    cio_child *child;
    _Atomic(int) *ok;
};

static cio_err wait_one(void *p)
{
    struct wait_ctx *a = (struct wait_ctx *)p;
    cio_term t;
    cio_err err = cio_child_wait(a->io, a->child, &t);
    if (err == CIO_OK && t.kind == CIO_TERM_EXITED && t.code == 7)
        atomic_fetch_add(a->ok, 1);
    return err;
}

/* Wine's ntdll exports wine_get_version; Windows' does not. */
static bool under_wine(void)
{
    return GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "wine_get_version") != NULL;
}

/* One spawn of the 200. Under Wine only, an Unexpected whose recorded code is ERROR_INTERNAL_ERROR
 * (1359) is retried twice, saying so: Wine's NtCreateUserProcess answers STATUS_INTERNAL_ERROR when
 * the new process dies before it reports its start, which happens now and then when many short
 * children start and end at once (1 run of this test in about 65 here, once in CI's bare Debian).
 * That is the emulator's, not cio's; any other error, and every error on Windows, stands. */
static void spawn_one(cio_io io, const cio_spawn_options *o, cio_child *kid)
{
    cio_err err = CIO_OK;
    for (int attempt = 0; attempt < 3; attempt++) {
        cio_clear_last_os_error();
        err = cio_process_spawn(io, o, kid);
        cio_os_error os = cio_last_os_error();
        if (err != CIO_E_UNEXPECTED || !under_wine() || os.kind != CIO_OS_ERROR_WIN32 ||
            os.code != ERROR_INTERNAL_ERROR)
            break;
        print_message("      Wine: spawn attempt %d: Unexpected (ERROR_INTERNAL_ERROR), retrying\n", attempt + 1);
    }
    assert_ok(err);
}

static void test_many_children(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    static cio_child kids[MANY];
    _Atomic(int) ok = 0;
    cio_spawn_options o = opts((const char *const[]){exe, "exit", "7", NULL});
    for (int i = 0; i < MANY; i++)
        spawn_one(io, &o, &kids[i]);
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < MANY; i++) {
        struct wait_ctx ctx = {io, &kids[i], &ok};
        if (cio_group_concurrent(io, &g, wait_one, &ctx, sizeof ctx) != CIO_OK)
            cio_group_async(io, &g, wait_one, &ctx, sizeof ctx);
    }
    assert_ok(cio_group_await(io, &g));
    assert_int_equal(atomic_load(&ok), MANY);
    END();
}

static void test_cancel_wait_and_kill(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    cio_spawn_options o = opts((const char *const[]){exe, "sleep", "30000", NULL});
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    _Atomic(int) ok = 0;
    struct wait_ctx ctx = {io, &c, &ok};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_one, &ctx, sizeof ctx, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_true((cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000 < 5000);
    assert_true(c.id > 0); /* still waitable */
    assert_int_equal(WaitForSingleObject(c.handle, 0), WAIT_TIMEOUT);
    cio_child_kill(io, &c);
    assert_int_equal(c.id, 0);
    assert_null(c.handle);
    cio_term t;
    assert_err(cio_child_wait(io, &c, &t), CIO_E_INVALID_ARGUMENT);
    END();
}
#else
static void test_windows_only(void **state)
{
    (void)state;
    CIO_SKIP("the Windows process suite (test_process.c covers this target)");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_exit_codes_and_errors),
        CIO_TESTS(test_quoting),
        CIO_TESTS(test_cat_both_ways),
        CIO_TESTS(test_env_cwd_and_inheritance),
        CIO_TESTS(test_dirs),
        CIO_TESTS(test_many_children),
        CIO_TESTS(test_cancel_wait_and_kill),
#else
        CIO_TESTS(test_windows_only),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
