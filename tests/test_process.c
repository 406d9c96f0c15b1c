/*
 * Child processes, the working directory and the stderr lock (cio/process.h), on every backend.
 * The children are the system's own programs (true, false, cat, sleep, sh, env). Every spawning test
 * checks at its end that it left no zombie (waitid(P_ALL) says there is no child at all) and no
 * descriptor behind (the count of /proc/self/fd). Where this target has no child processes yet
 * (spawn says OperationUnsupported: WASI, Windows, the BSDs), the spawning tests skip saying so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asserts.h"
#include "backends.h"
#include "os_helpers.h"

#if defined(CIO_OS_LINUX)
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

/* No child at all: every child a test made was reaped. */
static void assert_no_children(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0)
        fail_msg("a child is left: pid %d", (int)si.si_pid);
    assert_int_equal(errno, ECHILD);
}

#define BEGIN(io)   \
    need_spawn(io); \
    int fds_at_start_ = open_fds()
#define END()                                        \
    do {                                             \
        assert_no_children();                        \
        assert_int_equal(open_fds(), fds_at_start_); \
    } while (0)

static const char *const true_argv[] = {"true", NULL};

/* Skips where spawn is not there yet. */
static void need_spawn(cio_io io)
{
    (void)io;
}
#else
static void need_spawn(cio_io io)
{
#if defined(CIO_OS_WINDOWS)
    (void)io;
    CIO_SKIP("Windows has its own process suite (tests/test_process_windows.c: no POSIX programs here)");
#endif
    static const char *const argv[] = {"true", NULL};
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    cio_child c;
    cio_err err = cio_process_spawn(io, &o, &c);
    if (err == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no child processes on this target yet (spawn: OperationUnsupported)");
    fail_msg("spawn: %s", cio_err_name(err));
}

static void test_spawn_unsupported(void **state)
{
    need_spawn(cio_test_io(state));
}
#endif

#if defined(CIO_OS_LINUX)
static cio_spawn_options opts(const char *const *argv)
{
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    return o;
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
    return t;
}

/* Reads the file to its end into buf (NUL-terminated). */
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

/* Runs argv with stdout a pipe; returns its output and the child's end. */
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

/* ---- exit status and exec errors -------------------------------------------------------------------- */

static void test_true_false(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    cio_term t = run(io, (const char *const[]){"true", NULL});
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    assert_int_equal(t.code, 0);
    t = run(io, (const char *const[]){"false", NULL});
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    assert_int_equal(t.code, 1);
    t = run(io, (const char *const[]){"sh", "-c", "exit 42", NULL});
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    assert_int_equal(t.code, 42);
    t = run(io, (const char *const[]){"sh", "-c", "kill -KILL $$", NULL});
    assert_int_equal(t.kind, CIO_TERM_SIGNAL);
    assert_int_equal(t.code, (uint32_t)CIO_SIG_KILL);
    END();
}

static cio_err spawn_err(cio_io io, const char *const *argv)
{
    cio_spawn_options o = opts(argv);
    cio_child c;
    cio_err err = cio_process_spawn(io, &o, &c);
    if (err == CIO_OK) {
        cio_term t;
        (void)cio_child_wait(io, &c, &t);
        fail_msg("spawn of %s succeeded (the child ended with %d/%u)", argv[0], (int)t.kind, t.code);
    }
    assert_int_equal(c.id, 0);
    return err;
}

static void test_exec_errors(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    assert_err(spawn_err(io, (const char *const[]){"cio-no-such-program-4711", NULL}), CIO_E_FILE_NOT_FOUND);
    assert_err(spawn_err(io, (const char *const[]){"/nonexistent/cio-prog", NULL}), CIO_E_FILE_NOT_FOUND);
    /* a directory: Linux says EACCES */
    cio_err err = spawn_err(io, (const char *const[]){"/", NULL});
    assert_true(err == CIO_E_ACCESS_DENIED || err == CIO_E_IS_DIR);
    /* a file without execute permission (even root needs one x bit) */
    char dir[256], path[300];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-proc"));
    snprintf(path, sizeof path, "%s/noexec", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0644), 0);
    assert_err(spawn_err(io, (const char *const[]){path, NULL}), CIO_E_ACCESS_DENIED);
    /* not a format the kernel runs (no #! line, no ELF) */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("garbage\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
    assert_err(spawn_err(io, (const char *const[]){path, NULL}), CIO_E_INVALID_EXE);
    unlink(path);
    rmdir(dir);
    /* a working directory that does not exist: the child's chdir error, typed */
    cio_spawn_options o = opts(true_argv);
    o.cwd = "/nonexistent-cio-dir";
    cio_child c;
    assert_err(cio_process_spawn(io, &o, &c), CIO_E_FILE_NOT_FOUND);
    assert_err(cio_process_spawn(io, &(cio_spawn_options){.argv = (const char *const[]){"", NULL}}, &c),
               CIO_E_FILE_NOT_FOUND);
    /* misuse: a clear error */
    assert_err(cio_process_spawn(io, &(cio_spawn_options){.argv = NULL}, &c), CIO_E_INVALID_ARGUMENT);
    o = opts(true_argv);
    o.stdio[1].kind = CIO_STDIO_FILE;
    o.stdio[1].file.handle = -1;
    assert_err(cio_process_spawn(io, &o, &c), CIO_E_INVALID_ARGUMENT);
    END();
}

static void test_wait_misuse_and_kill(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    cio_spawn_options o = opts((const char *const[]){"sleep", "30", NULL});
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    int64_t pid = c.id;
    cio_child_kill(io, &c);
    assert_int_equal(c.id, 0);
    assert_int_equal(kill((pid_t)pid, 0), -1); /* gone, reaped */
    cio_term t;
    assert_err(cio_child_wait(io, &c, &t), CIO_E_INVALID_ARGUMENT); /* already reaped */
    cio_child_kill(io, &c);                                         /* nothing */
    /* wait, then wait again */
    assert_ok(cio_process_spawn(io, &(cio_spawn_options){.argv = true_argv}, &c));
    assert_ok(cio_child_wait(io, &c, &t));
    assert_err(cio_child_wait(io, &c, &t), CIO_E_INVALID_ARGUMENT);
    END();
}

/* ---- pipes ------------------------------------------------------------------------------------------ */

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
    static _Thread_local unsigned char chunk[65536];
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
    cio_spawn_options o = opts((const char *const[]){"cat", NULL});
    o.stdio[0].kind = CIO_STDIO_PIPE;
    o.stdio[1].kind = CIO_STDIO_PIPE;
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_true(c.stdio[0].handle >= 0 && c.stdio[1].handle >= 0);
    assert_int_equal(c.stdio[2].handle, -1);
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
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    assert_int_equal(t.code, 0);
    END();
}

