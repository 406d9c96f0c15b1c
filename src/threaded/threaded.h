/*
 * Internal interface of the Threaded backend (names cio__t_*): the thread pool and what it answers
 * itself (CIO_VTABLE_SLOTS_TASKS); every system slot is the OS room's (src/os/os.h, cio__os_*).
 *   pool.c, pool_slots.c, pool_life.c, pool_posix.c / pool_windows.c
 *                workers, the run queue, async/concurrent/await/cancel, groups, the futex slots
 *   cancel.c, cancel_*.c  per-thread cancel state and the syscall bracket the OS code calls
 *   futex_<os>.c the OS futex;  cpus_*.c  the CPU count;  stderr.c  the stderr lock slots
 *   bridge.c     what the Evented backend borrows (bridge.h)
 *   io.c         the vtable: cio__t_<name> for the task half, cio__os_<name> for the system half
 * WASI (single-threaded) swaps pool*.c/cancel.c/futex for pool_single.c and cancel_none.c;
 * CMakeLists.txt chooses.
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

#include "os.h"

/* ---- the scheduler's slots: cio__t_<name> for every row of CIO_VTABLE_SLOTS_TASKS (cio/io.h) ------
 * pool.c: concurrency; pool_slots.c: cancellation and futex slots (WASI: pool_single.c, both);
 * stderr.c: the stderr lock. The system slots are the OS room's (src/os/os.h, cio__os_<name>). */
#define CIO__T_SLOT_PROTO(ret, name, params) ret cio__t_##name params;
CIO_VTABLE_SLOTS_TASKS(CIO__T_SLOT_PROTO)
#undef CIO__T_SLOT_PROTO

#endif /* CIO_THREADED_INTERNAL_H */
