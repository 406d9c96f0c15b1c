/* Shared between sig_common.c and the OS halves (sig_posix.c, sig_wasi.c, sig_windows.c). */
#ifndef CIO_CORE_SIG_INTERNAL_H
#define CIO_CORE_SIG_INTERNAL_H

#include <stdbool.h>

#include "cio/signals.h"

/* True when `sig` is a signal of the target being compiled. */
bool cio__sig_valid(cio_sig sig);

struct cio_sigaction;
/* cio_sigaction's argument checks on the targets with KILL and STOP (sig_posix.c, sig_wasi.c), in
 * this order: an unknown signal is InvalidSignal; an action whose handler is `foreign` (the
 * target's FOREIGN marker, only ever reported back) InvalidArgument; an action for KILL or STOP
 * (they cannot be caught) InvalidSignal. */
cio_err cio__sigaction_check(cio_sig sig, const struct cio_sigaction *act, cio_sig_handler foreign);

#endif
