/*
 * Memory maps (cio/mmap.h, Zig's File.MemoryMap): the public functions, and Zig's fallback mode
 * as library code over the positional read/write slots.
 *
 * Invariants:
 * - A map is `mapped` (an OS mapping: every operation goes to its file_memory_map_* slot) or not (a
 *   heap buffer from malloc: create/read fill it with file_read_positional, zero past the end of
 *   the file; write writes all of it with file_write_positional; set_length copies it into a new
 *   buffer; destroy frees it). Slots are never called for a fallback map.
 * - create asks for an OS mapping only when the options allow it, the handle is a regular file and
 *   [offset, offset + len) lies inside it (a page wholly past the end would fault on access where
 *   Zig promises zeroes); a slot's OperationUnsupported (WASI, a file system without mappings)
 *   falls back too. Any other slot error is the caller's.
 * - A mapped map's set_length stays inside the file (else OperationUnsupported: destroy and
 *   create); the slot remaps or says OperationUnsupported.
 * - On any error *out (create) is zeroed and *mm (set_length) unchanged.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/mmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define PROT_ALL (CIO_MEMORY_MAP_READ | CIO_MEMORY_MAP_WRITE)

/* Copies all of mm->memory from the file at mm->offset (zero from the end of the file on) or, with
 * `write`, back to it (a positional write that makes no progress: NoSpaceLeft). */
static cio_err copy_file(cio_io io, cio_memory_map *mm, bool write)
{
    size_t done = 0;
    while (done < mm->len) {
        cio_iovec in = {mm->memory + done, mm->len - done};
        cio_const_iovec out = {in.base, in.len};
        size_t n = 0;
        cio_err err = write ? CIO__VT(io)->file_write_positional(io.userdata, mm->file, &out, 1, mm->offset + done, &n)
                            : CIO__VT(io)->file_read_positional(io.userdata, mm->file, &in, 1, mm->offset + done, &n);
        if (err != CIO_OK)
            return err;
        if (n == 0 && write)
            return CIO_E_NO_SPACE_LEFT;
        if (n == 0)
            break;
        done += n;
    }
    if (done < mm->len)
        memset(mm->memory + done, 0, mm->len - done);
    return CIO_OK;
}

/* Whether [offset, offset + len) lies inside the file, which must be a regular file. */
static cio_err inside_file(cio_io io, cio_file file, uint64_t offset, size_t len, bool *inside)
{
    cio_stat st;
    cio_err err = CIO__VT(io)->file_stat(io.userdata, file, &st);
    if (err != CIO_OK)
        return err;
    if (st.kind != CIO_FILE_KIND_FILE)
        return CIO_E_ACCESS_DENIED;
    *inside = offset <= st.size && st.size - offset >= (uint64_t)len;
    return CIO_OK;
}

cio_err cio_file_memory_map_create(cio_io io, cio_file file, const cio_memory_map_options *options, cio_memory_map *out)
{
    CIO__REQUIRE(options, out);
    memset(out, 0, sizeof *out);
    if (options->len == 0 || (options->protection & ~(unsigned)PROT_ALL) != 0)
        return CIO_E_INVALID_ARGUMENT;
    out->file = file;
    out->offset = options->offset;
    out->protection = options->protection != 0 ? options->protection : PROT_ALL;
    cio_err err = CIO_OK;
    if (!options->fallback) {
        bool inside = false;
        err = inside_file(io, file, options->offset, options->len, &inside);
        if (err == CIO_OK && inside)
            err = CIO__VT(io)->file_memory_map_create(io.userdata, file, options, out);
        else if (err == CIO_OK)
            err = CIO_E_OPERATION_UNSUPPORTED;
        if (err == CIO_OK)
            return CIO_OK;
        if (err != CIO_E_OPERATION_UNSUPPORTED) {
            memset(out, 0, sizeof *out);
            return CIO__IN_SET(file_memory_map_create, err);
        }
    }
    out->memory = (uint8_t *)CIO__SYS(malloc, memory_map_fallback)(options->len);
    if (out->memory == NULL) {
        memset(out, 0, sizeof *out);
        return CIO_E_OUT_OF_MEMORY;
    }
    out->len = options->len;
    out->mapped = false;
    err = options->undefined_contents ? CIO_OK : copy_file(io, out, false);
    if (err != CIO_OK) {
        free(out->memory);
        memset(out, 0, sizeof *out);
    }
    return CIO__IN_SET(file_memory_map_create, err);
}

void cio_file_memory_map_destroy(cio_io io, cio_memory_map *mm)
{
    if (mm == NULL || mm->memory == NULL)
        return;
    if (mm->mapped)
        CIO__VT(io)->file_memory_map_destroy(io.userdata, mm);
    else
        free(mm->memory);
    memset(mm, 0, sizeof *mm);
}

cio_err cio_file_memory_map_set_length(cio_io io, cio_memory_map *mm, size_t new_len)
{
    CIO__REQUIRE(mm);
    if (new_len == 0 || mm->memory == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (mm->mapped) {
        bool inside = false;
        cio_err err = inside_file(io, mm->file, mm->offset, new_len, &inside);
        if (err == CIO_OK)
            err = inside ? CIO__VT(io)->file_memory_map_set_length(io.userdata, mm, new_len)
                         : CIO_E_OPERATION_UNSUPPORTED;
        return CIO__IN_SET(file_memory_map_set_length, err);
    }
    uint8_t *p = (uint8_t *)CIO__SYS(malloc, memory_map_length)(new_len);
    if (p == NULL)
        return CIO_E_OUT_OF_MEMORY;
    size_t keep = new_len < mm->len ? new_len : mm->len;
    memcpy(p, mm->memory, keep);
    memset(p + keep, 0, new_len - keep);
    free(mm->memory);
    mm->memory = p;
    mm->len = new_len;
    return CIO_OK;
}

cio_err cio_file_memory_map_read(cio_io io, cio_memory_map *mm)
{
    CIO__REQUIRE(mm);
    if (mm->memory == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_read_positional,
                       mm->mapped ? CIO__VT(io)->file_memory_map_read(io.userdata, mm) : copy_file(io, mm, false));
}

cio_err cio_file_memory_map_write(cio_io io, cio_memory_map *mm)
{
    CIO__REQUIRE(mm);
    if (mm->memory == NULL || (mm->protection & CIO_MEMORY_MAP_WRITE) == 0)
        return CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_write_positional,
                       mm->mapped ? CIO__VT(io)->file_memory_map_write(io.userdata, mm) : copy_file(io, mm, true));
}
