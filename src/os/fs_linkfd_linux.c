/*
 * file_hard_link on Linux: a new name for an open file. linkat(fd, "", AT_EMPTY_PATH) first; it needs
 * CAP_DAC_READ_SEARCH and says ENOENT without it, so on ENOENT the file's /proc/self/fd name is linked
 * with AT_SYMLINK_FOLLOW instead (what open(2) documents for O_TMPFILE files). Both calls run in the
 * cancellation bracket through the linkat map.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

cio_err cio__os_file_hard_link(void *ud, cio_file file, cio_dir new_dir, const char *new_path)
{
    (void)ud;
    cio_err err = cio__os_fs_check_path(new_path);
    if (err != CIO_OK)
        return CIO__IN_SET(file_hard_link, err);
    CIO__OS_CALL(err, linkat, CIO__SYS(linkat, link_fd)(file.handle, "", new_dir.handle, new_path, AT_EMPTY_PATH));
    if (err == CIO_E_FILE_NOT_FOUND) {
        char proc[40];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", file.handle);
        CIO__OS_CALL(err, linkat,
                     CIO__SYS(linkat, link_proc)(AT_FDCWD, proc, new_dir.handle, new_path, AT_SYMLINK_FOLLOW));
    }
    return CIO__IN_SET(file_hard_link, err);
}
