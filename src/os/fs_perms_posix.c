/*
 * Permission bits and owners for the Threaded backend on Linux and the BSDs: fchmod/fchown of an
 * open file or directory, fchmodat/fchownat by path. (WASI has neither: fs_perms_wasi.c.)
 *
 * Invariants (as fs_posix.c's): every call runs inside the cancellation bracket with its errno
 * through the operation's map; permissions above 07777 and flags other than CIO_NO_FOLLOW are
 * InvalidArgument before any call; CIO_OWNER_UNCHANGED is passed as (uid_t)-1 / (gid_t)-1, which
 * the kernel reads as "keep".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

static cio_err set_mode(int fd, uint32_t permissions)
{
    if (permissions > 07777u)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    CIO__OS_CALL(err, fchmod, CIO__SYS(fchmod, set_permissions)(fd, (mode_t)permissions));
    return CIO__IN_SET(file_set_permissions, err);
}

static cio_err set_owner(int fd, uint32_t uid, uint32_t gid)
{
    cio_err err;
    CIO__OS_CALL(err, fchown, CIO__SYS(fchown, set_owner)(fd, (uid_t)uid, (gid_t)gid));
    return CIO__IN_SET(file_set_owner, err);
}

cio_err cio__os_file_set_permissions(void *ud, cio_file file, uint32_t permissions)
{
    (void)ud;
    return set_mode(file.handle, permissions);
}

cio_err cio__os_dir_set_permissions(void *ud, cio_dir dir, uint32_t permissions)
{
    (void)ud;
    return set_mode(dir.handle, permissions);
}

cio_err cio__os_file_set_owner(void *ud, cio_file file, uint32_t uid, uint32_t gid)
{
    (void)ud;
    return set_owner(file.handle, uid, gid);
}

cio_err cio__os_dir_set_owner(void *ud, cio_dir dir, uint32_t uid, uint32_t gid)
{
    (void)ud;
    return set_owner(dir.handle, uid, gid);
}

cio_err cio__os_dir_set_file_permissions(void *ud, cio_dir dir, const char *path, uint32_t permissions, unsigned flags)
{
    (void)ud;
    if (permissions > 07777u || (flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        int at = (flags & CIO_NO_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
        CIO__OS_CALL(err, fchmodat,
                     CIO__SYS(fchmodat, set_file_permissions)(dir.handle, path, (mode_t)permissions, at));
    }
    return CIO__IN_SET(dir_set_file_permissions, err);
}

cio_err cio__os_dir_set_file_owner(void *ud, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags)
{
    (void)ud;
    if ((flags & ~CIO_NO_FOLLOW) != 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__os_fs_check_path(path);
    if (err == CIO_OK) {
        int at = (flags & CIO_NO_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
        CIO__OS_CALL(err, fchownat, CIO__SYS(fchownat, set_file_owner)(dir.handle, path, (uid_t)uid, (gid_t)gid, at));
    }
    return CIO__IN_SET(dir_set_file_owner, err);
}
