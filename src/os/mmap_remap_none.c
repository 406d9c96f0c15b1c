/*
 * A memory map's new length where the OS cannot remap a file mapping atomically (the BSDs: no
 * mremap with MREMAP_MAYMOVE; NetBSD's mremap cannot grow a shared file mapping in place reliably):
 * OperationUnsupported, as Zig's setLength says (the caller destroys and creates).
 */
#include "cio/mmap.h"
#include "os.h"

cio_err cio__os_file_memory_map_set_length(void *ud, cio_memory_map *mm, size_t new_len)
{
    (void)ud, (void)mm, (void)new_len;
    return CIO_E_OPERATION_UNSUPPORTED;
}
