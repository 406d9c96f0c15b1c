/*
 * The close hook: a backend that keeps state by descriptor number (the Evented backend's
 * descriptor table and poller registrations) hears of every close the OS code makes, so a number
 * closed through either backend is never trusted as the socket it once was after reuse.
 * Process-wide, one atomic pointer; set once, read on every close. On Windows the same for handles
 * (the Evented backend's record of which instance's completion port a handle is attached to).
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

static _Atomic(cio__os_handle_close_hook_fn) handle_close_hook;

void cio__os_set_handle_close_hook(cio__os_handle_close_hook_fn fn)
{
    atomic_store_explicit(&handle_close_hook, fn, memory_order_release);
}

void cio__os_before_handle_close(void *handle)
{
    cio__os_handle_close_hook_fn fn = atomic_load_explicit(&handle_close_hook, memory_order_acquire);
    if (fn != NULL)
        fn(handle);
}
