/**
 * @file
 * cio/fs_meta.h: links, permissions, owners, timestamps, real paths, rename
 * without replace and file locks. Included by the subsystem header (kept apart
 * for size); part of <cio.h>.
 */
#ifndef CIO_FS_META_H
#define CIO_FS_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- links and metadata ------------------------------------------------------------------------ */

/**
 * Stats the open directory itself (Zig's dirStat).
 * @param io  the Io
 * @param dir an open directory (not cio_dir_cwd() on Windows, where it is no handle)
 * @param out receives the metadata
 * @return CIO_OK, or File.StatError: Canceled, Unexpected, SystemResources, AccessDenied,
 *         PermissionDenied, Streaming. Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_stat(cio_io io, cio_dir dir, cio_stat *out);

/**
 * Makes `link_path` (relative to dir) a symbolic link whose target is `target`, stored as given
 * (Windows: '/' stored as '\\', an absolute target in NT form; the link is a reparse point set
 * with FSCTL_SET_REPARSE_POINT, which needs SeCreateSymbolicLinkPrivilege: PermissionDenied
 * without it).
 * @param io        the Io
 * @param dir       the directory link_path is relative to
 * @param target    what the link points to (not checked; may dangle)
 * @param link_path the link to create; must not exist
 * @param flags     0, or CIO_SYM_LINK_DIRECTORY for a link to a directory (Windows)
 * @return CIO_OK, or Dir.SymLinkError: Canceled, Unexpected, NameTooLong, BadPathName,
 *         AccessDenied, PermissionDenied, DiskQuota, PathAlreadyExists, FileSystem, SymLinkLoop,
 *         FileNotFound, SystemResources, NoSpaceLeft, ReadOnlyFileSystem, NotDir, NetworkNotFound,
 *         OperationUnsupported (no symbolic links here: Wine 8). On failure no entry
 *         is left at link_path. Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_sym_link(cio_io io, cio_dir dir, const char *target, const char *link_path, unsigned flags);

/**
 * Reads the target of the symbolic link at path into buf, NUL-terminated (Windows: a symbolic
 * link's or a mount point's substitute name, an absolute one without its "\\??\\" prefix; another
 * reparse point is UnsupportedReparsePointType).
 * @param io      the Io
 * @param dir     the directory path is relative to
 * @param path    the link
 * @param buf     receives the target and a NUL
 * @param len     size of buf (at least 1)
 * @param out_len receives the target's length (without the NUL)
 * @return CIO_OK, or Dir.ReadLinkError: Canceled, Unexpected, NameTooLong (also: buf too small;
 *         never a truncated target), BadPathName, AccessDenied, PermissionDenied, FileSystem,
 *         SymLinkLoop, FileNotFound, SystemResources, NotLink, NotDir, UnsupportedReparsePointType,
 *         NetworkNotFound, AntivirusInterference, FileBusy. Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_read_link(cio_io io, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len);

/**
 * Gives the file at old_path a second name, new_path (a hard link).
 * @param io       the Io
 * @param old_dir  the directory old_path is relative to
 * @param old_path an existing file (not a directory)
 * @param new_dir  the directory new_path is relative to
 * @param new_path the new name; must not exist
 * @param flags    0 (a final symbolic link in old_path is followed) or CIO_NO_FOLLOW (the link
 *                 itself gets the new name)
 * @return CIO_OK, or File.HardLinkError: Canceled, Unexpected, NameTooLong, BadPathName,
 *         AccessDenied, PermissionDenied, DiskQuota, PathAlreadyExists, HardwareFailure,
 *         SymLinkLoop, LinkQuotaExceeded, FileNotFound, SystemResources, NoSpaceLeft, NotDir,
 *         ReadOnlyFileSystem, CrossDevice, IsDir, OperationUnsupported. Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_hard_link(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path,
                          unsigned flags);

/**
 * Gives an open file a name (Linux: linkat AT_EMPTY_PATH, else its /proc/self/fd name; Windows:
 * FileLinkInformation), such as a file created without one.
 * @param io       the Io
 * @param file     the open file
 * @param new_dir  the directory new_path is relative to
 * @param new_path the name; must not exist
 * @return CIO_OK, or File.HardLinkError (as cio_dir_hard_link); OperationUnsupported on the BSDs
 *         and WASI, which cannot name an open file. Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_hard_link(cio_io io, cio_file file, cio_dir new_dir, const char *new_path);

/**
 * Sets the permission bits of the open directory itself (fchmod).
 * @param io          the Io
 * @param dir         an open directory
 * @param permissions the new bits, at most 07777 (Windows: without any write bit the directory is
 *                    read-only)
 * @return CIO_OK, or File.SetPermissionsError: Canceled, Unexpected, AccessDenied,
 *         PermissionDenied, InputOutput, SymLinkLoop, FileNotFound, SystemResources,
 *         ReadOnlyFileSystem, OperationUnsupported (WASI). Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_set_permissions(cio_io io, cio_dir dir, uint32_t permissions);

/**
 * Sets the permission bits of the file or directory at path (fchmodat).
 * @param io          the Io
 * @param dir         the directory path is relative to
 * @param path        the file
 * @param permissions the new bits, at most 07777 (Windows: no write bit is the read-only attribute)
 * @param flags       0 or CIO_NO_FOLLOW (a symbolic link's own bits: OperationUnsupported where
 *                    the OS cannot change them, Linux without fchmodat2)
 * @return CIO_OK, or Dir.SetFilePermissionsError: File.SetPermissionsError, NameTooLong,
 *         BadPathName, NotDir. Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_set_file_permissions(cio_io io, cio_dir dir, const char *path, uint32_t permissions, unsigned flags);

/**
 * Sets the permission bits of an open file (fchmod).
 * @param io          the Io
 * @param file        the open file
 * @param permissions the new bits, at most 07777
 * @return CIO_OK, or File.SetPermissionsError (as cio_dir_set_permissions). Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_set_permissions(cio_io io, cio_file file, uint32_t permissions);

/**
 * Sets the owner and group of the open directory itself (fchown).
 * @param io  the Io
 * @param dir an open directory
 * @param uid the new owner, or CIO_OWNER_UNCHANGED
 * @param gid the new group, or CIO_OWNER_UNCHANGED
 * @return CIO_OK, or File.SetOwnerError: Canceled, Unexpected, AccessDenied, PermissionDenied (not
 *         privileged), InputOutput, SymLinkLoop, FileNotFound, SystemResources, ReadOnlyFileSystem,
 *         OperationUnsupported (Windows and WASI have no owners). Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_set_owner(cio_io io, cio_dir dir, uint32_t uid, uint32_t gid);

/**
 * Sets the owner and group of the file at path (fchownat).
 * @param io    the Io
 * @param dir   the directory path is relative to
 * @param path  the file
 * @param uid   the new owner, or CIO_OWNER_UNCHANGED
 * @param gid   the new group, or CIO_OWNER_UNCHANGED
 * @param flags 0 or CIO_NO_FOLLOW (a symbolic link's own owner)
 * @return CIO_OK, or Dir.SetFileOwnerError: File.SetOwnerError, NameTooLong, BadPathName, NotDir.
 *         Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_set_file_owner(cio_io io, cio_dir dir, const char *path, uint32_t uid, uint32_t gid, unsigned flags);

/**
 * Sets the owner and group of an open file (fchown).
 * @param io   the Io
 * @param file the open file
 * @param uid  the new owner, or CIO_OWNER_UNCHANGED
 * @param gid  the new group, or CIO_OWNER_UNCHANGED
 * @return CIO_OK, or File.SetOwnerError (as cio_dir_set_owner). Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_set_owner(cio_io io, cio_file file, uint32_t uid, uint32_t gid);

/**
 * Sets the access and modification times of the file at path (utimensat).
 * @param io    the Io
 * @param dir   the directory path is relative to
 * @param path  the file
 * @param ts    what to do with each time (as cio_file_set_timestamps)
 * @param flags 0 or CIO_NO_FOLLOW (a symbolic link's own times)
 * @return CIO_OK, or Dir.SetTimestampsError: Canceled, Unexpected, AccessDenied, PermissionDenied,
 *         ReadOnlyFileSystem, NameTooLong, BadPathName, FileNotFound, NotDir, SymLinkLoop.
 *         Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_set_timestamps(cio_io io, cio_dir dir, const char *path, const cio_set_timestamps *ts, unsigned flags);

/**
 * Tells whether an open file is a terminal (isatty; Windows: a console).
 * @param io   the Io
 * @param file the open file
 * @param out  receives true for a terminal
 * @return CIO_OK, InvalidArgument for a handle that is not open (POSIX), or Cancelable: Canceled.
 *         Cancellation point.
 * @cancellation no
 */
