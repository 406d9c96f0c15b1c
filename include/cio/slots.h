/**
 * @file
 * cio/slots.h: the vtable's slot list (CIO_VTABLE_SLOTS_TASKS, CIO_VTABLE_SLOTS_SYSTEM), one row
 * per slot. Included by cio/io.h at the point where the list belongs (after the forward
 * declarations the rows name, before struct cio_vtable); kept apart for size. Do not include it
 * directly: include <cio/io.h> or <cio.h>.
 */
#ifndef CIO_SLOTS_H
#define CIO_SLOTS_H

/* clang-format off: the slot rows keep their hand alignment */
/**
 * The vtable, as one list of slots: X(return type, name, (parameters)) per slot, in table order,
 * written in two halves: CIO_VTABLE_SLOTS_TASKS (this one) and CIO_VTABLE_SLOTS_SYSTEM.
 * `ud` is cio_io.userdata; unless noted, every slot is thread-safe. "Set" names a spec/errors.yaml
 * error set. Everything else is expanded from this list: struct cio_vtable below, each backend's
 * prototypes and table (src/threaded/io.c, src/evented/io.c, src/core/failing.c). A new slot is one
 * row here plus its function in every backend (cio__t_<name> or cio__os_<name>, cio__e_<name>, f_<name>).
 * Each row's contract (its comment in the header) is the public wrapper's, cio_<name> (cio_async,
 * cio_dir_open_file, cio_net_read through cio_stream_read, ...), documented in this reference.
 * This half holds the slots a backend answers with its own scheduler: concurrency, cancellation,
 * the futex and the stderr lock (the Threaded backend's cio__t_<name>).
 * @param X a macro taking (return type, slot name, parenthesised parameter list)
 */
#define CIO_VTABLE_SLOTS_TASKS(X)                                                                                     \
    /* == Concurrency ================================================================ */                             \
                                                                                                                      \
    /* Runs fn on a copy of the context, possibly later. Returns NULL when fn already ran to                          \
     * completion (its result in *inline_result), otherwise a future whose task has been assigned                     \
     * a unit of concurrency (it can never wait behind the caller). Never fails: when no thread                       \
     * can be had (limit, memory, spawn failure) fn runs inline. */                                                   \
    X(struct cio_any_future *, async,                                                                                 \
      (void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result))                           \
    /* Runs fn concurrently with the caller, never inline. Set: ConcurrentError. */                                   \
    X(cio_err, concurrent, (void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out)) \
    /* Waits for the task, frees it and returns its result. A cancel request on the awaiting task                     \
     * is forwarded to the awaited one. (Evented: an async task that has not started and would run                    \
     * next anyway may run on the awaiting fiber itself, seeing its cancel state.) */                                 \
    X(cio_err, await, (void *ud, struct cio_any_future *future))                                                      \
    /* Requests cancellation, then as await. */                                                                       \
    X(cio_err, cancel, (void *ud, struct cio_any_future *future))                                                     \
    /* Adds a task to a group (may run it inline). */                                                                 \
    X(void, group_async, (void *ud, cio_group *group, cio_task_fn fn, const void *ctx, size_t ctx_size))              \
    /* Adds a task that runs concurrently. Set: ConcurrentError. */                                                   \
    X(cio_err, group_concurrent, (void *ud, cio_group *group, cio_task_fn fn, const void *ctx, size_t ctx_size))      \
    /* Waits for every member. If the awaiter is canceled meanwhile, the request goes to every                        \
     * member, the wait still covers all of them, and then CIO_E_CANCELED. Set: Cancelable.                           \
     * (Evented: group_async members not started yet may run on the awaiting fiber, as for                            \
     * await; group_concurrent members always start as fibers of their own.) */                                       \
    X(cio_err, group_await, (void *ud, cio_group *group))                                                             \
    /* Cancels every member (members added meanwhile start canceled) and waits for all. */                            \
    X(void, group_cancel, (void *ud, cio_group *group))                                                               \
    /* A pure cancellation point. Set: Cancelable. */                                                                 \
    X(cio_err, check_cancel, (void *ud))                                                                              \
    /* Re-arms a cancel request the current task has received. */                                                     \
    X(void, recancel, (void *ud))                                                                                     \
    /* Sets the current task's protection; returns the previous one. */                                               \
    X(cio_cancel_protection, swap_cancel_protection, (void *ud, cio_cancel_protection prot))                          \
                                                                                                                      \
    /* == Futex: the one synchronisation primitive ================================== */                              \
                                                                                                                      \
    /* If *ptr == expected, blocks until a wake, the timeout, a cancel, or spuriously. Returns                        \
     * CIO_OK (woken or spurious: re-check), CIO_E_TIMEOUT, CIO_E_CANCELED. Set: Futex.WaitError. */                  \
    X(cio_err, futex_wait, (void *ud, const CIO_ATOMIC(uint32_t) * ptr, uint32_t expected, cio_timeout timeout))      \
    /* As futex_wait with no timeout, never a cancellation point. */                                                  \
    X(void, futex_wait_uncancelable, (void *ud, const CIO_ATOMIC(uint32_t) * ptr, uint32_t expected))                 \
    /* Wakes up to max_waiters threads or tasks waiting on ptr. */                                                    \
    X(void, futex_wake, (void *ud, const CIO_ATOMIC(uint32_t) * ptr, uint32_t max_waiters))                           \
                                                                                                                      \
    /* == The stderr lock =============================================================== */                          \
                                                                                                                      \
    /* The process-wide recursive stderr lock (shared by every instance): lock waits (a                               \
     * cancellation point, Set: Cancelable), try never waits, unlock releases one level. */                           \
    X(cio_err, lock_stderr, (void *ud))                                                                               \
    X(bool, try_lock_stderr, (void *ud))                                                                              \
    X(void, unlock_stderr, (void *ud))

