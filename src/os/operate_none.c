/*
 * The Threaded backend's timed operations where it has no native form (Windows: no readiness wait
 * for pipes and files; WASI: one thread, no sockets): every kind is CIO_E_UNIMPLEMENTED, and
 * cio_operate_timeout runs the operation as a concurrent task (whose cancel ends a blocked call:
 * CancelSynchronousIo on Windows), or says ConcurrencyUnavailable where there are no threads.
 */
#include "cio/batch.h"
#include "os.h"

cio_err cio__os_operate(void *ud, cio_operation *op, cio_timeout timeout)
{
    (void)ud, (void)timeout;
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO_E_UNIMPLEMENTED;
}
