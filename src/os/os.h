/*
 * The OS room's private interface (names cio__os_*): the blocking code of every system slot
 * (CIO_VTABLE_SLOTS_SYSTEM in cio/io.h), per OS, shared by both backends. The Threaded backend
 * puts these functions straight into its table; the Evented backend calls them inline on a fiber
 * when they never block, and on its helper pool (or after readiness) when they do.
 *
 * Which thread runs what: whatever thread calls; nothing here keeps per-instance state (ud is
 * unused). Process-wide state: the close hook (an atomic pointer, close_hook.c) and the random
 * generator's per-thread state (random_chacha.c).
 *
 * Cancellation: a blocking call is bracketed by cio__t_syscall_begin/_interrupted/_end, which the
 * Threaded backend's cancel.c provides (cancel_none.c on WASI): on a Threaded worker a cancel
 * request interrupts the call with a signal; on an Evented loop thread the bracket asks the
 * running fiber through cio__t_set_outer_cancel; elsewhere it never fails.
 *
 * Files: clock_posix.c, time_*.c (clocks, sleep, entropy), wait_posix.c (deadlines, the futex
 * wait loop the Threaded futex files use), random_chacha.c; fs_*.c (files and directories; the
 * per-OS halves fs_linux.c, fs_bsd.c, fs_wasi.c, fs_windows*.c); process_*.c; net_*.c and
 * sockopt_*.c (sockets); operate_*.c (cio_operate's readiness wait); close_hook.c.
 */
#ifndef CIO_OS_INTERNAL_H
#define CIO_OS_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/batch.h"
#include "cio/fs.h"
#include "cio/io.h"
#include "cio/mmap.h"
#include "cio/net.h"

/* Buffers one vectored system call is given at most (more are clamped: a partial transfer). The
 * Threaded file and socket calls and the Evented ones that stand in for them share it. */
#ifdef IOV_MAX
#define CIO__OS_IOV_MAX ((size_t)IOV_MAX)
#else
#define CIO__OS_IOV_MAX ((size_t)1024)
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
/* A deadline on the calling task's bracketed calls (the Threaded backend's alarm, alarm.c): once it
 * passes, the task's thread is kicked out of the bracketed call it is in (as a cancel would: EINTR,
 * repeated while it stays in the call) and cio__t_alarm_fired() turns true, so a timed call can make
 * the plain blocking call instead of a readiness wait first. `deadline` is CIO_TIMEOUT_KIND_DEADLINE.
 * Arm returns false, arming nothing, off a worker, under CIO_CANCEL_BLOCKED, when less than 1 ms is
 * left (a zero timeout must still take what is there) or when the pool's alarm thread cannot be had:
 * the caller then waits with poll. An armed alarm is disarmed on the same thread before the timed call
 * returns, whatever it returns. */
bool cio__t_alarm_arm(cio_timeout deadline);
bool cio__t_alarm_fired(void);
void cio__t_alarm_disarm(void);
/* Called with a descriptor's number just before this backend's file or socket close slot closes it,
 * once a backend that keeps state by descriptor number set it (the Evented backend: its descriptor
 * table and poller registrations, so a number closed through either backend is never trusted as the
 * socket it was once it is reused). NULL (the default): nothing. close_hook.c. */
typedef void (*cio__os_close_hook_fn)(int fd);
void cio__os_set_close_hook(cio__os_close_hook_fn fn);
void cio__os_before_close(int fd);
/* The same for a Windows handle, before the Windows file and socket close slots close it (the Evented
 * backend's iocp flavour: its record of the instance whose port the handle is attached to). */
typedef void (*cio__os_handle_close_hook_fn)(void *handle);
void cio__os_set_handle_close_hook(cio__os_handle_close_hook_fn fn);
void cio__os_before_handle_close(void *handle);

/*
 * The cancellation bracket around one syscall. `res = call` is repeated while it fails with an errno
 * the map says to retry (EINTR) and no cancel request arrived. Afterwards `err` is CIO_OK (and `res`
 * the call's result; -1 only when the map says the errno means success), CIO_E_CANCELED, or the
 * mapped error. `res == -1` is the failure test, which holds for every call used here.
 */
