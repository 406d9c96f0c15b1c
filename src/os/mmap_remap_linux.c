/*
 * A memory map's new length on Linux: mremap(MREMAP_MAYMOVE), which moves or resizes the mapping
 * atomically (the old range stays mapped if it fails). The wrapper checked that the new range lies
 * inside the file and that the page count changes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <sys/mman.h>

#include "cio/errmap.h"
#include "cio/mmap.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_memory_map_set_length(void *ud, cio_memory_map *mm, size_t new_len)
{
    (void)ud;
    void *p = CIO__SYS(mremap, memory_map)(mm->memory, mm->len, new_len, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
        cio__mapped m = cio__errno_mremap(errno);
        return CIO__IN_SET(file_memory_map_set_length, m.action == CIO__MAP_BUG ? CIO__BUG("mremap") : m.err);
    }
    mm->memory = (uint8_t *)p;
    mm->len = new_len;
    return CIO_OK;
}
