/*
 * Trees (cio/fs_tree.h): cio_dir_copy_tree (cp -a) and cio_dir_delete_tree (rm -rf), library code
 * over the slots, the same on every backend.
 *
 * Invariants:
 * - Both walk with open directory handles (one per level, relative names below the root): a rename
 *   of a parent meanwhile cannot send them elsewhere, and a symbolic link is never followed below
 *   the root (entries are stat'ed with CIO_STAT_NO_FOLLOW, directories opened with no_follow).
 * - copy: a directory is made with its mode | 0700 (to fill it) and gets its own mode and times after
 *   its contents (adding entries changes its mtime). A regular file is one task (file_job): open,
 *   stat, an atomic file in the destination, the contents through cio_file_write_file_positional,
 *   permission bits and times on the open temporary, then link (replace when asked): it appears whole
 *   or not at all. Up to `concurrency` tasks of one directory run at once in a cio_group
 *   (cio_group_async: inline where the backend has no concurrency); the directory's batch is awaited
 *   before its handles close, and on any error the group is canceled (each member's atomic file is
 *   discarded). Each member writes its result into its own slot of the batch; the first error wins.
 *   Named pipes, sockets and devices are not copied. Permission bits the OS does not keep (WASI:
 *   OperationUnsupported) are left.
 * - delete: a directory is emptied in passes (deleting while reading may skip entries) until a pass
 *   reads nothing, then removed; a delete refused for permission gives the directory 0700 and the
 *   entry (not a link) 0600 once and tries again; FileNotFound of an entry is someone else's delete.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "internal.h"

#define READ_BUF 4096
#define ENTRIES 32
#define NAME_MAX_BYTES 1024 /* a Windows name of 255 UTF-16 units is at most 765 UTF-8 bytes */
#define DEFAULT_CONCURRENCY 16
#define CONCURRENCY_MAX 256

static const cio_open_dir_options iterate_no_follow = {.iterate = true, .no_follow_symlinks = true};

/* ---- copy ---------------------------------------------------------------------------------------------------- */

typedef struct file_job {
    cio_io io;
    cio_dir src;
    cio_dir dst;
    bool replace;
    cio_err *result;
    char name[NAME_MAX_BYTES];
} file_job;

static cio_set_timestamps times_of(const cio_stat *st)
{
    cio_set_timestamps ts = {.access_action = st->has_atime ? CIO_TIMESTAMP_SET : CIO_TIMESTAMP_UNCHANGED,
                             .access = st->atime,
                             .modify_action = CIO_TIMESTAMP_SET,
                             .modify = st->mtime};
    return ts;
}

static cio_err keep_unsupported(cio_err err)
{
    return err == CIO_E_OPERATION_UNSUPPORTED ? CIO_OK : err;
}

/* One regular file through an atomic file. */
static cio_err copy_file(cio_io io, cio_dir src, cio_dir dst, const char *name, bool replace)
{
    cio_open_file_options ro = {.mode = CIO_OPEN_READ_ONLY, .no_follow_symlinks = true};
    cio_file in;
    cio_err err = cio_dir_open_file(io, src, name, &ro, &in);
    if (err != CIO_OK)
        return err;
    cio_stat st;
    err = cio_file_stat(io, in, &st);
    cio_file_atomic af;
    memset(&af, 0, sizeof af);
    if (err == CIO_OK) {
        cio_create_file_atomic_options o = {.permissions = st.mode & 0777u, .replace = replace};
        err = cio_dir_create_file_atomic(io, dst, name, &o, &af);
    }
    if (err == CIO_OK)
        err = cio_file_write_file_positional(io, af.file, 0, in, 0, UINT64_MAX, NULL);
    if (err == CIO_OK)
        err = keep_unsupported(cio_file_set_permissions(io, af.file, st.mode & 07777u));
    if (err == CIO_OK) {
        cio_set_timestamps ts = times_of(&st);
        err = cio_file_set_timestamps(io, af.file, &ts);
    }
    if (err == CIO_OK)
        err = replace ? cio_file_atomic_replace(io, &af) : cio_file_atomic_link(io, &af);
    cio_file_atomic_discard(io, &af);
    (void)cio_file_close(io, in);
    return err;
}

