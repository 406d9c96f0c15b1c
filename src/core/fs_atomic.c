/*
 * Atomic files (cio/fs_tree.h; Zig's Dir.createFileAtomic / File.Atomic): library code over the
 * slots, the same on every backend.
 *
 * Invariants:
 * - Nothing exists at the destination before link/replace: the data goes to an unnamed file
 *   (dir_create_tmp_file: Linux O_TMPFILE, asked only when options.replace is off) or to a file named
 *   ".cio-atomic-" + 16 random hex digits, created exclusive in the destination's directory (a name
 *   taken is tried again with new digits, 8 times at most).
 * - link never replaces: the unnamed file is linked with file_hard_link (EEXIST: PathAlreadyExists); a
 *   named one is renamed with dir_rename_preserve and, where that is OperationUnsupported, hard-linked
 *   and its temporary name deleted (link refuses an existing target as well).
 * - replace renames over the destination (one rename: a reader sees the old file or the new one); an
 *   unnamed file is first linked under a random temporary name.
 * - link and replace close the file before a rename (Windows cannot rename over a destination while
 *   the source is open without sharing) and after a link of the unnamed file; discard closes it
 *   otherwise, deletes a temporary name still in place with cancellation blocked, closes the
 *   directory this code opened and frees dest. af->file is CIO_FILE_INVALID once closed.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "internal.h"

#define TMP_PREFIX ".cio-atomic-"
#define TMP_TRIES 8

/* A fresh random temporary name in name[32]. */
static void tmp_name(cio_io io, char name[32])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char r[8];
    cio_random(io, r, sizeof r);
    size_t p = strlen(TMP_PREFIX);
    memcpy(name, TMP_PREFIX, p);
    for (size_t i = 0; i < sizeof r; i++) {
        name[p++] = hex[r[i] >> 4];
        name[p++] = hex[r[i] & 15];
    }
    name[p] = '\0';
}

