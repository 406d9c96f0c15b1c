/*
 * Internal interface of the Threaded backend (names cio__t_*), shared by its files:
 *   pool.c       workers, the run queue, async/concurrent/await/cancel, groups
 *   cancel.c     per-thread cancel state, cancellation points around syscalls, signalling
 *   futex_linux.c / futex_*.c   futex wait/wake for the OS
 *   time_posix.c clocks, sleep (its OS piece time_getrandom.c / time_openbsd.c: a sleep step,
 *                random_secure, the seed);  random_chacha.c  cio_random
 *   fs_posix.c   files and directories (the OS half: fs_linux.c, fs_wasi.c)
 *   process_posix.c  the executable
 *   net_posix.c  sockets: TCP, UDP, Unix-domain streams (Linux)
 *   io.c         the vtable
 * WASI (single-threaded) swaps pool.c/cancel.c/futex for pool_single.c and cancel_none.c, and
 * time_posix.c for time_wasi.c; CMakeLists.txt chooses.
 */
#ifndef CIO_THREADED_INTERNAL_H
#define CIO_THREADED_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"
#include "cio/threaded.h"

/* Buffers one vectored system call is given at most (more are clamped: a partial transfer). The
 * Threaded file and socket calls and the Evented ones that stand in for them share it. */
#ifdef IOV_MAX
#define CIO__T_IOV_MAX ((size_t)IOV_MAX)
#else
#define CIO__T_IOV_MAX ((size_t)1024)
#endif

/* ---- cancellation points around blocking syscalls (cancel.c) ----------------------------------
 *
 * Every blocking syscall a Threaded slot makes is bracketed like this:
 *
 *     cio_err e = cio__t_syscall_begin();
 *     if (e != CIO_OK) return e;            // a request was pending: acknowledged, call not made
 *     for (;;) {
 *         ssize_t n = read(fd, buf, len);
 *         if (n < 0 && errno == EINTR) {
 *             e = cio__t_syscall_interrupted(); // CIO_E_CANCELED: canceled, the bracket is closed
 *             if (e != CIO_OK) return e;
 *             continue;                         // a stray signal: call again
 *         }
 *         cio__t_syscall_end();
 *         break;
 *     }
 *
 * Between begin and end a cancel request makes the canceler send the thread a signal (repeated with
 * backoff until the thread leaves the syscall), so the call fails with EINTR. On a thread that is
 * not a worker, or under CIO_CANCEL_BLOCKED, begin never fails and no signal is sent.
 * cio__t_cancel_point() is the bracket-free cancellation point (Cancelable slots that do not block).
 * The call itself goes through the OS call table, CIO__SYS(read, <site>)(fd, buf, len), one entry per
 * call site in spec/oscalls.yaml (platform/internal/cio_oscalls.h), where tests inject faults.
 */
cio_err cio__t_syscall_begin(void);
cio_err cio__t_syscall_interrupted(void);
void cio__t_syscall_end(void);
cio_err cio__t_cancel_point(void);
/* Off a worker thread (cio__t_current NULL) the bracket and cio__t_cancel_point ask `fn` instead, set
 * once by a backend that runs fibers on its own threads and calls Threaded code inline there (the
 * Evented backend's loop threads): CIO_E_CANCELED takes the running fiber's cancel request, so an
 * EINTR storm in such a call still ends when the fiber is canceled. NULL (the default): CIO_OK. */
typedef cio_err (*cio__t_outer_cancel_fn)(void);
void cio__t_set_outer_cancel(cio__t_outer_cancel_fn fn);
/* Called with a descriptor's number just before this backend's file or socket close slot closes it,
 * once a backend that keeps state by descriptor number set it (the Evented backend: its descriptor
 * table and poller registrations, so a number closed through either backend is never trusted as the
 * socket it was once it is reused). NULL (the default): nothing. io.c. */
typedef void (*cio__t_close_hook_fn)(int fd);
void cio__t_set_close_hook(cio__t_close_hook_fn fn);
void cio__t_before_close(int fd);

/*
 * The cancellation bracket around one syscall. `res = call` is repeated while it fails with an errno
 * the map says to retry (EINTR) and no cancel request arrived. Afterwards `err` is CIO_OK (and `res`
 * the call's result; -1 only when the map says the errno means success), CIO_E_CANCELED, or the
 * mapped error. `res == -1` is the failure test, which holds for every call used here.
 */