static void test_stdio_kinds(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    char out[256];
    /* stderr to the stdout pipe's file (2>&1 through CIO_STDIO_FILE), stdin ignored (reads EOF) */
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    cio_spawn_options o = opts((const char *const[]){"sh", "-c", "cat; echo err >&2; echo out", NULL});
    o.stdio[0].kind = CIO_STDIO_IGNORE;
    o.stdio[1].kind = CIO_STDIO_FILE;
    o.stdio[1].file.handle = p[1];
    o.stdio[2].kind = CIO_STDIO_FILE;
    o.stdio[2].file.handle = p[1];
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    close(p[1]);
    read_to_end(io, (cio_file){p[0]}, out, sizeof out);
    close(p[0]);
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    assert_string_equal(out, "err\nout\n");
    /* stdout ignored: nothing arrives anywhere, the child still runs to its end */
    o = opts((const char *const[]){"sh", "-c", "echo hidden", NULL});
    o.stdio[1].kind = CIO_STDIO_IGNORE;
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 0);
    END();
}

/* ---- environment, working directory, process group ------------------------------------------------ */

static void test_env_and_cwd(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    char out[4096];
    /* add: the parent's (HOME or PATH) stays, the new one arrives, a same-named one is replaced */
    setenv("CIO_T_OLD", "old", 1);
    cio_spawn_options o = opts((const char *const[]){"sh", "-c",
                                                     "printf '%s/%s/%s' \"$CIO_T_NEW\" "
                                                     "\"$CIO_T_OLD\" \"${PATH:+set}\"",
                                                     NULL});
    o.env_mode = CIO_ENV_ADD;
    o.env = (const char *const[]){"CIO_T_NEW=new", "CIO_T_OLD=replaced", NULL};
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "new/replaced/set");
    /* replace: exactly these (env is found through PATH of the new environment) */
    o = opts((const char *const[]){"env", NULL});
    o.env_mode = CIO_ENV_REPLACE;
    o.env = (const char *const[]){"PATH=/usr/bin:/bin", "A=1", NULL};
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "PATH=/usr/bin:/bin\nA=1\n");
    /* inherit */
    o = opts((const char *const[]){"sh", "-c", "printf %s \"$CIO_T_OLD\"", NULL});
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, "old");
    unsetenv("CIO_T_OLD");
    /* cwd by path, and by an open directory */
    char dir[256];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-proc-cwd"));
    char real[PATH_MAX];
    assert_non_null(realpath(dir, real));
    o = opts((const char *const[]){"pwd", "-P", NULL});
    o.cwd = dir;
    capture(io, &o, out, sizeof out);
    char want[PATH_MAX + 2];
    snprintf(want, sizeof want, "%s\n", real);
    assert_string_equal(out, want);
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    o = opts((const char *const[]){"pwd", "-P", NULL});
    o.cwd_dir = &d;
    capture(io, &o, out, sizeof out);
    assert_string_equal(out, want);
    /* a program relative to a directory (spawn_path): no PATH search */
    cio_dir bin;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), "/bin", NULL, &bin));
    cio_child c;
    cio_term t;
    cio_err perr = cio_process_spawn_path(io, bin, &(cio_spawn_options){.argv = true_argv}, &c);
    if (perr == CIO_E_OPERATION_UNSUPPORTED) { /* execveat: ENOSYS under qemu-user */
        print_message("      note: spawn_path unsupported here (no execveat)\n");
    } else {
        assert_ok(perr);
        assert_ok(cio_child_wait(io, &c, &t));
        assert_int_equal(t.code, 0);
        assert_err(cio_process_spawn_path(io, d, &(cio_spawn_options){.argv = true_argv}, &c), CIO_E_FILE_NOT_FOUND);
    }
    cio_dir_close(io, bin);
    cio_dir_close(io, d);
    rmdir(dir);
    /* a new process group, and a new session */
    o = opts((const char *const[]){"sleep", "5", NULL});
    o.set_pgid = true;
    o.pgid = 0;
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_int_equal(getpgid((pid_t)c.id), (pid_t)c.id);
    cio_child_kill(io, &c);
    o = opts((const char *const[]){"sleep", "5", NULL});
    o.new_session = true;
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_int_equal(getsid((pid_t)c.id), (pid_t)c.id);
    cio_child_kill(io, &c);
    END();
}

