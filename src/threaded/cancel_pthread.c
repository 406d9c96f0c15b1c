/*
 * The cancel kick where the kernel's thread id is not at hand (the BSDs): pthread_kill of the
 * worker's pthread_t with the cancel signal (cancel_posix.h; its handler: cancel_posix.c).
 *
 * Invariants:
 * - cio__t_record_thread runs on the worker, in run_task, before the task can be canceled in a
 *   syscall; task->thread then names that worker until the task ends.
 * - cio__t_kick runs only under a `signalers` count (task.h), so the thread is alive and still in
 *   the task the canceler checked.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>

#include "cancel_posix.h"
#include "task.h"

void cio__t_record_thread(struct cio_any_future *task)
{
    task->thread = pthread_self();
}

void cio__t_kick(struct cio_any_future *task)
{
    (void)pthread_kill(task->thread, CIO__T_CANCEL_SIGNAL);
}
