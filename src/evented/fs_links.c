/*
 * The Evented backend's links-and-metadata, real-path and rename-preserve slots: each runs the Threaded implementation
 * on the helper pool (helper.c), never on a loop thread; the wait for the helper is a cancellation point, as the
 * Threaded call is. Where the io_uring flavour's ring has SYMLINKAT, LINKAT and RENAMEAT, dir_sym_link, dir_hard_link,
 * file_hard_link and dir_rename_preserve run on the ring instead (fs_uring.c replaces those four here). file_is_tty and
 * clock_resolution never block and are the Threaded functions themselves (slots.h). The device_io_control operation (an
 * ioctl) runs on the helper pool too. Invariants: as fs.c's helper slots; a caller that is not one of this instance's
 * fibers runs the Threaded function on its own thread (cio__e_helper).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "evented.h"
#include "internal.h"
#include "slots.h"
#include "helper_slot.h"

CIO__E_HELPER_SLOT(dir_stat, 2, cio_dir, dir, cio_stat *, out)
CIO__E_HELPER_SLOT(dir_sym_link, 4, cio_dir, dir, const char *, target, const char *, link_path, unsigned, flags)
CIO__E_HELPER_SLOT(dir_read_link, 5, cio_dir, dir, const char *, path, char *, buf, size_t, len, size_t *, out_len)
CIO__E_HELPER_SLOT(dir_hard_link, 5, cio_dir, old_dir, const char *, old_path, cio_dir, new_dir, const char *, new_path,
                   unsigned, flags)
CIO__E_HELPER_SLOT(dir_set_permissions, 2, cio_dir, dir, uint32_t, permissions)
CIO__E_HELPER_SLOT(dir_set_file_permissions, 4, cio_dir, dir, const char *, path, uint32_t, permissions, unsigned,
                   flags)
CIO__E_HELPER_SLOT(dir_set_owner, 3, cio_dir, dir, uint32_t, uid, uint32_t, gid)
CIO__E_HELPER_SLOT(dir_set_file_owner, 5, cio_dir, dir, const char *, path, uint32_t, uid, uint32_t, gid, unsigned,
                   flags)
CIO__E_HELPER_SLOT(dir_set_timestamps, 4, cio_dir, dir, const char *, path, const cio_set_timestamps *, ts, unsigned,
                   flags)
CIO__E_HELPER_SLOT(file_hard_link, 3, cio_file, file, cio_dir, new_dir, const char *, new_path)
CIO__E_HELPER_SLOT(file_set_permissions, 2, cio_file, file, uint32_t, permissions)
CIO__E_HELPER_SLOT(file_set_owner, 3, cio_file, file, uint32_t, uid, uint32_t, gid)
CIO__E_HELPER_SLOT(dir_real_path, 4, cio_dir, dir, char *, buf, size_t, len, size_t *, out_len)
CIO__E_HELPER_SLOT(dir_real_path_file, 5, cio_dir, dir, const char *, path, char *, buf, size_t, len, size_t *, out_len)
CIO__E_HELPER_SLOT(file_real_path, 4, cio_file, file, char *, buf, size_t, len, size_t *, out_len)
CIO__E_HELPER_SLOT(dir_rename_preserve, 4, cio_dir, old_dir, const char *, old_path, cio_dir, new_dir, const char *,
                   new_path)

/* A lock wait blocks its thread in flock: the helper pool's, never a loop thread; the wait for the
 * helper is the cancellation point, and a cancel knocks the helper out of flock (EINTR: Canceled). */
CIO__E_HELPER_SLOT(file_lock, 2, cio_file, file, cio_lock, lock)

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
