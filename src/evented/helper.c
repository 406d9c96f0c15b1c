/*
 * Operations with no asynchronous form run on the helper pool: an internal Threaded instance whose
 * workers make the blocking call while the fiber waits.
 *
 * Invariants: the job record lives on the waiting fiber's stack; the worker touches it only until it
 * makes the fiber ready (the last thing it does with it). Only that completion resumes the fiber —
 * a cancel is forwarded as a Threaded cancel request (the worker's syscall fails with EINTR and the
 * Threaded slot returns Canceled), repeated by a timer on the home loop while the worker is still in
 * the syscall. The fiber then awaits the Threaded task (done moments later) on the loop thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "bridge.h"
#include "evented.h"

struct job {
    cio_err (*fn)(void *);
    void *arg;
    struct cio_any_future *fiber;
    cio_err result;
};

static cio_err helper_task(void *ctx)
{
    struct job *j = *(struct job **)ctx;
    j->result = j->fn(j->arg);
    cio__e_make_ready(j->fiber); /* j may be gone from here on */
    return CIO_OK;
}

cio_err cio__e_helper(struct cio_evented *e, cio_err (*fn)(void *), void *arg, bool cancelable)
{
    struct cio_any_future *f = cio__e_self(e);
    if (f == NULL)
        return fn(arg);
    if (cancelable) {
        cio_err c = cio__e_cancel_point(e);
        if (c != CIO_OK)
            return c;
    }
    struct job j = {fn, arg, f, CIO_OK};
    struct job *jp = &j;
    void *task = NULL;
    if (cio__t_task_spawn(e->helper, helper_task, &jp, sizeof jp, &task) != CIO_OK)
        return fn(arg); /* no helper thread to be had: block this loop rather than fail */
    struct cio__e_wait w;
    memset(&w, 0, sizeof w);
    w.fiber = f;
    w.kind = CIO__E_W_HELPER;
    w.cancelable = cancelable;
    w.htask = task;
    w.timer.index = SIZE_MAX;
    w.resignal.index = SIZE_MAX;
    f->wait = &w;
    cio__e_suspend(NULL, NULL);
    f->wait = NULL;
    cio__e_timer_remove(f->home, &w.resignal);
    /* The worker made us ready as its last act on the job; it marks the Threaded task done a few
     * instructions later. Waiting for that on this thread (the await spins briefly, then sleeps)
     * lets a worker preempted on this CPU finish, where re-queueing the fiber would spin. */
    (void)cio__t_task_await(e->helper, task);
    if (j.result == CIO_E_CANCELED && w.reason == CIO__E_R_CANCEL)
        cio__e_ack_cancel(f);
    return j.result;
}