static cio_err file_task(void *context)
{
    file_job *j = (file_job *)context;
    *j->result = copy_file(j->io, j->src, j->dst, j->name, j->replace);
    return *j->result;
}

/* A symbolic link as a link, with its own times where the OS sets them. */
static cio_err copy_link(cio_io io, cio_dir src, cio_dir dst, const char *name, const cio_stat *st, bool replace)
{
    char target[4096];
    size_t n = 0;
    cio_err err = cio_dir_read_link(io, src, name, target, sizeof target, &n);
    if (err != CIO_OK)
        return err;
    cio_stat to;
    unsigned flags = cio_dir_stat_file(io, src, name, 0, &to) == CIO_OK && to.kind == CIO_FILE_KIND_DIRECTORY
                         ? CIO_SYM_LINK_DIRECTORY
                         : 0;
    err = cio_dir_sym_link(io, dst, target, name, flags);
    if (err == CIO_E_PATH_ALREADY_EXISTS && replace) {
        err = cio_dir_delete_file(io, dst, name);
        if (err == CIO_OK)
            err = cio_dir_sym_link(io, dst, target, name, flags);
    }
    if (err == CIO_OK) {
        cio_set_timestamps ts = times_of(st);
        err = keep_unsupported(cio_dir_set_timestamps(io, dst, name, &ts, CIO_NO_FOLLOW));
    }
    return err;
}

typedef struct copy_walk {
    cio_io io;
    bool replace;
    size_t concurrency;
    cio_err *results; /* concurrency slots */
} copy_walk;

static cio_err copy_dir(copy_walk *w, cio_dir src, cio_dir dst);

/* A subdirectory: made (or found), filled, then given its mode and times. */
static cio_err copy_subdir(copy_walk *w, cio_dir src, cio_dir dst, const char *name, const cio_stat *st)
{
    cio_io io = w->io;
    cio_err err = cio_dir_create_dir(io, dst, name, (st->mode & 0777u) | 0700u);
    if (err == CIO_E_PATH_ALREADY_EXISTS)
        err = CIO_OK; /* a file there is NotDir at the open below */
    cio_dir s = CIO_DIR_INVALID, d = CIO_DIR_INVALID;
    if (err == CIO_OK)
        err = cio_dir_open_dir(io, src, name, &iterate_no_follow, &s);
    if (err == CIO_OK) {
        err = cio_dir_open_dir(io, dst, name, &iterate_no_follow, &d);
        if (err == CIO_OK) {
            err = copy_dir(w, s, d);
            (void)cio_dir_close(io, d);
        }
        (void)cio_dir_close(io, s);
    }
    if (err == CIO_OK)
        err = keep_unsupported(cio_dir_set_file_permissions(io, dst, name, st->mode & 07777u, 0));
    if (err == CIO_OK) {
        cio_set_timestamps ts = times_of(st);
        err = cio_dir_set_timestamps(io, dst, name, &ts, 0);
    }
    return err;
}

/* Waits for the batch's members and takes the first error among them (or the await's). */
static cio_err finish_batch(copy_walk *w, cio_group *g, size_t *count, bool ok)
{
    cio_err err = CIO_OK;
    if (ok)
        err = cio_group_await(w->io, g);
    else
        cio_group_cancel(w->io, g);
    for (size_t i = 0; i < *count; i++)
        if (err == CIO_OK)
            err = w->results[i];
    *count = 0;
    return err;
}

