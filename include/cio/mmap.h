/*
 * Memory maps of open files (Zig's std.Io.File.MemoryMap): cio_file_memory_map_create gives a
 * cio_memory_map whose `memory` holds `len` bytes of the file from `offset`; cio_file_memory_map_read
 * and cio_file_memory_map_write are the synchronization points with the file.
 *
 * Two modes, as Zig has them:
 * - mapped (`mapped` true): a shared mapping of the file (mmap(MAP_SHARED) on POSIX,
 *   CreateFileMappingW + MapViewOfFile on Windows). Stores into `memory` reach the file; `write`
 *   makes them durable (msync(MS_SYNC) / FlushViewOfFile), `read` drops stale cached pages
 *   (msync(MS_INVALIDATE); nothing on Windows, whose views are coherent with the file cache).
 * - fallback (`mapped` false): a heap buffer filled with a positional read at create and by `read`,
 *   written back whole with a positional write by `write`. Used where the OS has no mapping (WASI),
 *   when the options ask for it, and when the range reaches past the end of the file (a mapping
 *   there would fault on access instead of reading zeroes).
 */
#ifndef CIO_MMAP_H
#define CIO_MMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** cio_memory_map_options.protection bit: the memory may be read. */
#define CIO_MEMORY_MAP_READ 1u
/** cio_memory_map_options.protection bit: the memory may be written (and written back). */
#define CIO_MEMORY_MAP_WRITE 2u

/** How to map (cio_file_memory_map_create); zero-initialised fields take Zig's defaults. */
typedef struct cio_memory_map_options {
    size_t len;              /**< bytes to map (> 0); past the file's end they read as zeroes */
    unsigned protection;     /**< CIO_MEMORY_MAP_READ | CIO_MEMORY_MAP_WRITE bits; 0 = both */
    uint64_t offset;         /**< where in the file the map starts: a multiple of the page size
                                  (Windows: of the allocation granularity, 64 KiB) */
    bool undefined_contents; /**< true: the fallback mode does not read the file at create */
    bool no_populate;        /**< true: do not prefault the pages (Linux MAP_POPULATE otherwise) */
    bool fallback;           /**< true: the heap-buffer mode even where the OS can map */
} cio_memory_map_options;

/** A memory map of an open file; fields are read-only for the caller except `memory`'s bytes. */
typedef struct cio_memory_map {
    cio_file file;       /**< the file it maps (still owned by the caller; keep it open) */
    uint64_t offset;     /**< where in the file `memory` starts */
    uint8_t *memory;     /**< the bytes: `len` of them */
    size_t len;          /**< the length of `memory` */
    unsigned protection; /**< CIO_MEMORY_MAP_READ / CIO_MEMORY_MAP_WRITE bits in effect */
    bool mapped;         /**< true: an OS mapping; false: the fallback heap buffer */
    void *section;       /**< Windows: the file-mapping (section) handle; NULL elsewhere */
} cio_memory_map;

/**
 * Maps `options->len` bytes of `file` from `options->offset` (Zig's File.MemoryMap.create).
 * Release with cio_file_memory_map_destroy.
 * @param io      the Io
 * @param file    an open regular file, open for reading (and for writing with CIO_MEMORY_MAP_WRITE)
 * @param options length, protection, offset and mode (NULL is invalid: len is required)
 * @param out     receives the map
 * @return #CIO_OK, or an error of File.MemoryMap.CreateError \errset_file_memory_map_create (AccessDenied: not a
 * regular file, or a handle not open for the protection asked; InvalidArgument: len 0 or an unaligned offset).
 * Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_memory_map_create(cio_io io, cio_file file, const cio_memory_map_options *options,
                                   cio_memory_map *out);

/**
 * Releases the map (unmaps, or frees the fallback buffer). Without a cio_file_memory_map_write
 * before it, stores into `memory` may or may not have reached the file. Never fails.
 * @param io the Io
 * @param mm the map; zeroed afterwards
 * @cancellation no
 */
void cio_file_memory_map_destroy(cio_io io, cio_memory_map *mm);

/**
 * Changes the map's length without syncing its contents (Zig's setLength); `memory` may move.
 * A mapped map grows or shrinks in place only where the OS can remap atomically (Linux mremap) and
 * only within the file's current length; elsewhere OperationUnsupported (destroy and create
 * instead). The fallback buffer resizes anywhere (new bytes zero).
 * @param io      the Io
 * @param mm      the map
 * @param new_len the new length (> 0)
 * @return #CIO_OK, or an error of File.MemoryMap.SetLengthError \errset_file_memory_map_set_length. Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_memory_map_set_length(cio_io io, cio_memory_map *mm, size_t new_len);

/**
 * Synchronizes `memory` from the file (fallback: a positional read, zero past the end; mapped:
 * drops stale cached pages where the OS keeps any).
 * @param io the Io
 * @param mm the map
 * @return #CIO_OK, or an error of File.ReadPositionalError \errset_file_read_positional. Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_memory_map_read(cio_io io, cio_memory_map *mm);

/**
 * Synchronizes `memory` to the file (fallback: a positional write of all `len` bytes, which may
 * extend the file; mapped: msync(MS_SYNC) / FlushViewOfFile, which wait for the pages to be
 * written).
 * @param io the Io
 * @param mm the map (with CIO_MEMORY_MAP_WRITE; a read-only map is InvalidArgument)
 * @return #CIO_OK, or an error of File.WritePositionalError \errset_file_write_positional. Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_memory_map_write(cio_io io, cio_memory_map *mm);

#ifdef __cplusplus
}
#endif

#endif /* CIO_MMAP_H */
