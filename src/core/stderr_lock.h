/* The process-wide recursive stderr lock (stderr_lock.c), for the backends' lock_stderr slots and
 * for cio's own diagnostics (diag.c). */
#ifndef CIO_CORE_STDERR_LOCK_H
#define CIO_CORE_STDERR_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "cio/io.h"

/* The backend's futex slots (its own: the lock's waiters wait the way the backend's tasks wait). */
typedef cio_err (*cio__stderr_wait_fn)(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout t);
typedef void (*cio__stderr_wake_fn)(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters);

/* The calling thread's identity: the task identity of every caller that is not a fiber (a Threaded
 * task, a foreign thread of an Evented instance, a diagnostic), the same whichever instance it goes
 * through, so one thread is one owner. */
uintptr_t cio__stderr_thread_self(void);

/* `self` identifies the calling task (non-zero, the same for the task's whole life). `wait` is how
 * it waits; `fiber_wake` (NULL for threads) is a wake that reaches waiters `wait` parks somewhere
 * other than the OS futex: unlock calls it as well as the OS futex wake, so a waiter of any backend
 * is woken whichever backend's task unlocks. */
cio_err cio__stderr_lock(uintptr_t self, void *ud, cio__stderr_wait_fn wait, cio__stderr_wake_fn fiber_wake);
bool cio__stderr_try_lock(uintptr_t self);
void cio__stderr_unlock(uintptr_t self);

/* The OS futex waits and wakes of threads (Threaded's futex slots; installed by cio_threaded_create):
 * what diagnostics made on a thread wait with, and the wake every unlock makes. */
void cio__stderr_set_threads(cio__stderr_wait_fn wait, cio__stderr_wake_fn wake);

/* How a diagnostic made on a fiber takes the lock as that fiber (Evented installs it when an instance
 * is created): `who` says whether the calling thread is running a fiber, with its identity and the
 * `ud` for `wait` (an uncancelable fiber wait); `wake` is Evented's wake (as fiber_wake above). */
typedef bool (*cio__stderr_who_fn)(uintptr_t *self, void **ud);
void cio__stderr_set_fibers(cio__stderr_who_fn who, cio__stderr_wait_fn wait, cio__stderr_wake_fn wake);

/* For a diagnostic line: takes the lock as the calling task (the fiber it runs on, else the thread;
 * waiting, uncancelably, for at most about a second: a diagnostic never hangs the program), except
 * on a thread that is no fiber while a fiber of its loop holds it (which cannot run while it waits).
 * Returns whether it took it (then cio__stderr_diag_unlock after the write). */
bool cio__stderr_diag_lock(void);
void cio__stderr_diag_unlock(void);

#endif /* CIO_CORE_STDERR_LOCK_H */
