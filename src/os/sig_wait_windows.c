/*
 * cio_signal_wait on Windows: console control events (SetConsoleCtrlHandler), mapped to the C
 * runtime's signals as its own console handler maps them: Ctrl-C is CIO_SIG_INT, Ctrl-Break
 * CIO_SIG_BREAK, and closing the console, logoff and shutdown CIO_SIG_TERM; raise() of those three
 * (cio_sig_raise, cio_sig_kill of this process) too: the C runtime's handler (signal()) of a signal
 * waited for is cio's. Other signals have no source that could be waited for: InvalidSignal.
 *
 * Invariants:
 * - The control handler is registered once, at the first wait, and stays (as on POSIX): an event
 *   of a signal that some waiter has ever asked for (wanted[n]) is taken by cio (the handler returns
 *   TRUE) and kept pending (pending[n] = 1) for the next waiter of that signal when none waits now;
 *   an event of a signal nobody asked for goes on to the next handler (the default ends the process).
 *   For close, logoff and shutdown Windows ends the process once the handlers return anyway (after
 *   a grace period): a waiter of CIO_SIG_TERM has until then.
 * - Each waiter has an auto-reset event in slots[] under `lock` (SRW: registering and leaving
 *   exclusive, the handler shared). The handler stores pending[n] first, then sets every waiter's
 *   event; a waiter registers before it first looks at pending, so a delivery is never missed, and
 *   the one whose atomic exchange of pending[n] sees 1 takes it (one delivery, one waiter).
 * - A waiter leaves its slot under the lock before it closes its event: the handler never sets a
 *   closed handle.
 * Which thread runs what: waits on the waiting (worker) thread, alertable, so the cancel path's APC
 * ends them; the control handler on the thread Windows creates for the event.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdbool.h>

#include "cio/sig.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

#define SIGW_SLOTS 64

static SRWLOCK lock = SRWLOCK_INIT;
static HANDLE slots[SIGW_SLOTS];
static atomic_int pending[CIO_SIG_MAX_NUMBER + 1];
static atomic_int wanted[CIO_SIG_MAX_NUMBER + 1];
static atomic_int registered;

static BOOL deliver(int n)
{
    if (!atomic_load(&wanted[n]))
        return FALSE;
    atomic_store(&pending[n], 1);
    AcquireSRWLockShared(&lock);
    for (int i = 0; i < SIGW_SLOTS; i++)
        if (slots[i] != NULL)
            (void)CIO__SYS(SetEvent, sigwait_wake)(slots[i]);
    ReleaseSRWLockShared(&lock);
    return TRUE;
}

static BOOL WINAPI on_control(DWORD type)
{
    switch (type) {
    case CTRL_C_EVENT: return deliver(CIO_SIG_INT);
    case CTRL_BREAK_EVENT: return deliver(CIO_SIG_BREAK);
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT: return deliver(CIO_SIG_TERM);
    default: return FALSE;
    }
}

/* raise() (cio_sig_raise, cio_sig_kill of this process): the C runtime calls its handler in place,
 * having reset it to SIG_DFL first (re-armed here). */
static void __cdecl on_raise(int n)
{
    (void)signal(n, on_raise);
    if (n > 0 && n <= CIO_SIG_MAX_NUMBER)
        (void)deliver(n);
}

static cio_err install(const cio_sigset *set)
{
    bool any = false;
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER; n++) {
        if (!cio_sigset_has(set, (cio_sig)n))
            continue;
        if (n != CIO_SIG_INT && n != CIO_SIG_BREAK && n != CIO_SIG_TERM)
            return CIO_E_INVALID_SIGNAL;
        any = true;
    }
    if (!any)
        return CIO_E_INVALID_ARGUMENT;
    /* wanted, and the C runtime's handlers, before the console handler: registered after the C
     * runtime's own console handler (which signal(SIGINT) registers), it runs first, so one event is
     * delivered once whichever of the two runs */
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER; n++) {
        if (cio_sigset_has(set, (cio_sig)n) && !atomic_exchange(&wanted[n], 1)) {
            if (signal(n, on_raise) == SIG_ERR) {
                atomic_store(&wanted[n], 0);
                return CIO_E_UNEXPECTED;
            }
        }
    }
    if (!atomic_load(&registered)) {
        AcquireSRWLockExclusive(&lock);
        BOOL ok = atomic_load(&registered) || CIO__SYS(SetConsoleCtrlHandler, sigwait_install)(on_control, TRUE);
        if (ok)
            atomic_store(&registered, 1);
        ReleaseSRWLockExclusive(&lock);
        if (!ok)
            return CIO_E_UNEXPECTED;
    }
    return CIO_OK;
}

static int take(const cio_sigset *set)
{
    for (int n = 1; n <= CIO_SIG_MAX_NUMBER; n++)
        if (cio_sigset_has(set, (cio_sig)n) && atomic_exchange(&pending[n], 0) != 0)
            return n;
    return 0;
}

cio_err cio__os_signal_wait(void *ud, const cio_sigset *set, int *signo)
{
    (void)ud;
    cio_err err = install(set);
    if (err != CIO_OK)
        return CIO__IN_SET(signal_wait, err);
    HANDLE ev = CIO__SYS(CreateEventW, sigwait_event)(NULL, FALSE, FALSE, NULL);
    if (ev == NULL)
        return CIO__IN_SET(signal_wait, CIO_E_SYSTEM_RESOURCES);
    int slot = -1;
    AcquireSRWLockExclusive(&lock);
    for (int i = 0; i < SIGW_SLOTS && slot < 0; i++)
        if (slots[i] == NULL)
            slots[slot = i] = ev;
    ReleaseSRWLockExclusive(&lock);
    if (slot < 0) {
        (void)CIO__SYS(CloseHandle, sigwait_event)(ev);
        return CIO__IN_SET(signal_wait, CIO_E_SYSTEM_RESOURCES);
    }
    err = cio__t_syscall_begin();
    while (err == CIO_OK) {
        int n = take(set);
        if (n != 0) {
            cio__t_syscall_end();
            *signo = n;
            break;
        }
        DWORD r = CIO__SYS(WaitForSingleObjectEx, sigwait)(ev, INFINITE, TRUE);
        if (r == WAIT_IO_COMPLETION) {
            err = cio__t_syscall_interrupted();
            continue;
        }
        if (r != WAIT_OBJECT_0) {
            cio__t_syscall_end();
            err = CIO_E_UNEXPECTED;
        }
    }
    AcquireSRWLockExclusive(&lock);
    slots[slot] = NULL;
    ReleaseSRWLockExclusive(&lock);
    (void)CIO__SYS(CloseHandle, sigwait_event)(ev);
    return CIO__IN_SET(signal_wait, err);
}
