/*
 * The io_uring flavour's child wait (Linux 6.7+): one IORING_OP_WAITID per wait, so a fiber waits
 * for its child on the ring itself (no readiness poll of the pidfd, then no waitid syscall): the
 * completion is the reap. cio__e_uring_process_override puts it into the instance's vtable only when
 * the probe found the opcode; otherwise waits poll the pidfd (process.c).
 *
 * Invariants:
 * - The WAITID waits for the child's exit (WEXITED, the pid) and reaps it; a cancel that ends it
 *   before completion (-ECANCELED) reaps nothing: the child stays waitable, its pidfd open, as with
 *   the poll path. A completion >= 0 always wins over a cancel request (uring.h), so a reaped child
 *   is never reported Canceled.
 * - Once reaped, the pidfd is closed and the id cleared by the OS room (cio__os_child_reaped), which
 *   also translates the siginfo, as cio__os_child_reap does after a poll.
 * - A child without a pidfd (a kernel without pidfd_open: older than any with WAITID, so never here
 *   in practice) and callers that are not fibers take the same path through cio__e_run.
 * - The siginfo the kernel writes lives on the fiber's stack: the fiber resumes only once the
 *   operation's completion is reaped (uring.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "cio/errmap.h"
#include "cio/process.h"
#include "cio/sysnum.h"
#include "evented.h"
#include "internal.h"
#include "os.h"
#include "uring.h"

static cio_err u_wait_run(void *p)
{
    struct cio__e_child_wait_args *a = (struct cio__e_child_wait_args *)p;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    struct io_uring_sqe sqe;
    memset(&sqe, 0, sizeof sqe);
    sqe.opcode = CIO_IORING_OP_WAITID;
    sqe.fd = (int32_t)a->child->id;     /* the id */
    sqe.len = (uint32_t)P_PID;          /* idtype */
    sqe.file_index = (uint32_t)WEXITED; /* options */
    sqe.off = (uint64_t)(uintptr_t)&si; /* addr2: the siginfo */
    int32_t res = 0;
    cio_err err = cio__e_uring_call(a->e, &sqe, -1, true, cio__errno_waitid, &res);
    if (err == CIO_E_CANCELED)
        return err;
    cio__os_child_reaped(a->child, &si, err == CIO_OK ? a->term : NULL);
    return err;
}

static cio_err u_child_wait(void *ud, cio_child *child, cio_term *term)
{
    return cio__e_child_wait_with(ud, child, term, u_wait_run);
}

void cio__e_uring_process_override(struct cio_evented *e, struct cio_vtable *vt)
{
    if (cio__e_uring_has(e, CIO_IORING_OP_WAITID))
        vt->child_wait = u_child_wait;
}
