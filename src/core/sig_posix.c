/*
 * Signals on POSIX C libraries: raise, kill, sigaction and the thread's mask, typed by cio_sig.
 *
 * Invariants:
 * - handlers[n] holds the user's cio_sig_handler for signal n; the OS handler for every signal cio
 *   manages is the one trampoline, which loads handlers[n] atomically (lock-free: safe in signal
 *   context) and passes the number on as a cio_sig, preserving errno around the call.
 * - cio_sigaction stores the new handler before it installs the trampoline, so a signal arriving
 *   in between finds either the old or the new handler, never a torn value.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include "cio/errmap.h"
#include "cio/sig.h"
#include "internal.h"
#include "sig_internal.h"
#include "internal/cio_oscalls.h"

#define CIO__SIG_HANDLER_FOREIGN ((cio_sig_handler)2)

static _Atomic(cio_sig_handler) handlers[CIO_SIG_MAX_NUMBER + 1];

static void trampoline(int signo)
{
    int saved = errno;
    if (signo > 0 && signo <= CIO_SIG_MAX_NUMBER) {
        cio_sig_handler h = atomic_load_explicit(&handlers[signo], memory_order_acquire);
        if (h != CIO_SIG_HANDLER_DEFAULT && h != CIO_SIG_HANDLER_IGNORE && h != CIO__SIG_HANDLER_FOREIGN)
            h((cio_sig)signo);
    }
    errno = saved;
}

static void to_os_set(const cio_sigset *in, sigset_t *out)
{
    sigemptyset(out);
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER && n <= 128; n++)
        if (cio__sig_valid((cio_sig)n) && cio_sigset_has(in, (cio_sig)n))
            sigaddset(out, n);
}

static void from_os_set(const sigset_t *in, cio_sigset *out)
{
    cio_sigset_empty(out);
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER && n <= 128; n++)
        if (cio__sig_valid((cio_sig)n) && sigismember(in, n) == 1)
            (void)cio_sigset_add(out, (cio_sig)n);
}

static unsigned from_os_flags(int flags)
{
    unsigned long f = (unsigned long)(unsigned)flags;
    unsigned out = 0;
    if (f & (unsigned long)SA_RESTART)
        out |= CIO_SIGACTION_RESTART;
    if (f & (unsigned long)SA_RESETHAND)
        out |= CIO_SIGACTION_RESETHAND;
    if (f & (unsigned long)SA_NODEFER)
        out |= CIO_SIGACTION_NODEFER;
    return out;
}

static int to_os_flags(unsigned flags)
{
    unsigned long out = 0;
    if (flags & CIO_SIGACTION_RESTART)
        out |= (unsigned long)SA_RESTART;
    if (flags & CIO_SIGACTION_RESETHAND)
        out |= (unsigned long)SA_RESETHAND;
    if (flags & CIO_SIGACTION_NODEFER)
        out |= (unsigned long)SA_NODEFER;
    return (int)out;
}

cio_err cio_sigaction(cio_sig sig, const struct cio_sigaction *act, struct cio_sigaction *old)
{
    CIO__TRY(cio__sigaction_check(sig, act, CIO__SIG_HANDLER_FOREIGN));
    int n = (int)sig;

    struct sigaction sa, prev;
    memset(&sa, 0, sizeof sa);
    cio_sig_handler before = atomic_load_explicit(&handlers[n], memory_order_acquire);
    if (act != NULL) {
        if (act->handler == CIO_SIG_HANDLER_DEFAULT)
            sa.sa_handler = SIG_DFL;
        else if (act->handler == CIO_SIG_HANDLER_IGNORE)
            sa.sa_handler = SIG_IGN;
        else
            sa.sa_handler = trampoline;
        to_os_set(&act->mask, &sa.sa_mask);
        sa.sa_flags = to_os_flags(act->flags);
        atomic_store_explicit(&handlers[n], act->handler, memory_order_release);
    }
    if (CIO__SYS(sigaction, sig_action)(n, act != NULL ? &sa : NULL, &prev) != 0) {
        int e = errno;
        if (act != NULL)
            atomic_store_explicit(&handlers[n], before, memory_order_release);
        cio__mapped r = cio__errno_sigaction(e);
        return CIO__IN_SET(signal, r.action == CIO__MAP_BUG ? CIO__BUG("sigaction") : r.err);
    }
    if (old != NULL) {
        if (prev.sa_handler == SIG_DFL)
            old->handler = CIO_SIG_HANDLER_DEFAULT;
        else if (prev.sa_handler == SIG_IGN)
            old->handler = CIO_SIG_HANDLER_IGNORE;
        else if (prev.sa_handler == trampoline)
            old->handler = before;
        else
            old->handler = CIO__SIG_HANDLER_FOREIGN;
        from_os_set(&prev.sa_mask, &old->mask);
        old->flags = from_os_flags(prev.sa_flags);
    }
    return CIO_OK;
}

cio_err cio_sig_raise(cio_sig sig)
{
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    if (CIO__SYS(raise, sig_raise)((int)sig) != 0)
        return CIO__IN_SET(signal, CIO_E_UNEXPECTED);
    return CIO_OK;
}

cio_err cio_sig_kill(long pid, cio_sig sig)
{
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    if ((long)(pid_t)pid != pid)
        return CIO__IN_SET(signal, CIO_E_INVALID_ARGUMENT);
    if (CIO__SYS(kill, sig_kill)((pid_t)pid, (int)sig) != 0) {
        cio__mapped r = cio__errno_kill(errno);
        return CIO__IN_SET(signal, r.action == CIO__MAP_BUG ? CIO__BUG("kill") : r.err);
    }
    return CIO_OK;
}

cio_err cio_sig_mask(int how, const cio_sigset *set, cio_sigset *old)
{
    int os_how;
    switch (how) {
    case CIO_SIG_BLOCK: os_how = SIG_BLOCK; break;
    case CIO_SIG_UNBLOCK: os_how = SIG_UNBLOCK; break;
    case CIO_SIG_SETMASK: os_how = SIG_SETMASK; break;
    default: return CIO__IN_SET(signal, CIO_E_INVALID_ARGUMENT);
    }
    sigset_t in, prev;
    if (set != NULL)
        to_os_set(set, &in);
    int rc = CIO__SYS(pthread_sigmask, sig_mask)(os_how, set != NULL ? &in : NULL, &prev);
    if (rc != 0)
        return CIO__IN_SET(signal, CIO_E_UNEXPECTED);
    if (old != NULL)
        from_os_set(&prev, old);
    return CIO_OK;
}