/* Opens the destination's directory (making it with options->make_path) and sets af->dest. */
static cio_err open_dest(cio_io io, cio_dir dir, const char *path, bool make_path, cio_file_atomic *af)
{
    const char *slash = NULL;
    for (const char *c = path; *c != '\0'; c++)
        if (*c == '/')
            slash = c;
    const char *base = slash == NULL ? path : slash + 1;
    if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return CIO_E_BAD_PATH_NAME;
    size_t base_len = strlen(base);
    af->dest = (char *)malloc(base_len + 1);
    if (af->dest == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    memcpy(af->dest, base, base_len + 1);
    if (slash == NULL) {
        af->dir = dir;
        return CIO_OK;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x": the root */
    char *parent = (char *)malloc(n + 1);
    if (parent == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    memcpy(parent, path, n);
    parent[n] = '\0';
    cio_err err = make_path ? cio_dir_create_dir_path_open(io, dir, parent, NULL, &af->dir)
                            : cio_dir_open_dir(io, dir, parent, NULL, &af->dir);
    free(parent);
    af->close_dir = err == CIO_OK;
    return err;
}

/* Creates the named temporary (exclusive, random name) in af->dir. */
static cio_err create_named(cio_io io, cio_file_atomic *af, uint32_t permissions)
{
    cio_create_file_options o = {.read = true, .truncate = true, .exclusive = true, .permissions = permissions};
    cio_err err = CIO_E_PATH_ALREADY_EXISTS;
    for (int i = 0; i < TMP_TRIES && err == CIO_E_PATH_ALREADY_EXISTS; i++) {
        tmp_name(io, af->tmp_name);
        err = cio_dir_create_file(io, af->dir, af->tmp_name, &o, &af->file);
    }
    if (err != CIO_OK)
        af->tmp_name[0] = '\0';
    return err;
}

cio_err cio_dir_create_file_atomic(cio_io io, cio_dir dir, const char *path,
                                   const cio_create_file_atomic_options *options, cio_file_atomic *out)
{
    CIO__REQUIRE(path, out);
    cio_create_file_atomic_options o = options != NULL ? *options : (cio_create_file_atomic_options){0};
    memset(out, 0, sizeof *out);
    out->file = CIO_FILE_INVALID;
    out->dir = CIO_DIR_INVALID;
    cio_err err = open_dest(io, dir, path, o.make_path, out);
    if (err == CIO_OK && !o.replace) {
        err = CIO__VT(io)->dir_create_tmp_file(io.userdata, out->dir, o.permissions, &out->file);
        out->unnamed = err == CIO_OK;
        if (err == CIO_E_OPERATION_UNSUPPORTED)
            err = create_named(io, out, o.permissions);
    } else if (err == CIO_OK) {
        err = create_named(io, out, o.permissions);
    }
    if (err != CIO_OK)
        cio_file_atomic_discard(io, out);
    return CIO__IN_SET(dir_create_file_atomic, err);
}

/* Closes the file (once): a failed write-back the close reports (InputOutput, NoSpaceLeft,
 * DiskQuota) keeps the file from being put in place; NotOpen cannot happen (the handle is ours). */
static cio_err close_file(cio_io io, cio_file_atomic *af)
{
    cio_err err = CIO_OK;
    if (af->file.handle != CIO_HANDLE_INVALID) {
        err = cio_file_close(io, af->file);
        af->file = CIO_FILE_INVALID;
    }
    return err == CIO_E_NOT_OPEN || err == CIO_E_NETWORK_DOWN ? CIO_E_UNEXPECTED : err;
}

cio_err cio_file_atomic_link(cio_io io, cio_file_atomic *af)
{
    if (af == NULL || af->dest == NULL)
        return CIO__NULL_ARG("af");
    cio_err err;
    if (af->unnamed) {
        err = cio_file_hard_link(io, af->file, af->dir, af->dest);
        if (err == CIO_OK)
            (void)close_file(io, af); /* linked already: the data went out before the link */
    } else {
        err = close_file(io, af);
        if (err == CIO_OK)
            err = cio_dir_rename_preserve(io, af->dir, af->tmp_name, af->dir, af->dest);
        if (err == CIO_E_OPERATION_UNSUPPORTED) {
            /* No atomic rename without replace here: a hard link refuses an existing name too. */
            err = cio_dir_hard_link(io, af->dir, af->tmp_name, af->dir, af->dest, 0);
            if (err == CIO_OK)
                (void)cio_dir_delete_file(io, af->dir, af->tmp_name);
        }
    }
    af->named_in_place = err == CIO_OK;
    return CIO__IN_SET(file_atomic_link, err);
}

cio_err cio_file_atomic_replace(cio_io io, cio_file_atomic *af)
{
    if (af == NULL || af->dest == NULL)
        return CIO__NULL_ARG("af");
    cio_err err = CIO_OK;
    if (af->unnamed) {
        err = CIO_E_PATH_ALREADY_EXISTS;
        for (int i = 0; i < TMP_TRIES && err == CIO_E_PATH_ALREADY_EXISTS; i++) {
            tmp_name(io, af->tmp_name);
            err = cio_file_hard_link(io, af->file, af->dir, af->tmp_name);
        }
        if (err != CIO_OK) {
            af->tmp_name[0] = '\0';
            return CIO__IN_SET(file_atomic_replace, err);
        }
        af->unnamed = false; /* it has a name now, which discard removes if the rename fails */
    }
    err = close_file(io, af);
    if (err == CIO_OK)
        err = cio_dir_rename(io, af->dir, af->tmp_name, af->dir, af->dest);
    af->named_in_place = err == CIO_OK;
    return CIO__IN_SET(file_atomic_replace, err);
}

void cio_file_atomic_discard(cio_io io, cio_file_atomic *af)
{
    if (af == NULL)
        return;
    (void)close_file(io, af); /* discarded: nothing to report */
    if (!af->unnamed && !af->named_in_place && af->tmp_name[0] != '\0' && af->dest != NULL) {
        cio_cancel_protection old = cio_swap_cancel_protection(io, CIO_CANCEL_BLOCKED);
        (void)cio_dir_delete_file(io, af->dir, af->tmp_name);
        (void)cio_swap_cancel_protection(io, old);
    }
    if (af->close_dir)
        (void)cio_dir_close(io, af->dir);
    free(af->dest);
    af->dest = NULL;
    af->close_dir = false;
    af->tmp_name[0] = '\0';
}
