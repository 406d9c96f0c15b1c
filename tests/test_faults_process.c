/*
 * Fault injection at the process call sites (src/os/process_*.c; tests/test_faults.c's top
 * comment explains the method), on every backend: the parent's pipes, /dev/null, environment array,
 * fork and pidfd (EMFILE, ENFILE, ENOMEM, EAGAIN: the typed error, no descriptor, no child left),
 * the child's steps before exec (a failure injected there is injected in the child, which reports
 * it through the report pipe: the parent's typed error is the proof, since the child's counters
 * are its own), the waits (EINTR retried, a pidfd-less kernel's waitid path, a failed reap), kill,
 * the working directory calls, and cio_signal_wait's (its handler's install, the waiter's pipe, poll,
 * drain and close, the handler's wake-up write). After every case: no zombie, no descriptor more than before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"

#if defined(CIO_OS_LINUX)
#include <signal.h>
#include <sys/wait.h>

static const char *const true_argv[] = {"true", NULL};

static void assert_no_children(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0)
        fail_msg("a child is left: pid %d", (int)si.si_pid);
    assert_int_equal(errno, ECHILD);
}

/* A child-side site: the injection happened in the child, the parent saw its typed error. */
static void covered_in_child(const char *site, const char *fault)
{
    print_message("fault-covered: %s %s\n", site, fault);
}

static cio_spawn_options opts(const char *const *argv)
{
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    return o;
}

/* Spawns with every stream a pipe (the most descriptors), expecting `want`; on success waits. */
static void spawn_expect(cio_io io, const cio_spawn_options *o, cio_err want)
{
    cio_child c;
    cio_err err = cio_process_spawn(io, o, &c);
    assert_err(err, want);
    if (err != CIO_OK) {
        assert_int_equal(c.id, 0);
        assert_int_equal(c.stdio[0].handle, -1);
        assert_int_equal(c.stdio[1].handle, -1);
        assert_int_equal(c.stdio[2].handle, -1);
        return;
    }
    for (int i = 0; i < 3; i++)
        if (c.stdio[i].handle >= 0)
            cio_file_close(io, c.stdio[i]);
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
}

static cio_spawn_options all_pipes(void)
{
    cio_spawn_options o = opts(true_argv);
    for (int i = 0; i < 3; i++)
        o.stdio[i].kind = CIO_STDIO_PIPE;
    return o;
}

typedef struct parent_case {
    const char *site;
    int err;
    const char *err_name;
    int skip; /* calls let through first (the second pipe, say) */
    cio_err want;
} parent_case;

