/*
 * Rename without replace where the OS has no atomic form of it: OperationUnsupported after the path
 * checks every backend makes, never a check-then-rename (another process could create the target in
 * between). None of FreeBSD (14.0's ABI), NetBSD and OpenBSD has renameat2 or renamex_np; WASI
 * preview 1's path_rename always replaces.
 */
#include "fs_posix.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_dir_rename_preserve(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir,
                                    const char *new_path)
{
    (void)ud, (void)old_dir, (void)new_dir;
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}
