/*
 * Which poller the Evented backend uses on Windows: the I/O completion port (poll_iocp.c), the only
 * flavour there. The auto flavour is it, and so is CIO_EVENTED_IOCP; io_uring, epoll and kqueue do
 * not exist here: forcing one fails with OperationUnsupported. CIO_EVENTED_BACKEND is not read.
 */
#include "evented.h"

cio_err cio__e_choose_poller(struct cio_evented *e, cio_evented_flavour requested)
{
    if (requested != CIO_EVENTED_AUTO && requested != CIO_EVENTED_IOCP)
        return CIO_E_OPERATION_UNSUPPORTED;
    cio_err err = cio__e_init_pollers(e, &cio__e_iocp_ops);
    if (err == CIO_OK)
        e->flavour = CIO_EVENTED_IOCP;
    return err;
}
