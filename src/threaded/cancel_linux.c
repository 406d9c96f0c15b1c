/*
 * The cancel kick on Linux: one tgkill(2) of the worker's kernel thread id with the cancel signal
 * (cancel_posix.h; its handler: cancel_posix.c). glibc's pthread_kill makes four system calls for
 * the same signal (it blocks every signal around getpid and tgkill, to guard against the thread
 * exiting meanwhile, and restores the mask); cancel.c's `signalers` protocol already keeps the
 * thread from leaving its task, so only the tgkill is needed, and the canceler, which the woken
 * worker may preempt at once on a shared CPU, gets back to waiting sooner.
 *
 * Invariants:
 * - Each worker learns its ids (gettid, getpid) once, on its first task, and keeps them in thread-
 *   local storage; cio__t_record_thread copies them into the task in run_task, on the worker,
 *   before the task can be canceled in a syscall (a task's ids are read only by cio__t_kick).
 * - cio__t_kick runs only under a `signalers` count (task.h): the thread is alive and still in
 *   the task the canceler checked, so its tid cannot have been reused by another thread (a tid is
 *   only valid while its thread lives), and the process id makes tgkill refuse any thread of
 *   another process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cancel_posix.h"
#include "cio/sysnum.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

static _Thread_local uint32_t self_tid, self_pid; /* 0: not asked yet */

void cio__t_record_thread(struct cio_any_future *task)
{
    if (self_tid == 0) {
        self_tid = (uint32_t)syscall(CIO_SYS_GETTID);
        self_pid = (uint32_t)getpid();
    }
    task->os_thread_id = self_tid;
    task->os_process_id = self_pid;
}

void cio__t_kick(struct cio_any_future *task)
{
    (void)CIO__SYS(tgkill, kick)((pid_t)task->os_process_id, (pid_t)task->os_thread_id, CIO__T_CANCEL_SIGNAL);
}
