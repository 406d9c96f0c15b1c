/*
 * Real paths and rename-without-replace where the OS offers neither (the BSDs and WASI, for now):
 * OperationUnsupported after the argument checks every backend makes. The BSDs' atomic no-replace
 * rename (none of FreeBSD, NetBSD, OpenBSD has renameat2 or renamex_np) and their handle paths
 * (NetBSD's F_GETPATH, FreeBSD's F_KINFO) are not used; OpenBSD and WASI have no way to ask.
 */
#include <stddef.h>

#include "fs_posix.h"
#include "internal.h"
#include "os.h"

/* The out-buffer checks, then OperationUnsupported. */
static cio_err check_out(char *buf, size_t len, size_t *out_len)
{
    cio_err err = cio__os_path_out_init(buf, len, out_len);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_file_real_path(void *ud, cio_file file, char *buf, size_t len, size_t *out_len)
{
    (void)ud, (void)file;
    return check_out(buf, len, out_len);
}

cio_err cio__os_dir_real_path(void *ud, cio_dir dir, char *buf, size_t len, size_t *out_len)
{
    (void)ud, (void)dir;
    return check_out(buf, len, out_len);
}

cio_err cio__os_dir_real_path_file(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    (void)ud, (void)dir;
    cio_err err = check_out(buf, len, out_len);
    if (err == CIO_E_INVALID_ARGUMENT)
        return err;
    cio_err p = cio__os_fs_check_path(path);
    return p != CIO_OK ? p : err;
}

cio_err cio__os_dir_rename_preserve(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir,
                                    const char *new_path)
{
    (void)ud, (void)old_dir, (void)new_dir;
    cio_err err = cio__os_fs_check_paths(old_path, new_path);
    return err != CIO_OK ? err : CIO_E_OPERATION_UNSUPPORTED;
}
