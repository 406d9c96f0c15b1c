/*
 * File locks for the Threaded backend on Linux and the BSDs: flock(2), advisory and whole-file,
 * owned by the open file description (every handle opened separately is a separate owner, in the
 * same process too).
 *
 * Invariants:
 * - A blocking lock waits inside the cancellation bracket (CIO__OS_SYSCALL): the cancel signal ends
 *   the wait with EINTR, which the bracket turns into CIO_E_CANCELED (no lock taken); a stray EINTR
 *   waits again.
 * - try_lock and downgrade pass LOCK_NB and never wait; EAGAIN (a conflicting lock) is the map's ok,
 *   which try_lock reports as *acquired false.
 * - unlock never fails: LOCK_UN of a handle that holds nothing succeeds, and EBADF (not a handle) is
 *   the caller's bug, asserted in debug builds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <stdbool.h>
#include <sys/file.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

static bool lock_op(cio_lock lock, int *op)
{
    switch (lock) {
    case CIO_LOCK_NONE: *op = LOCK_UN; return true;
    case CIO_LOCK_SHARED: *op = LOCK_SH; return true;
    case CIO_LOCK_EXCLUSIVE: *op = LOCK_EX; return true;
    default: return false;
    }
}

cio_err cio__os_file_lock(void *ud, cio_file file, cio_lock lock)
{
    (void)ud;
    int op;
    if (!lock_op(lock, &op))
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    CIO__OS_CALL(err, flock_lock, CIO__SYS(flock, lock)(file.handle, op));
    return CIO__IN_SET(file_lock, err);
}

cio_err cio__os_file_try_lock(void *ud, cio_file file, cio_lock lock, bool *acquired)
{
    (void)ud;
    int op;
    if (acquired == NULL || !lock_op(lock, &op))
        return CIO_E_INVALID_ARGUMENT;
    *acquired = false;
    cio_err err;
    int r;
    CIO__OS_SYSCALL(err, r, flock_lock, CIO__SYS(flock, try_lock)(file.handle, op | LOCK_NB));
    if (err == CIO_OK)
        *acquired = r == 0; /* -1 with CIO_OK: EAGAIN, held by another */
    return CIO__IN_SET(file_lock, err);
}

void cio__os_file_unlock(void *ud, cio_file file)
{
    (void)ud;
    if (CIO__SYS(flock, unlock)(file.handle, LOCK_UN) != 0 && errno == EBADF)
        (void)CIO__BUG("flock(LOCK_UN): not an open file");
}

cio_err cio__os_file_downgrade_lock(void *ud, cio_file file)
{
    (void)ud;
    cio_err err;
    int r;
    CIO__OS_SYSCALL(err, r, flock_lock, CIO__SYS(flock, downgrade_lock)(file.handle, LOCK_SH | LOCK_NB));
    /* EAGAIN cannot happen for a holder of the exclusive lock; for a handle without one it means
     * another holds it exclusively: there was nothing to downgrade. */
    if (err == CIO_OK && r != 0)
        err = CIO_E_INVALID_ARGUMENT;
    return CIO__IN_SET(file_lock, err);
}
