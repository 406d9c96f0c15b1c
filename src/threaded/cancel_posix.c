/*
 * The POSIX half of cancellation (cancel.c has the protocol): a canceler knocks a task out of a
 * blocked syscall with a signal (sent by cio__t_kick: cancel_linux.c, cancel_pthread.c), and here
 * the process-wide dispositions that make that work.
 *
 * Invariants:
 * - CIO__T_CANCEL_SIGNAL's handler does nothing; it is installed without SA_RESTART, so the blocked
 *   syscall fails with EINTR. Workers unblock the signal when they start; other threads keep
 *   whatever mask they had (they are never kicked: only tasks are canceled).
 * - The handlers are installed on the first cio_threaded_create and restored on the last destroy
 *   (refcounted under handlers_mu, the only lock here).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "cancel_posix.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

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
