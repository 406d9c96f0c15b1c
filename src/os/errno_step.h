/*
 * CIO__OS_SYSCALL's step after a failure, for the POSIX loops that need their own (a poll with a
 * deadline, sendfile's chunks): the POSIX counterpart of fs_windows.h's cio__win_nt_retry.
 */
#ifndef CIO_OS_ERRNO_STEP_H
#define CIO_OS_ERRNO_STEP_H

#include <stdbool.h>

#include "cio/errmap.h"
#include "internal.h"
#include "os.h"

/* After a failed call inside the cancellation bracket, its mapped errno: true when the call should
 * be made again (RETRY and no cancel request: still in the bracket). Otherwise the bracket is left
 * and *err is the outcome: CIO_OK for an OK mapping, Canceled, or the mapped error (a BUG mapping
 * asserts in debug builds with the message `bug`). */
static inline bool cio__os_errno_again(cio__mapped m, const char *bug, cio_err *err)
{
    (void)bug; /* NDEBUG: CIO__BUG drops its message */
    if (m.action == CIO__MAP_RETRY) {
        *err = cio__t_syscall_interrupted();
        return *err == CIO_OK;
    }
    cio__t_syscall_end();
    *err = m.action == CIO__MAP_BUG ? CIO__BUG(bug) : m.action == CIO__MAP_OK ? (cio_err)CIO_OK : m.err;
    return false;
}

#endif /* CIO_OS_ERRNO_STEP_H */
