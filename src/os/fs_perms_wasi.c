/*
 * Permission bits for the Threaded backend on WASI (owners: fs_owner_none.c): preview 1 has no
 * permission bits, so every slot is OperationUnsupported (after the argument checks every
 * backend makes, so a caller's mistake reads the same everywhere).
 */
#include <stdint.h>

#include "fs_posix.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_set_permissions(void *ud, cio_file file, uint32_t permissions)
{
    (void)ud, (void)file;
    return permissions > 07777u ? CIO_E_INVALID_ARGUMENT : CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_dir_set_permissions(void *ud, cio_dir dir, uint32_t permissions)
{
    (void)ud, (void)dir;
    return permissions > 07777u ? CIO_E_INVALID_ARGUMENT : CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_dir_set_file_permissions(void *ud, cio_dir dir, const char *path, uint32_t permissions, unsigned flags)
{
    (void)ud, (void)dir;
    if (permissions > 07777u || (flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_dir_set_file_owner(void *ud, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags)
{
    (void)ud, (void)dir, (void)uid, (void)gid;
    if ((flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}
