/*
 * What the Evented backend borrows from the Threaded one, without its task struct: the OS futex (for
 * threads that are not fibers) and cancellation of a helper-pool task (an opaque Threaded task).
 */
#ifndef CIO_THREADED_BRIDGE_H
#define CIO_THREADED_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"

/* How many CPUs this process may use (its affinity mask where the OS has one); at least 1. */
size_t cio__t_cpu_count(void);
/* The OS futex; cancelable only on a Threaded worker. */
cio_err cio__t_os_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable);
void cio__t_os_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters);
/* Posts a cancel request to a Threaded task; true if its thread should be signalled again later. */
bool cio__t_task_request_cancel(void *task);
/* Signals the task's thread again while it sits in a syscall with the request pending. */
bool cio__t_task_resignal(void *task);
/* Whether the task has finished (its await will not block). */
bool cio__t_task_done(void *task);

/* Runs fn on a copy of ctx on a worker of t (never inline); *task gets the opaque task. Set:
 * ConcurrentError. */
cio_err cio__t_task_spawn(void *threaded, cio_task_fn fn, const void *ctx, size_t ctx_size, void **task);
/* Awaits (and frees) the task. */
cio_err cio__t_task_await(void *threaded, void *task);

#endif /* CIO_THREADED_BRIDGE_H */
