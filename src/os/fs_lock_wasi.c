/*
 * File locks on WASI: preview 1 has none (no flock, no fcntl locks), so every file system is one
 * without locks: FileLocksUnsupported after the argument checks; unlock has nothing to release.
 */
#include <stdbool.h>

#include "fs_posix.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_lock(void *ud, cio_file file, cio_lock lock)
{
    (void)ud, (void)file;
    return (unsigned)lock > (unsigned)CIO_LOCK_EXCLUSIVE ? CIO_E_INVALID_ARGUMENT : CIO_E_FILE_LOCKS_UNSUPPORTED;
}

cio_err cio__os_file_try_lock(void *ud, cio_file file, cio_lock lock, bool *acquired)
{
    (void)ud, (void)file;
    if (acquired == NULL || (unsigned)lock > (unsigned)CIO_LOCK_EXCLUSIVE)
        return CIO_E_INVALID_ARGUMENT;
    *acquired = false;
    return CIO_E_FILE_LOCKS_UNSUPPORTED;
}

void cio__os_file_unlock(void *ud, cio_file file)
{
    (void)ud, (void)file;
}

cio_err cio__os_file_downgrade_lock(void *ud, cio_file file)
{
    (void)ud, (void)file;
    return CIO_E_FILE_LOCKS_UNSUPPORTED;
}
