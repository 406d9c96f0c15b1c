/* Must compile cleanly with the same flags: the intended use of cio_sig. */
#include "cio.h"

cio_err correct_use(int number);
cio_err correct_use(int number)
{
    cio_sig sig;
    cio_err err = cio_sig_from_number(number, &sig);
    if (err != CIO_OK)
        return err;
    if (sig == CIO_SIG_TERM)
        return CIO_OK;
    return cio_sig_raise(sig);
}
