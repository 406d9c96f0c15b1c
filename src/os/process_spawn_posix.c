/*
 * Starting and replacing programs on Linux and the BSDs (Zig's processSpawn, processSpawnPath,
 * processReplace, processReplacePath), and fchdir (processSetCurrentDir). Shared by both backends:
 * the Evented one runs spawn on its helper pool. What differs per OS (a program relative to a
 * directory, the pidfd, reaping) is in process_spawn_linux.c / process_spawn_bsd.c
 * (process_spawn.h); the BSDs have no OS call table, so CIO__SYS is the plain call there.
 *
 * Invariants:
 * - Everything that can fail in an ordinary way (options, environment array, pipes, /dev/null, the
 *   report pipe) is done in the parent before fork; on any error every descriptor made so far is
 *   closed and nothing is left behind.
 * - Every descriptor made here is close-on-exec from birth (pipe2/openat with O_CLOEXEC): the only
 *   ones a child inherits are the three it gets as stdin/stdout/stderr (dup2 clears the flag), so
 *   nothing of cio's (pipes of other children, poller descriptors) leaks into any child.
 * - Between fork and exec the child calls only async-signal-safe functions (through the OS call
 *   table: one atomic load and an indirect call), touches no lock and allocates nothing; the PATH
 *   search builds its candidates in a stack buffer.
 * - Every signal is blocked in the parent around fork (no handler of the parent runs in the child
 *   before exec); the child sets an empty mask right before exec, so the new program starts with no
 *   signal blocked whatever the spawning thread had blocked.
 * - The child reports a failed step (which step and its errno) through the close-on-exec report
 *   pipe and _exits; the parent reads until the pipe's end: 0 bytes means exec succeeded, a report
 *   means the child never ran the program, and the parent reaps it before returning the typed error
 *   (never a child exiting 127 for the caller to interpret).
 * - The parent gets a pidfd for the child on Linux (pidfd_open, before anyone can reap it); where the
 *   kernel has none (ENOSYS), and on the BSDs, the handle is -1 and waits use the pid.
 * - Spawn is a cancellation point only before fork.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/process.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"
#include "process_spawn.h"

extern char **environ;

/* The child's steps, reported with their errno. */
enum step { STEP_EXEC = 1, STEP_CHDIR, STEP_DUP2, STEP_SETID, STEP_SETPGID, STEP_SETSID };

struct report {
    int32_t step;
    int32_t err;
};

struct plan {
    const cio_spawn_options *o;
    bool at_dir; /* spawn_path: argv[0] relative to dirfd, no PATH search */
    int dirfd;
    char **envp;      /* the child's environment */
    char **env_alloc; /* what build_env allocated (freed by the parent) */
    const char *path; /* PATH for the search (NULL: the default) */
    int child_fd[3];  /* what the child makes its fd 0, 1, 2 (-1: leave as inherited) */
    int parent_fd[3]; /* the parent's ends of pipes (-1: none) */
    int close_fd[4];  /* descriptors the parent closes once the child has them (child ends, null) */
    int report[2];
};

static void close_fd(int fd)
{
    if (fd < 0)
        return;
    if (CIO__SYS(close, spawn_close)(fd) == 0)
        return;
    cio__mapped m = cio__errno_close(errno);
    if (m.action == CIO__MAP_BUG)
        (void)CIO__BUG("close: bad file descriptor");
}

/* strchr and strncmp's prefix test, here because the BSDs' C library as cio declares it (spec/libc.yaml)
 * has neither; async-signal-safe. */
static const char *find_char(const char *s, char c)
{
    for (; *s != '\0'; s++) {
        if (*s == c)
            return s;
    }
    return NULL;
}

static bool has_prefix(const char *s, const char *prefix)
{
    while (*prefix != '\0' && *s == *prefix) {
        s++;
        prefix++;
    }
    return *prefix == '\0';
}

static cio_err mapped(cio__mapped m)
{
    if (m.action == CIO__MAP_BUG)
        return CIO__BUG("spawn: an errno that means a bug");
    return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
}

