/*
 * The Threaded backend's stderr lock slots: the process-wide lock of src/core/stderr_lock.c, with
 * the calling thread as the task identity (a Threaded task never changes threads) and the
 * backend's futex slots for waiting (a cancellation point on a worker).
 */
#include <stdint.h>

#include "stderr_lock.h"
#include "threaded.h"

static _Thread_local char thread_identity;

cio_err cio__t_lock_stderr(void *ud)
{
    return cio__stderr_lock((uintptr_t)&thread_identity, ud, cio__t_futex_wait);
}

bool cio__t_try_lock_stderr(void *ud)
{
    (void)ud;
    return cio__stderr_try_lock((uintptr_t)&thread_identity);
}

void cio__t_unlock_stderr(void *ud)
{
    cio__stderr_unlock((uintptr_t)&thread_identity, ud, cio__t_futex_wake);
}
