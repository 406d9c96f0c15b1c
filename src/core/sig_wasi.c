/*
 * Signals on WASI: what wasi-libc's emulation (-D_WASI_EMULATED_SIGNAL, -lwasi-emulated-signal) can
 * do. A WASI program receives no signals from outside; raise(3) calls the installed handler (or the
 * default action, which for most signals ends the program) synchronously, and signal(3) installs
 * one. There is no kill, no mask and no sigaction.
 *
 * Invariants:
 * - cio_sigaction installs the one trampoline through signal(3) for every handler function, after
 *   storing the user's handler in handlers[n]; the trampoline passes the number on as a cio_sig.
 *   DEFAULT and IGNORE map to SIG_DFL and SIG_IGN. The previous disposition is reported from what
 *   signal(3) returned (FOREIGN: installed by someone else with signal(3) directly).
 * - mask and flags are remembered and reported back; RESETHAND is honoured (the trampoline goes
 *   back to the default before calling a handler installed with it); RESTART and NODEFER have
 *   nothing to act on (no interrupted calls, no nested delivery) and the mask nothing to block.
 * - KILL and STOP cannot be caught (InvalidSignal), as on POSIX.
 * - cio_sig_kill and cio_sig_mask (sig_mask_none.c) are OperationUnsupported, after their arguments are checked.
 * - WebAssembly function pointers are small table indices, so the IGNORE and FOREIGN markers are
 *   addresses of functions (cio/sig.h), never the small integers other targets use.
 * - Single-threaded: the tables are plain globals.
 */
#ifndef _WASI_EMULATED_SIGNAL
#define _WASI_EMULATED_SIGNAL 1
#endif
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "cio/sig.h"
#include "internal.h"
#include "sig_internal.h"

/* Function pointers are table indices here: the markers are functions that are never called. */
void cio__sig_handler_ignore(cio_sig sig)
{
    (void)sig;
}

static void foreign_marker(cio_sig sig)
{
    (void)sig;
}

#define CIO__SIG_HANDLER_FOREIGN (&foreign_marker)

static cio_sig_handler handlers[CIO_SIG_MAX_NUMBER + 1];
static cio_sigset masks[CIO_SIG_MAX_NUMBER + 1];
static unsigned flags[CIO_SIG_MAX_NUMBER + 1];

static void trampoline(int signo)
{
    if (signo <= 0 || signo > CIO_SIG_MAX_NUMBER)
        return;
    cio_sig_handler h = handlers[signo];
    if (flags[signo] & CIO_SIGACTION_RESETHAND) {
        handlers[signo] = CIO_SIG_HANDLER_DEFAULT;
        flags[signo] = 0;
        (void)signal(signo, SIG_DFL);
    }
    if (h != CIO_SIG_HANDLER_DEFAULT && h != CIO_SIG_HANDLER_IGNORE && h != CIO__SIG_HANDLER_FOREIGN)
        h((cio_sig)signo);
}

cio_err cio_sigaction(cio_sig sig, const struct cio_sigaction *act, struct cio_sigaction *old)
{
    CIO__TRY(cio__sigaction_check(sig, act, CIO__SIG_HANDLER_FOREIGN));
    int n = (int)sig;

    cio_sig_handler before = handlers[n];
    cio_sigset before_mask = masks[n];
    unsigned before_flags = flags[n];
    void (*os)(int) = SIG_DFL; /* no action: signal(3) is the only way to read one, swap and swap back */
    if (act != NULL) {
        os = act->handler == CIO_SIG_HANDLER_DEFAULT  ? SIG_DFL
             : act->handler == CIO_SIG_HANDLER_IGNORE ? SIG_IGN
                                                      : trampoline;
        handlers[n] = act->handler;
        masks[n] = act->mask;
        flags[n] = act->flags;
    }
    void (*prev)(int) = signal(n, os);
    if (prev == SIG_ERR && act != NULL) {
        handlers[n] = before;
        masks[n] = before_mask;
        flags[n] = before_flags;
    }
    if (prev == SIG_ERR)
        return CIO__IN_SET(signal, CIO_E_UNEXPECTED);
    if (act == NULL)
        (void)signal(n, prev);
    if (old != NULL) {
        memset(old, 0, sizeof *old);
        if (prev == SIG_DFL)
            old->handler = CIO_SIG_HANDLER_DEFAULT;
        else if (prev == SIG_IGN)
            old->handler = CIO_SIG_HANDLER_IGNORE;
        else if (prev == trampoline)
            old->handler = before;
        else
            old->handler = CIO__SIG_HANDLER_FOREIGN;
        if (prev == trampoline) {
            old->mask = before_mask;
            old->flags = before_flags;
        }
    }
    return CIO_OK;
}

cio_err cio_sig_raise(cio_sig sig)
{
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    if (raise((int)sig) != 0)
        return CIO__IN_SET(signal, CIO_E_UNEXPECTED);
    return CIO_OK;
}

cio_err cio_sig_kill(long pid, cio_sig sig)
{
    (void)pid;
    if (!cio__sig_valid(sig))
        return CIO__IN_SET(signal, CIO_E_INVALID_SIGNAL);
    return CIO__IN_SET(signal, CIO_E_OPERATION_UNSUPPORTED);
}