/** The slots a backend answers with the operating system (time, directories, files, processes,
 * networking, operations, socket options): the second half of CIO_VTABLE_SLOTS. The Threaded
 * backend takes them all from the shared OS code (src/os, cio__os_<name>).
 * @param X as for CIO_VTABLE_SLOTS */
#define CIO_VTABLE_SLOTS_SYSTEM(X)                                                                                    \
    /* == Time and randomness ========================================================= */                            \
                                                                                                                      \
    /* Reads a clock; never fails (an unavailable clock reads 0). */                                                  \
    X(cio_timestamp, now, (void *ud, cio_clock clock))                                                                \
    /* The clock's resolution in ns (> 0). Set: Clock.ResolutionError. */                                             \
    X(cio_err, clock_resolution, (void *ud, cio_clock clock, int64_t *ns))                                            \
    /* Sleeps until the timeout (CIO_TIMEOUT_NONE: until canceled). Set: SleepError. */                               \
    X(cio_err, sleep, (void *ud, cio_timeout timeout))                                                                \
    /* Fills buf from a fast CSPRNG seeded from the OS. */                                                            \
    X(void, random, (void *ud, void *buf, size_t len))                                                                \
    /* Fills buf with fresh OS entropy. Set: RandomSecureError. */                                                    \
    X(cio_err, random_secure, (void *ud, void *buf, size_t len))                                                      \
                                                                                                                      \
    /* == Directories ================================================================= */                            \
                                                                                                                      \
    /* Set: File.OpenError. */                                                                                        \
    X(cio_err, dir_open_file,                                                                                         \
      (void *ud, cio_dir dir, const char *path, const struct cio_open_file_options *options, cio_file *out))          \
    /* Set: File.OpenError. */                                                                                        \
    X(cio_err, dir_create_file,                                                                                       \
      (void *ud, cio_dir dir, const char *path, const struct cio_create_file_options *options, cio_file *out))        \
    /* Set: Dir.OpenError. */                                                                                         \
    X(cio_err, dir_open_dir,                                                                                          \
      (void *ud, cio_dir dir, const char *path, const struct cio_open_dir_options *options, cio_dir *out))            \
    /* Set: Dir.CreateDirError. */                                                                                    \
    X(cio_err, dir_create_dir, (void *ud, cio_dir dir, const char *path, uint32_t permissions))                       \
    /* Set: Dir.MakePathError. */                                                                                     \
    X(cio_err, dir_create_dir_path, (void *ud, cio_dir dir, const char *path, uint32_t permissions, bool *created))   \
    /* Set: Dir.MakeOpenPathError. */                                                                                 \
    X(cio_err, dir_create_dir_path_open,                                                                              \
      (void *ud, cio_dir dir, const char *path, const struct cio_open_dir_options *options, cio_dir *out))            \
    /* Set: Dir.RenameError. */                                                                                       \
    X(cio_err, dir_rename, (void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path))  \
    /* Set: Dir.DeleteFileError. */                                                                                   \
    X(cio_err, dir_delete_file, (void *ud, cio_dir dir, const char *path))                                            \
    /* Set: Dir.DeleteDirError. */                                                                                    \
    X(cio_err, dir_delete_dir, (void *ud, cio_dir dir, const char *path))                                             \
    /* Set: Dir.StatFileError. */                                                                                     \
    X(cio_err, dir_stat_file, (void *ud, cio_dir dir, const char *path, unsigned flags, struct cio_stat *out))        \
    /* Set: Dir.AccessError. */                                                                                       \
    X(cio_err, dir_access, (void *ud, cio_dir dir, const char *path, unsigned mode))                                  \
    /* Reads up to max entries (0 at the end); names point into the reader's buffer. */                               \
    /* Set: Dir.IterateError. */                                                                                      \
    X(cio_err, dir_read,                                                                                              \
      (void *ud, struct cio_dir_reader *reader, struct cio_dir_entry *entries, size_t max, size_t *count))            \
    /* Stats the directory itself. Set: File.StatError. */                                                            \
    X(cio_err, dir_stat, (void *ud, cio_dir dir, struct cio_stat *out))                                               \
    /* Makes link_path a symbolic link to target (stored as given; flags CIO_SYM_LINK_DIRECTORY                       \
     * marks a link to a directory where the OS cares: Windows). Set: Dir.SymLinkError. */                            \
    X(cio_err, dir_sym_link, (void *ud, cio_dir dir, const char *target, const char *link_path, unsigned flags))      \
    /* Reads a symbolic link's target into buf with a NUL; *out_len its length. NameTooLong when                      \
     * buf is too small. Set: Dir.ReadLinkError. */                                                                   \
    X(cio_err, dir_read_link, (void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len))      \
    /* A new name for an existing file; flags CIO_NO_FOLLOW links a symlink itself, not its target.                   \
     * Set: File.HardLinkError. */                                                                                    \
    X(cio_err, dir_hard_link,                                                                                         \
      (void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path, unsigned flags))       \
    /* Permission bits (07777) of the directory itself. Set: File.SetPermissionsError. */                             \
    X(cio_err, dir_set_permissions, (void *ud, cio_dir dir, uint32_t permissions))                                    \
    /* Permission bits of path; flags CIO_NO_FOLLOW. Set: Dir.SetFilePermissionsError. */                             \
    X(cio_err, dir_set_file_permissions,                                                                              \
      (void *ud, cio_dir dir, const char *path, uint32_t permissions, unsigned flags))                                \
    /* Owner and group of the directory itself (CIO_OWNER_UNCHANGED keeps one). Set: File.SetOwnerError. */           \
    X(cio_err, dir_set_owner, (void *ud, cio_dir dir, uint32_t uid, uint32_t gid))                                    \
    /* Owner and group of path; flags CIO_NO_FOLLOW. Set: Dir.SetFileOwnerError. */                                   \
    X(cio_err, dir_set_file_owner,                                                                                    \
      (void *ud, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags))                          \
    /* Access and modification times of path; flags CIO_NO_FOLLOW. Set: Dir.SetTimestampsError. */                    \
    X(cio_err, dir_set_timestamps,                                                                                    \
      (void *ud, cio_dir dir, const char *path, const struct cio_set_timestamps *ts, unsigned flags))                 \
    /* The canonical absolute path of the open directory into buf with a NUL (cio_dir_cwd(): the                      \
     * current directory). NameTooLong when buf is too small. Set: File.RealPathError. */                             \
    X(cio_err, dir_real_path, (void *ud, cio_dir dir, char *buf, size_t len, size_t *out_len))                        \
    /* The canonical absolute path of path (symbolic links resolved). Set: Dir.RealPathFileError. */                  \
    X(cio_err, dir_real_path_file, (void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)) \
    /* Renames without replacing: PathAlreadyExists if new_path exists, decided atomically by the                     \
     * OS (OperationUnsupported where it cannot be). Set: Dir.RenamePreserveError. */                                 \
    X(cio_err, dir_rename_preserve,                                                                                   \
      (void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path))                       \
    /* Closes the directory, never retried (NotOpen: closed twice or never opened). Set: CloseError. */               \
    X(cio_err, dir_close, (void *ud, cio_dir dir))                                                                    \
                                                                                                                      \
    /* == Files ======================================================================= */                            \
                                                                                                                      \
    /* Vectored streaming read; 0 bytes means the end. Set: File.Reader.Error. */                                     \
    X(cio_err, file_read_streaming, (void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread))    \
    /* Set: File.WriteStreamingError. */                                                                              \
    X(cio_err, file_write_streaming,                                                                                  \
      (void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten))                         \
    /* Set: File.ReadPositionalError. */                                                                              \
    X(cio_err, file_read_positional,                                                                                  \
      (void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset, size_t *nread))                 \
    /* Set: File.WritePositionalError. */                                                                             \
    X(cio_err, file_write_positional,                                                                                 \
      (void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt, uint64_t offset, size_t *nwritten))        \
    /* whence: 0 = from the start (offset as uint64), 1 = relative (as int64); *pos gets the new                      \
     * position when not NULL. Set: File.SeekError. */                                                                \
    X(cio_err, file_seek, (void *ud, cio_file file, int whence, int64_t offset, uint64_t *pos))                       \
    /* Set: File.StatError. */                                                                                        \
    X(cio_err, file_stat, (void *ud, cio_file file, struct cio_stat *out))                                            \
    /* Set: File.SetLengthError. */                                                                                   \
    X(cio_err, file_set_length, (void *ud, cio_file file, uint64_t length))                                           \
    /* Set: File.SyncError. */                                                                                        \
    X(cio_err, file_sync, (void *ud, cio_file file))                                                                  \
    /* Set: File.SetTimestampsError. */                                                                               \
    X(cio_err, file_set_timestamps, (void *ud, cio_file file, const struct cio_set_timestamps *ts))                   \
    /* Gives the open file a name in new_dir (Linux: linkat AT_EMPTY_PATH or /proc/self/fd;                           \
     * Windows: FileLinkInformation). Set: File.HardLinkError. */                                                     \
    X(cio_err, file_hard_link, (void *ud, cio_file file, cio_dir new_dir, const char *new_path))                      \
    /* Set: File.SetPermissionsError. */                                                                              \
    X(cio_err, file_set_permissions, (void *ud, cio_file file, uint32_t permissions))                                 \
    /* Set: File.SetOwnerError. */                                                                                    \
    X(cio_err, file_set_owner, (void *ud, cio_file file, uint32_t uid, uint32_t gid))                                 \
    /* *out: whether the handle is a terminal (a console on Windows). Set: Cancelable. */                             \
    X(cio_err, file_is_tty, (void *ud, cio_file file, bool *out))                                                     \
    /* The canonical absolute path of the open file. Set: File.RealPathError. */                                      \
    X(cio_err, file_real_path, (void *ud, cio_file file, char *buf, size_t len, size_t *out_len))                     \
    /* Takes a lock on the file, waiting while another open file description holds a conflicting                      \
     * one (a cancellation point: the wait ends with Canceled); CIO_LOCK_NONE releases. Replaces a                    \
     * lock this handle holds. Set: File.LockError. */                                                                \
    X(cio_err, file_lock, (void *ud, cio_file file, cio_lock lock))                                                   \
    /* As file_lock without waiting: *acquired false when a conflicting lock is held.                                 \
     * Set: File.LockError. */                                                                                        \
    X(cio_err, file_try_lock, (void *ud, cio_file file, cio_lock lock, bool *acquired))                               \
    /* Releases this handle's lock (none held: nothing happens). Never fails. */                                      \
    X(void, file_unlock, (void *ud, cio_file file))                                                                   \
    /* Turns this handle's exclusive lock into a shared one, never waiting (POSIX: flock(LOCK_SH |                    \
     * LOCK_NB), which Linux converts under its lock table's lock; Windows: the shared lock is taken                  \
     * before the exclusive one goes). Set: File.LockError. */                                                        \
    X(cio_err, file_downgrade_lock, (void *ud, cio_file file))                                                        \
    /* Issue 21, part 2: an unnamed temporary file in dir (Linux O_TMPFILE), opened for reading and                   \
     * writing, later named with file_hard_link; OperationUnsupported where the OS or the file system                 \
     * has none (the library then names a random temporary). Set: Dir.CreateTmpFileError. */                          \
    X(cio_err, dir_create_tmp_file, (void *ud, cio_dir dir, uint32_t permissions, cio_file *out))                     \
    /* Copies up to len bytes of in, from in_offset, to out (at out_offset when positional, else at                   \
     * out's position) without passing them through user memory (Linux: copy_file_range); stops at                    \
     * the end of in. *nwritten counts what went. Unimplemented (with *nwritten what went so far)                     \
     * asks the library to copy the rest. Set: File.WriteFileSlotError. */                                            \
    X(cio_err, file_write_file,                                                                                       \
      (void *ud, cio_file out, bool positional, uint64_t out_offset, cio_file in, uint64_t in_offset, uint64_t len,   \
       uint64_t *nwritten))                                                                                           \
    /* *out: whether the handle is a terminal that takes ANSI escape codes now (POSIX: a tty;                         \
     * Windows: a console in virtual terminal mode). Set: Cancelable. */                                              \
    X(cio_err, file_supports_ansi_escape_codes, (void *ud, cio_file file, bool *out))                                 \
    /* Makes the terminal take ANSI escape codes (Windows: turns on virtual terminal processing);                     \
     * NotTerminalDevice where it cannot. Set: File.EnableAnsiEscapeCodesError. */                                    \
    X(cio_err, file_enable_ansi_escape_codes, (void *ud, cio_file file))                                              \
    /* Memory maps (cio/mmap.h; the wrapper keeps the fallback buffer and calls these for OS                          \
     * mappings only: 0 < len, offset aligned, the range inside the file). OperationUnsupported                       \
     * from create: no mapping here (the wrapper falls back). Set: File.MemoryMap.CreateError. */                     \
    X(cio_err, file_memory_map_create,                                                                                \
      (void *ud, cio_file file, const struct cio_memory_map_options *options, struct cio_memory_map *out))            \
    /* Unmaps; never fails. */                                                                                        \
    X(void, file_memory_map_destroy, (void *ud, struct cio_memory_map *mm))                                           \
    /* Remaps to new_len inside the file (mremap); OperationUnsupported where the OS cannot.                          \
     * Set: File.MemoryMap.SetLengthError. */                                                                         \
    X(cio_err, file_memory_map_set_length, (void *ud, struct cio_memory_map *mm, size_t new_len))                     \
    /* Syncs the memory from the file (msync MS_INVALIDATE). Set: File.ReadPositionalError. */                        \
    X(cio_err, file_memory_map_read, (void *ud, struct cio_memory_map *mm))                                           \
    /* Syncs the memory to the file (msync MS_SYNC, FlushViewOfFile). Set: File.WritePositionalError. */              \
    X(cio_err, file_memory_map_write, (void *ud, struct cio_memory_map *mm))                                          \
    /* Closes the file, never retried (NotOpen: closed twice or never opened). Set: CloseError. */                    \
    X(cio_err, file_close, (void *ud, cio_file file))                                                                 \
                                                                                                                      \
    /* == Process ===================================================================== */                            \
                                                                                                                      \
    /* Set: ProcessExecutableOpenError. */                                                                            \
    X(cio_err, process_executable_open, (void *ud, const struct cio_open_file_options *options, cio_file *out))       \
    /* Set: ProcessExecutablePathError. */                                                                            \
    X(cio_err, process_executable_path, (void *ud, char *buf, size_t len, size_t *out_len))                           \
    /* Starts a child (cio/process.h): fork/exec or CreateProcessW; exec errors come back typed,                      \
     * never as a child that exits 127. Cancelable before the child exists. Set: Process.SpawnError. */               \
    X(cio_err, process_spawn, (void *ud, const struct cio_spawn_options *options, struct cio_child *out))             \
    /* As process_spawn, argv[0] relative to dir (no PATH search). Set: Process.SpawnError. */                        \
    X(cio_err, process_spawn_path,                                                                                    \
      (void *ud, cio_dir dir, const struct cio_spawn_options *options, struct cio_child *out))                        \
    /* Waits for the child and reaps it; a cancellation point that leaves the child waitable.                         \
     * Set: Process.WaitError. */                                                                                     \
    X(cio_err, child_wait, (void *ud, struct cio_child *child, struct cio_term *term))                                \
    /* SIGTERM (TerminateProcess), then reaps; not a cancellation point, never fails. */                              \
    X(void, child_kill, (void *ud, struct cio_child *child))                                                          \
    /* execve with a PATH search; returns only the error. Set: Process.ReplaceError. */                               \
    X(cio_err, process_replace, (void *ud, const struct cio_spawn_options *options))                                  \
    /* As process_replace, argv[0] relative to dir. Set: Process.ReplaceError. */                                     \
    X(cio_err, process_replace_path, (void *ud, cio_dir dir, const struct cio_spawn_options *options))                \
    /* getcwd; writes a NUL. Set: Process.CurrentPathError. */                                                        \
    X(cio_err, process_current_path, (void *ud, char *buf, size_t len, size_t *out_len))                              \
    /* fchdir. Set: Process.SetCurrentDirError. */                                                                    \
    X(cio_err, process_set_current_dir, (void *ud, cio_dir dir))                                                      \
    /* chdir. Set: Process.SetCurrentPathError. */                                                                    \
    X(cio_err, process_set_current_path, (void *ud, const char *path))                                                \
                                                                                                                      \
    /* == Networking ================================================================== */                            \
                                                                                                                      \
    /* Every socket is close-on-exec; stream writes and sends never raise SIGPIPE. Accept,                            \
     * connect, read, write, send and receive are cancellation points that a cancel knocks out                        \
     * of a blocked call. */                                                                                          \
                                                                                                                      \
    /* socket + options + bind + listen; out->address gets the bound address (the actual port for                     \
     * port 0). options NULL: CIO_LISTEN_DEFAULTS. Set: net.ListenError. */                                           \
    X(cio_err, net_listen_ip,                                                                                         \
      (void *ud, const struct cio_ip_address *address, const struct cio_listen_options *options,                      \
       struct cio_server *out))                                                                                       \
    /* Blocks for the next connection; out->peer gets the client's address (Unix: all-zero).                          \
     * Set: net.AcceptError. */                                                                                       \
    X(cio_err, net_accept, (void *ud, cio_handle listener, struct cio_stream *out))                                   \
    /* Connects a stream socket, giving up after options->timeout (NULL: none) with Timeout; the                      \
     * abandoned socket is closed. Set: net.ConnectError. */                                                          \
    X(cio_err, net_connect_ip,                                                                                        \
      (void *ud, const struct cio_ip_address *address, const struct cio_connect_options *options,                     \
       struct cio_stream *out))                                                                                       \
    /* A datagram socket bound to address; out->address gets the actual port. options NULL: none.                     \
     * Set: net.BindError. */                                                                                         \
    X(cio_err, net_bind_ip,                                                                                           \
      (void *ud, const struct cio_ip_address *address, const struct cio_bind_options *options,                        \
       struct cio_socket *out))                                                                                       \
    /* socket(AF_UNIX, stream) + bind + listen; a leading NUL is a Linux abstract name.                               \
     * Set: net.UnixAddress.ListenError. */                                                                           \
    X(cio_err, net_listen_unix,                                                                                       \
      (void *ud, const struct cio_unix_address *address, const struct cio_listen_options *options,                    \
       struct cio_server *out))                                                                                       \
    /* Set: net.UnixAddress.ConnectError. */                                                                          \
    X(cio_err, net_connect_unix, (void *ud, const struct cio_unix_address *address, struct cio_stream *out))          \
    /* Vectored read of a connected stream; 0 bytes means the peer closed. Set: net.ReadError. */                     \
    X(cio_err, net_read, (void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread))           \
    /* Vectored write of a connected stream (may be short). Set: net.WriteError. */                                   \
    X(cio_err, net_write, (void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt, size_t *nwritten)) \
    /* Sends one datagram to dest (NULL: the connected peer). Set: net.SendError. */                                  \
    X(cio_err, net_send,                                                                                              \
      (void *ud, cio_handle socket, const struct cio_ip_address *dest, const cio_const_iovec *iov, size_t iovcnt,     \
       size_t *nsent))                                                                                                \
    /* Waits up to timeout for the first datagram, then takes those already queued, up to max,                        \
     * without waiting; *count >= 1 on success. Set: net.ReceiveTimeoutError. */                                      \
    X(cio_err, net_receive,                                                                                           \
      (void *ud, cio_handle socket, struct cio_message *msgs, size_t max, cio_timeout timeout, size_t *count))        \
    /* how: a cio_shutdown_how. Set: net.ShutdownError. */                                                            \
    X(cio_err, net_shutdown, (void *ud, cio_handle socket, int how))                                                  \
    /* Closes any socket (stream, server, datagram). Set: CloseError. */                                              \
    X(cio_err, net_close, (void *ud, cio_handle socket))                                                              \
    /* A connected pair of stream sockets (socketpair(AF_UNIX); Windows: a loopback TCP pair).                        \
     * Set: net.Socket.CreatePairError. */                                                                            \
    X(cio_err, net_socket_pair, (void *ud, struct cio_stream *out))                                                   \
    /* The index of the interface named name (if_nametoindex). Set: net.Interface.ResolveError. */                    \
    X(cio_err, net_interface_name_resolve, (void *ud, const char *name, uint32_t *index))                             \
    /* The name of interface index into buf (NUL-terminated; *out_len its length).                                    \
     * Set: net.Interface.NameError. */                                                                               \
    X(cio_err, net_interface_name, (void *ud, uint32_t index, char *buf, size_t len, size_t *out_len))                \
    /* Up to len bytes of file from offset to a connected stream without copying them through user                    \
     * memory (sendfile), *nwritten what went; fewer than len only at the file's end. Returns                         \
     * Unimplemented, *nwritten what went before, where the backend or OS has no such path for                        \
     * the rest: the library copies it (cio_net_write_file never returns Unimplemented).                              \
     * Set: net.WriteFileError. */                                                                                    \
    X(cio_err, net_write_file,                                                                                        \
      (void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len, uint64_t *nwritten))                \
                                                                                                                      \
    /* == Operations (cio/batch.h) ===================================================== */                           \
                                                                                                                      \
    /* Runs op (a cio_operation) with a timeout other than NONE natively: the operation's own error,                  \
     * CIO_E_TIMEOUT (nothing done) or CIO_E_CANCELED; its results in op. CIO_E_UNIMPLEMENTED: no                     \
     * native timed form of this kind here, nothing done (cio_operate_timeout then runs it as a                       \
     * concurrent task). A cancellation point. Set: Operate.SlotError (the kinds' sets). */                           \
    X(cio_err, operate, (void *ud, struct cio_operation *op, cio_timeout timeout))                                    \
    /* The device_io_control operation (op->u.device_io_control): ioctl (POSIX) or DeviceIoControl                    \
     * (Windows) on the caller's thread (Evented: the helper pool); op->count gets ioctl's result or the              \
     * bytes written to the output buffer. OperationUnsupported where the OS has none (WASI).                         \
     * A cancellation point. Set: File.DeviceIoControlError. */                                                       \
    X(cio_err, device_io_control, (void *ud, struct cio_operation *op))                                               \
                                                                                                                      \
    /* == Socket options and addresses (issue 25) ===================================== */                            \
                                                                                                                      \
    /* None blocks; each is a cancellation point. option: a cio_sockopt, value checked by the                         \
     * wrapper. Set: net.SocketOptionError. */                                                                        \
    X(cio_err, net_set_option, (void *ud, cio_handle socket, int option, int64_t value))                              \
    /* Set: net.SocketOptionError. */                                                                                 \
    X(cio_err, net_get_option, (void *ud, cio_handle socket, int option, int64_t *value))                             \
    /* op: 0 join, 1 leave (group and interface), 2 outgoing interface (interface only).                              \
     * Set: net.MulticastError. */                                                                                    \
    X(cio_err, net_multicast,                                                                                         \
      (void *ud, cio_handle socket, int op, const struct cio_ip_address *group, const struct cio_ip_address *iface))  \
    /* getsockname (peer false) or getpeername (peer true). Set: net.SocketAddressError. */                           \
    X(cio_err, net_socket_address, (void *ud, cio_handle socket, bool peer, struct cio_ip_address *out))              \
                                                                                                                      \
    /* == Awaitable signals (issue 25, cio/sig.h) ===================================== */                            \
                                                                                                                      \
    /* Waits until one signal of `set` (not empty) is delivered to the process and stores its number                  \
     * in *signo; each delivery is taken by one waiter. A slot (not library code over the futex                       \
     * slots): the wake-up comes from signal context or a console control thread, which can write a                   \
     * pipe or set an event but never run a backend's futex wake; how a waiter sleeps on that pipe                    \
     * (a worker in poll, a fiber in its loop's poller) is the backend's. Cancelable.                                 \
     * Set: Signal.WaitError. */                                                                                      \
    X(cio_err, signal_wait, (void *ud, const struct cio_sigset *set, int *signo))

/* clang-format on */

#endif /* CIO_SLOTS_H */
