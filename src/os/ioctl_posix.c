/*
 * The device_io_control operation on POSIX (cio/batch.h): one ioctl(2) on the caller's thread, in
 * the cancellation bracket (an ioctl that waits, TIOCDRAIN say, is interrupted by a cancel like any
 * blocking call). The request and its argument are the caller's; the library neither checks nor
 * copies them. op->count gets ioctl's (non-negative) result.
 */
#include <stddef.h>
#include <sys/ioctl.h>

#include "cio/batch.h"
#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

cio_err cio__os_device_io_control(void *ud, struct cio_operation *op)
{
    (void)ud;
    if (cio__os_ioctl_begin(op) != CIO_OK)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    int r;
    CIO__OS_SYSCALL(err, r, ioctl,
                    CIO__SYS(ioctl, device_io_control)(op->u.device_io_control.file.handle,
                                                       op->u.device_io_control.code, op->u.device_io_control.arg));
    if (err == CIO_OK)
        op->count = r >= 0 ? (size_t)r : 0;
    return CIO__IN_SET(file_device_io_control, err);
}
