/*
 * Operations with no asynchronous form run on the helper pool: an internal Threaded instance whose
 * workers make the blocking call while the fiber waits. And the bridge (split from sched.c): a call
 * from a thread that cannot be a fiber of the instance runs on a fiber while the thread waits.
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
#include <stddef.h>

#include "bridge.h"
#include "diag.h"
#include "evented.h"

struct job {
    cio_err (*fn)(void *);
    void *arg;
    struct cio_any_future *fiber;
    cio_err result;
    cio_os_error os; /* what the call recorded on the worker (cio_last_os_error), for the fiber */
};

static cio_err helper_task(void *ctx)
{
    struct job *j = *(struct job **)ctx;
    cio__os_error_clear();
    j->result = j->fn(j->arg);
    j->os = cio__os_last;
    cio__e_make_ready(j->fiber); /* j may be gone from here on */
    return CIO_OK;
}

static void helper_resignal_fire(struct cio__e_loop *l, struct cio__e_timer *t)
{
    struct cio__e_wait *w = (struct cio__e_wait *)(void *)((char *)t - offsetof(struct cio__e_wait, resignal));
    if (cio__t_task_resignal(w->htask)) {
        if (w->backoff < 10000000)
            w->backoff *= 2;
        t->deadline = cio__e_now_ns() + w->backoff;
        cio__e_timer_add(l, t);
    }
}

/* The interrupt (wait->interrupt) of a helper wait: a Threaded cancel request for the job, repeated
 * by a timer while the worker is still in its syscall. */
static void interrupt_helper(struct cio__e_loop *l, struct cio__e_wait *w)
{
    if (!w->cancel_sent) {
        w->cancel_sent = true;
        w->reason = CIO__E_R_CANCEL;
        if (cio__t_task_request_cancel(w->htask)) {
            w->backoff = 1000;
            w->resignal.deadline = cio__e_now_ns() + w->backoff;
            w->resignal.fire = helper_resignal_fire;
            cio__e_timer_add(l, &w->resignal);
        }
    }
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
    struct job j = {fn, arg, f, CIO_OK, {CIO_OS_ERROR_NONE, 0, ""}};
    struct job *jp = &j;
    void *task = NULL;
    if (cio__t_task_spawn(e->helper, helper_task, &jp, sizeof jp, &task) != CIO_OK)
        return fn(arg); /* no helper thread to be had: block this loop rather than fail */
    struct cio__e_wait w;
    cio__e_wait_init(&w, f, CIO__E_W_HELPER, cancelable, interrupt_helper);
    w.htask = task;
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
    if (j.os.kind != CIO_OS_ERROR_NONE) /* the call's Unexpected, recorded on the worker: now this task's */
        cio__os_last = j.os;
    return j.result;
}

/* ---- the bridge for foreign threads ------------------------------------------------------------------------------- */

struct bridge {
    cio_err (*fn)(void *);
    void *arg;
    cio_os_error os; /* what the call recorded on its fiber, for the waiting thread */
};

static cio_err bridge_task(void *ctx)
{
    struct bridge *b = *(struct bridge **)ctx;
    cio_err r = b->fn(b->arg);
    b->os = cio__os_last;
    return r;
}

cio_err cio__e_run(struct cio_evented *e, cio_err (*fn)(void *), void *arg)
{
    if (cio__e_self_adopt(e) != NULL)
        return fn(arg);
    /* A thread that cannot become a fiber of e (it is another instance's, or adoption failed). */
    struct bridge b = {fn, arg, {CIO_OS_ERROR_NONE, 0, ""}};
    struct bridge *bp = &b;
    struct cio_any_future *f = cio__e_fiber_new(e, bridge_task, &bp, sizeof bp, true);
    if (f == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio__e_spawn(e, f);
    (void)cio__e_join(e, f, false);
    cio_err r = f->result;
    cio__e_fiber_free(e, f);
    if (b.os.kind != CIO_OS_ERROR_NONE)
        cio__os_last = b.os;
    return r;
}