cio_err cio_file_is_tty(cio_io io, cio_file file, bool *out);

/* ---- real paths and rename without replace -------------------------------------------------------- */

/**
 * The canonical absolute path of an open directory (Linux: /proc/self/fd; FreeBSD: fcntl F_KINFO;
 * NetBSD: fcntl F_GETPATH, from the kernel's name cache; Windows: GetFinalPathNameByHandleW),
 * NUL-terminated.
 * @param io      the Io
 * @param dir     the directory (cio_dir_cwd(): the current directory)
 * @param buf     receives the path and a NUL
 * @param len     size of buf (at least 1)
 * @param out_len receives the path's length
 * @return CIO_OK, or File.RealPathError: Canceled, Unexpected, FileNotFound (also: /proc not
 *         mounted), AccessDenied, PermissionDenied, NameTooLong (also: buf too small; never a cut
 *         path), OperationUnsupported (OpenBSD and WASI), NotDir, SymLinkLoop, InputOutput,
 *         SystemResources, FileSystem, NoDevice, UnrecognizedVolume, BadPathName, NetworkNotFound.
 *         Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_real_path(cio_io io, cio_dir dir, char *buf, size_t len, size_t *out_len);

/**
 * The canonical absolute path of path (every symbolic link resolved), NUL-terminated.
 * @param io      the Io
 * @param dir     the directory path is relative to
 * @param path    an existing file or directory
 * @param buf     receives the path and a NUL
 * @param len     size of buf (at least 1)
 * @param out_len receives the path's length
 * @return CIO_OK, or Dir.RealPathFileError: File.RealPathError and File.OpenError (opening path;
 *         on NetBSD, which has no O_PATH, a file that cannot be read is AccessDenied).
 *         Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_real_path_file(cio_io io, cio_dir dir, const char *path, char *buf, size_t len, size_t *out_len);

/**
 * The canonical absolute path of an open file, NUL-terminated.
 * @param io      the Io
 * @param file    the open file
 * @param buf     receives the path and a NUL
 * @param len     size of buf (at least 1)
 * @param out_len receives the path's length
 * @return CIO_OK, or File.RealPathError (as cio_dir_real_path). Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_real_path(cio_io io, cio_file file, char *buf, size_t len, size_t *out_len);

/**
 * Renames old_path to new_path unless new_path exists, decided atomically by the OS (Linux:
 * renameat2 RENAME_NOREPLACE; Windows: FileRenameInformation without ReplaceIfExists). Never a
 * check followed by a rename.
 * @param io       the Io
 * @param old_dir  the directory old_path is relative to
 * @param old_path what to rename
 * @param new_dir  the directory new_path is relative to
 * @param new_path the new name; must not exist
 * @return CIO_OK, or Dir.RenamePreserveError: Dir.RenameError (as cio_dir_rename), PathAlreadyExists
 *         (new_path exists; nothing changed), OperationUnsupported (the OS or file system cannot do
 *         it atomically: the BSDs, WASI, some Linux file systems). Cancellation point.
 * @cancellation yes
 */
