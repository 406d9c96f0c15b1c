/*
 * process_spawn_posix.c's Linux half (process_spawn.h): execveat for a program relative to a
 * directory, pidfd_open for the handle waits use (ENOSYS: none, waits use waitid), waitid to reap a
 * child that never ran the program. Invariants: exec_at runs in the child between fork and exec
 * (async-signal-safe: one routed call); the others in the parent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"
#include "process_spawn.h"

bool cio__os_spawn_at_supported(int dirfd, const char *name)
{
    (void)dirfd, (void)name;
    return true;
}

int cio__os_spawn_exec_at(int dirfd, const char *name, char **argv, char **envp)
{
    CIO__SYS(execveat, spawn_child)(dirfd, name, argv, envp, 0);
    return errno;
}

cio_err cio__os_spawn_handle(pid_t pid, int *handle)
{
    *handle = CIO__SYS(pidfd_open, spawn)(pid, 0);
    if (*handle >= 0 || errno == ENOSYS)
        return CIO_OK;
    cio__mapped m = cio__errno_pidfd_open(errno);
    if (m.action == CIO__MAP_BUG)
        return CIO__BUG("pidfd_open: an errno that means a bug");
    return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
}

void cio__os_spawn_reap(pid_t pid)
{
    siginfo_t si;
    while (CIO__SYS(waitid, spawn_reap)(P_PID, (id_t)pid, &si, WEXITED) < 0 && errno == EINTR) {
    }
}
