/* Compiled by `python3 build.py test` for every target as
 *     clang $(python3 build.py cflags --target T) -c cflags_probe.c
 * (the contract users and external checks rely on). */
#include <cio.h>

int cio_cflags_probe(int number);
int cio_cflags_probe(int number)
{
    cio_sig sig;
    if (cio_sig_from_number(number, &sig) != CIO_OK)
        return -1;
    return cio_sig_number(sig) + (int)CIO_E_CANCELED;
}
