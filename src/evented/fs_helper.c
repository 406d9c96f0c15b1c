/*
 * The Evented backend's file and directory slots that every flavour runs alike (split from fs.c):
 * those with no asynchronous form worth the name run the Threaded implementation on the helper pool
 * (helper.c; the io_uring flavour replaces some with ring operations, fs_uring.c), and closing and
 * seeking, which never block, run where they are called. Reads, writes, sync and opening files are
 * fs.c's (POSIX) and fs_rw_iocp.c's (Windows: asynchronous handles).
 * Invariants: a slot called by a thread that is not one of this instance's fibers runs the helper
 * path directly on that thread (helper.c).
 */
#include "evented.h"
#include "slots.h"
#include "helper_slot.h"
#include "os.h"

/* ---- helper-pool slots ---------------------------------------------------------------------------------- */

CIO__E_HELPER_SLOT(dir_open_dir, 4, cio_dir, dir, const char *, path, const cio_open_dir_options *, options, cio_dir *,
                   out)
CIO__E_HELPER_SLOT(dir_create_dir, 3, cio_dir, dir, const char *, path, uint32_t, permissions)
CIO__E_HELPER_SLOT(dir_create_dir_path, 4, cio_dir, dir, const char *, path, uint32_t, permissions, bool *, created)
CIO__E_HELPER_SLOT(dir_create_dir_path_open, 4, cio_dir, dir, const char *, path, const cio_open_dir_options *, options,
                   cio_dir *, out)
CIO__E_HELPER_SLOT(dir_rename, 4, cio_dir, old_dir, const char *, old_path, cio_dir, new_dir, const char *, new_path)
CIO__E_HELPER_SLOT(dir_delete_file, 2, cio_dir, dir, const char *, path)
CIO__E_HELPER_SLOT(dir_delete_dir, 2, cio_dir, dir, const char *, path)
CIO__E_HELPER_SLOT(dir_stat_file, 4, cio_dir, dir, const char *, path, unsigned, flags, cio_stat *, out)
CIO__E_HELPER_SLOT(dir_access, 3, cio_dir, dir, const char *, path, unsigned, mode)
CIO__E_HELPER_SLOT(dir_read, 4, cio_dir_reader *, reader, cio_dir_entry *, entries, size_t, max, size_t *, count)
CIO__E_HELPER_SLOT(file_stat, 2, cio_file, file, cio_stat *, out)
CIO__E_HELPER_SLOT(file_set_length, 2, cio_file, file, uint64_t, length)
CIO__E_HELPER_SLOT(file_set_timestamps, 2, cio_file, file, const cio_set_timestamps *, ts)
CIO__E_HELPER_SLOT(process_executable_open, 2, const cio_open_file_options *, options, cio_file *, out)
CIO__E_HELPER_SLOT(process_executable_path, 3, char *, buf, size_t, len, size_t *, out_len)

/* ---- slots that never block ------------------------------------------------------------------------------- */

cio_err cio__e_dir_close(void *ud, cio_dir dir)
{
    (void)ud;
    return cio__os_dir_close(NULL, dir);
}

cio_err cio__e_file_close(void *ud, cio_file file)
{
    (void)ud;
    /* the close renews the number first (cio__e_fd_forget): a pipe may be registered with a poller */
    return cio__os_file_close(NULL, file);
}

cio_err cio__e_file_seek(void *ud, cio_file file, int whence, int64_t offset, uint64_t *pos)
{
    (void)ud;
    return cio__os_file_seek(NULL, file, whence, offset, pos);
}
