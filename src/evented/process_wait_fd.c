/*
 * The Evented backend's child waits and cio_signal_wait on POSIX (split from process.c, whose top
 * comment describes them): a child's pidfd, and the signal waiter's pipe, watched by the fiber
 * through its home loop's poller; the helper pool for a child with no pidfd.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <stdint.h>

#include "cio/process.h"
#include "cio/sig.h"
#include "evented.h"
#include "internal.h"
#include "slots.h"
#include "os.h"

static cio_err h_wait(void *p)
{
    struct cio__e_child_wait_args *a = (struct cio__e_child_wait_args *)p;
    return cio__os_child_wait(NULL, a->child, a->term);
}
static cio_err wait_run(void *p)
{
    struct cio__e_child_wait_args *a = (struct cio__e_child_wait_args *)p;
    if (a->child->handle < 0)
        return cio__e_helper(a->e, h_wait, a, true);
    uint32_t rev = 0;
    cio_err err = cio__e_wait_fd(a->e, a->child->handle, POLLIN, -1, true, &rev);
    if (err != CIO_OK)
        return err;
    return cio__os_child_reap(a->child, a->term);
}
cio_err cio__e_child_wait(void *ud, cio_child *child, cio_term *term)
{
    return cio__e_child_wait_with(ud, child, term, wait_run);
}

/* ---- cio_signal_wait: the waiter's pipe (sig_wait_posix.c) watched by the fiber through its loop's
 * poller, so any number of fibers wait for signals with no thread each; the take (a non-blocking
 * read and an atomic exchange) runs where the fiber is. ---------------------------------------------- */

struct a_sig {
    struct cio_evented *e;
    const cio_sigset *set;
    int *signo;
};
static cio_err sig_run(void *p)
{
    struct a_sig *a = (struct a_sig *)p;
    struct cio__os_sigwaiter w;
    cio_err err = cio__os_sigwait_begin(a->set, &w);
    if (err != CIO_OK)
        return err;
    while (!cio__os_sigwait_take(&w, a->signo)) {
        uint32_t rev = 0;
        err = cio__e_wait_fd(a->e, w.rfd, POLLIN, -1, true, &rev);
        if (err != CIO_OK)
            break;
    }
    cio__os_sigwait_end(&w);
    return err;
}
cio_err cio__e_signal_wait(void *ud, const cio_sigset *set, int *signo)
{
    struct a_sig a = {(struct cio_evented *)ud, set, signo};
    return CIO__IN_SET(signal_wait, cio__e_run(a.e, sig_run, &a));
}
