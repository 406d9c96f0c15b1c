/*
 * Internal interface of the Threaded backend (names cio__t_*), shared by its files:
 *   pool.c       workers, the run queue, async/concurrent/await/cancel, groups
 *   cancel.c     per-thread cancel state, cancellation points around syscalls, signalling
 *   futex_linux.c / futex_*.c   futex wait/wake for the OS
 *   time_posix.c clocks, sleep (its OS piece time_getrandom.c / time_openbsd.c: a sleep step,
 *                random_secure, the seed);  random_chacha.c  cio_random
 *   fs_posix.c   files and directories (the OS half: fs_linux.c, fs_wasi.c)
 *   process_posix.c  the executable; process_spawn_posix.c spawn/replace/fchdir, process_wait_linux.c
 *                wait/kill, process_cwd_posix.c getcwd/chdir (process_none.c, process_cwd_none.c:
 *                OperationUnsupported where there is no such thing yet); stderr_lock.c the stderr lock
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

/* ---- the slots: cio__t_<name> for every row of CIO_VTABLE_SLOTS (cio/io.h) ------------------------
 * pool.c: concurrency; pool_slots.c: cancellation and futex slots (WASI: pool_single.c, both);
 * time_posix.c / time_wasi.c: now, sleep; random_chacha.c: random, random_secure; fs_posix.c
 * (fs_windows*.c, fs_wasi.c): the dir_ and file_ slots; process_posix.c (process_windows.c):
 * process_; net_posix.c (net_windows.c, net_none.c): net_; sockopt_posix.c (sockopt_windows.c,
 * sockopt_none.c): the socket option and address slots. */
#define CIO__T_SLOT_PROTO(ret, name, params) ret cio__t_##name params;
CIO_VTABLE_SLOTS(CIO__T_SLOT_PROTO)
#undef CIO__T_SLOT_PROTO

/* Reaps a child that has exited (its pidfd was readable): fills *term, closes child->handle, sets
 * child->id to 0 (also on failure). Set: Process.WaitError (no Canceled). process_wait_linux.c;
 * process_none.c: OperationUnsupported. */
struct cio_child;
struct cio_term;
cio_err cio__t_child_reap(struct cio_child *child, struct cio_term *term);

/* Fills buf with OS entropy without blocking; false if the OS cannot (random_chacha.c falls back). */
bool cio__t_os_seed(void *buf, size_t len);

#endif /* CIO_THREADED_INTERNAL_H */