static void test_spawn_parent_faults(void **state)
{
    cio_io io = cio_test_io(state);
    static const parent_case cases[] = {
        {"pipe2@spawn_pipe", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"pipe2@spawn_pipe", ENFILE, "ENFILE", 2, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED},  /* the third stream's */
        {"pipe2@spawn_pipe", EMFILE, "EMFILE", 3, CIO_E_PROCESS_FD_QUOTA_EXCEEDED}, /* the report pipe */
        {"fork@spawn", EAGAIN, "EAGAIN", 0, CIO_E_RESOURCE_LIMIT_REACHED},
        {"fork@spawn", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"pidfd_open@spawn", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"pidfd_open@spawn", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const parent_case *k = &cases[i];
        int before = fd_count();
        cio_spawn_options o = all_pipes();
        assert_true(cio__fault_errno(k->site, k->err, k->skip, 1) == 1);
        spawn_expect(io, &o, k->want);
        covered(k->site, k->err_name);
        cio__fault_reset();
        assert_no_children();
        assert_int_equal(fd_count(), before);
    }
    /* /dev/null for an ignored stream */
    int before = fd_count();
    cio_spawn_options o = opts(true_argv);
    o.stdio[0].kind = CIO_STDIO_PIPE;
    o.stdio[1].kind = CIO_STDIO_IGNORE;
    assert_true(cio__fault_errno("openat@spawn_devnull", EMFILE, 0, 1) == 1);
    spawn_expect(io, &o, CIO_E_PROCESS_FD_QUOTA_EXCEEDED);
    covered("openat@spawn_devnull", "EMFILE");
    cio__fault_reset();
    /* the environment array (add mode) */
    o = all_pipes();
    o.env_mode = CIO_ENV_ADD;
    o.env = (const char *const[]){"CIO_X=1", NULL};
    assert_true(cio__fault_errno("malloc@spawn_env", ENOMEM, 0, 1) == 1);
    spawn_expect(io, &o, CIO_E_OUT_OF_MEMORY);
    covered("malloc@spawn_env", "ENOMEM");
    cio__fault_reset();
    assert_no_children();
    assert_int_equal(fd_count(), before);
}

/* Calls whose failure spawn rides out: the mask (ignored), EINTR on the report read and the reap of
 * a failed child (retried), a close reporting EINTR (closed anyway), kill of a child that already
 * failed its exec. */
static void test_spawn_parent_ridden_out(void **state)
{
    cio_io io = cio_test_io(state);
    int before = fd_count();
    cio_spawn_options o = all_pipes();
    assert_true(cio__fault_errno("pthread_sigmask@spawn_block", EINVAL, 0, -1) == 1);
    spawn_expect(io, &o, CIO_OK);
    covered("pthread_sigmask@spawn_block", "EINVAL");
    cio__fault_reset();
    assert_true(cio__fault_errno("read@spawn_report", EINTR, 0, 2) == 1);
    spawn_expect(io, &o, CIO_OK);
    covered("read@spawn_report", "EINTR");
    cio__fault_reset();
    assert_true(cio__fault_errno("close@spawn_close", EINTR, 0, -1) == 1);
    spawn_expect(io, &o, CIO_OK);
    covered("close@spawn_close", "EINTR");
    cio__fault_reset();
    cio_spawn_options bad = opts((const char *const[]){"cio-no-such-4711", NULL});
    assert_true(cio__fault_errno("waitid@spawn_reap", EINTR, 0, 1) == 1);
    spawn_expect(io, &bad, CIO_E_FILE_NOT_FOUND);
    covered("waitid@spawn_reap", "EINTR");
    cio__fault_reset();
    /* pidfd_open fails: the child is killed (here: a kill that fails, the child ends by itself) */
    assert_true(cio__fault_errno("pidfd_open@spawn", ENFILE, 0, 1) == 1);
    assert_true(cio__fault_errno("kill@spawn_undo", EPERM, 0, 1) == 1);
    spawn_expect(io, &o, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED);
    covered("kill@spawn_undo", "EPERM");
    cio__fault_reset();
    assert_no_children();
    assert_int_equal(fd_count(), before);
}

typedef struct child_case {
    const char *site;
    int err;
    const char *err_name;
    int what; /* 0 plain, 1 cwd path, 2 cwd dir, 3 setsid, 4 setpgid, 5 uid, 6 gid, 7 stdio swap, 8 path */
    cio_err want;
} child_case;

static void test_spawn_child_faults(void **state)
{
    cio_io io = cio_test_io(state);
    static const child_case cases[] = {
        {"execve@spawn_child", EACCES, "EACCES", 0, CIO_E_ACCESS_DENIED},
        {"execve@spawn_child", ENOEXEC, "ENOEXEC", 0, CIO_E_INVALID_EXE},
        {"execve@spawn_child", E2BIG, "E2BIG", 0, CIO_E_SYSTEM_RESOURCES},
        {"execve@spawn_child", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"execve@spawn_child", ETXTBSY, "ETXTBSY", 0, CIO_E_FILE_BUSY},
        {"execveat@spawn_child", ENOENT, "ENOENT", 8, CIO_E_FILE_NOT_FOUND},
        {"chdir@spawn_child", EACCES, "EACCES", 1, CIO_E_ACCESS_DENIED},
        {"fchdir@spawn_child", EACCES, "EACCES", 2, CIO_E_ACCESS_DENIED},
        {"setsid@spawn_child", EPERM, "EPERM", 3, CIO_E_PERMISSION_DENIED},
        {"setpgid@spawn_child", EPERM, "EPERM", 4, CIO_E_INVALID_PROCESS_GROUP_ID},
        {"setuid@spawn_child", EINVAL, "EINVAL", 5, CIO_E_INVALID_USER_ID},
        {"setgid@spawn_child", EPERM, "EPERM", 6, CIO_E_PERMISSION_DENIED},
        {"dup2@spawn_child", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"fcntl@spawn_child", EMFILE, "EMFILE", 7, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
    };
    cio_dir bin;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), "/bin", NULL, &bin));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const child_case *k = &cases[i];
        int before = fd_count();
        cio_spawn_options o = all_pipes();
        switch (k->what) {
        case 1: o.cwd = "/"; break;
        case 2: o.cwd_dir = &bin; break;
        case 3: o.new_session = true; break;
        case 4: o.set_pgid = true; break;
        case 5:
            o.set_uid = true;
            o.uid = (uint32_t)getuid();
            break;
        case 6:
            o.set_gid = true;
            o.gid = (uint32_t)getgid();
            break;
        case 7: /* stdout is the parent's stdin: moved above 2 before stdin's dup2 */
            o.stdio[1].kind = CIO_STDIO_FILE;
            o.stdio[1].file.handle = 0;
            break;
        default: break;
        }
        assert_true(cio__fault_errno(k->site, k->err, 0, -1) == 1); /* every call: the PATH search too */
        cio_child c;
        cio_err err = k->what == 8 ? cio_process_spawn_path(io, bin, &o, &c) : cio_process_spawn(io, &o, &c);
        assert_err(err, k->want);
        assert_int_equal(c.id, 0);
        covered_in_child(k->site, k->err_name);
        cio__fault_reset();
        assert_no_children();
        assert_int_equal(fd_count(), before);
    }
    cio_dir_close(io, bin);
    /* the report itself cannot be written: the one case a child that did not exec shows as 127 */
    cio_spawn_options o = opts(true_argv);
    assert_true(cio__fault_errno("execve@spawn_child", EACCES, 0, -1) == 1);
    assert_true(cio__fault_errno("write@spawn_child_report", EBADF, 0, 1) == 1);
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    cio__fault_reset();
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    assert_int_equal(t.code, 127);
    covered_in_child("write@spawn_child_report", "EBADF");
    /* the child's mask cannot be set: ignored, the program runs */
    assert_true(cio__fault_errno("pthread_sigmask@spawn_child_mask", EINVAL, 0, 1) == 1);
    assert_ok(cio_process_spawn(io, &o, &c));
    cio__fault_reset();
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 0);
    covered_in_child("pthread_sigmask@spawn_child_mask", "EINVAL");
    assert_no_children();
}

