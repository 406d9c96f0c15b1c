/**
 * @file cio/sig.h
 * @brief Raising, handling and masking signals, typed by cio_sig.
 *
 * Signals, typed by the generated enum cio_sig (platform/include/cio/signals.h: the numbers of the target
 * being compiled). POSIX targets have the whole set; Windows has the C runtime's subset (INT, ILL,
 * FPE, SEGV, TERM, BREAK, ABRT, ABRT_COMPAT) with raise and handlers, and no kill or masks.
 *
 * Thread-safety: every function may be called from any thread. cio_sig_raise, cio_sig_kill and the
 * cio_sigset_* functions are async-signal-safe on POSIX. A handler installed with cio_sigaction runs
 * in signal context: it must only do async-signal-safe things.
 */
#ifndef CIO_SIG_H
#define CIO_SIG_H

#include <stdbool.h>
#include <stdint.h>

#include "cio/errors.h"
#include "cio/io.h"
#include "cio/signals.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The signal's name without the SIG prefix ("USR1").
 * @param sig the signal
 * @return a static string, or NULL for a value that is no signal here.
 * @cancellation no (pure library code)
 */
const char *cio_sig_name(cio_sig sig);

/**
 * Converts an OS signal number. Never undefined behaviour, whatever the int.
 * @param number the OS number
 * @param[out] out the signal (written only on success)
 * @return #CIO_OK, or #CIO_E_INVALID_SIGNAL when the target has no such signal (a member of SignalError
 *         \errset_signal)
 * @cancellation no (pure library code)
 */
cio_err cio_sig_from_number(int number, cio_sig *out);

/**
 * The OS number of a signal (the enum's value).
 * @param sig the signal
 * @return the number.
 * @cancellation no (pure library code)
 */
static inline int cio_sig_number(cio_sig sig)
{
    return (int)sig;
}

/** A set of signals, independent of the C library's sigset_t (128 bits: enough for mips' 128). */
typedef struct cio_sigset {
    uint64_t bits[2]; /**< bit n - 1 stands for signal number n */
} cio_sigset;

/**
 * Empties the set.
 * @param[out] set the set
 * @cancellation no (pure library code; async-signal-safe on POSIX)
 */
void cio_sigset_empty(cio_sigset *set);
/**
 * Every signal the target defines.
 * @param[out] set the set
 * @cancellation no (pure library code; async-signal-safe on POSIX)
 */
void cio_sigset_fill(cio_sigset *set);
/**
 * Adds a signal to the set.
 * @param set the set
 * @param sig the signal
 * @return #CIO_OK, or #CIO_E_INVALID_SIGNAL for a value that is no signal here (a member of
 *         SignalError \errset_signal)
 * @cancellation no (pure library code; async-signal-safe on POSIX)
 */
cio_err cio_sigset_add(cio_sigset *set, cio_sig sig);
/**
 * Removes a signal from the set.
 * @param set the set
 * @param sig the signal
 * @return #CIO_OK, or #CIO_E_INVALID_SIGNAL for a value that is no signal here (a member of
 *         SignalError \errset_signal)
 * @cancellation no (pure library code; async-signal-safe on POSIX)
 */
cio_err cio_sigset_del(cio_sigset *set, cio_sig sig);
/**
 * Whether the set holds the signal.
 * @param set the set
 * @param sig the signal
 * @return true when it does (false for a value that is no signal here).
 * @cancellation no (pure library code; async-signal-safe on POSIX)
 */
bool cio_sigset_has(const cio_sigset *set, cio_sig sig);

/** A handler receives the signal as a cio_sig. CIO_SIG_HANDLER_DEFAULT and CIO_SIG_HANDLER_IGNORE
 * are the two dispositions that are not functions. */
typedef void (*cio_sig_handler)(cio_sig sig);
/** The default disposition (SIG_DFL). */
#define CIO_SIG_HANDLER_DEFAULT ((cio_sig_handler)0)
#if defined(CIO_OS_WASI)
/* WebAssembly function pointers are table indices, so 1 is a real function: IGNORE is the address
 * of a function of cio's that is never called (as wasi-libc's SIG_IGN is). */
void cio__sig_handler_ignore(cio_sig sig);
#define CIO_SIG_HANDLER_IGNORE (&cio__sig_handler_ignore) /**< Ignore the signal (SIG_IGN). */
#else
#define CIO_SIG_HANDLER_IGNORE ((cio_sig_handler)1) /**< Ignore the signal (SIG_IGN). */
#endif

#define CIO_SIGACTION_RESTART 1u   /**< restart interrupted system calls (SA_RESTART) */
#define CIO_SIGACTION_RESETHAND 2u /**< back to the default after one delivery (SA_RESETHAND) */
#define CIO_SIGACTION_NODEFER 4u   /**< do not block the signal in its own handler (SA_NODEFER) */

