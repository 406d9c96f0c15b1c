/*
 * What process_spawn_posix.c asks of its OS (process_spawn_linux.c, process_spawn_bsd.c): running a
 * program relative to a directory descriptor, the handle waits use, and reaping a child that never
 * ran the program. Private to the OS room.
 */
#ifndef CIO_OS_PROCESS_SPAWN_H
#define CIO_OS_PROCESS_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

#include "cio/io.h"

/* Whether `name` can be run relative to `dirfd` here (before fork: the caller reports
 * OperationUnsupported otherwise). */
bool cio__os_spawn_at_supported(int dirfd, const char *name);

/* In the child (async-signal-safe): runs `name` relative to `dirfd`; returns only with the errno. */
int cio__os_spawn_exec_at(int dirfd, const char *name, char **argv, char **envp);

/* In the parent, right after fork, before anyone can reap the child: the handle waits use (a pidfd
 * on Linux; -1 where there is none, then waits use the pid). Set: Process.SpawnError; on failure
 * the caller kills and reaps the child. */
cio_err cio__os_spawn_handle(pid_t pid, int *handle);

/* Reaps a child that exited without running the program (uncancelable; EINTR retried). */
void cio__os_spawn_reap(pid_t pid);

#endif /* CIO_OS_PROCESS_SPAWN_H */
