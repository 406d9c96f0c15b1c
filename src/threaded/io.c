/* The Threaded backend's vtable: cio__t_<name> for every row of CIO_VTABLE_SLOTS_TASKS, the OS
 * room's cio__os_<name> for every row of CIO_VTABLE_SLOTS_SYSTEM (cio/io.h). */
#include <stdbool.h>

#include "internal.h"
#include "threaded.h"

#define CIO__T_SLOT(ret, name, params) .name = cio__t_##name,
#define CIO__OS_SLOT(ret, name, params) .name = cio__os_##name,
static const struct cio_vtable threaded_vtable = {CIO_VTABLE_SLOTS_TASKS(CIO__T_SLOT)
                                                      CIO_VTABLE_SLOTS_SYSTEM(CIO__OS_SLOT)};

static bool owns(cio_io io)
{
    return io.vtable == &threaded_vtable;
}

static void destroy(void *userdata)
{
    cio_threaded_destroy((cio_threaded *)userdata);
}

cio_io cio_threaded_io(cio_threaded *threaded)
{
    cio__register_backend(owns, destroy); /* for cio_io_destroy */
    return (cio_io){threaded, &threaded_vtable};
}