/* ---- no descriptor of cio's reaches a child ------------------------------------------------------------ */

static void test_no_fd_leak_into_child(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    /* another child's pipes and pidfd are open meanwhile */
    cio_spawn_options o = opts((const char *const[]){"cat", NULL});
    o.stdio[0].kind = CIO_STDIO_PIPE;
    o.stdio[1].kind = CIO_STDIO_PIPE;
    o.stdio[2].kind = CIO_STDIO_PIPE;
    cio_child other;
    assert_ok(cio_process_spawn(io, &o, &other));
    char out[4096];
    o = opts((const char *const[]){"sh", "-c", "ls /proc/$$/fd", NULL});
    capture(io, &o, out, sizeof out);
    int listed = 0;
    for (char *s = strtok(out, "\n"); s != NULL; s = strtok(NULL, "\n")) {
        int fd = atoi(s);
        listed++;
        if (fd <= 2)
            continue;
        /* anything else must be a descriptor the test program itself left inheritable */
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0 && (flags & FD_CLOEXEC))
            fail_msg("descriptor %d (close-on-exec here) reached the child", fd);
        assert_true(fd != other.handle && fd != other.stdio[0].handle && fd != other.stdio[1].handle &&
                    fd != other.stdio[2].handle);
    }
    assert_true(listed >= 3);
    cio_file_close(io, other.stdio[0]);
    cio_file_close(io, other.stdio[1]);
    cio_file_close(io, other.stdio[2]);
    cio_term t;
    assert_ok(cio_child_wait(io, &other, &t));
    assert_int_equal(t.code, 0);
    END();
}

