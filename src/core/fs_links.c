/*
 * The public links-and-metadata, real-path, rename-preserve and lock functions of cio/fs.h (and cio_clock_resolution of
 * cio/io.h): thin wrappers over their vtable slots, with fs.c's invariants: each calls exactly the slot it is named
 * after, a NULL where the API forbids one is CIO__NULL_ARG (an assertion in debug builds), and the slot's result is
 * returned unchanged, set-checked in debug builds (CIO__IN_SET).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "internal.h"

cio_err cio_dir_stat(cio_io io, cio_dir dir, cio_stat *out)
{
    CIO__REQUIRE(out);
    return CIO__IN_SET(file_stat, CIO__VT(io)->dir_stat(io.userdata, dir, out));
}

cio_err cio_dir_sym_link(cio_io io, cio_dir dir, const char *target, const char *link_path, unsigned flags)
{
    CIO__REQUIRE(target, link_path);
    return CIO__IN_SET(dir_sym_link, CIO__VT(io)->dir_sym_link(io.userdata, dir, target, link_path, flags));
}

cio_err cio_dir_read_link(cio_io io, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE(path, buf, out_len);
    return CIO__IN_SET(dir_read_link, CIO__VT(io)->dir_read_link(io.userdata, dir, path, buf, len, out_len));
}

cio_err cio_dir_hard_link(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path,
                          unsigned flags)
{
    CIO__REQUIRE(old_path, new_path);
    return CIO__IN_SET(file_hard_link,
                       CIO__VT(io)->dir_hard_link(io.userdata, old_dir, old_path, new_dir, new_path, flags));
}

cio_err cio_file_hard_link(cio_io io, cio_file file, cio_dir new_dir, const char *new_path)
{
    CIO__REQUIRE(new_path);
    return CIO__IN_SET(file_hard_link, CIO__VT(io)->file_hard_link(io.userdata, file, new_dir, new_path));
}

cio_err cio_dir_set_permissions(cio_io io, cio_dir dir, uint32_t permissions)
{
    return CIO__IN_SET(file_set_permissions, CIO__VT(io)->dir_set_permissions(io.userdata, dir, permissions));
}

cio_err cio_dir_set_file_permissions(cio_io io, cio_dir dir, const char *path, uint32_t permissions, unsigned flags)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_set_file_permissions,
                       CIO__VT(io)->dir_set_file_permissions(io.userdata, dir, path, permissions, flags));
}

cio_err cio_file_set_permissions(cio_io io, cio_file file, uint32_t permissions)
{
    return CIO__IN_SET(file_set_permissions, CIO__VT(io)->file_set_permissions(io.userdata, file, permissions));
}

cio_err cio_dir_set_owner(cio_io io, cio_dir dir, uint32_t uid, uint32_t gid)
{
    return CIO__IN_SET(file_set_owner, CIO__VT(io)->dir_set_owner(io.userdata, dir, uid, gid));
}

cio_err cio_dir_set_file_owner(cio_io io, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags)
{
    CIO__REQUIRE(path);
    return CIO__IN_SET(dir_set_file_owner, CIO__VT(io)->dir_set_file_owner(io.userdata, dir, path, uid, gid, flags));
}

cio_err cio_file_set_owner(cio_io io, cio_file file, uint32_t uid, uint32_t gid)
{
    return CIO__IN_SET(file_set_owner, CIO__VT(io)->file_set_owner(io.userdata, file, uid, gid));
}

cio_err cio_dir_set_timestamps(cio_io io, cio_dir dir, const char *path, const cio_set_timestamps *ts, unsigned flags)
{
    CIO__REQUIRE(path, ts);
    return CIO__IN_SET(dir_set_timestamps, CIO__VT(io)->dir_set_timestamps(io.userdata, dir, path, ts, flags));
}

cio_err cio_file_is_tty(cio_io io, cio_file file, bool *out)
{
    CIO__REQUIRE(out);
    return CIO__IN_SET(cancelable, CIO__VT(io)->file_is_tty(io.userdata, file, out));
}

cio_err cio_clock_resolution(cio_io io, cio_clock clock, int64_t *ns)
{
    CIO__REQUIRE(ns);
    return CIO__IN_SET(clock_resolution, CIO__VT(io)->clock_resolution(io.userdata, clock, ns));
}

cio_err cio_dir_real_path(cio_io io, cio_dir dir, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE(buf, out_len);
    return CIO__IN_SET(file_real_path, CIO__VT(io)->dir_real_path(io.userdata, dir, buf, len, out_len));
}

cio_err cio_dir_real_path_file(cio_io io, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE(path, buf, out_len);
    return CIO__IN_SET(dir_real_path_file, CIO__VT(io)->dir_real_path_file(io.userdata, dir, path, buf, len, out_len));
}

cio_err cio_file_real_path(cio_io io, cio_file file, char *buf, size_t len, size_t *out_len)
{
    CIO__REQUIRE(buf, out_len);
    return CIO__IN_SET(file_real_path, CIO__VT(io)->file_real_path(io.userdata, file, buf, len, out_len));
}

cio_err cio_dir_rename_preserve(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path)
{
    CIO__REQUIRE(old_path, new_path);
    return CIO__IN_SET(dir_rename_preserve,
                       CIO__VT(io)->dir_rename_preserve(io.userdata, old_dir, old_path, new_dir, new_path));
}

cio_err cio_file_lock(cio_io io, cio_file file, cio_lock lock)
{
    return CIO__IN_SET(file_lock, CIO__VT(io)->file_lock(io.userdata, file, lock));
}

cio_err cio_file_try_lock(cio_io io, cio_file file, cio_lock lock, bool *acquired)
{
    CIO__REQUIRE(acquired);
    return CIO__IN_SET(file_lock, CIO__VT(io)->file_try_lock(io.userdata, file, lock, acquired));
}

void cio_file_unlock(cio_io io, cio_file file)
{
    CIO__VT(io)->file_unlock(io.userdata, file);
}

cio_err cio_file_downgrade_lock(cio_io io, cio_file file)
{
    return CIO__IN_SET(file_lock, CIO__VT(io)->file_downgrade_lock(io.userdata, file));
}