static void test_wait_faults(void **state)
{
    cio_io io = cio_test_io(state);
#if CIO_HAVE_EVENTED               /* (where backends.h has cio_test_under_valgrind) */
    if (cio_test_under_valgrind()) /* ENOSYS there: the waits take the no-pidfd path, not these sites */
        CIO_SKIP("valgrind (3.19) does not know pidfd_open (syscall 434)");
#endif
    int before = fd_count();
    cio_spawn_options o = opts((const char *const[]){"sleep", "0.1", NULL});
    cio_child c;
    cio_term t;
    /* EINTR on the pidfd's poll (Threaded) is retried */
    if (fx_backend_of(state) == FX_THREADED) {
        assert_ok(cio_process_spawn(io, &o, &c));
        assert_true(cio__fault_errno("poll@child_wait", EINTR, 0, 3) == 1);
        assert_ok(cio_child_wait(io, &c, &t));
        covered("poll@child_wait", "EINTR");
        cio__fault_reset();
    }
    /* the reap is retried on EINTR; a failed one (ECHILD: someone else reaped) is Unexpected and
     * still gives the child up (no descriptor kept) */
    assert_ok(cio_process_spawn(io, &(cio_spawn_options){.argv = true_argv}, &c));
    assert_true(cio__fault_errno("waitid@child_reap", EINTR, 0, 2) == 1);
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 0);
    covered("waitid@child_reap", "EINTR");
    cio__fault_reset();
    assert_ok(cio_process_spawn(io, &(cio_spawn_options){.argv = true_argv}, &c));
    int64_t pid = c.id;
    assert_true(cio__fault_errno("waitid@child_reap", ECHILD, 0, 1) == 1);
    assert_err(cio_child_wait(io, &c, &t), CIO_E_UNEXPECTED);
    assert_int_equal(c.id, 0);
    covered("waitid@child_reap", "ECHILD");
    cio__fault_reset();
    assert_int_equal(waitpid((pid_t)pid, NULL, 0), (pid_t)pid); /* the test reaps it itself */
    /* a kernel without pidfd_open: the wait is waitid in the cancellation bracket (or the helper) */
    assert_true(cio__fault_errno("pidfd_open@spawn", ENOSYS, 0, 1) == 1);
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_int_equal(c.handle, -1);
    covered("pidfd_open@spawn", "ENOSYS");
    cio__fault_reset();
    assert_true(cio__fault_errno("waitid@child_wait", EINTR, 0, 2) == 1);
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.kind, CIO_TERM_EXITED);
    covered("waitid@child_wait", "EINTR");
    cio__fault_reset();
    /* kill: SIGTERM fails (the child ends by itself), the reap sees EINTR, the pidfd's close EINTR */
    assert_ok(cio_process_spawn(io, &o, &c));
    assert_true(cio__fault_errno("kill@child_kill", EPERM, 0, 1) == 1);
    assert_true(cio__fault_errno("waitid@child_kill", EINTR, 0, 1) == 1);
    assert_true(cio__fault_errno("close@child_pidfd", EINTR, 0, 1) == 1);
    cio_child_kill(io, &c);
    assert_int_equal(c.id, 0);
    covered("kill@child_kill", "EPERM");
    covered("waitid@child_kill", "EINTR");
    covered("close@child_pidfd", "EINTR");
    cio__fault_reset();
    assert_no_children();
    assert_int_equal(fd_count(), before);
}

