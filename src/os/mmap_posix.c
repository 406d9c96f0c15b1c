/*
 * Memory maps of files on Linux and the BSDs (cio/mmap.h): mmap(MAP_SHARED) with the protection
 * asked, msync(MS_SYNC) for a map's write, msync(MS_INVALIDATE) for its read, munmap. The wrapper
 * (src/core/mmap.c) keeps the fallback buffer; these run only for OS mappings, after it checked
 * 0 < len and that the range lies inside the file (a page wholly past the end would fault).
 *
 * Invariants:
 * - The offset must be a multiple of the page size (sysconf; 4096 if it cannot say): anything else
 *   is InvalidArgument here, never mmap's EINVAL (a bug in the map).
 * - ENODEV (a file system that cannot map) is OperationUnsupported: the wrapper then falls back.
 * - mmap (which reads the pages in with MAP_POPULATE) and msync are bracketed for cancellation:
 *   a request pending before the call is Canceled; neither call is interrupted by the signal.
 * - munmap of the map's own range cannot fail; a failure is a bug, noted in debug builds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/mmap.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_memory_map_create(void *ud, cio_file file, const cio_memory_map_options *options,
                                       cio_memory_map *out)
{
    (void)ud;
    long page = CIO__SYS(sysconf, mmap_page)(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    if (options->offset % (uint64_t)page != 0)
        return CIO_E_INVALID_ARGUMENT;
    if (options->offset > (uint64_t)INT64_MAX)
        return CIO__IN_SET(file_memory_map_create, CIO_E_UNSEEKABLE);
    int prot = 0;
    if (out->protection & CIO_MEMORY_MAP_READ)
        prot |= PROT_READ;
    if (out->protection & CIO_MEMORY_MAP_WRITE)
        prot |= PROT_WRITE;
    int flags = MAP_SHARED;
#ifdef MAP_POPULATE
    if (!options->no_populate)
        flags |= MAP_POPULATE;
#endif
    cio_err err = cio__t_syscall_begin();
    if (err != CIO_OK)
        return CIO__IN_SET(file_memory_map_create, err);
    void *p = CIO__SYS(mmap, memory_map)(NULL, options->len, prot, flags, file.handle, (off_t)options->offset);
    int e = errno;
    cio__t_syscall_end();
    if (p == MAP_FAILED) {
        if (e == ENODEV)
            return CIO_E_OPERATION_UNSUPPORTED;
        cio__mapped m = cio__errno_mmap_file(e);
        return CIO__IN_SET(file_memory_map_create, m.action == CIO__MAP_BUG ? CIO__BUG("mmap") : m.err);
    }
    return cio__os_map_made(out, p, options->len, NULL);
}

void cio__os_file_memory_map_destroy(void *ud, cio_memory_map *mm)
{
    (void)ud;
    if (CIO__SYS(munmap, memory_map)(mm->memory, mm->len) != 0)
        (void)CIO__BUG("munmap: not a mapping of this map");
}

cio_err cio__os_file_memory_map_read(void *ud, cio_memory_map *mm)
{
    (void)ud;
    cio_err err;
    CIO__OS_CALL(err, msync_read, CIO__SYS(msync, memory_map_read)(mm->memory, mm->len, MS_INVALIDATE));
    return CIO__IN_SET(file_read_positional, err);
}

cio_err cio__os_file_memory_map_write(void *ud, cio_memory_map *mm)
{
    (void)ud;
    cio_err err;
    CIO__OS_CALL(err, msync_write, CIO__SYS(msync, memory_map_write)(mm->memory, mm->len, MS_SYNC));
    return CIO__IN_SET(file_write_positional, err);
}
