/*
 * Shared by the POSIX files-and-directories sources of the Threaded backend: fs_posix.c (every slot
 * but dir_read) and the OS half (dir_read and the hooks below): fs_dirent.c with fs_linux.c or
 * fs_bsd.c, or fs_wasi.c.
 * Include after <errno.h>, "cio/errmap.h" and "os.h".
 */
#ifndef CIO_THREADED_FS_POSIX_H
#define CIO_THREADED_FS_POSIX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cio/fs.h"

/* ---- the OS half (fs_dirent.c / fs_wasi.c) -------------------------------------------------------- */

/* faccessat's flags for "would open work": AT_EACCESS in set-id programs (Linux), 0 where there are
 * no user ids (WASI). */
int cio__os_fs_access_flags(void);
/* Before an O_NOFOLLOW open of path in dir: SymLinkLoop when the host would follow a final symlink
 * despite the flag (WASI under Node), CIO_OK otherwise (the open itself reports the rest). Set:
 * File.OpenError and Dir.OpenError. */
cio_err cio__os_fs_check_no_follow(cio_dir dir, const char *path);
/* Rewrites futimens' two times (UTIME_NOW / UTIME_OMIT / a time) into what the host accepts;
 * false when there is nothing to set, and futimens is skipped. */
bool cio__os_fs_adjust_times(struct timespec times[2]);

/* ---- shared by fs_posix.c and the Evented backend's ring operations (evented/fs_uring.c) ------- */

/* NULL: InvalidArgument; PATH_MAX bytes or more: NameTooLong; "": FileNotFound. */
cio_err cio__os_fs_check_path(const char *path);
/* Both paths of a two-path slot (rename, link), old first: cio__os_fs_check_path's errors. */
static inline cio_err cio__os_fs_check_paths(const char *old_path, const char *new_path)
{
    cio_err err = cio__os_fs_check_path(old_path);
    return err != CIO_OK ? err : cio__os_fs_check_path(new_path);
}
/* open(2) flags of dir_open_file (options NULL: the defaults), O_NOFOLLOW included when asked (the
 * caller runs cio__os_fs_check_no_follow first); InvalidArgument for a bad mode. *forbid_directory:
 * whether a directory must be refused after the open. */
cio_err cio__os_fs_open_file_flags(const cio_open_file_options *options, int *flags, bool *forbid_directory);
/* open(2) flags and permission bits of dir_create_file (options NULL: the defaults). */
void cio__os_fs_create_file_flags(const cio_create_file_options *options, int *flags, unsigned *mode);
/* open(2) flags of dir_open_dir (options may be NULL). */
int cio__os_fs_open_dir_flags(const cio_open_dir_options *options);
/* mkdir's mode for dir_create_dir's permissions (0: 0777). */
unsigned cio__os_fs_dir_mode(uint32_t permissions);
/* The file kind of a st_mode / stx_mode value. */
cio_file_kind cio__os_fs_kind_from_mode(unsigned mode);
/* cio_stat of a struct stat (callers include <sys/stat.h>). */
struct stat;
void cio__os_fs_stat_from_os(const struct stat *st, cio_stat *out);
/* One of futimens/utimensat's two times for an action; false for an impossible action or a time
 * this build's time_t cannot hold. */
bool cio__os_fs_timespec_for(cio_timestamp_action action, cio_timestamp t, struct timespec *out);

/* ---- real paths: fs_real_path_posix.c over fs_paths_linux.c / fs_paths_bsd.c -------------------------- */

/* The path the kernel gives descriptor fd (AT_FDCWD: the current directory) into buf, never
 * truncated: NameTooLong when it does not fit with its NUL (buf then holds ""). Set:
 * File.RealPathError. */
cio_err cio__os_fs_real_path_of(int fd, char *buf, size_t len, size_t *out_len);
/* The open(2) flags dir_real_path_file opens the path with (Linux, FreeBSD: O_PATH). */
extern const int cio__os_fs_path_open_flags;

/* The BSDs' handle paths: fs_paths_bsd.c over fs_fdpath_freebsd.c / fs_fdpath_netbsd.c. */

#define CIO__OS_FD_PATH_MAX 1024 /* PATH_MAX (MAXPATHLEN) on FreeBSD and NetBSD */
/* The kernel's path of descriptor fd into path, NUL-terminated ("" when the kernel has no name for
 * it), in the cancellation bracket. Set: File.RealPathError. */
cio_err cio__os_fs_fd_path(int fd, char path[CIO__OS_FD_PATH_MAX]);

#endif /* CIO_THREADED_FS_POSIX_H */
