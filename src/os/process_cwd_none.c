/*
 * The current working directory where this port does not reach it yet (the BSDs, whose C library
 * is declared by hand in spec/libc.yaml, and Windows): OperationUnsupported where the set has it,
 * Unexpected for the path (Process.CurrentPathError has no OperationUnsupported, as in Zig).
 */
#include <stddef.h>

#include "cio/process.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_process_current_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud, (void)len;
    if (buf == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (out_len != NULL)
        *out_len = 0;
    return CIO__IN_SET(process_current_path, CIO_E_UNEXPECTED);
}

cio_err cio__os_process_set_current_path(void *ud, const char *path)
{
    (void)ud;
    if (path == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(process_set_current_path, CIO_E_OPERATION_UNSUPPORTED);
}
