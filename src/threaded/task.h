/*
 * Tasks of the Threaded backend (the struct behind cio_any_future) and their cancel state.
 *
 * A task runs start to finish on one worker thread. Its `cancel` word:
 *   CIO__T_REQ  a cancel request is pending: the next cancellation point returns CIO_E_CANCELED
 *   CIO__T_ACK  a request was delivered (acknowledged); cio_recancel turns it back into REQ
 *   CIO__T_SYS  the task's thread is inside a bracketed blocking syscall (cancel.c)
 * Only the task's own thread sets/clears SYS and turns REQ into ACK; cancelers only set REQ (when
 * neither REQ nor ACK is set) and then signal the thread while REQ and SYS are both set.
 * `signalers` points to the pool's count of cancelers between their state check and their kick.
 * A canceler raises it, then checks that the task is in a syscall and not done; the worker, after
 * publishing `done`, waits until the count is 0 before it takes another task or retires (both
 * seq_cst: either the canceler sees done and does not kick, or the worker sees the count). So a
 * kick never targets a dead thread nor lands in a later task, and the worker publishes `done`
 * first: on one CPU the canceler, preempted by the signal it sent, finds the task finished as soon
 * as it runs again (one switch each way, not two).
 * `done` is the futex word awaiters sleep on: CIO__T_RUNNING, CIO__T_SLEEPER (running, and an
 * awaiter announced that it may sleep on the word) or CIO__T_FINISHED (result valid). The worker
 * swaps in FINISHED and makes the futex wake only if it took SLEEPER out: an awaiter that yields
 * (or a canceler that finds the task finished when it runs again) costs no wake system call.
 * `waiting_on` is the futex word of the task's bracketed futex wait, or 0; set and cleared only by
 * the task's own thread. Where the kick cannot interrupt a futex wait (Windows: WaitOnAddress is
 * not alertable) the canceler wakes that address instead (a spurious wake-up for other waiters).
 */
#ifndef CIO_THREADED_TASK_H
#define CIO_THREADED_TASK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"

#define CIO__T_REQ 1u
#define CIO__T_ACK 2u
#define CIO__T_SYS 4u

#define CIO__T_RUNNING 0u
#define CIO__T_FINISHED 1u
#define CIO__T_SLEEPER 2u

struct cio__t_group;

struct cio_any_future {
    _Atomic(uint32_t) gen;        /* first: the future's generation (src/core/io.c), 0 once awaited */
    struct cio_any_future *next;  /* run queue / free list */
    struct cio_any_future *rnext; /* the pool's running list (pool mu): what destroy cancels */
    struct cio_any_future *rprev;
    struct cio_threaded *owner;
    struct cio__t_group *group; /* NULL for futures */
    cio_task_fn fn;
    const char *site; /* where it was spawned ("file:line"), or NULL (overflow.h) */
    cio_err result;
    cio_cancel_protection protection;
    _Atomic(uint32_t) cancel;
    _Atomic(uint32_t) *signalers; /* the pool's kick count (above) */
    _Atomic(size_t) *kicks;       /* the pool's count of kicks sent (cio_threaded_get_stats) */
    _Atomic(uint32_t) done;
    _Atomic(uintptr_t) waiting_on;
    pthread_t thread;       /* the task's thread, while it runs (the BSDs' kick) */
    uint32_t os_thread_id;  /* its OS id where the kick needs it (Windows; Linux: the tid) */
    uint32_t os_process_id; /* Linux: the thread group id tgkill names beside the tid */
    /* The task's alarm (alarm.c), while a timed call of its own armed it: under the pool's alarm mu. */
    struct cio_any_future *anext, *aprev; /* the pool's alarm list, by alarm_at */
    int64_t alarm_at;                     /* CIO_CLOCK_AWAKE ns of the alarm thread's next look */
    int64_t alarm_step;                   /* 0 until it fired; then the interval between kicks */
    _Atomic(_Bool) alarm_fired;           /* the deadline passed (the task's own thread reads it) */
    size_t capacity;                      /* bytes available for the context */
    size_t ctx_size;
    unsigned char *ctx; /* CIO_CONTEXT_ALIGN-aligned, inside this block */
};