static void test_cwd_faults(void **state)
{
    cio_io io = cio_test_io(state);
    char buf[4096];
    assert_true(cio__fault_errno("getcwd@current_path", ERANGE, 0, 1) == 1);
    assert_err(cio_process_current_path(io, buf, sizeof buf, NULL), CIO_E_NAME_TOO_LONG);
    covered("getcwd@current_path", "ERANGE");
    cio__fault_reset();
    assert_true(cio__fault_errno("getcwd@current_path", ENOENT, 0, 1) == 1);
    assert_err(cio_process_current_path(io, buf, sizeof buf, NULL), CIO_E_CURRENT_DIR_UNLINKED);
    covered("getcwd@current_path", "ENOENT");
    cio__fault_reset();
    assert_true(cio__fault_errno("chdir@set_current_path", EACCES, 0, 1) == 1);
    assert_err(cio_process_set_current_path(io, "/"), CIO_E_ACCESS_DENIED);
    covered("chdir@set_current_path", "EACCES");
    cio__fault_reset();
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), "/", NULL, &d));
    assert_true(cio__fault_errno("fchdir@set_current_dir", EACCES, 0, 1) == 1);
    assert_err(cio_process_set_current_dir(io, d), CIO_E_ACCESS_DENIED);
    covered("fchdir@set_current_dir", "EACCES");
    cio__fault_reset();
    cio_dir_close(io, d);
}

/* ---- cio_signal_wait (src/os/sig_wait_posix.c) ------------------------------------------------------- */

struct sig_waiter {
    cio_io io;
    cio_sigset set;
    _Atomic(int) *got;
};
static cio_err sig_wait_task(void *p)
{
    struct sig_waiter *w = (struct sig_waiter *)p;
    cio_sig sig;
    cio_err err = cio_signal_wait(w->io, &w->set, &sig);
    if (err == CIO_OK)
        atomic_store(w->got, (int)sig);
    return err;
}

/* Starts a waiter of `sig`, waits until cio's handler is installed, then sleeps 20 ms (asleep). */
static void sig_start(cio_io io, struct sig_waiter *w, cio_sig sig, cio_future *f)
{
    cio_sigset_empty(&w->set);
    assert_ok(cio_sigset_add(&w->set, sig));
    *f = (cio_future){NULL, CIO_OK, 0};
    assert_ok(cio_concurrent(io, sig_wait_task, w, sizeof *w, f));
    for (int i = 0; i < 10000; i++) {
        struct cio_sigaction old;
        assert_ok(cio_sigaction(sig, NULL, &old));
        if (old.handler != CIO_SIG_HANDLER_DEFAULT)
            break;
        assert_ok(cio_sleep(io, cio_timeout_ms(1)));
    }
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
}

