/*
 * cio_signal_wait on POSIX (Linux and the BSDs): a process-wide handler and a pipe per waiter.
 *
 * Why not signalfd (Linux) or EVFILT_SIGNAL (kqueue): both only see a signal that stays pending,
 * that is one blocked in every thread of the process. cio cannot block it in threads it did not
 * create or that started before the first wait (the caller's, the pool's workers, the loops), and a
 * signal that finds one thread not blocking it takes its disposition there (SIGTERM's default ends
 * the process) and never reaches the descriptor. A handler sees every delivery whatever the masks
 * (libuv and Tokio do the same: a handler and a self-pipe).
 *
 * Invariants:
 * - The handler (on_signal) is installed, with SA_RESTART, for a signal the first time a waiter
 *   asks for it and stays installed for the rest of the process (as Tokio's): a delivery with no
 *   waiter is kept pending (pending[n] = 1, deliveries coalesce as the kernel's own do) for the next
 *   waiter of that signal, instead of ending the process between two waits. cio_sigaction or any
 *   sigaction afterwards replaces it.
 * - The handler is async-signal-safe: it stores pending[n], then writes one byte to the pipe of
 *   every registered waiter (lock-free atomics and write(2)). Every waiter wakes and looks; the one
 *   whose atomic_exchange of pending[n] sees 1 takes the delivery: each delivery wakes exactly one
 *   waiter of that signal (which one, when several wait for it, is unspecified).
 * - A waiter registers (slots[i] = write end + 1) before it first looks at pending, and drains its
 *   pipe before each look: a delivery after a look always leaves a byte in its pipe, so no wake-up
 *   is lost.
 * - A waiter leaves by clearing its slot and then waiting until no handler runs (in_handler 0)
 *   before it closes its pipe: a handler that read the slot before it was cleared never writes to
 *   a descriptor number that has been closed and reused.
 * Which thread runs what: begin, take and end run on the waiting thread (a worker, or a fiber on its
 * loop thread); on_signal on whatever thread the kernel chooses.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/sig.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"
#include "sig_internal.h"

/* Waiters at one time, process-wide; one more is SystemResources. */
#define SIGW_SLOTS 64

static atomic_int pending[CIO_SIG_MAX_NUMBER + 1];
static atomic_int installed[CIO_SIG_MAX_NUMBER + 1];
static atomic_int slots[SIGW_SLOTS]; /* a waiter's write end + 1; 0: free */
static atomic_int in_handler;

static void on_signal(int signo)
{
    int saved = errno;
    atomic_fetch_add(&in_handler, 1);
    if (signo > 0 && signo <= CIO_SIG_MAX_NUMBER)
        atomic_store(&pending[signo], 1);
    for (int i = 0; i < SIGW_SLOTS; i++) {
        int v = atomic_load(&slots[i]);
        if (v > 0) {
            char b = 1;
            /* A full pipe (EAGAIN) is readable already; a failure leaves pending[n] for the next look. */
            (void)CIO__SYS(write, sigwait_wake)(v - 1, &b, 1);
        }
    }
    atomic_fetch_sub(&in_handler, 1);
    errno = saved;
}

static cio_err install(int n)
{
    if (atomic_load(&installed[n]))
        return CIO_OK;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    /* Two first waiters may both install: the same handler twice, harmless. */
    if (CIO__SYS(sigaction, sigwait_install)(n, &sa, NULL) != 0) {
        cio__mapped m = cio__errno_sigwait_install(errno);
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG("sigaction: an errno that means a bug");
        return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
    }
    atomic_store(&installed[n], 1);
    return CIO_OK;
}

static void close_fd(int fd)
{
    cio__os_before_close(fd);
    if (CIO__SYS(close, sigwait_pipe)(fd) != 0 && cio__errno_close(errno).action == CIO__MAP_BUG)
        (void)CIO__BUG("close: a bad pipe descriptor");
}

cio_err cio__os_sigwait_begin(const cio_sigset *set, struct cio__os_sigwaiter *w)
{
    bool any = false;
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER; n++) {
        if (!cio_sigset_has(set, (cio_sig)n))
            continue;
        if (n == SIGKILL || n == SIGSTOP)
            return CIO_E_INVALID_SIGNAL;
        any = true;
    }
    if (!any)
        return CIO_E_INVALID_ARGUMENT;
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER; n++) {
        if (cio_sigset_has(set, (cio_sig)n)) {
            cio_err err = install(n);
            if (err != CIO_OK)
                return err;
        }
    }
    int fds[2];
    if (CIO__SYS(pipe2, sigwait_pipe)(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        cio__mapped m = cio__errno_pipe2(errno);
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG("pipe2: an errno that means a bug");
        return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
    }
    w->rfd = fds[0];
    w->wfd = fds[1];
    w->set = set;
    for (int i = 0; i < SIGW_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&slots[i], &expected, fds[1] + 1)) {
            w->slot = i;
            return CIO_OK;
        }
    }
    close_fd(fds[0]);
    close_fd(fds[1]);
    return CIO_E_SYSTEM_RESOURCES;
}

bool cio__os_sigwait_take(struct cio__os_sigwaiter *w, int *signo)
{
    char buf[64];
    while (CIO__SYS(read, sigwait_drain)(w->rfd, buf, sizeof buf) > 0) {
    }
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER; n++) {
        if (cio_sigset_has(w->set, (cio_sig)n) && atomic_exchange(&pending[n], 0) != 0) {
            *signo = n;
            return true;
        }
    }
    return false;
}

void cio__os_sigwait_end(struct cio__os_sigwaiter *w)
{
    atomic_store(&slots[w->slot], 0);
    while (atomic_load(&in_handler) != 0) {
        /* a handler on another thread is writing: it holds no lock and ends soon */
    }
    close_fd(w->rfd);
    close_fd(w->wfd);
}

cio_err cio__os_signal_wait(void *ud, const cio_sigset *set, int *signo)
{
    (void)ud;
    struct cio__os_sigwaiter w;
    cio_err err = cio__os_sigwait_begin(set, &w);
    if (err != CIO_OK)
        return CIO__IN_SET(signal_wait, err);
    while (!cio__os_sigwait_take(&w, signo)) {
        struct pollfd p;
        p.fd = w.rfd;
        p.events = POLLIN;
        p.revents = 0;
        CIO__OS_CALL(err, sigwait_poll, CIO__SYS(poll, sigwait)(&p, 1, -1));
        if (err != CIO_OK)
            break;
    }
    cio__os_sigwait_end(&w);
    return CIO__IN_SET(signal_wait, err);
}
