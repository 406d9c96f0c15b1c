/*
 * Child processes where this port has none (WASI: no processes at all): spawn and replace are
 * OperationUnsupported (replace: process_replace_none.c), so no child can exist, and wait/kill of
 * one that does not exist say so.
 * Also fchdir where the C library has none (WASI). No state, no system calls.
 */
#include <stddef.h>

#include "cio/process.h"
#include "internal.h"
#include "os.h"

static void clear(cio_child *out)
{
    out->id = 0;
    out->handle = CIO_NO_HANDLE;
    for (int i = 0; i < 3; i++)
        out->stdio[i].handle = CIO_NO_HANDLE;
}

cio_err cio__os_process_spawn(void *ud, const cio_spawn_options *options, cio_child *out)
{
    (void)ud;
    if (out == NULL || options == NULL)
        return CIO_E_INVALID_ARGUMENT;
    clear(out);
    return CIO__IN_SET(process_spawn, CIO_E_OPERATION_UNSUPPORTED);
}

cio_err cio__os_process_spawn_path(void *ud, cio_dir dir, const cio_spawn_options *options, cio_child *out)
{
    (void)dir;
    return cio__os_process_spawn(ud, options, out);
}

cio_err cio__os_child_reap(cio_child *child, cio_term *term)
{
    (void)child, (void)term;
    return CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_child_wait(void *ud, cio_child *child, cio_term *term)
{
    (void)ud;
    if (child == NULL || term == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(process_wait, CIO_E_OPERATION_UNSUPPORTED);
}

void cio__os_child_kill(void *ud, cio_child *child)
{
    (void)ud, (void)child;
}


cio_err cio__os_process_set_current_dir(void *ud, cio_dir dir)
{
    (void)ud, (void)dir;
    return CIO__IN_SET(process_set_current_dir, CIO_E_OPERATION_UNSUPPORTED);
}
