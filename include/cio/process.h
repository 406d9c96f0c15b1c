/*
 * cio/process.h — child processes, replacing the program, the current directory and the stderr lock
 * (Zig's processSpawn, processSpawnPath, childWait, childKill, processReplace, processReplacePath,
 * processCurrentPath, processSetCurrentDir, processSetCurrentPath, lockStderr, tryLockStderr,
 * unlockStderr).
 *
 * A child is started with cio_process_spawn, waited for once with cio_child_wait (a cancellation
 * point: a canceled wait leaves the child waitable) or ended with cio_child_kill. Its standard
 * streams are inherited, ignored (the null device), pipes whose parent ends come back in
 * cio_child.stdio[] as ordinary cio_files (every file and stream call works on them, on every
 * backend), or files the caller gives. Errors of the exec itself (no such program, not executable,
 * ...) are reported by spawn as typed errors: a child that could not exec never runs.
 */
#ifndef CIO_PROCESS_H
#define CIO_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"
#include "cio/signals.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The handle of a cio_child field that holds none: -1 on POSIX, NULL on Windows. */
#if defined(CIO_OS_WINDOWS)
#define CIO_NO_HANDLE ((cio_handle)0)
#else
#define CIO_NO_HANDLE ((cio_handle)-1)
#endif

/** What a child's standard stream (stdin, stdout or stderr) is connected to. */
typedef enum cio_stdio_kind {
    CIO_STDIO_INHERIT = 0, /**< the parent's own stream (the default) */
    CIO_STDIO_IGNORE,      /**< the null device (/dev/null, NUL) */
    CIO_STDIO_PIPE,        /**< a new pipe; the parent's end comes back in cio_child.stdio[] */
    CIO_STDIO_FILE         /**< cio_stdio.file, which stays the caller's (spawn does not close it) */
} cio_stdio_kind;

/** One standard stream of a child: a kind and, for CIO_STDIO_FILE, the file. */
typedef struct cio_stdio {
    cio_stdio_kind kind; /**< inherit, ignore, pipe or a given file */
    cio_file file;       /**< CIO_STDIO_FILE: the file */
} cio_stdio;

/** How the child's environment is made. */
typedef enum cio_env_mode {
    CIO_ENV_INHERIT = 0, /**< the parent's environment (env is ignored) */
    CIO_ENV_REPLACE,     /**< exactly the entries of env */
    CIO_ENV_ADD          /**< the parent's, with the entries of env added (replacing same names) */
} cio_env_mode;

/**
 * What to run and how. All-zero (with argv set) means: inherit the environment, the current
 * directory and the three streams, same process group and session.
 */
/** What cio_process_spawn starts and how. */
typedef struct cio_spawn_options {
    /** The argument vector, NULL-terminated; argv[0] is the program. A program name without a
     *  slash is searched in PATH (the parent's PATH, or the one of env when env_mode is REPLACE). */
    const char *const *argv;
    cio_env_mode env_mode; /**< inherit, replace or add to the parent's environment with env */
    /** "NAME=value" strings, NULL-terminated (NULL: none). */
    const char *const *env;
    /** The child's working directory as a path (NULL: the parent's); relative paths are relative
     *  to the parent's current directory, and so is a relative program path after the change. */
    const char *cwd;
    /** The child's working directory as an open directory (NULL: none); cwd wins if both are set. */
    const cio_dir *cwd_dir;
    /** stdio[0] stdin, stdio[1] stdout, stdio[2] stderr. */
    cio_stdio stdio[3];
    /** Put the child in a process group: pgid 0 makes a new group led by the child (POSIX only;
     *  Windows: a new process group). */
    bool set_pgid;
    int64_t pgid; /**< with set_pgid: the group (0: a new one led by the child) */
    /** Start a new session (setsid; POSIX only, OperationUnsupported elsewhere). */
    bool new_session;
    /** Run the child as this user and group (POSIX only). */
    bool set_uid;
    uint32_t uid; /**< with set_uid: the user */
    bool set_gid; /**< run the child as group gid (POSIX only) */
    uint32_t gid; /**< with set_gid: the group */
} cio_spawn_options;

