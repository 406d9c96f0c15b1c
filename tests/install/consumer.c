/* Built against an installed cio, once through pkg-config and once through find_package(cio). */
#include <cio.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    cio_sig sig;
    if (cio_sig_from_number(2, &sig) != CIO_OK || sig != CIO_SIG_INT)
        return 1;
    if (strcmp(cio_err_name(CIO_E_FILE_NOT_FOUND), "FileNotFound") != 0)
        return 2;
    printf("consumer ok: %s\n", cio_sig_name(sig));
    return 0;
}
