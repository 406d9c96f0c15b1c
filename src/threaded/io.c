/* The Threaded backend's vtable: cio__t_<name> for every row of CIO_VTABLE_SLOTS (cio/io.h). */
#include <stdatomic.h>
#include <stdbool.h>

#include "internal.h"
#include "threaded.h"

static _Atomic(cio__t_close_hook_fn) close_hook;

void cio__t_set_close_hook(cio__t_close_hook_fn fn)
{
    atomic_store_explicit(&close_hook, fn, memory_order_release);
}

void cio__t_before_close(int fd)
{
    cio__t_close_hook_fn fn = atomic_load_explicit(&close_hook, memory_order_acquire);
    if (fn != NULL)
        fn(fd);
}

#define CIO__T_SLOT(ret, name, params) .name = cio__t_##name,
static const struct cio_vtable threaded_vtable = {CIO_VTABLE_SLOTS(CIO__T_SLOT)};

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
