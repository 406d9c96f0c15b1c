/*
 * cio_signal_wait (cio/sig.h): argument checks, then the backend's signal_wait slot. A slot, not
 * library code over the futex slots: a delivery arrives in signal context (POSIX) or on a console
 * control thread (Windows), where no backend's futex wake may run, so each OS wakes its waiters its
 * own way (a pipe, an event) and each backend sleeps on that its own way (src/os/sig_wait_*.c,
 * src/evented/process.c). No state here.
 */
#include <stddef.h>

#include "cio/sig.h"
#include "internal.h"

cio_err cio_signal_wait(cio_io io, const cio_sigset *set, cio_sig *sig)
{
    CIO__REQUIRE(set, sig);
    if (set->bits[0] == 0 && set->bits[1] == 0)
        return CIO_E_INVALID_ARGUMENT;
    int n = 0;
    cio_err err = CIO__VT(io)->signal_wait(io.userdata, set, &n);
    if (err == CIO_OK)
        *sig = (cio_sig)n;
    return CIO__IN_SET(signal_wait, err);
}
