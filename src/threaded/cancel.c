/*
 * Cancellation for the Threaded backend: the per-task cancel word (see task.h), the bracket around
 * blocking syscalls, and the signal that knocks a thread out of one.
 *
 * Invariants:
 * - A task's REQ->ACK transition, and SYS set/clear, happen only on the task's own thread
 *   (cio__t_current). Other threads only OR in REQ (cio__t_request_cancel) and read the word.
 * - A canceler that sees REQ|SYS sends CIO__T_CANCEL_SIGNAL with pthread_kill. The handler does
 *   nothing; it is installed without SA_RESTART, so the blocked syscall fails with EINTR and
 *   cio__t_syscall_interrupted turns the pending request into CIO_E_CANCELED. A signal that lands
 *   between cio__t_syscall_begin and the syscall itself is lost, so cancelers re-signal with
 *   exponential backoff while REQ|SYS persists (pool.c).
 * - signalers (task.h) keeps the target thread alive across the check-then-kill window.
 * - Off a worker thread, or under CIO_CANCEL_BLOCKED, nothing here ever fails or signals.
 * Lock order: none (lock-free; the refcount of installed handlers has its own mutex).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

/* SIGURG: ignored by default (so a stray one is harmless if a program replaces our handler) and
 * almost never used otherwise; Go's runtime uses it for preemption for the same reasons. */
#define CIO__T_CANCEL_SIGNAL SIGURG

_Thread_local struct cio_any_future *cio__t_current;

static bool cancelable_here(struct cio_any_future **out)
{
    struct cio_any_future *t = cio__t_current;
    if (t == NULL || t->protection == CIO_CANCEL_BLOCKED)
        return false;
    *out = t;
    return true;
}

/* REQ -> ACK (and clear SYS); returns true if a request was taken. */
static bool take_request(struct cio_any_future *t)
{
    uint32_t s = atomic_load_explicit(&t->cancel, memory_order_acquire);
    while (s & CIO__T_REQ) {
        uint32_t n = (s & ~(CIO__T_REQ | CIO__T_SYS)) | CIO__T_ACK;
        if (atomic_compare_exchange_weak_explicit(&t->cancel, &s, n, memory_order_acq_rel, memory_order_acquire))
            return true;
    }
    return false;
}

cio_err cio__t_check_cancel(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return CIO_OK;
    return take_request(t) ? CIO_E_CANCELED : CIO_OK;
}

cio_err cio__t_syscall_begin(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return CIO_OK;
    uint32_t s = atomic_load_explicit(&t->cancel, memory_order_acquire);
    for (;;) {
        if (s & CIO__T_REQ) {
            if (take_request(t))
                return CIO_E_CANCELED;
            s = atomic_load_explicit(&t->cancel, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&t->cancel, &s, s | CIO__T_SYS, memory_order_seq_cst,
                                                  memory_order_acquire))
            return CIO_OK;
    }
}

cio_err cio__t_syscall_interrupted(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return CIO_OK;
    return take_request(t) ? CIO_E_CANCELED : CIO_OK;
}

void cio__t_syscall_end(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return;
    atomic_fetch_and_explicit(&t->cancel, ~CIO__T_SYS, memory_order_seq_cst);
}

static bool signal_if_blocked(struct cio_any_future *task)
{
    bool sent = false;
    atomic_fetch_add_explicit(&task->signalers, 1, memory_order_seq_cst);
    uint32_t s = atomic_load_explicit(&task->cancel, memory_order_seq_cst);
    if ((s & (CIO__T_REQ | CIO__T_SYS)) == (CIO__T_REQ | CIO__T_SYS) &&
        atomic_load_explicit(&task->done, memory_order_acquire) == 0) {
        (void)CIO__SYS(pthread_kill, signal_if_blocked)(task->thread, CIO__T_CANCEL_SIGNAL);
        sent = true;
    }
    atomic_fetch_sub_explicit(&task->signalers, 1, memory_order_seq_cst);
    return sent;
}

bool cio__t_request_cancel(struct cio_any_future *task)
{
    uint32_t s = atomic_load_explicit(&task->cancel, memory_order_acquire);
    for (;;) {
        if (s & (CIO__T_REQ | CIO__T_ACK))
            return (s & (CIO__T_REQ | CIO__T_SYS)) == (CIO__T_REQ | CIO__T_SYS);
        if (atomic_compare_exchange_weak_explicit(&task->cancel, &s, s | CIO__T_REQ, memory_order_seq_cst,
                                                  memory_order_acquire))
            break;
    }
    return signal_if_blocked(task);
}

bool cio__t_resignal(struct cio_any_future *task)
{
    return signal_if_blocked(task);
}

void cio__t_quiesce(struct cio_any_future *task)
{
    while (atomic_load_explicit(&task->signalers, memory_order_seq_cst) != 0)
        sched_yield();
}

/* ---- process-wide signal dispositions ---------------------------------------------------------- */

static pthread_mutex_t handlers_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned handlers_refs;
static struct sigaction saved_cancel, saved_pipe;
static bool pipe_replaced;

static void on_cancel_signal(int signo)
{
    (void)signo;
}

static void on_sigpipe(int signo)
{
    (void)signo;
}

cio_err cio__t_signals_acquire(void)
{
    cio_err err = CIO_OK;
    pthread_mutex_lock(&handlers_mu);
    if (handlers_refs++ == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_cancel_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0; /* no SA_RESTART: blocked syscalls return EINTR */
        if (CIO__SYS(sigaction, signals_acquire)(CIO__T_CANCEL_SIGNAL, &sa, &saved_cancel) != 0) {
            handlers_refs--;
            err = CIO_E_UNEXPECTED;
        } else {
            /* SIGPIPE would kill the process on a write to a closed pipe or socket; with a
             * handler the write fails with EPIPE (BrokenPipe). A program's own handler stays. */
            struct sigaction cur;
            pipe_replaced = false;
            if (CIO__SYS(sigaction, signals_acquire)(SIGPIPE, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL) {
                sa.sa_handler = on_sigpipe;
                if (CIO__SYS(sigaction, signals_acquire)(SIGPIPE, &sa, &saved_pipe) == 0)
                    pipe_replaced = true;
            }
        }
    }
    pthread_mutex_unlock(&handlers_mu);
    return err;
}

void cio__t_signals_release(void)
{
    pthread_mutex_lock(&handlers_mu);
    if (handlers_refs > 0 && --handlers_refs == 0) {
        (void)CIO__SYS(sigaction, signals_release)(CIO__T_CANCEL_SIGNAL, &saved_cancel, NULL);
        if (pipe_replaced)
            (void)CIO__SYS(sigaction, signals_release)(SIGPIPE, &saved_pipe, NULL);
        pipe_replaced = false;
    }
    pthread_mutex_unlock(&handlers_mu);
}

void cio__t_signals_unblock(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, CIO__T_CANCEL_SIGNAL);
    (void)CIO__SYS(pthread_sigmask, signals_unblock)(SIG_UNBLOCK, &set, NULL);
}
