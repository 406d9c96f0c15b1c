/*
 * The device_io_control operation on Windows (cio/batch.h): one DeviceIoControl on the caller's
 * thread with the caller's control code and buffers (synchronous: the handle's own mode decides; a
 * handle opened for overlapped I/O answers ERROR_IO_PENDING, which is WouldBlock here). A blocked
 * call is ended by the backend's cancel (CancelSynchronousIo), as every blocking call is.
 * op->count gets the bytes DeviceIoControl wrote to the output buffer; ERROR_MORE_DATA (the output
 * was too small for all of it) is success with what fit, as ReadFile on a message pipe.
 */
#include <windows.h>
#include <stddef.h>

#include "cio/batch.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

cio_err cio__os_device_io_control(void *ud, struct cio_operation *op)
{
    (void)ud;
    if (cio__os_ioctl_begin(op) != CIO_OK)
        return CIO_E_INVALID_ARGUMENT;
    if (op->u.device_io_control.in_len > MAXDWORD || op->u.device_io_control.out_len > MAXDWORD ||
        op->u.device_io_control.code > MAXDWORD)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__t_syscall_begin();
    if (err != CIO_OK)
        return err;
    DWORD got = 0, code;
    for (;;) {
        got = 0;
        BOOL ok = CIO__SYS(DeviceIoControl, device_io_control)((HANDLE)op->u.device_io_control.file.handle,
                                                               (DWORD)op->u.device_io_control.code,
                                                               (LPVOID)(uintptr_t)op->u.device_io_control.in,
                                                               (DWORD)op->u.device_io_control.in_len,
                                                               op->u.device_io_control.out,
                                                               (DWORD)op->u.device_io_control.out_len, &got, NULL);
        code = ok ? ERROR_SUCCESS : GetLastError();
        if (code != ERROR_OPERATION_ABORTED)
            break;
        /* CancelSynchronousIo: a cancel request (or a stale one): ask, and call again if none */
        err = cio__t_syscall_interrupted();
        if (err != CIO_OK)
            return err;
    }
    cio__t_syscall_end();
    op->count = got;
    switch (code) {
    case ERROR_SUCCESS:
    case ERROR_MORE_DATA: return CIO_OK;
    case ERROR_INVALID_FUNCTION:
    case ERROR_NOT_SUPPORTED:
    case ERROR_CALL_NOT_IMPLEMENTED: return CIO_E_OPERATION_UNSUPPORTED;
    case ERROR_INVALID_PARAMETER:
    case ERROR_INSUFFICIENT_BUFFER:
    case ERROR_NOACCESS: return CIO_E_INVALID_ARGUMENT;
    case ERROR_ACCESS_DENIED: return CIO_E_ACCESS_DENIED;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_NO_SYSTEM_RESOURCES: return CIO_E_SYSTEM_RESOURCES;
    case ERROR_IO_PENDING: return CIO_E_WOULD_BLOCK;
    case ERROR_BUSY: return CIO_E_DEVICE_BUSY;
    case ERROR_NOT_READY:
    case ERROR_DEV_NOT_EXIST: return CIO_E_NO_DEVICE;
    case ERROR_INVALID_HANDLE: return CIO__BUG("DeviceIoControl: not an open handle");
    default: return cio__unexpected_os(CIO_OS_ERROR_WIN32, (int64_t)code, "device_io_control");
    }
}
