/*
 * Memory maps of files on Windows (cio/mmap.h): a file-mapping object (section) over the whole file
 * with CreateFileMappingW (PAGE_READONLY or PAGE_READWRITE) and one view of it with MapViewOfFile;
 * a map's write is FlushViewOfFile and then the file's own flush (cio__os_file_sync: the view's
 * pages reach the disk, as msync(MS_SYNC) does); its read has nothing to do, views being coherent
 * with the file cache; destroy unmaps the view and closes the section.
 *
 * Invariants:
 * - The wrapper (src/core/mmap.c) calls these for OS mappings only, with 0 < len and the range
 *   inside the file, so the section never has to grow the file (which a read-only one cannot).
 * - The offset must be a multiple of the allocation granularity (GetSystemInfo, 64 KiB): anything
 *   else is InvalidArgument here.
 * - No call here can be interrupted: create and write check for a pending cancel before they start.
 * - A device or file system that cannot map (ERROR_NOT_SUPPORTED, ERROR_INVALID_FUNCTION) is
 *   OperationUnsupported: the wrapper falls back to its buffer.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
#include <stdint.h>

#include "cio/mmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

/* The error of a failed CreateFileMappingW / MapViewOfFile (GetLastError). */
static cio_err create_error(DWORD code)
{
    switch (code) {
    case ERROR_ACCESS_DENIED: return CIO_E_ACCESS_DENIED;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT: return CIO_E_OUT_OF_MEMORY;
    case ERROR_NO_SYSTEM_RESOURCES: return CIO_E_SYSTEM_RESOURCES;
    case ERROR_TOO_MANY_OPEN_FILES: return CIO_E_PROCESS_FD_QUOTA_EXCEEDED;
    case ERROR_LOCK_VIOLATION: return CIO_E_LOCK_VIOLATION;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION: return CIO_E_OPERATION_UNSUPPORTED;
    case ERROR_INVALID_HANDLE: return CIO__BUG("CreateFileMappingW/MapViewOfFile: not an open file");
    default: return cio__unexpected_os(CIO_OS_ERROR_WIN32, (int64_t)code, "file_memory_map_create");
    }
}

cio_err cio__os_file_memory_map_create(void *ud, cio_file file, const cio_memory_map_options *options,
                                       cio_memory_map *out)
{
    (void)ud;
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    if (options->offset % (uint64_t)si.dwAllocationGranularity != 0)
        return CIO_E_INVALID_ARGUMENT;
    bool writable = (out->protection & CIO_MEMORY_MAP_WRITE) != 0;
    cio_err err = cio__t_syscall_begin();
    if (err != CIO_OK)
        return CIO__IN_SET(file_memory_map_create, err);
    cio__t_syscall_end();
    HANDLE section = CIO__SYS(CreateFileMappingW, memory_map)(file.handle, NULL,
                                                              writable ? PAGE_READWRITE : PAGE_READONLY, 0, 0, NULL);
    if (section == NULL) {
        err = create_error(GetLastError());
        return err == CIO_E_OPERATION_UNSUPPORTED ? err : CIO__IN_SET(file_memory_map_create, err);
    }
    void *view = CIO__SYS(MapViewOfFile, memory_map)(section, writable ? FILE_MAP_WRITE : FILE_MAP_READ,
                                                     (DWORD)(options->offset >> 32), (DWORD)options->offset,
                                                     (SIZE_T)options->len);
    if (view == NULL) {
        err = create_error(GetLastError());
        (void)CIO__SYS(CloseHandle, memory_map_undo)(section);
        return err == CIO_E_OPERATION_UNSUPPORTED ? err : CIO__IN_SET(file_memory_map_create, err);
    }
    return cio__os_map_made(out, view, options->len, section);
}

void cio__os_file_memory_map_destroy(void *ud, cio_memory_map *mm)
{
    (void)ud;
    if (!CIO__SYS(UnmapViewOfFile, memory_map)(mm->memory))
        (void)CIO__BUG("UnmapViewOfFile: not a view of this map");
    if (!CIO__SYS(CloseHandle, memory_map)((HANDLE)mm->section))
        (void)CIO__BUG("CloseHandle: not the map's section");
}

/* Changing a view's length means a new view (and a bigger section): not atomic, as Zig's
 * setLength needs (NtExtendSection grows a section but never the view mapped from it). */
cio_err cio__os_file_memory_map_set_length(void *ud, cio_memory_map *mm, size_t new_len)
{
    (void)ud, (void)mm, (void)new_len;
    return CIO_E_OPERATION_UNSUPPORTED;
}

cio_err cio__os_file_memory_map_read(void *ud, cio_memory_map *mm)
{
    (void)ud, (void)mm;
    cio_err err = cio__t_syscall_begin(); /* only a pending cancel: nothing to wait for */
    if (err == CIO_OK)
        cio__t_syscall_end();
    return CIO__IN_SET(file_read_positional, err);
}

cio_err cio__os_file_memory_map_write(void *ud, cio_memory_map *mm)
{
    cio_err err = cio__t_syscall_begin();
    if (err != CIO_OK)
        return CIO__IN_SET(file_write_positional, err);
    cio__t_syscall_end();
    if (!CIO__SYS(FlushViewOfFile, memory_map_write)(mm->memory, mm->len)) {
        switch (GetLastError()) {
        case ERROR_LOCK_VIOLATION: err = CIO_E_LOCK_VIOLATION; break;
        case ERROR_NOT_ENOUGH_MEMORY:
        case ERROR_NO_SYSTEM_RESOURCES: err = CIO_E_SYSTEM_RESOURCES; break;
        case ERROR_DISK_FULL: err = CIO_E_NO_SPACE_LEFT; break;
        default: err = CIO_E_UNEXPECTED; break;
        }
        return CIO__IN_SET(file_write_positional, err);
    }
    err = cio__os_file_sync(ud, mm->file);
    if (err != CIO_OK && !cio_errset_file_write_positional_contains(err))
        err = CIO_E_UNEXPECTED;
    return CIO__IN_SET(file_write_positional, err);
}