/** A running (or exited, not yet waited for) child process. */
typedef struct cio_child {
    /** The process id; 0 once the child has been waited for or killed. */
    int64_t id;
    /** The OS handle that waits use: a pidfd on Linux (CIO_NO_HANDLE where the kernel has none),
     *  the process HANDLE on Windows. */
    cio_handle handle;
    /** The parent's ends of the pipes of CIO_STDIO_PIPE streams (stdin's is for writing, the others
     *  for reading); for other kinds the handle is CIO_NO_HANDLE. Closed with cio_file_close by
     *  the caller, at any time (close stdio[0] to send the child an end of input). */
    cio_file stdio[3];
} cio_child;

/** How a child ended (Zig's Child.Term). */
typedef enum cio_term_kind {
    CIO_TERM_EXITED = 0, /**< exited: code is the exit status (0-255; Windows: 32 bits) */
    CIO_TERM_SIGNAL,     /**< killed by the signal whose number is code (a cio_sig value) */
    CIO_TERM_STOPPED,    /**< stopped by the signal whose number is code */
    CIO_TERM_UNKNOWN     /**< anything else; code is the raw status */
} cio_term_kind;

/** How a child ended: its kind and code (cio_child_wait). */
typedef struct cio_term {
    cio_term_kind kind; /**< exited, signal, stopped or unknown */
    uint32_t code;      /**< the exit status, signal number or raw status, by kind */
} cio_term;

/**
 * Starts a child process.
 * @param io the Io
 * @param options what to run (argv non-NULL with argv[0] non-NULL)
 * @param out receives the child; on error it is cleared (id 0, no pipes) and nothing is left open
 * @return CIO_OK or a member of Process.SpawnError: FileNotFound (no such program, or not in PATH),
 *   AccessDenied (not executable, or a directory on the way is not searchable), IsDir (not
 *   PermissionDenied), InvalidExe (not a format the OS can run), NotDir, NameTooLong, SymLinkLoop,
 *   FileBusy, InvalidUserId, InvalidProcessGroupId, PermissionDenied, ResourceLimitReached (process
 *   limit), ProcessFdQuotaExceeded, SystemFdQuotaExceeded (pipes), SystemResources, OutOfMemory,
 *   InvalidBatchScriptArg (Windows), OperationUnsupported (WASI), Canceled,
 *   Unexpected (and the rest of File.OpenError for the working directory).
 *   A cancellation point before the child is created, never after.
 * @cancellation yes
 */
cio_err cio_process_spawn(cio_io io, const cio_spawn_options *options, cio_child *out);

/**
 * As cio_process_spawn, with a program path (argv[0], no PATH search) relative to dir. The BSDs
 * have no execveat: there a relative argv[0] with a dir other than the current directory is
 * OperationUnsupported (an absolute one runs as with cio_process_spawn).
 * @param io the Io
 * @param dir the directory a relative argv[0] is resolved in
 * @param options what to run
 * @param out receives the child
 * @return as cio_process_spawn (Set: Process.SpawnError).
 * @cancellation yes
 */
cio_err cio_process_spawn_path(cio_io io, cio_dir dir, const cio_spawn_options *options, cio_child *out);

/**
 * Waits for the child to end and reaps it; closes child->handle and sets child->id to 0 (the pipes
 * in child->stdio stay open). A cancellation point: canceled, it returns CIO_E_CANCELED and the
 * child stays as it was, to be waited for or killed later.
 * @param io the Io
 * @param child a child from spawn that was not waited for yet
 * @param term receives how the child ended
 * @return CIO_OK or a member of Process.WaitError: AccessDenied, Canceled, Unexpected;
 *   InvalidArgument for a child already waited for.
 * @cancellation yes
 */
cio_err cio_child_wait(cio_io io, cio_child *child, cio_term *term);

