/*
 * file_hard_link where an open file cannot be given a name (the BSDs, WASI; Zig's fileHardLink is
 * Linux-only): OperationUnsupported after the checks every backend makes.
 */
#include "fs_posix.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_hard_link(void *ud, cio_file file, cio_dir new_dir, const char *new_path)
{
    (void)ud, (void)file, (void)new_dir;
    cio_err err = cio__os_fs_check_path(new_path);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}
