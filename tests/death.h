/*
 * Death tests: a misuse that must stop the program with a message (cio/diag.h) runs in a child
 * process, and the test checks that the child died (abort) and that its stderr holds the expected
 * message.
 *
 *   POSIX    fork(): the child runs `die` right away; the parent reads its stderr through a pipe
 *            and wants SIGABRT. (`prepare` runs in the parent first, on the test's backend: the
 *            child has none of the parent's threads, so it must die before it needs one.)
 *   Windows  the test program runs itself again (CreateProcess of its own executable with
 *            `--cio-death <case>`), stderr on a pipe; main() hands that to cio_death_child, which
 *            makes a Threaded instance and runs `prepare` then `die` there. abort() exits with 3.
 *   WASI     no processes: the test skips, saying so.
 */
#ifndef CIO_TESTS_DEATH_H
#define CIO_TESTS_DEATH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"

typedef struct cio_death_case {
    const char *name;
    void (*prepare)(cio_io io, void *state); /* may be NULL */
    void (*die)(cio_io io, void *state);     /* must not return */
} cio_death_case;

#define CIO_DEATH_STATE 256 /* bytes of state prepare can hand to die */

#if defined(CIO_OS_WINDOWS)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

static inline void cio_death_run(cio_io io, const cio_death_case *c, const char *want)
{
    (void)io;
    char exe[MAX_PATH];
    DWORD n = GetModuleFileNameA(NULL, exe, sizeof exe);
    assert_true(n > 0 && n < sizeof exe);
    char cmd[MAX_PATH + 128];
    snprintf(cmd, sizeof cmd, "\"%s\" --cio-death %s", exe, c->name);
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE rd, wr;
    assert_true(CreatePipe(&rd, &wr, &sa, 0));
    SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = wr;
    si.hStdError = wr;
    PROCESS_INFORMATION pi;
    BOOL ok = CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi);
    CloseHandle(wr);
    if (!ok) {
        CloseHandle(rd);
        fail_msg("%s: CreateProcess failed (%lu)", c->name, (unsigned long)GetLastError());
    }
    char out[4096];
    size_t len = 0;
    DWORD got;
    while (len < sizeof out - 1 && ReadFile(rd, out + len, (DWORD)(sizeof out - 1 - len), &got, NULL) && got > 0)
        len += got;
    out[len] = '\0';
    CloseHandle(rd);
    WaitForSingleObject(pi.hProcess, 60000);
    DWORD code = 0;
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    if (code == 0 || strstr(out, want) == NULL)
        fail_msg("%s: want a death with \"%s\"; exit code %lu, stderr: %s", c->name, want, (unsigned long)code, out);
}

#elif defined(CIO_OS_WASI)

static inline void cio_death_run(cio_io io, const cio_death_case *c, const char *want)
{
    (void)io;
    (void)c;
    (void)want;
    CIO_SKIP("no processes on WASI: a death test needs a child process");
}

#else
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One run of the case in a forked child: its stderr into out, its wait status into *st. False when
 * the child neither died nor exited within CIO_DEATH_WAIT_MS (it is killed): a child forked from a
 * threaded process can deadlock on a lock that another thread of the parent held at the fork (seen
 * under ASan: its allocator's, taken by a loop thread the child started). */
#define CIO_DEATH_WAIT_MS 60000
static inline bool cio_death_fork(cio_io io, const cio_death_case *c, char *out, size_t cap, int *st)
{
    _Alignas(16) unsigned char state[CIO_DEATH_STATE];
    memset(state, 0, sizeof state);
    if (c->prepare != NULL)
        c->prepare(io, state);
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        close(p[0]);
        dup2(p[1], 2);
        c->die(io, state);
        _exit(0);
    }
    close(p[1]);
    size_t len = 0;
    bool hung = false;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = CIO_DEATH_WAIT_MS - (long)((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd pfd = {p[0], POLLIN, 0};
        int r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            hung = true;
            break;
        }
        ssize_t got = read(p[0], out + len, len < cap - 1 ? cap - 1 - len : 0);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    out[len] = '\0';
    close(p[0]);
    if (hung)
        kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, st, 0), pid);
    return !hung;
}

static inline void cio_death_run(cio_io io, const cio_death_case *c, const char *want)
{
    char out[4096];
    int st = 0;
    if (!cio_death_fork(io, c, out, sizeof out, &st)) {
        print_message("      note: %s: the child hung for %d s and was killed; running it once more\n", c->name,
                      CIO_DEATH_WAIT_MS / 1000);
        if (!cio_death_fork(io, c, out, sizeof out, &st))
            fail_msg("%s: want SIGABRT with \"%s\"; the child hung twice (killed after %d s), stderr: %s", c->name,
                     want, CIO_DEATH_WAIT_MS / 1000, out);
    }
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT || strstr(out, want) == NULL)
        fail_msg("%s: want SIGABRT with \"%s\"; %s %d, stderr: %s", c->name, want,
                 WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), out);
}
#endif

/* main(): the child's side of a Windows death test. Returns when argv asks for none. */
static inline void cio_death_child(int argc, char **argv, const cio_death_case *cases, size_t n)
{
    if (argc < 3 || strcmp(argv[1], "--cio-death") != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cases[i].name, argv[2]) != 0)
            continue;
        cio_threaded *t = NULL;
        if (cio_threaded_create(NULL, &t) != CIO_OK)
            exit(2);
        _Alignas(16) unsigned char state[CIO_DEATH_STATE];
        memset(state, 0, sizeof state);
        if (cases[i].prepare != NULL)
            cases[i].prepare(cio_threaded_io(t), state);
        cases[i].die(cio_threaded_io(t), state);
        exit(0);
    }
    exit(4);
}

#endif
