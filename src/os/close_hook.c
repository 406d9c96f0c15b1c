/*
 * The close hook: a backend that keeps state by descriptor number (the Evented backend's
 * descriptor table and poller registrations) hears of every close the OS code makes, so a number
 * closed through either backend is never trusted as the socket it once was after reuse.
 * Process-wide, one atomic pointer; set once, read on every close.
 */
#include <stdatomic.h>

#include "os.h"

static _Atomic(cio__os_close_hook_fn) close_hook;

void cio__os_set_close_hook(cio__os_close_hook_fn fn)
{
    atomic_store_explicit(&close_hook, fn, memory_order_release);
}

void cio__os_before_close(int fd)
{
    cio__os_close_hook_fn fn = atomic_load_explicit(&close_hook, memory_order_acquire);
    if (fn != NULL)
        fn(fd);
}