#define CIO__T_SYSCALL(err, res, op, call)                                                   \
    do {                                                                                     \
        (err) = cio__t_syscall_begin();                                                      \
        while ((err) == CIO_OK) {                                                            \
            (res) = (call);                                                                  \
            if ((res) != -1) {                                                               \
                cio__t_syscall_end();                                                        \
                break;                                                                       \
            }                                                                                \
            cio__mapped m__ = cio__errno_##op(errno);                                        \
            if (m__.action == CIO__MAP_RETRY) {                                              \
                (err) = cio__t_syscall_interrupted();                                        \
                continue;                                                                    \
            }                                                                                \
            cio__t_syscall_end();                                                            \
            if (m__.action == CIO__MAP_BUG)                                                  \
                (err) = CIO__BUG(#op ": an errno that means a bug");                         \
            else                                                                             \
                (err) = m__.action == CIO__MAP_OK ? (cio_err)CIO_OK : m__.err;               \
            break;                                                                           \
        }                                                                                    \
    } while (0)

/* ---- slots implemented in pool.c ------------------------------------------------------------------ */
struct cio_any_future *cio__t_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result);
cio_err cio__t_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out);
cio_err cio__t_await(void *ud, struct cio_any_future *task);
cio_err cio__t_cancel(void *ud, struct cio_any_future *task);
void cio__t_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size);
cio_err cio__t_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size);
cio_err cio__t_group_await(void *ud, cio_group *g);
void cio__t_group_cancel(void *ud, cio_group *g);
cio_err cio__t_check_cancel(void *ud);
void cio__t_recancel(void *ud);
cio_cancel_protection cio__t_swap_cancel_protection(void *ud, cio_cancel_protection prot);
cio_err cio__t_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout);
void cio__t_futex_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected);
void cio__t_futex_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters);

/* ---- slots implemented in time_posix.c / time_wasi.c (cio__t_random: random_chacha.c) ------------- */
cio_timestamp cio__t_now(void *ud, cio_clock clock);
cio_err cio__t_sleep(void *ud, cio_timeout timeout);
void cio__t_random(void *ud, void *buf, size_t len);
cio_err cio__t_random_secure(void *ud, void *buf, size_t len);
/* Fills buf with OS entropy without blocking; false if the OS cannot (random_chacha.c falls back). */
bool cio__t_os_seed(void *buf, size_t len);

/* ---- slots implemented in fs_posix.c / process_posix.c (signatures as struct cio_vtable) --------- */
cio_err cio__t_dir_open_file(void *ud, cio_dir dir, const char *path, const cio_open_file_options *options,
                             cio_file *out);
cio_err cio__t_dir_create_file(void *ud, cio_dir dir, const char *path, const cio_create_file_options *options,
                               cio_file *out);
cio_err cio__t_dir_open_dir(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options,
                            cio_dir *out);
cio_err cio__t_dir_create_dir(void *ud, cio_dir dir, const char *path, uint32_t permissions);
cio_err cio__t_dir_create_dir_path(void *ud, cio_dir dir, const char *path, uint32_t permissions, bool *created);
cio_err cio__t_dir_create_dir_path_open(void *ud, cio_dir dir, const char *path,
                                        const cio_open_dir_options *options, cio_dir *out);
cio_err cio__t_dir_rename(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path);
cio_err cio__t_dir_delete_file(void *ud, cio_dir dir, const char *path);
cio_err cio__t_dir_delete_dir(void *ud, cio_dir dir, const char *path);
cio_err cio__t_dir_stat_file(void *ud, cio_dir dir, const char *path, unsigned flags, cio_stat *out);
cio_err cio__t_dir_access(void *ud, cio_dir dir, const char *path, unsigned mode);
cio_err cio__t_dir_read(void *ud, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count);
void cio__t_dir_close(void *ud, cio_dir dir);
cio_err cio__t_file_read_streaming(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread);
cio_err cio__t_file_write_streaming(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    size_t *nwritten);
cio_err cio__t_file_read_positional(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                    size_t *nread);
cio_err cio__t_file_write_positional(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                     uint64_t offset, size_t *nwritten);
cio_err cio__t_file_seek(void *ud, cio_file file, int whence, int64_t offset, uint64_t *pos);
cio_err cio__t_file_stat(void *ud, cio_file file, cio_stat *out);
cio_err cio__t_file_set_length(void *ud, cio_file file, uint64_t length);
cio_err cio__t_file_sync(void *ud, cio_file file);
cio_err cio__t_file_set_timestamps(void *ud, cio_file file, const cio_set_timestamps *ts);
void cio__t_file_close(void *ud, cio_file file);
cio_err cio__t_process_executable_open(void *ud, const cio_open_file_options *options, cio_file *out);
cio_err cio__t_process_executable_path(void *ud, char *buf, size_t len, size_t *out_len);

/* ---- slots implemented in net_posix.c (signatures as struct cio_vtable) ------------------------- */
cio_err cio__t_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                             cio_server *out);
cio_err cio__t_net_accept(void *ud, cio_handle listener, cio_stream *out);
cio_err cio__t_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                              cio_stream *out);
cio_err cio__t_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options,
                           cio_socket *out);
cio_err cio__t_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                               cio_server *out);
cio_err cio__t_net_connect_unix(void *ud, const cio_unix_address *address, cio_stream *out);
cio_err cio__t_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread);
cio_err cio__t_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt,
                         size_t *nwritten);
cio_err cio__t_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                        size_t iovcnt, size_t *nsent);
cio_err cio__t_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                           size_t *count);
cio_err cio__t_net_shutdown(void *ud, cio_handle socket, int how);
void cio__t_net_close(void *ud, cio_handle socket);

#endif /* CIO_THREADED_INTERNAL_H */
