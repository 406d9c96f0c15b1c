/*
 * Signals on Windows: the C runtime's subset (INT, ILL, FPE, SEGV, TERM, BREAK, ABRT, ABRT_COMPAT).
 *
 * Invariants:
 * - handlers[n] holds the user's handler; the CRT handler is the trampoline, which loads it
 *   atomically. The CRT resets a signal to SIG_DFL before calling its handler, so the trampoline
 *   reinstalls itself first unless the action asked for CIO_SIGACTION_RESETHAND (flags[n]).
 * - There is no kill(2) and no mask: cio_sig_kill only reaches the calling process (by raise) and
 *   cio_sig_mask is OperationUnsupported (sig_mask_none.c).
 * - ABRT_COMPAT (6) is the same signal as ABRT (22), as Microsoft's <signal.h> says: it is passed
 *   to the CRT as 22 (msvcrt, and Wine's, refuse signal(6)), so the two share one disposition and
 *   a handler sees CIO_SIG_ABRT for either.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <windows.h>

#include "cio/sig.h"
#include "internal.h"
#include "sig_internal.h"

static _Atomic(cio_sig_handler) handlers[CIO_SIG_MAX_NUMBER + 1];
static _Atomic(unsigned) flags_of[CIO_SIG_MAX_NUMBER + 1];

/* The CRT's number for sig. */
static int crt_number(cio_sig sig)
{
    return sig == CIO_SIG_ABRT_COMPAT ? (int)CIO_SIG_ABRT : (int)sig;
}

static void __cdecl trampoline(int signo)
{
    if (signo <= 0 || signo > CIO_SIG_MAX_NUMBER)
        return;
    unsigned flags = atomic_load_explicit(&flags_of[signo], memory_order_acquire);
    cio_sig_handler h = atomic_load_explicit(&handlers[signo], memory_order_acquire);
    if (flags & CIO_SIGACTION_RESETHAND)
        atomic_store_explicit(&handlers[signo], CIO_SIG_HANDLER_DEFAULT, memory_order_release);
    else
        (void)signal(signo, trampoline);
    if (h != CIO_SIG_HANDLER_DEFAULT && h != CIO_SIG_HANDLER_IGNORE)
        h((cio_sig)signo);
}

cio_err cio_sigaction(cio_sig sig, const struct cio_sigaction *act, struct cio_sigaction *old)
{
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    int n = crt_number(sig);
    cio_sig_handler before = atomic_load_explicit(&handlers[n], memory_order_acquire);
    unsigned before_flags = atomic_load_explicit(&flags_of[n], memory_order_acquire);
    void(__cdecl * os)(int) = SIG_DFL; /* no action: read the disposition by swapping it and back */
    if (act != NULL) {
        os = act->handler == CIO_SIG_HANDLER_DEFAULT  ? SIG_DFL
             : act->handler == CIO_SIG_HANDLER_IGNORE ? SIG_IGN
                                                      : trampoline;
        atomic_store_explicit(&flags_of[n], act->flags, memory_order_release);
        atomic_store_explicit(&handlers[n], act->handler, memory_order_release);
    }
    void(__cdecl * prev)(int) = signal(n, os);
    if (prev == SIG_ERR) {
        if (act != NULL) {
            atomic_store_explicit(&handlers[n], before, memory_order_release);
            atomic_store_explicit(&flags_of[n], before_flags, memory_order_release);
        }
        return CIO__IN_SET(signal, CIO_E_UNEXPECTED);
    }
    if (act == NULL)
        (void)signal(n, prev);
    if (old != NULL) {
        old->handler = prev == SIG_DFL      ? CIO_SIG_HANDLER_DEFAULT
                       : prev == SIG_IGN    ? CIO_SIG_HANDLER_IGNORE
                       : prev == trampoline ? before
                                            : CIO_SIG_HANDLER_DEFAULT;
        cio_sigset_empty(&old->mask);
        old->flags = prev == trampoline ? before_flags : 0u;
    }
    return CIO_OK;
}

cio_err cio_sig_raise(cio_sig sig)
{
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    if (raise(crt_number(sig)) != 0)
        return CIO__IN_SET(signal, CIO_E_UNEXPECTED);
    return CIO_OK;
}

cio_err cio_sig_kill(long pid, cio_sig sig)
{
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    if (pid == (long)GetCurrentProcessId())
        return cio_sig_raise(sig);
    return CIO__IN_SET(signal, CIO_E_OPERATION_UNSUPPORTED);
}
