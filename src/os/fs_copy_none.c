/*
 * The whole-file fast paths where the OS has none the library uses yet (Windows, WASI, the BSDs):
 * no unnamed temporary (OperationUnsupported: the atomic file names a random temporary instead,
 * src/core/fs_atomic.c) and no in-kernel copy between files (Unimplemented with nothing copied: the
 * library copies with positional reads and writes, src/core/fs_copy.c).
 */
#include <stdbool.h>
#include <stdint.h>

#include "cio/fs.h"
#include "os.h"

cio_err cio__os_dir_create_tmp_file(void *ud, cio_dir dir, uint32_t permissions, cio_file *out)
{
    (void)ud, (void)dir, (void)permissions;
    return out == NULL ? CIO_E_INVALID_ARGUMENT : CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_file_write_file(void *ud, cio_file out, bool positional, uint64_t out_offset, cio_file in,
                                uint64_t in_offset, uint64_t len, uint64_t *nwritten)
{
    (void)ud, (void)out, (void)positional, (void)out_offset, (void)in, (void)in_offset, (void)len;
    if (nwritten == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    return CIO_E_UNIMPLEMENTED;
}