static cio_err copy_dir(copy_walk *w, cio_dir src, cio_dir dst)
{
    cio_io io = w->io;
    unsigned char *buf = (unsigned char *)malloc(READ_BUF);
    cio_err *results = (cio_err *)malloc(w->concurrency * sizeof *results);
    if (buf == NULL || results == NULL) {
        free(buf);
        free(results);
        return CIO_E_SYSTEM_RESOURCES;
    }
    cio_err *outer = w->results;
    w->results = results;
    cio_group g = CIO_GROUP_INIT;
    size_t running = 0;
    cio_dir_reader r;
    cio_dir_reader_init(&r, src, buf, READ_BUF);
    cio_dir_entry e[ENTRIES];
    size_t n = 0;
    cio_err err;
    do {
        err = cio_dir_read(io, &r, e, ENTRIES, &n);
        for (size_t i = 0; err == CIO_OK && i < n; i++) {
            cio_stat st;
            err = cio_dir_stat_file(io, src, e[i].name, CIO_STAT_NO_FOLLOW, &st);
            if (err != CIO_OK)
                break;
            if (st.kind == CIO_FILE_KIND_DIRECTORY) {
                err = copy_subdir(w, src, dst, e[i].name, &st);
                w->results = results; /* copy_subdir's copy_dir set and restored it */
            } else if (st.kind == CIO_FILE_KIND_SYM_LINK) {
                err = copy_link(io, src, dst, e[i].name, &st, w->replace);
            } else if (st.kind == CIO_FILE_KIND_FILE) {
                if (e[i].name_len >= NAME_MAX_BYTES) {
                    err = CIO_E_NAME_TOO_LONG;
                    break;
                }
                if (running == w->concurrency)
                    err = finish_batch(w, &g, &running, true);
                if (err != CIO_OK)
                    break;
                file_job j = {.io = io, .src = src, .dst = dst, .replace = w->replace, .result = &results[running]};
                memcpy(j.name, e[i].name, e[i].name_len + 1);
                results[running++] = CIO_OK;
                if (w->concurrency == 1)
                    (void)file_task(&j);
                else
                    cio_group_async(io, &g, file_task, &j, sizeof j);
            }
        }
    } while (err == CIO_OK && n > 0);
    cio_err last = finish_batch(w, &g, &running, err == CIO_OK);
    if (err == CIO_OK)
        err = last;
    w->results = outer;
    free(results);
    free(buf);
    return err;
}

cio_err cio_dir_copy_tree(cio_io io, cio_dir src_dir, const char *src_path, cio_dir dst_dir, const char *dst_path,
                          const cio_copy_tree_options *options)
{
    CIO__REQUIRE(src_path, dst_path);
    cio_copy_tree_options o = options != NULL ? *options : (cio_copy_tree_options){0};
    copy_walk w = {.io = io, .replace = o.replace, .concurrency = o.concurrency, .results = NULL};
    if (w.concurrency == 0)
        w.concurrency = DEFAULT_CONCURRENCY;
    if (w.concurrency > CONCURRENCY_MAX)
        w.concurrency = CONCURRENCY_MAX;
    static const cio_open_dir_options iterate = {.iterate = true};
    cio_stat st;
    cio_dir s = CIO_DIR_INVALID, d = CIO_DIR_INVALID;
    cio_err err = cio_dir_open_dir(io, src_dir, src_path, &iterate, &s);
    if (err == CIO_OK)
        err = cio_dir_stat(io, s, &st);
    if (err == CIO_OK)
        err = cio_dir_create_dir_path_open(io, dst_dir, dst_path, &iterate, &d);
    if (err == CIO_OK)
        err = copy_dir(&w, s, d);
    if (err == CIO_OK)
        err = keep_unsupported(cio_dir_set_file_permissions(io, dst_dir, dst_path, st.mode & 07777u, 0));
    if (err == CIO_OK) {
        cio_set_timestamps ts = times_of(&st);
        err = cio_dir_set_timestamps(io, dst_dir, dst_path, &ts, 0);
    }
    if (d.handle != CIO_HANDLE_INVALID)
        (void)cio_dir_close(io, d);
    if (s.handle != CIO_HANDLE_INVALID)
        (void)cio_dir_close(io, s);
    return CIO__IN_SET(dir_copy_tree, err);
}

