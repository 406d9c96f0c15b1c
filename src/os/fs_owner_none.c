/*
 * File owners where the OS has no user and group ids to set: Windows (NT files have security
 * descriptors) and WASI (preview 1 has none). Both slots are OperationUnsupported. No state, no
 * system calls.
 */
#include <stdint.h>

#include "internal.h"
#include "os.h"

cio_err cio__os_file_set_owner(void *ud, cio_file file, uint32_t uid, uint32_t gid)
{
    (void)ud, (void)file, (void)uid, (void)gid;
    return CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_dir_set_owner(void *ud, cio_dir dir, uint32_t uid, uint32_t gid)
{
    (void)ud, (void)dir, (void)uid, (void)gid;
    return CIO_E_OPERATION_UNSUPPORTED;
}
