/*
 * Cancellation for the Threaded backend: the per-task cancel word (see task.h) and the bracket around
 * blocking syscalls. The OS half that knocks a thread out of a blocked call is cio__t_kick
 * (cancel_linux.c, cancel_pthread.c: a signal; cancel_windows.c: an APC, CancelSynchronousIo, a
 * futex wake).
 *
 * Invariants:
 * - A task's REQ->ACK transition, and SYS set/clear, happen only on the task's own thread
 *   (cio__t_current). Other threads only OR in REQ (cio__t_request_cancel) and read the word.
 * - A canceler that sees REQ|SYS kicks the thread (cio__t_kick); the blocked call fails (EINTR,
 *   an APC's wake-up, an aborted I/O) and cio__t_syscall_interrupted turns the pending request
 *   into CIO_E_CANCELED. A kick that lands between cio__t_syscall_begin and the call itself may be
 *   lost, so cancelers kick again with exponential backoff while REQ|SYS persists (pool.c).
 * - signalers (task.h, the pool's count) keeps the target thread alive, and on the task, across
 *   the check-then-kick window.
 * - Off a worker thread, or under CIO_CANCEL_BLOCKED, nothing here ever signals; off a worker the
 *   checks ask the outer cancellation point (cio__t_set_outer_cancel: the Evented backend's running
 *   fiber), which only ever takes a request, never blocks or signals.
 * Lock order: none (lock-free).
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "task.h"
#include "threaded.h"

_Thread_local struct cio_any_future *cio__t_current;

static _Atomic(cio__t_outer_cancel_fn) outer_cancel;

void cio__t_set_outer_cancel(cio__t_outer_cancel_fn fn)
{
    atomic_store_explicit(&outer_cancel, fn, memory_order_release);
}

/* What a check answers where cancelable_here said no: the outer point off a worker, else CIO_OK. */
static cio_err not_here(void)
{
    if (cio__t_current != NULL)
        return CIO_OK;
    cio__t_outer_cancel_fn fn = atomic_load_explicit(&outer_cancel, memory_order_acquire);
    return fn != NULL ? fn() : CIO_OK;
}

static bool cancelable_here(struct cio_any_future **out)
{
    struct cio_any_future *t = cio__t_current;
    if (t == NULL || t->protection == CIO_CANCEL_BLOCKED)
        return false;
    *out = t;
    return true;
}

/* REQ -> ACK (and clear SYS); returns true if a request was taken. */
static bool take_request(struct cio_any_future *t)
{
    uint32_t s = atomic_load_explicit(&t->cancel, memory_order_acquire);
    while (s & CIO__T_REQ) {
        uint32_t n = (s & ~(CIO__T_REQ | CIO__T_SYS)) | CIO__T_ACK;
        if (atomic_compare_exchange_weak_explicit(&t->cancel, &s, n, memory_order_acq_rel, memory_order_acquire))
            return true;
    }
    return false;
}

cio_err cio__t_cancel_point(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return not_here();
    return take_request(t) ? CIO_E_CANCELED : CIO_OK;
}

bool cio__t_cancel_pending(void)
{
    struct cio_any_future *t;
    return cancelable_here(&t) && (atomic_load_explicit(&t->cancel, memory_order_acquire) & CIO__T_REQ) != 0;
}

cio_err cio__t_syscall_begin(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return not_here();
    uint32_t s = atomic_load_explicit(&t->cancel, memory_order_acquire);
    for (;;) {
        if (s & CIO__T_REQ) {
            if (take_request(t))
                return CIO_E_CANCELED;
            s = atomic_load_explicit(&t->cancel, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&t->cancel, &s, s | CIO__T_SYS, memory_order_seq_cst,
                                                  memory_order_acquire))
            return CIO_OK;
    }
}

/* The same question as a cancellation point: a request taken (REQ -> ACK) ends the interrupted call
 * with the bracket closed; none leaves it open for the retry. */
cio_err cio__t_syscall_interrupted(void)
{
    return cio__t_cancel_point();
}

void cio__t_syscall_end(void)
{
    struct cio_any_future *t;
    if (!cancelable_here(&t))
        return;
    atomic_fetch_and_explicit(&t->cancel, ~CIO__T_SYS, memory_order_seq_cst);
}

static bool signal_if_blocked(struct cio_any_future *task)
{
    bool sent = false;
    atomic_fetch_add_explicit(task->signalers, 1, memory_order_seq_cst);
    uint32_t s = atomic_load_explicit(&task->cancel, memory_order_seq_cst);
    if ((s & (CIO__T_REQ | CIO__T_SYS)) == (CIO__T_REQ | CIO__T_SYS) &&
        atomic_load_explicit(&task->done, memory_order_seq_cst) != CIO__T_FINISHED) {
        cio__t_kick(task);
        atomic_fetch_add_explicit(task->kicks, 1, memory_order_relaxed);
        sent = true;
    }
    atomic_fetch_sub_explicit(task->signalers, 1, memory_order_seq_cst);
    return sent;
}

bool cio__t_request_cancel(struct cio_any_future *task)
{
    uint32_t s = atomic_load_explicit(&task->cancel, memory_order_acquire);
    for (;;) {
        if (s & (CIO__T_REQ | CIO__T_ACK))
            return (s & (CIO__T_REQ | CIO__T_SYS)) == (CIO__T_REQ | CIO__T_SYS);
        if (atomic_compare_exchange_weak_explicit(&task->cancel, &s, s | CIO__T_REQ, memory_order_seq_cst,
                                                  memory_order_acquire))
            break;
    }
    return signal_if_blocked(task);
}

bool cio__t_resignal(struct cio_any_future *task)
{
    return signal_if_blocked(task);
}

void cio__t_quiesce(_Atomic(uint32_t) *signalers)
{
    while (atomic_load_explicit(signalers, memory_order_seq_cst) != 0)
        sched_yield();
}
