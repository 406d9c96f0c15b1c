/*
 * cio_sig_mask where the target has no signal mask (Windows' C runtime, WASI's emulation): the
 * argument is checked, then OperationUnsupported.
 */
#include <stddef.h>

#include "cio/sig.h"
#include "internal.h"

cio_err cio_sig_mask(int how, const cio_sigset *set, cio_sigset *old)
{
    (void)set;
    (void)old;
    if (how != CIO_SIG_BLOCK && how != CIO_SIG_UNBLOCK && how != CIO_SIG_SETMASK)
        return CIO__IN_SET(signal, CIO_E_INVALID_ARGUMENT);
    return CIO__IN_SET(signal, CIO_E_OPERATION_UNSUPPORTED);
}
