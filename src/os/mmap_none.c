/*
 * Memory maps where the OS has no file mapping (WASI preview 1: no mmap of files in the WASI
 * libc): create is OperationUnsupported, which the wrapper (src/core/mmap.c) answers with Zig's
 * fallback mode (a heap buffer read and written with pread/pwrite), as Zig's Threaded does on WASI.
 * The other slots are never reached for such a map (the wrapper handles fallback maps itself);
 * called anyway, they change nothing.
 */
#include "cio/mmap.h"
#include "os.h"

cio_err cio__os_file_memory_map_create(void *ud, cio_file file, const cio_memory_map_options *options,
                                       cio_memory_map *out)
{
    (void)ud, (void)file, (void)options, (void)out;
    return CIO_E_OPERATION_UNSUPPORTED;
}

void cio__os_file_memory_map_destroy(void *ud, cio_memory_map *mm)
{
    (void)ud, (void)mm;
}

cio_err cio__os_file_memory_map_set_length(void *ud, cio_memory_map *mm, size_t new_len)
{
    (void)ud, (void)mm, (void)new_len;
    return CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_file_memory_map_read(void *ud, cio_memory_map *mm)
{
    (void)ud, (void)mm;
    return CIO_OK;
}

cio_err cio__os_file_memory_map_write(void *ud, cio_memory_map *mm)
{
    (void)ud, (void)mm;
    return CIO_OK;
}
