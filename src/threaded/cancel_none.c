/*
 * Cancellation points of the Threaded backend where nothing can be canceled: WASI, where the backend
 * is single-threaded (pool_single.c). Every task runs inline on the one thread, to completion, before
 * its future exists, so no cancel request can ever reach a running task.
 *
 * Invariants:
 * - The bracket around blocking syscalls (threaded.h) never fails and never signals: begin and
 *   interrupted return CIO_OK (an EINTR, which WASI hosts do not produce, is simply retried), end
 *   does nothing; the pure cancellation point returns CIO_OK.
 * - No state at all: fs_posix.c and process_posix.c call these exactly as on Linux.
 */
#include "threaded.h"

cio_err cio__t_syscall_begin(void)
{
    return CIO_OK;
}

cio_err cio__t_syscall_interrupted(void)
{
    return CIO_OK;
}

void cio__t_syscall_end(void)
{
}

cio_err cio__t_cancel_point(void)
{
    return CIO_OK;
}
