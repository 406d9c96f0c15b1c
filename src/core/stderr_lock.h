/* The process-wide recursive stderr lock (stderr_lock.c), for the backends' lock_stderr slots. */
#ifndef CIO_CORE_STDERR_LOCK_H
#define CIO_CORE_STDERR_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "cio/io.h"

/* The backend's futex slots (its own: the lock's waiters wait the way the backend's tasks wait). */
typedef cio_err (*cio__stderr_wait_fn)(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout t);
typedef void (*cio__stderr_wake_fn)(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters);

/* `self` identifies the calling task (non-zero, the same for the task's whole life). */
cio_err cio__stderr_lock(uintptr_t self, void *ud, cio__stderr_wait_fn wait);
bool cio__stderr_try_lock(uintptr_t self);
void cio__stderr_unlock(uintptr_t self, void *ud, cio__stderr_wake_fn wake);

#endif /* CIO_CORE_STDERR_LOCK_H */