/* ---- many children, cancel ------------------------------------------------------------------------------ */

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
    if (err == CIO_OK && t.kind == CIO_TERM_EXITED && t.code == 0)
        atomic_fetch_add(a->ok, 1);
    return err;
}

static void test_many_children(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    static cio_child kids[MANY];
    _Atomic(int) ok = 0;
    cio_spawn_options o = opts((const char *const[]){"sleep", "0.3", NULL});
    for (int i = 0; i < MANY; i++)
        assert_ok(cio_process_spawn(io, &o, &kids[i]));
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

static void test_cancel_wait(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    cio_spawn_options o = opts((const char *const[]){"sleep", "30", NULL});
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    _Atomic(int) ok = 0;
    struct wait_ctx ctx = {io, &c, &ok};
    cio_future f;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, wait_one, &ctx, sizeof ctx, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    assert_true(ms < 5000); /* promptly: the child sleeps 30 s */
    /* the child is as it was: alive, waitable */
    assert_true(c.id > 0);
    assert_int_equal(kill((pid_t)c.id, 0), 0);
    assert_int_equal(kill((pid_t)c.id, SIGKILL), 0);
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.kind, CIO_TERM_SIGNAL);
    assert_int_equal(t.code, (uint32_t)CIO_SIG_KILL);
    END();
}

/* ---- replace ----------------------------------------------------------------------------------------------- */

static void test_replace_errors(void **state)
{
    cio_io io = cio_test_io(state);
    BEGIN(io);
    /* a failed replace returns, the program goes on */
    assert_err(cio_process_replace(io, &(cio_spawn_options){.argv = (const char *const[]){"cio-no-such-4711", NULL}}),
               CIO_E_FILE_NOT_FOUND);
    assert_err(cio_process_replace(io, &(cio_spawn_options){.argv = (const char *const[]){"/", NULL}}),
               CIO_E_ACCESS_DENIED);
    cio_spawn_options o = opts(true_argv);
    o.stdio[0].kind = CIO_STDIO_PIPE;
    assert_err(cio_process_replace(io, &o), CIO_E_INVALID_ARGUMENT);
    END();
}

#endif /* spawning */

/* ---- working directory ----------------------------------------------------------------------------------- */

