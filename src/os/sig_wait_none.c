/*
 * cio_signal_wait where nothing delivers signals to wait for (WASI: wasi-libc's signals are an
 * emulation inside the process, raise() calls the handler in place, and there is no kill).
 */
#include "cio/sig.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_signal_wait(void *ud, const cio_sigset *set, int *signo)
{
    (void)ud, (void)set, (void)signo;
    return CIO__IN_SET(signal_wait, CIO_E_OPERATION_UNSUPPORTED);
}
