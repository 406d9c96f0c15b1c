/*
 * The Windows half of cancellation (cancel.c has the protocol): how a canceler knocks a task's
 * thread out of the bracketed call it is blocked in.
 *
 * Invariants:
 * - Every blocking call a Windows slot brackets is one of three kinds, and cio__t_kick reaches
 *   each of them:
 *     futex waits (WaitOnAddress, not alertable): the task publishes the word in `waiting_on`
 *       before the bracket; the kick wakes that address (other waiters see a spurious wake-up);
 *     alertable waits (SleepEx, WaitForMultipleObjectsEx for sockets): a no-op user APC ends them
 *       with WAIT_IO_COMPLETION; an APC queued just before the wait starts ends it at once;
 *     synchronous I/O on a handle (NtReadFile on a pipe, ...): CancelSynchronousIo makes it fail
 *       with STATUS_CANCELLED. An I/O that has not started yet is not affected: the kick is lost,
 *       and cancelers kick again with backoff while REQ|SYS persists (pool.c), which is what
 *       "retried until acknowledged" means.
 * - cio__t_kick runs only under a `signalers` count (task.h), so its thread is alive and
 *   its id (task->os_thread_id) names it.
 * - A stray APC (queued when the wait already ended) runs at the thread's next alertable wait and
 *   is harmless: every alertable wait loops until its deadline unless a request is pending.
 * - Windows has no SIGPIPE and no cancel signal: the process-wide disposition hooks do nothing.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

static void CALLBACK cancel_apc(ULONG_PTR arg)
{
    (void)arg;
}

void cio__t_record_thread(struct cio_any_future *task)
{
    task->os_thread_id = (uint32_t)GetCurrentThreadId();
}

void cio__t_kick(struct cio_any_future *task)
{
    uintptr_t word = atomic_load_explicit(&task->waiting_on, memory_order_seq_cst);
    if (word != 0) {
        WakeByAddressAll((void *)word);
        return;
    }
    /* winpthreads keeps no handle of a detached thread: open the worker by its id (alive: see
     * above), for the two rights the kick needs. */
    HANDLE thread = CIO__SYS(OpenThread, kick)(THREAD_SET_CONTEXT | THREAD_TERMINATE, FALSE, (DWORD)task->os_thread_id);
    if (thread == NULL)
        return;
    (void)CIO__SYS(QueueUserAPC, kick)(cancel_apc, thread, 0);
    (void)CIO__SYS(CancelSynchronousIo, kick)(thread);
    CIO__SYS(CloseHandle, kick)(thread);
}

cio_err cio__t_signals_acquire(void)
{
    return CIO_OK;
}

void cio__t_signals_release(void)
{
}

void cio__t_signals_unblock(void)
{
}