static void test_current_dir(void **state)
{
    cio_io io = cio_test_io(state);
    char before[4096], now[4096];
    size_t len = 0;
    cio_err err = cio_process_current_path(io, before, sizeof before, &len);
    if (err == CIO_E_UNEXPECTED || err == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no working directory calls on this target yet");
    assert_ok(err);
    assert_int_equal(len, strlen(before));
    assert_err(cio_process_current_path(io, now, len, NULL), CIO_E_NAME_TOO_LONG); /* no room for the NUL */
    char dir[256];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-cwd"));
    assert_ok(cio_process_set_current_path(io, dir));
    assert_ok(cio_process_current_path(io, now, sizeof now, NULL));
    assert_non_null(strstr(now, "cio-cwd"));
    assert_err(cio_process_set_current_path(io, "/nonexistent-cio-dir"), CIO_E_FILE_NOT_FOUND);
    assert_ok(cio_process_set_current_path(io, before));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    err = cio_process_set_current_dir(io, d);
#if !defined(CIO_OS_WASI)
    assert_ok(err); /* fchdir; Windows: the handle's path, SetCurrentDirectoryW */
#endif
    if (err != CIO_E_OPERATION_UNSUPPORTED) { /* WASI has no fchdir */
        assert_ok(err);
        assert_ok(cio_process_current_path(io, now, sizeof now, NULL));
        assert_non_null(strstr(now, "cio-cwd"));
        assert_ok(cio_process_set_current_path(io, before));
    }
    cio_dir_close(io, d);
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), dir));
    assert_ok(cio_process_current_path(io, now, sizeof now, NULL));
    assert_string_equal(now, before);
}

/* ---- the stderr lock ----------------------------------------------------------------------------------- */

struct try_ctx {
    cio_io io;
};

static cio_err try_other(void *p)
{
    struct try_ctx *a = (struct try_ctx *)p;
    if (cio_try_lock_stderr(a->io)) {
        cio_unlock_stderr(a->io);
        return CIO_OK;
    }
    return CIO_E_TIMEOUT; /* "held by someone else" */
}

static cio_err lock_other(void *p)
{
    struct try_ctx *a = (struct try_ctx *)p;
    cio_err err = cio_lock_stderr(a->io);
    if (err == CIO_OK)
        cio_unlock_stderr(a->io);
    return err;
}

static void test_stderr_lock(void **state)
{
    cio_io io = cio_test_io(state);
    assert_ok(cio_lock_stderr(io));
    assert_true(cio_try_lock_stderr(io)); /* recursive */
    assert_ok(cio_lock_stderr(io));
    struct try_ctx ctx = {io};
    cio_future f;
    cio_err cerr = cio_concurrent(io, try_other, &ctx, sizeof ctx, &f);
    if (cerr == CIO_OK) {
        assert_err(cio_await(io, &f), CIO_E_TIMEOUT);
        /* a waiter is canceled out of its wait */
        assert_ok(cio_concurrent(io, lock_other, &ctx, sizeof ctx, &f));
        assert_ok(cio_sleep(io, cio_timeout_ms(20)));
        assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    } else {
        assert_int_equal(cerr, CIO_E_CONCURRENCY_UNAVAILABLE);
    }
    cio_unlock_stderr(io);
    cio_unlock_stderr(io);
    cio_unlock_stderr(io);
    if (cerr == CIO_OK) {
        assert_ok(cio_concurrent(io, try_other, &ctx, sizeof ctx, &f));
        assert_ok(cio_await(io, &f));
        /* a waiter gets it once it is released */
        assert_ok(cio_lock_stderr(io));
        assert_ok(cio_concurrent(io, lock_other, &ctx, sizeof ctx, &f));
        assert_ok(cio_sleep(io, cio_timeout_ms(20)));
        cio_unlock_stderr(io);
        assert_ok(cio_await(io, &f));
    }
    cio_unlock_stderr(io); /* not held: ignored */
    assert_true(cio_try_lock_stderr(io));
    cio_unlock_stderr(io);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(CIO_OS_LINUX)
        CIO_TESTS(test_true_false),
        CIO_TESTS(test_exec_errors),
        CIO_TESTS(test_wait_misuse_and_kill),
        CIO_TESTS(test_cat_both_ways),
        CIO_TESTS(test_stdio_kinds),
        CIO_TESTS(test_env_and_cwd),
        CIO_TESTS(test_no_fd_leak_into_child),
        CIO_TESTS(test_many_children),
        CIO_TESTS(test_cancel_wait),
        CIO_TESTS(test_replace_errors),
#else
        CIO_TESTS(test_spawn_unsupported),
#endif
        CIO_TESTS(test_current_dir),
        CIO_TESTS(test_stderr_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