/* The task running on this thread, NULL on threads that are not workers (or between tasks). */
extern _Thread_local struct cio_any_future *cio__t_current;

/* Posts a cancel request (no-op if one is pending or was delivered) and, while the task sits in a
 * bracketed syscall, signals its thread once. Returns true if the task is in a syscall with the
 * request still pending (the caller should signal again later). */
_Bool cio__t_request_cancel(struct cio_any_future *task);
/* Signals the task's thread again if it is still in a syscall with the request pending; returns
 * whether it did. */
_Bool cio__t_resignal(struct cio_any_future *task);
/* Whether the calling task has a cancel request it would see at its next cancellation point
 * (false off a worker thread and under CIO_CANCEL_BLOCKED). Takes nothing. */
_Bool cio__t_cancel_pending(void);
/* Called by the worker after it published the task's end (`done`, or the group member's unlink):
 * waits out cancelers that may still be about to kick its thread (`signalers`). */
void cio__t_quiesce(_Atomic(uint32_t) *signalers);

/* The OS half of cancellation (cancel_linux.c / cancel_pthread.c / cancel_windows.c). Knocks the
 * task's thread out of the bracketed call it is in (a signal on POSIX: tgkill on Linux; an APC,
 * CancelSynchronousIo and a wake of `waiting_on` on Windows). Called only while the canceler holds
 * a `signalers` count. */
void cio__t_kick(struct cio_any_future *task);
/* Records in `task` what cio__t_kick needs to name the calling worker thread; called by the worker
 * in run_task, before the task's function runs. */
void cio__t_record_thread(struct cio_any_future *task);
/* Installs (refcounted) the no-op handlers for the cancel signal and SIGPIPE; undoes on release. */
cio_err cio__t_signals_acquire(void);
void cio__t_signals_release(void);
/* Unblocks the cancel signal in the calling (worker) thread. */
void cio__t_signals_unblock(void);

/* Yields the CPU for up to ns while *word reads `value` (equal) or anything but `value` (!equal)
 * (pool_slots.c). */
void cio__t_yield_while(const _Atomic(uint32_t) *word, uint32_t value, _Bool equal, int64_t ns);

/* The pool's OS pieces (pool_posix.c / pool_windows.c). Blocks are CIO_CONTEXT_ALIGN-aligned. */
void *cio__t_block_alloc(size_t size);
void cio__t_block_free(void *block);
size_t cio__t_cpu_count(void);
/* A worker stack of at least `requested` bytes, rounded as the OS wants. */
size_t cio__t_stack_size(size_t requested);
/* The calling thread's usable stack: its lowest address and size. `near_top` (an address near its
 * top) and `asked` (the size it was started with) are the estimate where the OS cannot say (POSIX:
 * the thread library's block and TLS sit at the top); Windows: the real bounds (the reservation is
 * the executable's default when `asked` is below it: winpthreads sets only the commit). */
void cio__t_thread_stack(uintptr_t near_top, size_t asked, uintptr_t *lo, size_t *size);

/* The pool's alarm thread and list (alarm.c; alarm_none.c where timed calls never arm one): set up
 * by cio_threaded_create, stopped and joined by destroy once no task runs. */
struct cio_threaded;
void cio__t_alarm_init(struct cio_threaded *t);
void cio__t_alarm_fini(struct cio_threaded *t);

/* Futex on this OS, bracketed as a cancellation point when `cancelable`. */
cio_err cio__t_os_futex_wait(const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout, _Bool cancelable);
void cio__t_os_futex_wake(const _Atomic(uint32_t) *ptr, uint32_t max_waiters);


#endif
