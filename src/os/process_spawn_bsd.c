/*
 * process_spawn_posix.c's half for FreeBSD, NetBSD and OpenBSD (process_spawn.h). There is no
 * execveat (and OpenBSD has no fexecve), so a program relative to a directory runs only when that
 * means nothing more than execve: an absolute path, or the current directory; otherwise spawn_path
 * and replace_path are OperationUnsupported (Zig's processSpawnPath is a TODO everywhere). There
 * is no process descriptor cio waits through: the handle is -1 and waits use the pid (waitpid in the
 * cancellation bracket, process_wait_bsd.c). The BSDs have no OS call table: calls are direct.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os.h"
#include "process_spawn.h"

bool cio__os_spawn_at_supported(int dirfd, const char *name)
{
    return dirfd == AT_FDCWD || name[0] == '/';
}

int cio__os_spawn_exec_at(int dirfd, const char *name, char **argv, char **envp)
{
    (void)dirfd; /* cio__os_spawn_at_supported: AT_FDCWD or an absolute name */
    execve(name, argv, envp);
    return errno;
}

cio_err cio__os_spawn_handle(pid_t pid, int *handle)
{
    (void)pid;
    *handle = -1;
    return CIO_OK;
}

void cio__os_spawn_reap(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}
