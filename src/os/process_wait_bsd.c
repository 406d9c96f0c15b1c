/*
 * Waiting for and killing children on FreeBSD, NetBSD and OpenBSD (Zig's childWait, childKill), for
 * both backends: the Evented one runs the wait on its helper pool (a child here has no pidfd,
 * child->handle is -1), canceled like any helper call.
 *
 * Invariants:
 * - A wait is waitpid inside the cancellation bracket: the cancel signal interrupts it (EINTR) and
 *   a canceled wait returns Canceled with the child untouched (still a child: waitable, killable).
 * - waitpid reaps the child once it has exited; child->id is then 0, also when waitpid fails with an
 *   error other than Canceled, so a child is never reaped twice.
 * - The status is decoded by the layout every BSD (and Linux) uses: the low 7 bits are the
 *   terminating signal (0: exited, 0177: stopped), the next 8 the exit code or stop signal.
 * - Kill is SIGTERM then an uncancelable reap (Zig's childKill); a child already reaped is left alone.
 * - No OS call table on the BSDs: calls are direct; errno goes through the waitid map (waitpid fails
 *   the same ways: ECHILD, EINTR, EINVAL).
 */
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/process.h"
#include "internal.h"
#include "os.h"

enum { LOW7 = 0177 };

static void term_from(int status, cio_term *term)
{
    int low = status & LOW7;
    if (low == 0) {
        term->kind = CIO_TERM_EXITED;
        term->code = (uint32_t)((status >> 8) & 0xff);
    } else if (low == LOW7) {
        term->kind = CIO_TERM_STOPPED;
        term->code = (uint32_t)((status >> 8) & 0xff);
    } else {
        term->kind = CIO_TERM_SIGNAL;
        term->code = (uint32_t)low;
    }
}

cio_err cio__os_child_reap(cio_child *child, cio_term *term)
{
    int status = 0;
    cio_err err = CIO_OK;
    while (waitpid((pid_t)child->id, &status, 0) < 0) {
        cio__mapped m = cio__errno_waitid(errno);
        if (m.action == CIO__MAP_RETRY)
            continue;
        err = m.action == CIO__MAP_BUG     ? CIO__BUG("waitpid: an errno that means a bug")
              : m.action == CIO__MAP_ERROR ? m.err
                                           : CIO_E_UNEXPECTED;
        break;
    }
    child->id = 0;
    child->handle = -1;
    if (err == CIO_OK)
        term_from(status, term);
    return err;
}

cio_err cio__os_child_wait(void *ud, cio_child *child, cio_term *term)
{
    (void)ud;
    if (child == NULL || term == NULL || child->id <= 0)
        return CIO_E_INVALID_ARGUMENT;
    int status = 0;
    cio_err err;
    pid_t r;
    CIO__OS_SYSCALL(err, r, waitid, waitpid((pid_t)child->id, &status, 0));
    (void)r;
    if (err == CIO_E_CANCELED)
        return err;
    child->id = 0;
    child->handle = -1;
    if (err == CIO_OK)
        term_from(status, term);
    return CIO__IN_SET(process_wait, err);
}

void cio__os_child_kill(void *ud, cio_child *child)
{
    (void)ud;
    if (child == NULL || child->id <= 0)
        return;
    (void)kill((pid_t)child->id, SIGTERM);
    int status;
    while (waitpid((pid_t)child->id, &status, 0) < 0 && errno == EINTR) {
    }
    child->id = 0;
    child->handle = -1;
}
