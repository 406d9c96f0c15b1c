/* Compiled by `python3 build.py test` for every target as
 *     clang $(python3 build.py cflags --target T) -c cflags_probe.c
 * (the contract users and external checks rely on), and on the BSDs with a system header too. */
#include <cio.h>

#if defined(CIO_OS_FREEBSD) || defined(CIO_OS_NETBSD) || defined(CIO_OS_OPENBSD)
/* The BSDs: the system headers are the target's (with no sysroot, the stand-ins), never the host's. */
#include <errno.h>
#include <unistd.h>
_Static_assert(EAGAIN == 35, "<errno.h> is not the BSD's");
#endif

int cio_cflags_probe(int number);
int cio_cflags_probe(int number)
{
    cio_sig sig;
    if (cio_sig_from_number(number, &sig) != CIO_OK)
        return -1;
    return cio_sig_number(sig) + (int)CIO_E_CANCELED;
}