/* ---- the parent's preparation ------------------------------------------------------------------ */

static bool same_name(const char *a, const char *b)
{
    while (*a != '\0' && *a != '=' && *a == *b) {
        a++;
        b++;
    }
    return (*a == '=' || *a == '\0') && (*b == '=' || *b == '\0');
}

static cio_err build_env(struct plan *p)
{
    static char *empty[1] = {NULL};
    const cio_spawn_options *o = p->o;
    if (o->env_mode == CIO_ENV_INHERIT) {
        p->envp = environ;
    } else if (o->env_mode == CIO_ENV_REPLACE) {
        p->envp = o->env != NULL ? (char **)(uintptr_t)o->env : empty;
    } else {
        size_t n = 0, m = 0;
        while (environ != NULL && environ[n] != NULL)
            n++;
        while (o->env != NULL && o->env[m] != NULL)
            m++;
        char **a = (char **)CIO__SYS(malloc, spawn_env)((n + m + 1) * sizeof *a);
        if (a == NULL)
            return CIO_E_OUT_OF_MEMORY;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            bool replaced = false;
            for (size_t j = 0; j < m && !replaced; j++)
                replaced = same_name(environ[i], o->env[j]);
            if (!replaced)
                a[k++] = environ[i];
        }
        for (size_t j = 0; j < m; j++)
            a[k++] = (char *)(uintptr_t)o->env[j];
        a[k] = NULL;
        p->envp = a;
        p->env_alloc = a;
    }
    p->path = NULL;
    for (size_t i = 0; p->envp[i] != NULL; i++) {
        if (has_prefix(p->envp[i], "PATH=")) {
            p->path = p->envp[i] + 5;
            break;
        }
    }
    return CIO_OK;
}

static cio_err make_pipe(int fds[2])
{
    if (CIO__SYS(pipe2, spawn_pipe)(fds, O_CLOEXEC) == 0)
        return CIO_OK;
    fds[0] = fds[1] = -1;
    return mapped(cio__errno_pipe2(errno));
}

static cio_err open_devnull(int *fd)
{
    for (;;) {
        *fd = CIO__SYS(openat, spawn_devnull)(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY, 0);
        if (*fd >= 0)
            return CIO_OK;
        cio__mapped m = cio__errno_openat(errno);
        if (m.action != CIO__MAP_RETRY)
            return mapped(m);
    }
}

static void plan_release(struct plan *p, bool parent_ends_too)
{
    for (int i = 0; i < 4; i++) {
        close_fd(p->close_fd[i]);
        p->close_fd[i] = -1;
    }
    for (int i = 0; i < 2; i++) {
        close_fd(p->report[i]);
        p->report[i] = -1;
    }
    if (parent_ends_too) {
        for (int i = 0; i < 3; i++) {
            close_fd(p->parent_fd[i]);
            p->parent_fd[i] = -1;
        }
    }
    free(p->env_alloc);
    p->env_alloc = NULL;
}

static cio_err plan_stdio(struct plan *p, bool allow_pipes)
{
    int devnull = -1;
    for (int i = 0; i < 3; i++) {
        const cio_stdio *s = &p->o->stdio[i];
        switch (s->kind) {
        case CIO_STDIO_INHERIT: break;
        case CIO_STDIO_FILE:
            if (s->file.handle < 0)
                return CIO_E_INVALID_ARGUMENT;
            p->child_fd[i] = s->file.handle;
            break;
        case CIO_STDIO_IGNORE:
            if (devnull < 0) {
                cio_err err = open_devnull(&devnull);
                if (err != CIO_OK)
                    return err;
                p->close_fd[3] = devnull;
            }
            p->child_fd[i] = devnull;
            break;
        case CIO_STDIO_PIPE: {
            if (!allow_pipes)
                return CIO_E_INVALID_ARGUMENT;
            int fds[2];
            cio_err err = make_pipe(fds);
            if (err != CIO_OK)
                return err;
            /* stdin: the child reads fds[0]; stdout/stderr: the child writes fds[1] */
            p->child_fd[i] = i == 0 ? fds[0] : fds[1];
            p->parent_fd[i] = i == 0 ? fds[1] : fds[0];
            p->close_fd[i] = p->child_fd[i];
            break;
        }
        default: return CIO_E_INVALID_ARGUMENT;
        }
    }
    return CIO_OK;
}