cio_err cio_dir_rename_preserve(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir,
                                const char *new_path);

/* ---- file locks ---------------------------------------------------------------------------------------- */

/**
 * Takes an advisory whole-file lock (flock; Windows: LockFileEx on the first byte), waiting while
 * another handle holds a conflicting one. Each handle opened separately is a separate owner. A
 * lock this handle holds is replaced; CIO_LOCK_NONE releases it.
 * @param io   the Io
 * @param file the open file
 * @param lock CIO_LOCK_SHARED, CIO_LOCK_EXCLUSIVE or CIO_LOCK_NONE
 * @return CIO_OK, or File.LockError: Canceled (the wait was canceled; no lock taken), Unexpected,
 *         SystemResources, FileLocksUnsupported (WASI; file systems without locks). Cancellation
 *         point (Evented: the wait runs on a helper thread, never a loop thread).
 * @cancellation yes
 */
cio_err cio_file_lock(cio_io io, cio_file file, cio_lock lock);

/**
 * As cio_file_lock without waiting.
 * @param io       the Io
 * @param file     the open file
 * @param lock     CIO_LOCK_SHARED, CIO_LOCK_EXCLUSIVE or CIO_LOCK_NONE
 * @param acquired receives false when another handle holds a conflicting lock
 * @return CIO_OK, or File.LockError (as cio_file_lock, never Canceled by a wait). Cancellation
 *         point.
 * @cancellation yes
 */
cio_err cio_file_try_lock(cio_io io, cio_file file, cio_lock lock, bool *acquired);

/**
 * Releases this handle's lock, if it holds one. Never fails; not a cancellation point.
 * @param io   the Io
 * @param file the open file
 * @cancellation no
 */
void cio_file_unlock(cio_io io, cio_file file);

/**
 * Turns this handle's exclusive lock into a shared one without waiting (other shared lockers may
 * then get in; nobody exclusive does).
 * @param io   the Io
 * @param file the open file, holding an exclusive lock
 * @return CIO_OK, InvalidArgument (another handle holds the lock exclusively: this one held none), or
 *         File.LockError: Canceled, Unexpected, SystemResources, FileLocksUnsupported.
 *         Cancellation point.
 * @cancellation yes
 */
cio_err cio_file_downgrade_lock(cio_io io, cio_file file);

#ifdef __cplusplus
}
#endif

#endif /* CIO_FS_META_H */
