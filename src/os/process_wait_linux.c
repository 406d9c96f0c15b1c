/*
 * Waiting for and killing children on Linux (Zig's childWait, childKill), for both backends: the
 * Evented one polls the pidfd in its loop and then calls cio__os_child_reap.
 *
 * Invariants:
 * - A child is waited for through its pidfd (readable once it has exited) with poll inside the
 *   cancellation bracket, so a canceled wait returns Canceled and leaves the child untouched (still a
 *   child, its pidfd open): it can be waited for or killed later. Without a pidfd (child->handle -1:
 *   a kernel without pidfd_open) waitid itself blocks inside the bracket.
 * - Reaping (waitid WEXITED on the pid) happens only once the child has exited, and always closes
 *   the pidfd and sets child->id to 0, also when waitid fails: a child is never reaped twice.
 * - Kill is SIGTERM then an uncancelable reap (Zig's childKill); a child already reaped is left alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define _FILE_OFFSET_BITS 64
#define _TIME_BITS 64

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "cio/process.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

static void close_pidfd(cio_child *child)
{
    int fd = child->handle;
    child->handle = -1;
    child->id = 0;
    if (fd < 0)
        return;
    cio__os_before_close(fd);
    if (CIO__SYS(close, child_pidfd)(fd) == 0)
        return;
    cio__mapped m = cio__errno_close(errno);
    if (m.action == CIO__MAP_BUG)
        (void)CIO__BUG("close: bad pidfd");
}

static void term_from(const siginfo_t *si, cio_term *term)
{
    switch (si->si_code) {
    case CLD_EXITED: term->kind = CIO_TERM_EXITED; break;
    case CLD_KILLED:
    case CLD_DUMPED: term->kind = CIO_TERM_SIGNAL; break;
    case CLD_STOPPED:
    case CLD_TRAPPED: term->kind = CIO_TERM_STOPPED; break;
    default: term->kind = CIO_TERM_UNKNOWN; break;
    }
    term->code = (uint32_t)si->si_status;
}

static cio_err wait_mapped(cio__mapped m)
{
    if (m.action == CIO__MAP_BUG)
        return CIO__BUG("waitid/poll: an errno that means a bug");
    return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
}

void cio__os_child_reaped(cio_child *child, const void *siginfo, cio_term *term)
{
    close_pidfd(child);
    if (term != NULL)
        term_from((const siginfo_t *)siginfo, term);
}

cio_err cio__os_child_reap(cio_child *child, cio_term *term)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    cio_err err = CIO_OK;
    while (CIO__SYS(waitid, child_reap)(P_PID, (id_t)child->id, &si, WEXITED) < 0) {
        cio__mapped m = cio__errno_waitid(errno);
        if (m.action == CIO__MAP_RETRY)
            continue;
        err = wait_mapped(m);
        break;
    }
    cio__os_child_reaped(child, &si, err == CIO_OK ? term : NULL);
    return err;
}

cio_err cio__os_child_wait(void *ud, cio_child *child, cio_term *term)
{
    (void)ud;
    if (child == NULL || term == NULL || child->id <= 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err;
    int r;
    if (child->handle >= 0) {
        struct pollfd p;
        p.fd = child->handle;
        p.events = POLLIN;
        p.revents = 0;
        CIO__OS_SYSCALL(err, r, child_poll, CIO__SYS(poll, child_wait)(&p, 1, -1));
        (void)r;
        if (err != CIO_OK)
            return CIO__IN_SET(process_wait, err);
        return CIO__IN_SET(process_wait, cio__os_child_reap(child, term));
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CIO__OS_SYSCALL(err, r, waitid, CIO__SYS(waitid, child_wait)(P_PID, (id_t)child->id, &si, WEXITED));
    (void)r;
    if (err == CIO_E_CANCELED)
        return err;
    close_pidfd(child);
    if (err == CIO_OK)
        term_from(&si, term);
    return CIO__IN_SET(process_wait, err);
}

void cio__os_child_kill(void *ud, cio_child *child)
{
    (void)ud;
    if (child == NULL || child->id <= 0)
        return;
    (void)CIO__SYS(kill, child_kill)((pid_t)child->id, SIGTERM);
    siginfo_t si;
    while (CIO__SYS(waitid, child_kill)(P_PID, (id_t)child->id, &si, WEXITED) < 0 && errno == EINTR) {
    }
    close_pidfd(child);
}