/* ---- the child (async-signal-safe calls only) ------------------------------------------------------ */

static _Noreturn void child_fail(int fd, enum step step, int err)
{
    struct report r = {(int32_t)step, (int32_t)err};
    (void)CIO__SYS(write, spawn_child_report)(fd, &r, sizeof r);
    _exit(127);
    for (;;) { /* _exit does not return (where the C library does not say so) */
    }
}

static void child_stdio(const struct plan *p)
{
    int src[3] = {p->child_fd[0], p->child_fd[1], p->child_fd[2]};
    /* a source that is itself 0..2 but another target could be overwritten by an earlier dup2:
     * move it above 2 first */
    for (int i = 0; i < 3; i++) {
        if (src[i] >= 0 && src[i] <= 2 && src[i] != i) {
            int moved = CIO__SYS(fcntl, spawn_child)(src[i], F_DUPFD_CLOEXEC, 3);
            if (moved < 0)
                child_fail(p->report[1], STEP_DUP2, errno);
            src[i] = moved;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (src[i] < 0)
            continue;
        if (src[i] == i) { /* keep it, but across exec */
            if (CIO__SYS(fcntl, spawn_child)(i, F_SETFD, 0) < 0)
                child_fail(p->report[1], STEP_DUP2, errno);
            continue;
        }
        while (CIO__SYS(dup2, spawn_child)(src[i], i) < 0) {
            if (errno != EINTR && errno != EBUSY)
                child_fail(p->report[1], STEP_DUP2, errno);
        }
    }
}

/* Runs the program; returns only with the errno to report. */
static int exec_program(const struct plan *p)
{
    char **argv = (char **)(uintptr_t)p->o->argv;
    const char *name = argv[0];
    if (p->at_dir)
        return cio__os_spawn_exec_at(p->dirfd, name, argv, p->envp);
    if (find_char(name, '/') != NULL) {
        CIO__SYS(execve, spawn_child)(name, argv, p->envp);
        return errno;
    }
    const char *path = p->path != NULL ? p->path : "/usr/local/bin:/usr/bin:/bin";
    size_t name_len = strlen(name);
    int result = ENOENT;
    bool denied = false;
    char buf[PATH_MAX];
    for (const char *s = path;;) {
        const char *e = find_char(s, ':');
        size_t dir_len = e != NULL ? (size_t)(e - s) : strlen(s);
        if (dir_len + 1 + name_len + 1 <= sizeof buf) {
            size_t k = 0;
            if (dir_len == 0) {
                buf[k++] = '.';
            } else {
                memcpy(buf, s, dir_len);
                k = dir_len;
            }
            buf[k++] = '/';
            memcpy(buf + k, name, name_len + 1);
            CIO__SYS(execve, spawn_child)(buf, argv, p->envp);
            switch (errno) {
            case EACCES: denied = true; break;
            case ENOENT:
            case ENOTDIR:
            case ESTALE:
            case ENODEV:
            case ETIMEDOUT:
            case ENAMETOOLONG: break;
            default: return errno;
            }
        } else {
            result = ENAMETOOLONG;
        }
        if (e == NULL)
            break;
        s = e + 1;
    }
    return denied ? EACCES : result;
}

static _Noreturn void child_setup(const struct plan *p)
{
    const cio_spawn_options *o = p->o;
    int rep = p->report[1];
    if (o->new_session && CIO__SYS(setsid, spawn_child)() < 0)
        child_fail(rep, STEP_SETSID, errno);
    if (o->set_pgid && CIO__SYS(setpgid, spawn_child)(0, (pid_t)o->pgid) < 0)
        child_fail(rep, STEP_SETPGID, errno);
    if (o->set_gid && CIO__SYS(setgid, spawn_child)((gid_t)o->gid) < 0)
        child_fail(rep, STEP_SETID, errno);
    if (o->set_uid && CIO__SYS(setuid, spawn_child)((uid_t)o->uid) < 0)
        child_fail(rep, STEP_SETID, errno);
    child_stdio(p);
    if (o->cwd != NULL) {
        if (CIO__SYS(chdir, spawn_child)(o->cwd) < 0)
            child_fail(rep, STEP_CHDIR, errno);
    } else if (o->cwd_dir != NULL) {
        if (CIO__SYS(fchdir, spawn_child)(o->cwd_dir->handle) < 0)
            child_fail(rep, STEP_CHDIR, errno);
    }
    sigset_t none;
    sigemptyset(&none);
    (void)CIO__SYS(pthread_sigmask, spawn_child_mask)(SIG_SETMASK, &none, NULL);
    child_fail(rep, STEP_EXEC, exec_program(p));
}

/* ---- the parent after fork ------------------------------------------------------------------------- */

/* Reads the child's report: true with *r when it sent one (it did not exec). */
static bool read_report(int fd, struct report *r)
{
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t n = CIO__SYS(read, spawn_report)(fd, (char *)r + got, sizeof *r - got);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break; /* the end (exec closed the pipe), or an error reading a pipe of our own */
    }
    return got == sizeof *r;
}

