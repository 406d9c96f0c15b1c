/*
 * Real paths where the OS cannot tell a handle's path (OpenBSD, WASI): OperationUnsupported after
 * the argument checks every backend makes. FreeBSD and NetBSD ask the kernel (fs_paths_bsd.c);
 * rename without replace on these systems is fs_noreplace_none.c.
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