/* ---- delete -------------------------------------------------------------------------------------------------- */

static cio_err delete_dir(cio_io io, cio_dir parent, const char *name);

/* Deletes one entry of `dir` (a directory: recursively). */
static cio_err delete_entry(cio_io io, cio_dir dir, const char *name, cio_file_kind kind)
{
    if (kind == CIO_FILE_KIND_UNKNOWN) {
        cio_stat st;
        cio_err err = cio_dir_stat_file(io, dir, name, CIO_STAT_NO_FOLLOW, &st);
        if (err != CIO_OK)
            return err == CIO_E_FILE_NOT_FOUND ? CIO_OK : err;
        kind = st.kind;
    }
    if (kind == CIO_FILE_KIND_DIRECTORY)
        return delete_dir(io, dir, name);
    cio_err err = cio_dir_delete_file(io, dir, name);
    if (err == CIO_E_ACCESS_DENIED || err == CIO_E_PERMISSION_DENIED) {
        (void)cio_dir_set_permissions(io, dir, 0700u);
        if (kind != CIO_FILE_KIND_SYM_LINK)
            (void)cio_dir_set_file_permissions(io, dir, name, 0600u, CIO_NO_FOLLOW);
        err = cio_dir_delete_file(io, dir, name);
    }
    return err == CIO_E_FILE_NOT_FOUND ? CIO_OK : err;
}

/* Empties the open directory in passes until a pass reads nothing. */
static cio_err empty_dir(cio_io io, cio_dir d)
{
    unsigned char *buf = (unsigned char *)malloc(READ_BUF);
    if (buf == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio_err err = CIO_OK;
    bool again = true;
    while (err == CIO_OK && again) {
        again = false;
        cio_dir_reader r;
        cio_dir_reader_init(&r, d, buf, READ_BUF);
        cio_dir_entry e[ENTRIES];
        size_t n = 0;
        do {
            err = cio_dir_read(io, &r, e, ENTRIES, &n);
            for (size_t i = 0; err == CIO_OK && i < n; i++) {
                again = true;
                err = delete_entry(io, d, e[i].name, e[i].kind);
            }
        } while (err == CIO_OK && n > 0);
    }
    free(buf);
    return err;
}

static cio_err delete_dir(cio_io io, cio_dir parent, const char *name)
{
    cio_dir d;
    cio_err err = cio_dir_open_dir(io, parent, name, &iterate_no_follow, &d);
    if (err == CIO_E_ACCESS_DENIED || err == CIO_E_PERMISSION_DENIED) {
        (void)cio_dir_set_file_permissions(io, parent, name, 0700u, 0);
        err = cio_dir_open_dir(io, parent, name, &iterate_no_follow, &d);
    }
    if (err == CIO_E_FILE_NOT_FOUND)
        return CIO_OK;
    if (err == CIO_E_NOT_DIR || err == CIO_E_SYM_LINK_LOOP) /* became something else meanwhile */
        return delete_entry(io, parent, name, CIO_FILE_KIND_FILE);
    if (err != CIO_OK)
        return err;
    err = empty_dir(io, d);
    (void)cio_dir_close(io, d);
    if (err == CIO_OK)
        err = cio_dir_delete_dir(io, parent, name);
    if (err == CIO_E_ACCESS_DENIED || err == CIO_E_PERMISSION_DENIED) {
        (void)cio_dir_set_file_permissions(io, parent, name, 0700u, 0);
        err = cio_dir_delete_dir(io, parent, name);
    }
    return err == CIO_E_FILE_NOT_FOUND ? CIO_OK : err;
}

cio_err cio_dir_delete_tree(cio_io io, cio_dir dir, const char *path)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_delete_tree, delete_entry(io, dir, path, CIO_FILE_KIND_UNKNOWN));
}