static cio_err report_error(const struct report *r)
{
    int e = r->err;
    switch (r->step) {
    case STEP_EXEC: return mapped(cio__errno_execve(e));
    case STEP_CHDIR: return mapped(cio__errno_spawn_chdir(e));
    case STEP_DUP2: return e == EBADF ? CIO_E_INVALID_ARGUMENT : mapped(cio__errno_spawn_dup2(e));
    case STEP_SETID: return mapped(cio__errno_spawn_setid(e));
    case STEP_SETPGID: return mapped(cio__errno_spawn_setpgid(e));
    case STEP_SETSID: return mapped(cio__errno_spawn_setsid(e));
    default: return CIO_E_UNEXPECTED;
    }
}

static cio_err check_options(const cio_spawn_options *o, bool at_dir, int dirfd)
{
    if (o == NULL || o->argv == NULL || o->argv[0] == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (o->env_mode != CIO_ENV_INHERIT && o->env_mode != CIO_ENV_REPLACE && o->env_mode != CIO_ENV_ADD)
        return CIO_E_INVALID_ARGUMENT;
    if (o->argv[0][0] == '\0')
        return CIO_E_FILE_NOT_FOUND;
    if (at_dir && !cio__os_spawn_at_supported(dirfd, o->argv[0]))
        return CIO_E_OPERATION_UNSUPPORTED;
    return CIO_OK;
}

static void child_clear(cio_child *out)
{
    out->id = 0;
    out->handle = -1;
    for (int i = 0; i < 3; i++)
        out->stdio[i].handle = -1;
}

/* A plan (every descriptor slot empty, -1) with its environment and stdio (`spawn`: the parent's
 * pipe ends too). On failure the plan is released already. */
static cio_err plan_make(struct plan *p, const cio_spawn_options *o, bool at_dir, int dirfd, bool spawn)
{
    memset(p, 0, sizeof *p);
    p->o = o;
    p->at_dir = at_dir;
    p->dirfd = dirfd;
    for (int i = 0; i < 3; i++)
        p->child_fd[i] = p->parent_fd[i] = -1;
    for (int i = 0; i < 4; i++)
        p->close_fd[i] = -1;
    p->report[0] = p->report[1] = -1;
    cio_err err = build_env(p);
    if (err == CIO_OK)
        err = plan_stdio(p, spawn);
    if (err != CIO_OK)
        plan_release(p, true);
    return err;
}

static cio_err spawn_common(bool at_dir, int dirfd, const cio_spawn_options *o, cio_child *out)
{
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    child_clear(out);
    cio_err err = check_options(o, at_dir, dirfd);
    if (err == CIO_OK)
        err = cio__t_cancel_point();
    struct plan p;
    if (err == CIO_OK)
        err = plan_make(&p, o, at_dir, dirfd, true);
    if (err != CIO_OK)
        return err;
    err = make_pipe(p.report);
    if (err != CIO_OK) {
        plan_release(&p, true);
        return err;
    }
    sigset_t all, old;
    sigfillset(&all);
    (void)CIO__SYS(pthread_sigmask, spawn_block)(SIG_SETMASK, &all, &old);
    pid_t pid = CIO__SYS(fork, spawn)();
    if (pid == 0)
        child_setup(&p);
    int fork_errno = errno;
    (void)CIO__SYS(pthread_sigmask, spawn_block)(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        plan_release(&p, true);
        return mapped(cio__errno_fork(fork_errno));
    }
    /* the child has its ends: close ours of them, and the report pipe's writing end */
    close_fd(p.report[1]);
    p.report[1] = -1;
    for (int i = 0; i < 4; i++) {
        close_fd(p.close_fd[i]);
        p.close_fd[i] = -1;
    }
    struct report r;
    if (read_report(p.report[0], &r)) {
        cio__os_spawn_reap(pid);
        plan_release(&p, true);
        return report_error(&r);
    }
    int pidfd = -1;
    err = cio__os_spawn_handle(pid, &pidfd);
    if (err != CIO_OK) {
        (void)CIO__SYS(kill, spawn_undo)(pid, SIGKILL);
        cio__os_spawn_reap(pid);
        plan_release(&p, true);
        return err;
    }
    plan_release(&p, false);
    out->id = (int64_t)pid;
    out->handle = pidfd;
    for (int i = 0; i < 3; i++)
        out->stdio[i].handle = p.parent_fd[i];
    return CIO_OK;
}

cio_err cio__os_process_spawn(void *ud, const cio_spawn_options *options, cio_child *out)
{
    (void)ud;
    return CIO__IN_SET(process_spawn, spawn_common(false, AT_FDCWD, options, out));
}

cio_err cio__os_process_spawn_path(void *ud, cio_dir dir, const cio_spawn_options *options, cio_child *out)
{
    (void)ud;
    return CIO__IN_SET(process_spawn, spawn_common(true, dir.handle, options, out));
}

/* ---- replace: the child's steps, in this process ----------------------------------------------------- */

static cio_err replace_common(bool at_dir, int dirfd, const cio_spawn_options *o)
{
    struct plan p;
    cio_err err = check_options(o, at_dir, dirfd);
    if (err == CIO_OK)
        err = plan_make(&p, o, at_dir, dirfd, false);
    if (err != CIO_OK)
        return err;
    /* only the exec itself: stdio, directory and groups of the running process are its own to change
     * (a failed replace must leave the process as it was) */
    if (o->cwd != NULL || o->cwd_dir != NULL || o->set_pgid || o->new_session || o->set_uid || o->set_gid ||
        p.child_fd[0] >= 0 || p.child_fd[1] >= 0 || p.child_fd[2] >= 0) {
        plan_release(&p, true);
        return CIO_E_INVALID_ARGUMENT;
    }
    int e = exec_program(&p);
    plan_release(&p, true);
    return mapped(cio__errno_execve(e));
}

cio_err cio__os_process_replace(void *ud, const cio_spawn_options *options)
{
    (void)ud;
    return CIO__IN_SET(process_replace, replace_common(false, AT_FDCWD, options));
}

cio_err cio__os_process_replace_path(void *ud, cio_dir dir, const cio_spawn_options *options)
{
    (void)ud;
    return CIO__IN_SET(process_replace, replace_common(true, dir.handle, options));
}

/* ---- fchdir ------------------------------------------------------------------------------------------ */

cio_err cio__os_process_set_current_dir(void *ud, cio_dir dir)
{
    (void)ud;
    if (dir.handle < 0 && dir.handle != AT_FDCWD)
        return CIO_E_INVALID_ARGUMENT;
    if (dir.handle == AT_FDCWD)
        return cio__t_cancel_point();
    cio_err err;
    CIO__OS_CALL(err, fchdir, CIO__SYS(fchdir, set_current_dir)(dir.handle));
    return CIO__IN_SET(process_set_current_dir, err);
}