/** A signal's disposition (cio_sigaction). */
struct cio_sigaction {
    cio_sig_handler handler; /**< a function, CIO_SIG_HANDLER_DEFAULT or CIO_SIG_HANDLER_IGNORE */
    cio_sigset mask;         /**< blocked while the handler runs (POSIX; ignored on Windows) */
    unsigned flags;          /**< CIO_SIGACTION_* */
};

/**
 * Installs `act` (if not NULL) for `sig` and stores the previous disposition in `old` (if not
 * NULL). Errors: InvalidSignal (no such signal, or one that cannot be caught: KILL, STOP),
 * Unexpected.
 * @param sig the signal
 * @param act the new disposition, or NULL
 * @param[out] old (if not NULL) the previous disposition
 * @return #CIO_OK, or an error of SignalError \errset_signal
 * @cancellation no
 */
cio_err cio_sigaction(cio_sig sig, const struct cio_sigaction *act, struct cio_sigaction *old);

/**
 * Sends `sig` to the calling thread and returns after the handler (if any) ran.
 * Errors: InvalidSignal, Unexpected.
 * @param sig the signal
 * @return #CIO_OK, or an error of SignalError \errset_signal
 * @cancellation no
 */
cio_err cio_sig_raise(cio_sig sig);

/**
 * Sends `sig` to process `pid` (POSIX kill(2)). Errors: InvalidSignal, PermissionDenied,
 * ProcessNotFound, OperationUnsupported (Windows, WASI), Unexpected.
 * @param pid the process (kill(2)'s pid, also 0 and negative values)
 * @param sig the signal
 * @return #CIO_OK, or an error of SignalError \errset_signal
 * @cancellation no
 */
cio_err cio_sig_kill(long pid, cio_sig sig);

#if !defined(CIO_SIG_BLOCK)
/* Targets without signal masks (Windows) still accept the how-values; cio_sig_mask then reports
 * OperationUnsupported. */
#define CIO_SIG_BLOCK 0   /**< add to the mask */
#define CIO_SIG_UNBLOCK 1 /**< remove from the mask */
#define CIO_SIG_SETMASK 2 /**< replace the mask */
#endif

/**
 * The calling thread's signal mask (pthread_sigmask): how is CIO_SIG_BLOCK, CIO_SIG_UNBLOCK or
 * CIO_SIG_SETMASK. Errors: InvalidArgument (bad how), OperationUnsupported (Windows, WASI).
 * @param how CIO_SIG_BLOCK, CIO_SIG_UNBLOCK or CIO_SIG_SETMASK
 * @param set the signals (NULL: only read the mask)
 * @param[out] old (if not NULL) the previous mask
 * @return #CIO_OK, or an error of SignalError \errset_signal
 * @cancellation no
 */
cio_err cio_sig_mask(int how, const cio_sigset *set, cio_sigset *old);

/**
 * Waits, as an I/O operation, until one signal of `set` is delivered to the process, and stores it
 * in `sig`: how a server waits for SIGINT/SIGTERM without a handler of its own.
 *
 * The first wait for a signal installs cio's handler for it, for the rest of the process: from then
 * on a delivery no waiter takes is kept pending (several deliveries of one signal coalesce into one,
 * as the kernel's do) and the next wait for that signal returns it at once; it never takes the
 * signal's default action again (until cio_sigaction replaces the handler). Masks do not matter:
 * the signal must only not be blocked in every thread.
 * Several waiters: **each delivery wakes exactly one waiter** of that signal (which one is
 * unspecified); two deliveries of different signals, or two deliveries of one signal the second of
 * which came after the first was taken, wake two. Up to 64 waiters at once in the process.
 *
 * Per target: Linux and the BSDs: any catchable signal (a handler and a pipe per waiter; in the
 * Evented backend the fiber waits for that pipe in its loop, a Threaded worker in poll). Windows:
 * console control events: Ctrl-C is #CIO_SIG_INT, Ctrl-Break CIO_SIG_BREAK, closing the console,
 * logoff and shutdown #CIO_SIG_TERM (Windows ends the process a few seconds after those three);
 * raise() of those three (cio_sig_raise) is delivered too (cio's is then their C runtime handler);
 * other signals are InvalidSignal. WASI: OperationUnsupported.
 * Errors: InvalidArgument (empty set), InvalidSignal (KILL, STOP, or one this target cannot wait
 * for), SystemResources (65th waiter), ProcessFdQuotaExceeded / SystemFdQuotaExceeded (no pipe),
 * OperationUnsupported, Canceled, Unexpected.
 * @param io the backend
 * @param set the signals to wait for (not empty)
 * @param[out] sig the signal delivered (written only on success)
 * @return #CIO_OK, or an error of Signal.WaitError \errset_signal_wait
 * @cancellation yes (prompt on every backend: the waiting worker or fiber is woken)
 */
cio_err cio_signal_wait(cio_io io, const cio_sigset *set, cio_sig *sig);

#ifdef __cplusplus
}
#endif

#endif /* CIO_SIG_H */
