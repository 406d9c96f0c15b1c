/* Shared between sig_common.c and the OS halves (sig_posix.c, sig_windows.c). */
#ifndef CIO_CORE_SIG_INTERNAL_H
#define CIO_CORE_SIG_INTERNAL_H

#include <stdbool.h>

#include "cio/signals.h"

/* True when `sig` is a signal of the target being compiled. */
bool cio__sig_valid(cio_sig sig);

#endif
