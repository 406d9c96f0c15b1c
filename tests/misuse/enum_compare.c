/* Must NOT compile cleanly: a cio_sig compared with another enum. build.py expects a diagnostic. */
#include "cio.h"

int misuse_enum_compare(cio_sig sig, cio_err err);
int misuse_enum_compare(cio_sig sig, cio_err err)
{
    return sig == err;
}
