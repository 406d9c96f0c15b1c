/*
 * The Evented backend's process slots.
 *
 * Spawn runs the Threaded implementation on the helper pool (fork and the wait for the child's exec
 * report block). Child waits and cio_signal_wait are the OS's: process_wait_fd.c (POSIX; described
 * here) and process_wait_iocp.c (Windows: the helper pool). A wait is native: the fiber waits for its child's pidfd to
 * become readable through its home loop's poller (epoll, or a poll operation on io_uring), so any number of children are
 * awaited by fibers with no thread each; once readable, the reap (waitid) cannot block and runs
 * where the fiber is. A child without a pidfd (a kernel without pidfd_open) is waited for on the
 * helper pool, canceled like any helper call; on the BSDs (no pidfd) every wait does. Where the
 * io_uring flavour's probe finds IORING_OP_WAITID the child_wait slot is process_uring.c's instead
 * (the wait is the ring operation itself). Kill (SIGTERM and an uncancelable reap) runs on the
 * helper pool. Replace, fchdir, getcwd never block for long and run where they are called; chdir
 * resolves a path and runs on the helper pool.
 * The stderr lock is the process-wide one (src/core/stderr_lock.c) with the fiber as the task
 * identity (fibers may move between loop threads; a thread that is no loop thread, adopted or not,
 * is the thread, as through a Threaded instance) and the backend's futex slots, so a fiber waiting
 * for it never blocks its loop thread. Invariants: as fs.c's (a foreign thread runs the wait as a
 * fiber through cio__e_run, the helper paths directly). cio_signal_wait (issue 25) is with the
 * waits: on POSIX a fiber waits for its waiter's pipe as for a child's pidfd.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>

#include "cio/process.h"
#include "cio/sig.h"
#include "evented.h"
#include "internal.h"
#include "slots.h"
#include "stderr_lock.h"
#include "os.h"

struct a_spawn {
    bool at_dir;
    cio_dir dir;
    const cio_spawn_options *options;
    cio_child *out;
};
static cio_err h_spawn(void *p)
{
    struct a_spawn *a = (struct a_spawn *)p;
    return a->at_dir ? cio__os_process_spawn_path(NULL, a->dir, a->options, a->out)
                     : cio__os_process_spawn(NULL, a->options, a->out);
}
cio_err cio__e_process_spawn(void *ud, const cio_spawn_options *options, cio_child *out)
{
    struct a_spawn a = {false, {0}, options, out};
    return cio__e_helper((struct cio_evented *)ud, h_spawn, &a, true);
}
cio_err cio__e_process_spawn_path(void *ud, cio_dir dir, const cio_spawn_options *options, cio_child *out)
{
    struct a_spawn a = {true, dir, options, out};
    return cio__e_helper((struct cio_evented *)ud, h_spawn, &a, true);
}

cio_err cio__e_child_wait_with(void *ud, cio_child *child, cio_term *term, cio_err (*run)(void *))
{
    if (child == NULL || term == NULL || child->id <= 0)
        return CIO_E_INVALID_ARGUMENT;
    struct cio__e_child_wait_args a = {(struct cio_evented *)ud, child, term};
    return CIO__IN_SET(process_wait, cio__e_run(a.e, run, &a));
}
static cio_err h_kill(void *p)
{
    cio__os_child_kill(NULL, (cio_child *)p);
    return CIO_OK;
}
void cio__e_child_kill(void *ud, cio_child *child)
{
    if (child == NULL || child->id <= 0)
        return;
    (void)cio__e_helper((struct cio_evented *)ud, h_kill, child, false);
}

cio_err cio__e_process_replace(void *ud, const cio_spawn_options *options)
{
    (void)ud;
    return cio__os_process_replace(NULL, options);
}
cio_err cio__e_process_replace_path(void *ud, cio_dir dir, const cio_spawn_options *options)
{
    (void)ud;
    return cio__os_process_replace_path(NULL, dir, options);
}

cio_err cio__e_process_current_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    cio_err err = cio__e_cancel_point((struct cio_evented *)ud);
    if (err != CIO_OK)
        return err;
    return cio__os_process_current_path(NULL, buf, len, out_len);
}
cio_err cio__e_process_set_current_dir(void *ud, cio_dir dir)
{
    cio_err err = cio__e_cancel_point((struct cio_evented *)ud);
    if (err != CIO_OK)
        return err;
    return cio__os_process_set_current_dir(NULL, dir);
}

struct a_chdir {
    const char *path;
};
static cio_err h_chdir(void *p)
{
    return cio__os_process_set_current_path(NULL, ((struct a_chdir *)p)->path);
}
cio_err cio__e_process_set_current_path(void *ud, const char *path)
{
    struct a_chdir a = {path};
    return cio__e_helper((struct cio_evented *)ud, h_chdir, &a, true);
}

/* ---- the stderr lock ----------------------------------------------------------------------------- */

static uintptr_t identity(void *ud)
{
    struct cio_any_future *f = cio__e_self_adopt((struct cio_evented *)ud); /* the same for lock and unlock */
    struct cio__e_loop *l = cio__e_tls_loop;
    if (f == NULL || (l != NULL && l->adopted))
        return cio__stderr_thread_self(); /* a thread (adopted or not): one owner whatever the instance */
    return (uintptr_t)f;
}

/* For diagnostics (stderr_lock.c): the fiber this thread runs, if any, and its uncancelable wait. */
static bool diag_who(uintptr_t *self, void **ud)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    if (l == NULL || l->adopted || l->ev == NULL || l->current == NULL)
        return false; /* an adopted thread is its loop's only fiber: it waits as the thread */
    *self = (uintptr_t)l->current;
    *ud = l->ev;
    return true;
}

static cio_err diag_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout t)
{
    return cio__e_fiber_futex_wait((struct cio_evented *)ud, ptr, expected, t, false);
}

void cio__e_stderr_install(void)
{
    cio__stderr_set_fibers(diag_who, diag_wait, cio__e_futex_wake);
}

cio_err cio__e_lock_stderr(void *ud)
{
    return cio__stderr_lock(identity(ud), ud, cio__e_futex_wait, cio__e_futex_wake);
}

bool cio__e_try_lock_stderr(void *ud)
{
    return cio__stderr_try_lock(identity(ud));
}

void cio__e_unlock_stderr(void *ud)
{
    cio__stderr_unlock(identity(ud));
}
