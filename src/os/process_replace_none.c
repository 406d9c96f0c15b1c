/*
 * Replacing the running program where the OS has no exec (Windows: CreateProcess only starts a new
 * process, see process_spawn_windows.c; WASI: no processes at all): OperationUnsupported after the
 * argument check every backend makes. No state, no system calls.
 */
#include <stddef.h>

#include "cio/process.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_process_replace(void *ud, const cio_spawn_options *options)
{
    (void)ud;
    if (options == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(process_replace, CIO_E_OPERATION_UNSUPPORTED);
}

cio_err cio__os_process_replace_path(void *ud, cio_dir dir, const cio_spawn_options *options)
{
    (void)dir;
    return cio__os_process_replace(ud, options);
}
