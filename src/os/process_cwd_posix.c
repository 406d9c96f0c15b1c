/*
 * The current working directory for the Threaded backend on Linux and WASI (Zig's
 * processCurrentPath, processSetCurrentPath): getcwd and chdir (wasi-libc emulates both over its
 * preopened directories). Invariants: the path written always ends in a NUL (a buffer too small for
 * it is NameTooLong, never a truncated path); chdir runs inside the cancellation bracket.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/process.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

cio_err cio__os_process_current_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    cio_err err = cio__os_cwd_begin(buf, out_len);
    if (err != CIO_OK)
        return err;
    if (len < 2)
        return CIO__IN_SET(process_current_path, CIO_E_NAME_TOO_LONG);
    if (CIO__SYS(getcwd, current_path)(buf, len) == NULL) {
        cio__mapped m = cio__errno_getcwd(errno);
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG("getcwd: an errno that means a bug");
        return CIO__IN_SET(process_current_path, m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED);
    }
    if (out_len != NULL)
        *out_len = strlen(buf);
    return CIO_OK;
}

cio_err cio__os_process_set_current_path(void *ud, const char *path)
{
    (void)ud;
    cio_err err = cio__os_cwd_set_begin(path, false); /* the chdir's bracket is the cancellation point */
    if (err == CIO_OK)
        CIO__OS_CALL(err, chdir, CIO__SYS(chdir, set_current_path)(path));
    return CIO__IN_SET(process_set_current_path, err);
}