static void test_signal_wait_faults(void **state)
{
    cio_io io = cio_test_io(state);
    int before = fd_count();
    cio_sigset s;
    cio_sig sig;
    /* installing the handler fails (WINCH: a signal no other case installs): nothing installed */
    cio_sigset_empty(&s);
    assert_ok(cio_sigset_add(&s, CIO_SIG_WINCH));
    assert_true(cio__fault_errno("sigaction@sigwait_install", EINVAL, 0, 1) == 1);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_INVALID_SIGNAL);
    covered("sigaction@sigwait_install", "EINVAL");
    cio__fault_reset();
    struct cio_sigaction old;
    assert_ok(cio_sigaction(CIO_SIG_WINCH, NULL, &old));
    assert_true(old.handler == CIO_SIG_HANDLER_DEFAULT);
    /* no pipe for the waiter: the typed error, no descriptor */
    cio_sigset_empty(&s);
    assert_ok(cio_sigset_add(&s, CIO_SIG_USR2));
    assert_true(cio__fault_errno("pipe2@sigwait_pipe", EMFILE, 0, 1) == 1);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_PROCESS_FD_QUOTA_EXCEEDED);
    covered("pipe2@sigwait_pipe", "EMFILE");
    cio__fault_reset();
    assert_int_equal(fd_count(), before);
    _Atomic(int) got = 0;
    struct sig_waiter w = {io, s, &got};
    cio_future f;
    /* EINTR on the waiter's poll (Threaded) is retried; a failed drain and a close's EINTR are harmless */
    if (fx_backend_of(state) == FX_THREADED) {
        assert_true(cio__fault_errno("poll@sigwait", EINTR, 0, 2) == 1);
        assert_true(cio__fault_errno("read@sigwait_drain", EIO, 0, 1) == 1);
        assert_true(cio__fault_errno("close@sigwait_pipe", EINTR, 0, 1) == 1);
        sig_start(io, &w, CIO_SIG_USR2, &f);
        /* the waiter reached its poll (a loaded qemu-user run was seen killing before it did: the
         * delivery was taken before any poll) */
        for (int i = 0; i < 10000 && cio__fault_injected("poll@sigwait") < 2; i++)
            assert_ok(cio_sleep(io, cio_timeout_ms(1)));
        assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR2));
        assert_ok(cio_await(io, &f));
        assert_int_equal(atomic_load(&got), CIO_SIG_USR2);
        covered("poll@sigwait", "EINTR");
        covered("read@sigwait_drain", "EIO");
        covered("close@sigwait_pipe", "EINTR");
        cio__fault_reset();
    }
    /* the handler's wake-up write fails: the waiter sleeps on (canceled here), and the delivery stays
     * pending for the next wait, which returns it at once */
    atomic_store(&got, 0);
    sig_start(io, &w, CIO_SIG_USR2, &f);
    assert_true(cio__fault_errno("write@sigwait_wake", EIO, 0, -1) == 1);
    assert_ok(cio_sig_kill((long)getpid(), CIO_SIG_USR2));
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    assert_int_equal(atomic_load(&got), 0);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    covered("write@sigwait_wake", "EIO");
    cio__fault_reset();
    assert_ok(cio_signal_wait(io, &s, &sig));
    assert_int_equal(sig, CIO_SIG_USR2);
    assert_int_equal(fd_count(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_signal_wait_faults),
        CIO_TESTS(test_spawn_parent_faults),
        CIO_TESTS(test_spawn_parent_ridden_out),
        CIO_TESTS(test_spawn_child_faults),
        CIO_TESTS(test_wait_faults),
        CIO_TESTS(test_cwd_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void test_process_sites_linux_only(void **state)
{
    (void)state;
    CIO_SKIP("the process call sites are Linux's (spawn is OperationUnsupported on this target)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_process_sites_linux_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
