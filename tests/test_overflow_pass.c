/*
 * Faults that are not a task's stack overflow are left to whoever handled them before cio
 * (cio/diag.h): cio's SIGSEGV handler recognises only a hit just below the running task's stack.
 * Each case runs in a new process (this program again, exec'd with --pass-on: a fork would inherit
 * the handlers cmocka and the suite's instances installed), which sets up its SIGSEGV disposition,
 * then makes its cio instance (which installs cio's handler over it), then faults in a task:
 *   user      a handler of the program's own, then a write to address 8 in a task: the program's
 *             handler runs (it exits 42), cio prints nothing;
 *   default   SIGSEGV at its default, the same write: the process dies of SIGSEGV, cio prints nothing;
 *   overflow  the program's handler, then a task that runs off its stack: cio's message and abort
 *             (a task's overflow is cio's to report; the program's handler does not run).
 * POSIX only (Windows has its own vectored-handler tests; WASI has no signals or processes).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

#include "asserts.h"
#include "backends.h"

#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
#include "overflow_task.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#define HAVE_EXEC 1

static void user_handler(int sig)
{
    static const char msg[] = "user handler: SIGSEGV\n";
    (void)sig;
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    _exit(42);
}

static cio_err bad_write_task(void *p)
{
    (void)p;
    volatile uintptr_t addr = 8; /* far from every stack (volatile: not a constant the compiler sees) */
    *(volatile int *)addr = 1;
    return CIO_E_UNEXPECTED;
}

/* The child: argv = {exe, "--pass-on", mode, backend}. Exit 2: its backend cannot be made. */
static void pass_on_child(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[1], "--pass-on") != 0)
        return;
    const char *mode = argv[2], *backend = argv[3];
    if (strcmp(mode, "default") == 0) {
        signal(SIGSEGV, SIG_DFL);
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = user_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    cio_io io;
    if (strcmp(backend, "threaded") == 0) {
        cio_threaded *t = NULL;
        if (cio_threaded_create(NULL, &t) != CIO_OK)
            _exit(2);
        io = cio_threaded_io(t);
    } else {
#if CIO_HAVE_EVENTED
        cio_evented *e = cio_test_evented_new(strcmp(backend, "uring") == 0 ? CIO_EVENTED_IO_URING : CIO_EVENTED_EPOLL,
                                              1, 0);
        if (e == NULL)
            _exit(2);
        io = cio_evented_io(e);
#else
        _exit(2);
#endif
    }
    cio_future f;
    if (cio_concurrent(io, strcmp(mode, "overflow") == 0 ? overflow_task : bad_write_task, NULL, 0, &f) != CIO_OK)
        _exit(2);
    (void)cio_await(io, &f);
    _exit(5); /* the task came back: its fault did not end the process */
}

/* Runs the child; its stderr into out. Returns the wait status; skips when this program cannot be
 * exec'd again (exit 3: qemu-user without binfmt cannot start a guest binary) or the backend cannot
 * be made in the child (exit 2). */
static int run_child(const char *mode, const char *backend, char *out, size_t cap)
{
    char exe[4096]; /* this program's path, read here: valgrind answers it for its client, the exec in the
                       child would find valgrind's own tool behind /proc/self/exe */
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el <= 0)
        CIO_SKIP("no /proc/self/exe to start this program again from");
    exe[el] = '\0';
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 2);
        char *args[] = {(char *)"test_overflow_pass", (char *)"--pass-on", (char *)mode, (char *)backend, NULL};
        execv(exe, args);
        _exit(3);
    }
    close(p[1]);
    size_t len = 0;
    ssize_t got;
    while (len < cap - 1 && (got = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(p[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
        CIO_SKIP("this program cannot be started again here (qemu-user without binfmt runs no guest exec)");
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        CIO_SKIP("the child could not make this backend");
    print_message("      %s: %s %d; stderr: %s", mode, WIFSIGNALED(st) ? "signal" : "exit status",
                  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), len > 0 ? out : "(nothing)\n");
    return st;
}

static const char *backend_arg(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    if (b == &cio_test_backend_threaded)
        return "threaded";
#if CIO_HAVE_EVENTED
    return cio_evented_flavour_of((cio_evented *)b->instance) == CIO_EVENTED_IO_URING ? "uring" : "epoll";
#else
    return "threaded";
#endif
}
#endif

static void test_fault_goes_to_user_handler(void **state)
{
    (void)cio_test_io(state); /* skips a backend this machine lacks */
#ifdef HAVE_EXEC
    char out[4096];
    int st = run_child("user", backend_arg(state), out, sizeof out);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 42);
    assert_non_null(strstr(out, "user handler: SIGSEGV"));
    assert_null(strstr(out, "stack overflow"));
#else
    CIO_SKIP("no POSIX signals and exec here");
#endif
}

static void test_fault_gets_default_action(void **state)
{
    (void)cio_test_io(state);
#ifdef HAVE_EXEC
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    CIO_SKIP("under a sanitizer, whose own SIGSEGV report is the default here");
#endif
    char out[4096];
    int st = run_child("default", backend_arg(state), out, sizeof out);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    assert_null(strstr(out, "stack overflow"));
#else
    CIO_SKIP("no POSIX signals and exec here");
#endif
}

static void test_overflow_is_cios_over_user_handler(void **state)
{
    (void)cio_test_io(state);
#ifdef HAVE_EXEC
#if defined(__SANITIZE_THREAD__)
    if ((cio_test_backend *)*state == &cio_test_backend_threaded)
        CIO_SKIP("under TSan a Threaded worker's overflow reached the program's own handler, not cio's, when "
                 "that handler came first (TSan's signal interception; without TSan, and for fibers, cio's)");
#endif
    char out[4096];
    int st = run_child("overflow", backend_arg(state), out, sizeof out);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    assert_non_null(strstr(out, "stack overflow in a cio task"));
    assert_null(strstr(out, "user handler"));
#else
    CIO_SKIP("no POSIX signals and exec here");
#endif
}

int main(int argc, char **argv)
{
#ifdef HAVE_EXEC
    pass_on_child(argc, argv);
#else
    (void)argc;
    (void)argv;
#endif
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_fault_goes_to_user_handler),
        CIO_TESTS(test_fault_gets_default_action),
        CIO_TESTS(test_overflow_is_cios_over_user_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
