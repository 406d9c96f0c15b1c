/*
 * Shared by the Windows files-and-directories sources of the Threaded backend: fs_windows.c
 * (paths, opening, directories, delete, stat), fs_windows_paths.c (real paths, renames), fs_windows_io.c (reading,
 * writing, seeking, lengths, sync, timestamps, directory iteration) and process_windows.c (the executable).
 */
#ifndef CIO_THREADED_FS_WINDOWS_H
#define CIO_THREADED_FS_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/errmap.h"
#include "cio/fs.h"
#include "cio/ntapi.h"

/* A path converted for NtCreateFile: `name` (the NT path) and `root` (NULL for an absolute path,
 * the directory's handle for a relative one). One heap block; free with cio__win_path_free. */
struct cio__win_path;
cio_err cio__win_path_convert(cio_dir dir, const char *path, struct cio__win_path **out);
void cio__win_path_free(struct cio__win_path *p);

/* After a failed NT call inside the cancellation bracket, its mapped status: true when the call
 * should be made again (RETRY and no cancel request: still in the bracket). Otherwise the bracket
 * is left and *err is the outcome: CIO_OK for an OK mapping, Canceled, or the mapped error (BUG
 * asserts in debug builds). */
bool cio__win_nt_retry(cio__mapped m, cio_err *err);
/* The same for the status `st` of any NT call inside the bracket, through `map` when it failed: a
 * success leaves the bracket with *err CIO_OK (false: done). */
bool cio__win_nt_again(int32_t st, cio__mapped (*map)(cio_ntstatus), cio_err *err);
/* Whether h is an asynchronous handle: FileModeInformation without a synchronous flag (a handle that
 * cannot say, such as a console, is not). Evented's file reads and writes, spawn's stdio and the
 * Threaded streaming calls ask it (fs_windows_io.c, site handle_mode). */
bool cio__win_handle_is_async(void *h);

/* NtCreateFile in the cancellation bracket, through `map` (RETRY, BACKOFF as fs_windows.c says). */
cio_err cio__win_open(void *root, cio_nt_unicode_string *name, uint32_t access, uint32_t attributes, uint32_t share,
                      uint32_t disposition, uint32_t options, cio__mapped (*map)(cio_ntstatus), void **out);
/* The arguments of a slot that opens a file into *out: false (InvalidArgument) for no out or a bad
 * mode; *o the options (NULL: read-only, following symbolic links). */
bool cio__win_open_args(const cio_open_file_options *options, const void *out, cio_open_file_options *o);
/* Opens a file as cio_dir_open_file does (the options already checked). Set: File.OpenError. */
cio_err cio__win_open_file(void *root, cio_nt_unicode_string *name, const cio_open_file_options *o, void **out);
/* The same with the handle's I/O mode `io`: CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, or 0 for an
 * asynchronous handle (overlapped I/O, no file position kept by NT). */
cio_err cio__win_open_file_io(void *root, cio_nt_unicode_string *name, const cio_open_file_options *o, uint32_t io,
                              void **out);
/* cio_dir_open_file and cio_dir_create_file with the handle's I/O mode `io` (as above); the
 * Threaded slots pass the synchronous flag, the Evented ones 0. Set: File.OpenError. */
cio_err cio__win_dir_open_file(cio_dir dir, const char *path, const cio_open_file_options *options, uint32_t io,
                               cio_file *out);
cio_err cio__win_dir_create_file(cio_dir dir, const char *path, const cio_create_file_options *options, uint32_t io,
                                 cio_file *out);

/* For fs_windows_links.c: NtQueryInformationFile / NtSetInformationFile in the cancellation bracket
 * through `map`; a path opened relative to dir (share all, FILE_OPEN) through `map`; `e` if it is in
 * the set (or OK / InvalidArgument), Unexpected otherwise. */
cio_err cio__win_info(bool set, void *h, void *buf, uint32_t len, uint32_t cls, cio__mapped (*map)(cio_ntstatus));
cio_err cio__win_open_path(cio_dir dir, const char *path, uint32_t access, uint32_t options,
                           cio__mapped (*map)(cio_ntstatus), void **out);
cio_err cio__win_narrow(cio_err e, bool (*contains)(cio_err));
/* The first steps of dir_rename and dir_rename_preserve: InvalidArgument for a NULL path, then
 * old_path itself opened for DELETE into *h (errors unnarrowed). */
cio_err cio__win_rename_source(cio_dir old_dir, const char *old_path, const char *new_path, void **h);
/* What dir_rename remembers of FileRenameInformationEx (fs_windows_paths.c): 1 NT has it, -1 it lacks
 * it (the classic class from then on), 0 not asked yet; `forget` first sets it back to 0. For tests. */
int cio__win_rename_ex_known(bool forget);
/* Sets what dir_rename remembers (1, -1 or 0 as above). For tests: -1 makes every rename take the
 * classic class, as on an NT without FileRenameInformationEx. */
void cio__win_rename_ex_assume(int known);
/* A converted path's NT name and root directory handle (NULL: absolute). */
cio_nt_unicode_string *cio__win_path_name(struct cio__win_path *p);
void *cio__win_path_root(struct cio__win_path *p);

/* The byte count to pass for a FILE_RENAME_INFORMATION / FILE_LINK_INFORMATION holding a name of
 * `name_len` bytes: at least the struct's own size (FileName[1] and its padding), since NT and Wine
 * refuse a shorter buffer, which a one-letter name would give (STATUS_INVALID_PARAMETER_3). The
 * buffer allocated must hold 2 more bytes (a terminating NUL). */
static inline size_t cio__win_rename_info_size(size_t name_len)
{
    size_t size = offsetof(cio_nt_file_rename_information, FileName) + name_len;
    return size < sizeof(cio_nt_file_rename_information) ? sizeof(cio_nt_file_rename_information) : size;
}

#endif /* CIO_THREADED_FS_WINDOWS_H */
