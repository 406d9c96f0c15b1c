/*
 * Shared by the POSIX files-and-directories sources of the Threaded backend: fs_posix.c (every slot
 * but dir_read) and the OS half (dir_read and the hooks below): fs_dirent.c with fs_linux.c or
 * fs_bsd.c, or fs_wasi.c.
 * Include after <errno.h>, "cio/errmap.h" and "threaded.h".
 */
#ifndef CIO_THREADED_FS_POSIX_H
#define CIO_THREADED_FS_POSIX_H

#include <stdbool.h>
#include <time.h>

#include "cio/fs.h"

/* ---- the OS half (fs_dirent.c / fs_wasi.c) -------------------------------------------------------- */

/* faccessat's flags for "would open work": AT_EACCESS in set-id programs (Linux), 0 where there are
 * no user ids (WASI). */
int cio__t_fs_access_flags(void);
/* Before an O_NOFOLLOW open of path in dir: SymLinkLoop when the host would follow a final symlink
 * despite the flag (WASI under Node), CIO_OK otherwise (the open itself reports the rest). Set:
 * File.OpenError and Dir.OpenError. */
cio_err cio__t_fs_check_no_follow(cio_dir dir, const char *path);
/* Rewrites futimens' two times (UTIME_NOW / UTIME_OMIT / a time) into what the host accepts;
 * false when there is nothing to set, and futimens is skipped. */
bool cio__t_fs_adjust_times(struct timespec times[2]);

#endif /* CIO_THREADED_FS_POSIX_H */
