/*
 * Which poller the Evented backend uses on the BSDs: kqueue, the readiness flavour (the same core
 * as epoll on Linux: one-shot registrations per wait, regular files on the helper pool).
 *
 * The auto flavour is kqueue, and so is CIO_EVENTED_KQUEUE. io_uring and epoll do not exist here:
 * forcing either fails with OperationUnsupported. CIO_EVENTED_BACKEND is not read: with a single
 * flavour there is nothing for it to choose (its values name Linux flavours).
 */
#include "evented.h"

cio_err cio__e_choose_poller(struct cio_evented *e, cio_evented_flavour requested)
{
    if (requested != CIO_EVENTED_AUTO && requested != CIO_EVENTED_KQUEUE)
        return CIO_E_OPERATION_UNSUPPORTED;
    cio_err err = cio__e_init_pollers(e, &cio__e_kqueue_ops);
    if (err == CIO_OK)
        e->flavour = CIO_EVENTED_KQUEUE;
    return err;
}
