/*
 * The Threaded backend's stderr lock slots: the process-wide lock of src/core/stderr_lock.c, with
 * the calling thread as the task identity (a Threaded task never changes threads; the identity is
 * the thread's, shared with every other instance) and the backend's futex slots for waiting (a
 * cancellation point on a worker).
 */
#include <stdint.h>

#include "stderr_lock.h"
#include "threaded.h"

cio_err cio__t_lock_stderr(void *ud)
{
    return cio__stderr_lock(cio__stderr_thread_self(), ud, cio__t_futex_wait, NULL);
}

bool cio__t_try_lock_stderr(void *ud)
{
    (void)ud;
    return cio__stderr_try_lock(cio__stderr_thread_self());
}

void cio__t_unlock_stderr(void *ud)
{
    (void)ud;
    cio__stderr_unlock(cio__stderr_thread_self());
}
