/*
 * The Evented backend's child waits and cio_signal_wait on Windows (process_wait_fd.c is POSIX's):
 * the Threaded implementation (WaitForSingleObjectEx on the process handle; the console-control and
 * raise() waiter of sig_wait_windows.c) on the helper pool, canceled like any helper call. A process
 * handle has no overlapped wait a completion port could report (RegisterWaitForSingleObject would
 * be a thread pool's wait, not the loop's), so this is where they stay.
 * Invariants: as process.c's (a foreign thread runs the wait as a fiber through cio__e_run, whose
 * helper call it waits for).
 */
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
    return cio__e_helper(a->e, h_wait, a, true);
}

cio_err cio__e_child_wait(void *ud, cio_child *child, cio_term *term)
{
    return cio__e_child_wait_with(ud, child, term, wait_run);
}

struct a_sig {
    const cio_sigset *set;
    int *signo;
};

static cio_err h_sig(void *p)
{
    struct a_sig *a = (struct a_sig *)p;
    return cio__os_signal_wait(NULL, a->set, a->signo);
}

cio_err cio__e_signal_wait(void *ud, const cio_sigset *set, int *signo)
{
    struct a_sig a = {set, signo};
    return CIO__IN_SET(signal_wait, cio__e_helper((struct cio_evented *)ud, h_sig, &a, true));
}
