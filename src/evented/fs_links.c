/*
 * The Evented backend's links-and-metadata, real-path and rename-preserve slots: none has an asynchronous form here, so each runs
 * the Threaded implementation on the helper pool (helper.c), never on a loop thread; the wait for the
 * helper is a cancellation point, as the Threaded call is. (io_uring's SYMLINKAT, LINKAT and RENAMEAT with
 * RENAME_NOREPLACE would save the helper's thread for three of them; not used yet.) file_is_tty and clock_resolution never block and
 * are the Threaded functions themselves (slots.h). The device_io_control operation (an ioctl) runs
 * on the helper pool too.
 * Invariants: as fs.c's helper slots; a caller that is not one of this instance's fibers runs the
 * Threaded function on its own thread (cio__e_helper).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "evented.h"
#include "internal.h"
#include "slots.h"
#include "os.h"

struct a_dir_stat {
    cio_dir dir;
    cio_stat *out;
};
static cio_err h_dir_stat(void *p)
{
    struct a_dir_stat *a = (struct a_dir_stat *)p;
    return cio__os_dir_stat(NULL, a->dir, a->out);
}
cio_err cio__e_dir_stat(void *ud, cio_dir dir, cio_stat *out)
{
    struct a_dir_stat a = {dir, out};
    return cio__e_helper((struct cio_evented *)ud, h_dir_stat, &a, true);
}

struct a_dir_sym_link {
    cio_dir dir;
    const char *target;
    const char *link_path;
    unsigned flags;
};
static cio_err h_dir_sym_link(void *p)
{
    struct a_dir_sym_link *a = (struct a_dir_sym_link *)p;
    return cio__os_dir_sym_link(NULL, a->dir, a->target, a->link_path, a->flags);
}
cio_err cio__e_dir_sym_link(void *ud, cio_dir dir, const char *target, const char *link_path, unsigned flags)
{
    struct a_dir_sym_link a = {dir, target, link_path, flags};
    return cio__e_helper((struct cio_evented *)ud, h_dir_sym_link, &a, true);
}

struct a_dir_read_link {
    cio_dir dir;
    const char *path;
    char *buf;
    size_t len;
    size_t *out_len;
};
static cio_err h_dir_read_link(void *p)
{
    struct a_dir_read_link *a = (struct a_dir_read_link *)p;
    return cio__os_dir_read_link(NULL, a->dir, a->path, a->buf, a->len, a->out_len);
}
cio_err cio__e_dir_read_link(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    struct a_dir_read_link a = {dir, path, buf, len, out_len};
    return cio__e_helper((struct cio_evented *)ud, h_dir_read_link, &a, true);
}

struct a_dir_hard_link {
    cio_dir old_dir;
    const char *old_path;
    cio_dir new_dir;
    const char *new_path;
    unsigned flags;
};
static cio_err h_dir_hard_link(void *p)
{
    struct a_dir_hard_link *a = (struct a_dir_hard_link *)p;
    return cio__os_dir_hard_link(NULL, a->old_dir, a->old_path, a->new_dir, a->new_path, a->flags);
}
cio_err cio__e_dir_hard_link(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path, unsigned flags)
{
    struct a_dir_hard_link a = {old_dir, old_path, new_dir, new_path, flags};
    return cio__e_helper((struct cio_evented *)ud, h_dir_hard_link, &a, true);
}

struct a_dir_set_permissions {
    cio_dir dir;
    uint32_t permissions;
};
static cio_err h_dir_set_permissions(void *p)
{
    struct a_dir_set_permissions *a = (struct a_dir_set_permissions *)p;
    return cio__os_dir_set_permissions(NULL, a->dir, a->permissions);
}
cio_err cio__e_dir_set_permissions(void *ud, cio_dir dir, uint32_t permissions)
{
    struct a_dir_set_permissions a = {dir, permissions};
    return cio__e_helper((struct cio_evented *)ud, h_dir_set_permissions, &a, true);
}

struct a_dir_set_file_permissions {
    cio_dir dir;
    const char *path;
    uint32_t permissions;
    unsigned flags;
};
static cio_err h_dir_set_file_permissions(void *p)
{
    struct a_dir_set_file_permissions *a = (struct a_dir_set_file_permissions *)p;
    return cio__os_dir_set_file_permissions(NULL, a->dir, a->path, a->permissions, a->flags);
}
cio_err cio__e_dir_set_file_permissions(void *ud, cio_dir dir, const char *path, uint32_t permissions, unsigned flags)
{
    struct a_dir_set_file_permissions a = {dir, path, permissions, flags};
    return cio__e_helper((struct cio_evented *)ud, h_dir_set_file_permissions, &a, true);
}

struct a_dir_set_owner {
    cio_dir dir;
    uint32_t uid;
    uint32_t gid;
};
static cio_err h_dir_set_owner(void *p)
{
    struct a_dir_set_owner *a = (struct a_dir_set_owner *)p;
    return cio__os_dir_set_owner(NULL, a->dir, a->uid, a->gid);
}
cio_err cio__e_dir_set_owner(void *ud, cio_dir dir, uint32_t uid, uint32_t gid)
{
    struct a_dir_set_owner a = {dir, uid, gid};
    return cio__e_helper((struct cio_evented *)ud, h_dir_set_owner, &a, true);
}

struct a_dir_set_file_owner {
    cio_dir dir;
    const char *path;
    uint32_t uid;
    uint32_t gid;
    unsigned flags;
};
static cio_err h_dir_set_file_owner(void *p)
{
    struct a_dir_set_file_owner *a = (struct a_dir_set_file_owner *)p;
    return cio__os_dir_set_file_owner(NULL, a->dir, a->path, a->uid, a->gid, a->flags);
}
cio_err cio__e_dir_set_file_owner(void *ud, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags)
{
    struct a_dir_set_file_owner a = {dir, path, uid, gid, flags};
    return cio__e_helper((struct cio_evented *)ud, h_dir_set_file_owner, &a, true);
}

struct a_dir_set_timestamps {
    cio_dir dir;
    const char *path;
    const cio_set_timestamps *ts;
    unsigned flags;
};
static cio_err h_dir_set_timestamps(void *p)
{
    struct a_dir_set_timestamps *a = (struct a_dir_set_timestamps *)p;
    return cio__os_dir_set_timestamps(NULL, a->dir, a->path, a->ts, a->flags);
}
cio_err cio__e_dir_set_timestamps(void *ud, cio_dir dir, const char *path, const cio_set_timestamps *ts, unsigned flags)
{
    struct a_dir_set_timestamps a = {dir, path, ts, flags};
    return cio__e_helper((struct cio_evented *)ud, h_dir_set_timestamps, &a, true);
}

struct a_file_hard_link {
    cio_file file;
    cio_dir new_dir;
    const char *new_path;
};
static cio_err h_file_hard_link(void *p)
{
    struct a_file_hard_link *a = (struct a_file_hard_link *)p;
    return cio__os_file_hard_link(NULL, a->file, a->new_dir, a->new_path);
}
cio_err cio__e_file_hard_link(void *ud, cio_file file, cio_dir new_dir, const char *new_path)
{
    struct a_file_hard_link a = {file, new_dir, new_path};
    return cio__e_helper((struct cio_evented *)ud, h_file_hard_link, &a, true);
}

struct a_file_set_permissions {
    cio_file file;
    uint32_t permissions;
};
static cio_err h_file_set_permissions(void *p)
{
    struct a_file_set_permissions *a = (struct a_file_set_permissions *)p;
    return cio__os_file_set_permissions(NULL, a->file, a->permissions);
}
cio_err cio__e_file_set_permissions(void *ud, cio_file file, uint32_t permissions)
{
    struct a_file_set_permissions a = {file, permissions};
    return cio__e_helper((struct cio_evented *)ud, h_file_set_permissions, &a, true);
}

struct a_file_set_owner {
    cio_file file;
    uint32_t uid;
    uint32_t gid;
};
static cio_err h_file_set_owner(void *p)
{
    struct a_file_set_owner *a = (struct a_file_set_owner *)p;
    return cio__os_file_set_owner(NULL, a->file, a->uid, a->gid);
}
cio_err cio__e_file_set_owner(void *ud, cio_file file, uint32_t uid, uint32_t gid)
{
    struct a_file_set_owner a = {file, uid, gid};
    return cio__e_helper((struct cio_evented *)ud, h_file_set_owner, &a, true);
}

struct a_dir_real_path {
    cio_dir dir;
    char *buf;
    size_t len;
    size_t *out_len;
};
static cio_err h_dir_real_path(void *p)
{
    struct a_dir_real_path *a = (struct a_dir_real_path *)p;
    return cio__os_dir_real_path(NULL, a->dir, a->buf, a->len, a->out_len);
}
cio_err cio__e_dir_real_path(void *ud, cio_dir dir, char *buf, size_t len, size_t *out_len)
{
    struct a_dir_real_path a = {dir, buf, len, out_len};
    return cio__e_helper((struct cio_evented *)ud, h_dir_real_path, &a, true);
}

struct a_dir_real_path_file {
    cio_dir dir;
    const char *path;
    char *buf;
    size_t len;
    size_t *out_len;
};
static cio_err h_dir_real_path_file(void *p)
{
    struct a_dir_real_path_file *a = (struct a_dir_real_path_file *)p;
    return cio__os_dir_real_path_file(NULL, a->dir, a->path, a->buf, a->len, a->out_len);
}
cio_err cio__e_dir_real_path_file(void *ud, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    struct a_dir_real_path_file a = {dir, path, buf, len, out_len};
    return cio__e_helper((struct cio_evented *)ud, h_dir_real_path_file, &a, true);
}

struct a_file_real_path {
    cio_file file;
    char *buf;
    size_t len;
    size_t *out_len;
};
static cio_err h_file_real_path(void *p)
{
    struct a_file_real_path *a = (struct a_file_real_path *)p;
    return cio__os_file_real_path(NULL, a->file, a->buf, a->len, a->out_len);
}
cio_err cio__e_file_real_path(void *ud, cio_file file, char *buf, size_t len, size_t *out_len)
{
    struct a_file_real_path a = {file, buf, len, out_len};
    return cio__e_helper((struct cio_evented *)ud, h_file_real_path, &a, true);
}

struct a_dir_rename_preserve {
    cio_dir old_dir;
    const char *old_path;
    cio_dir new_dir;
    const char *new_path;
};
static cio_err h_dir_rename_preserve(void *p)
{
    struct a_dir_rename_preserve *a = (struct a_dir_rename_preserve *)p;
    return cio__os_dir_rename_preserve(NULL, a->old_dir, a->old_path, a->new_dir, a->new_path);
}
cio_err cio__e_dir_rename_preserve(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    struct a_dir_rename_preserve a = {old_dir, old_path, new_dir, new_path};
    return cio__e_helper((struct cio_evented *)ud, h_dir_rename_preserve, &a, true);
}

/* A lock wait blocks its thread in flock: the helper pool's, never a loop thread; the wait for the
 * helper is the cancellation point, and a cancel knocks the helper out of flock (EINTR: Canceled). */
struct a_file_lock {
    cio_file file;
    cio_lock lock;
};
static cio_err h_file_lock(void *p)
{
    struct a_file_lock *a = (struct a_file_lock *)p;
    return cio__os_file_lock(NULL, a->file, a->lock);
}
cio_err cio__e_file_lock(void *ud, cio_file file, cio_lock lock)
{
    struct a_file_lock a = {file, lock};
    return cio__e_helper((struct cio_evented *)ud, h_file_lock, &a, true);
}

/* The device_io_control operation (cio/batch.h): an ioctl may wait (a terminal's drain), so it runs
 * on the helper pool like the calls above. */
static cio_err h_device_io_control(void *p)
{
    return cio__os_device_io_control(NULL, (struct cio_operation *)p);
}
cio_err cio__e_device_io_control(void *ud, struct cio_operation *op)
{
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    return cio__e_helper((struct cio_evented *)ud, h_device_io_control, op, true);
}
