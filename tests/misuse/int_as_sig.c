/* Must NOT compile cleanly: an int where a cio_sig is expected. build.py expects a diagnostic. */
#include "cio.h"

cio_err misuse_int_as_sig(int number);
cio_err misuse_int_as_sig(int number)
{
    return cio_sig_raise(number);
}
