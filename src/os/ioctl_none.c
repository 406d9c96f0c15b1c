/*
 * The device_io_control operation where the OS has no device control call (WASI: no ioctl, and
 * Zig's WASI backend cannot express it either): OperationUnsupported.
 */
#include <stddef.h>

#include "cio/batch.h"
#include "os.h"

cio_err cio__os_device_io_control(void *ud, struct cio_operation *op)
{
    (void)ud;
    cio_err err = cio__os_ioctl_begin(op);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}
