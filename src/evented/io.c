/* The Evented backend's vtable: cio__e_<name> for every row of CIO_VTABLE_SLOTS (cio/io.h). An instance
 * uses a copy in which its poller may have replaced slots it runs natively (poller->override). */
#include "evented.h"
#include "slots.h"
#include "threaded.h"

#define CIO__E_SLOT(ret, name, params) .name = cio__e_##name,
const struct cio_vtable cio__e_vtable = {CIO_VTABLE_SLOTS(CIO__E_SLOT)};

cio_io cio_evented_io(cio_evented *evented)
{
    return (cio_io){evented, &evented->vtable};
}