/**
 * Ends the child (SIGTERM, Windows TerminateProcess), then reaps it as cio_child_wait does. Not a
 * cancellation point. The pipes in child->stdio stay open. Never fails; a child already waited
 * for is left alone.
 * @param io the Io
 * @param child a child from spawn
 * @cancellation no
 */
void cio_child_kill(cio_io io, cio_child *child);

/**
 * Replaces the running program (execve, with a PATH search for a name without a slash). Returns
 * only on failure, leaving the process as it was. Only argv and the environment fields are used:
 * options with streams, a working directory, a process group, a session or ids set are
 * InvalidArgument (change those in the running process first).
 * @param io the Io
 * @param options what to run
 * @return a member of Process.ReplaceError: the exec errors of Process.SpawnError (FileNotFound,
 *   AccessDenied, InvalidExe, ...), OperationUnsupported (WASI, Windows), Unexpected.
 *   Not a cancellation point.
 * @cancellation no
 */
cio_err cio_process_replace(cio_io io, const cio_spawn_options *options);

/**
 * As cio_process_replace, with argv[0] relative to dir (no PATH search); on the BSDs, as
 * cio_process_spawn_path, a relative argv[0] with a dir other than the current directory is
 * OperationUnsupported.
 * @param io the Io
 * @param dir the directory a relative argv[0] is resolved in
 * @param options what to run
 * @return as cio_process_replace (Set: Process.ReplaceError).
 * @cancellation no
 */
cio_err cio_process_replace_path(cio_io io, cio_dir dir, const cio_spawn_options *options);

/**
 * Writes the absolute path of the current working directory and a NUL.
 * @param io the Io
 * @param buf the buffer
 * @param len its size; too small for the path and the NUL is NameTooLong
 * @param out_len receives the path's length without the NUL (may be NULL)
 * @return CIO_OK or a member of Process.CurrentPathError: NameTooLong, CurrentDirUnlinked,
 *   Canceled, Unexpected. A cancellation point.
 * @cancellation yes
 */
cio_err cio_process_current_path(cio_io io, char *buf, size_t len, size_t *out_len);

/**
 * Makes dir the process's current working directory (fchdir).
 * @param io the Io
 * @param dir an open directory
 * @return CIO_OK or a member of Process.SetCurrentDirError: AccessDenied, NotDir, FileSystem,
 *   BadPathName, Canceled, Unexpected. A cancellation point.
 * @cancellation yes
 */
cio_err cio_process_set_current_dir(cio_io io, cio_dir dir);

/**
 * Makes path the process's current working directory (chdir).
 * @param io the Io
 * @param path the directory's path
 * @return CIO_OK or a member of Process.SetCurrentPathError: AccessDenied, FileSystem, SymLinkLoop,
 *   NameTooLong, FileNotFound, SystemResources, NotDir, BadPathName, Canceled, Unexpected.
 *   A cancellation point.
 * @cancellation yes
 */
cio_err cio_process_set_current_path(cio_io io, const char *path);

/**
 * Takes the process-wide stderr lock, waiting while another task holds it. The lock is recursive
 * (a task may take it again; each lock needs its unlock) and shared by every Io instance and by
 * cio's own diagnostics, so lines written under it never interleave.
 * @param io the Io
 * @return CIO_OK or a member of Cancelable (Canceled): a cancellation point while it waits.
 * @cancellation yes
 */
cio_err cio_lock_stderr(cio_io io);

/**
 * Takes the stderr lock if it is free (or already the caller's).
 * @param io the Io
 * @return true when taken. Never waits, not a cancellation point.
 * @cancellation no
 */
bool cio_try_lock_stderr(cio_io io);

/**
 * Releases the stderr lock once (the caller must hold it).
 * @param io the Io
 * @cancellation no
 */
void cio_unlock_stderr(cio_io io);

#ifdef __cplusplus
}
#endif

#endif /* CIO_PROCESS_H */