#define CIO__OS_SYSCALL(err, res, op, call)                                    \
    do {                                                                       \
        (err) = cio__t_syscall_begin();                                        \
        while ((err) == CIO_OK) {                                              \
            (res) = (call);                                                    \
            if ((res) != -1) {                                                 \
                cio__t_syscall_end();                                          \
                break;                                                         \
            }                                                                  \
            cio__mapped m__ = cio__errno_##op(errno);                          \
            if (m__.action == CIO__MAP_RETRY) {                                \
                (err) = cio__t_syscall_interrupted();                          \
                continue;                                                      \
            }                                                                  \
            cio__t_syscall_end();                                              \
            if (m__.action == CIO__MAP_BUG)                                    \
                (err) = CIO__BUG(#op ": an errno that means a bug");           \
            else                                                               \
                (err) = m__.action == CIO__MAP_OK ? (cio_err)CIO_OK : m__.err; \
            break;                                                             \
        }                                                                      \
    } while (0)

/* CIO__OS_SYSCALL for an int call whose result says only success (not -1) or failure: `err` alone.
 * (`err` goes in unparenthesized: CIO__OS_SYSCALL's m__.err must stay a member name.) */
#define CIO__OS_CALL(err, op, call)          \
    do {                                     \
        int r__;                             \
        CIO__OS_SYSCALL(err, r__, op, call); \
        (void)r__;                           \
    } while (0)

/* ---- the system slots: cio__os_<name> for every row of CIO_VTABLE_SLOTS_SYSTEM (cio/io.h) -------
 * clock_posix.c, time_posix.c / time_wasi.c / time_windows.c: now, clock_resolution, sleep,
 * random_secure; random_chacha.c: random; fs_posix.c (fs_windows*.c, fs_wasi.c): the dir_ and file_
 * slots; process_*.c: process_, child_; net_posix.c (net_windows.c, net_none.c): net_;
 * sockopt_posix.c (sockopt_windows.c, sockopt_none.c): the socket option and address slots;
 * operate_posix.c (operate_none.c): operate; ioctl_posix.c (ioctl_windows.c, ioctl_none.c):
 * device_io_control; net_sendfile_posix.c (net_sendfile_none.c): net_write_file; sig_wait_posix.c (sig_wait_windows.c,
 * sig_wait_none.c): signal_wait. */
/* ---- cio_signal_wait's pieces on POSIX (sig_wait_posix.c), for a backend that sleeps its own way ----
 * begin validates `set`, installs the handler for its signals and registers a waiter with a pipe
 * of its own (rfd becomes readable at every delivery of a handled signal); take drains the pipe
 * and takes one pending signal of the set (true), or none (false: sleep until rfd is readable,
 * then take again); end unregisters the waiter and closes its pipe. cio__os_signal_wait is
 * begin, take / poll in the cancellation bracket, end. */
struct cio__os_sigwaiter {
    int rfd, wfd, slot;
    const struct cio_sigset *set;
};
cio_err cio__os_sigwait_begin(const struct cio_sigset *set, struct cio__os_sigwaiter *w);
bool cio__os_sigwait_take(struct cio__os_sigwaiter *w, int *signo);
void cio__os_sigwait_end(struct cio__os_sigwaiter *w);

#define CIO__OS_SLOT_PROTO(ret, name, params) ret cio__os_##name params;
CIO_VTABLE_SLOTS_SYSTEM(CIO__OS_SLOT_PROTO)
#undef CIO__OS_SLOT_PROTO

/* Reaps a child that has exited (its pidfd was readable): fills *term, closes child->handle, sets
 * child->id to 0 (also on failure). Set: Process.WaitError (no Canceled). process_wait_linux.c;
 * process_none.c: OperationUnsupported. */
struct cio_child;
struct cio_term;
cio_err cio__os_child_reap(struct cio_child *child, struct cio_term *term);
/* The child was reaped elsewhere (io_uring's WAITID): closes its pidfd, sets child->id to 0 and,
 * with term non-NULL, fills *term from `siginfo` (a siginfo_t). process_wait_linux.c only. */
void cio__os_child_reaped(struct cio_child *child, const void *siginfo, struct cio_term *term);

/* One sendfile(2) of up to `count` bytes of fd from `offset` to the stream socket `sock`, SIGPIPE
 * kept from the process: *sent what went (0 and no error: the file's end), the errno (0: none).
 * Not in the cancellation bracket (net_sendfile_posix.c's loop holds it). The OS's own form:
 * net_sendfile_linux.c, net_sendfile_freebsd.c. */
int cio__os_sendfile_chunk(int sock, int fd, uint64_t offset, size_t count, uint64_t *sent);

/* net_write_file where there is no zero-copy path to a socket (the Evented loop, the BSDs, Windows,
 * WASI): nothing sent and Unimplemented, after which the library copies with positional reads and
 * stream writes (src/core/net_pair.c). */
static inline cio_err cio__os_write_file_unimplemented(uint64_t *nwritten)
{
    if (nwritten == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    return CIO_E_UNIMPLEMENTED;
}

/* The first step of a slot that writes a path into buf (len bytes) and its length into *out_len
 * (real_path): *out_len 0 and buf "" where they exist; InvalidArgument for no buf, no room or no
 * out_len. fs_paths_*.c, fs_windows_paths.c. */
static inline cio_err cio__os_path_out_init(char *buf, size_t len, size_t *out_len)
{
    if (out_len != NULL)
        *out_len = 0;
    if (buf == NULL || len == 0 || out_len == NULL)
        return CIO_E_INVALID_ARGUMENT;
    buf[0] = '\0';
    return CIO_OK;
}

/* The first steps of process_current_path (process_cwd_*.c): InvalidArgument for no buf, *out_len 0
 * where given, then the cancellation point. */
static inline cio_err cio__os_cwd_begin(const char *buf, size_t *out_len)
{
    if (buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (out_len != NULL)
        *out_len = 0;
    return cio__t_cancel_point();
}

/* The first steps of process_set_current_path (process_cwd_*.c): InvalidArgument for no path,
 * FileNotFound for "", then (`point`: where the call itself is not one) the cancellation point. */
static inline cio_err cio__os_cwd_set_begin(const char *path, bool point)
{
    if (path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (path[0] == '\0')
        return CIO_E_FILE_NOT_FOUND;
    return point ? cio__t_cancel_point() : CIO_OK;
}

/* The first step of device_io_control (ioctl_*.c): InvalidArgument for no operation, else its count
 * 0 until the call succeeds. */
static inline cio_err cio__os_ioctl_begin(struct cio_operation *op)
{
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    op->count = 0;
    return CIO_OK;
}

/* A memory map made (mmap_posix.c, mmap_windows.c): the view of `len` bytes at `memory` and the
 * section behind it (Windows; NULL elsewhere) in *out, an OS mapping. */
static inline cio_err cio__os_map_made(cio_memory_map *out, void *memory, size_t len, void *section)
{
    out->memory = (uint8_t *)memory;
    out->len = len;
    out->mapped = true;
    out->section = section;
    return CIO_OK;
}

/* Fills buf with OS entropy without blocking; false if the OS cannot (random_chacha.c falls back). */
bool cio__os_seed(void *buf, size_t len);

#endif /* CIO_OS_INTERNAL_H */
