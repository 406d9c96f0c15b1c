/*
 * The Threaded backend's alarm: a deadline on a task's blocking calls, so that a timed stream read on
 * a worker is one blocking recvmsg (operate_posix.c) rather than a readiness wait (poll) and then the
 * read: the idle-timeout server of issue 19 makes one system call per read, as its untimed twin does.
 *
 * Which thread runs what:
 * - A task arms its alarm (cio__t_alarm_arm) on its own worker, makes its bracketed calls and disarms
 *   it (cio__t_alarm_disarm) on the same worker before its timed call returns. Arming links the task
 *   into its pool's alarm list, ordered by alarm_at; disarming unlinks it.
 * - The pool's alarm thread (one per pool, started by the first arm, stopped and joined by destroy)
 *   sleeps on `word` until the first alarm_at of the list. For each task whose time has come it sets
 *   alarm_fired and, while the task is inside a bracketed call (CIO__T_SYS in its cancel word), kicks
 *   its thread (cio__t_kick, the cancel's signal: the call fails with EINTR); then it looks at the task
 *   again after alarm_step (ALARM_FIRST_STEP_NS doubling to ALARM_MAX_STEP_NS) and kicks it again if it
 *   is still in a call, since a kick that lands between the bracket's begin and the call is lost (as
 *   for a cancel, cancel.c). The task checks alarm_fired after the bracket's begin (seq_cst on both
 *   sides: either it sees the flag, or the alarm thread sees SYS) and on every EINTR.
 * - The alarm never touches the cancel word: a timeout is not a cancel, and a cancel request still
 *   wins (the bracket's EINTR handling asks for it first).
 * Locks: alarms.mu only, never with the pool mu. The alarm thread holds it while it kicks, so the task
 *   it kicks is still inside its timed call (it cannot unlink, leave, finish or be freed before the kick
 *   is sent): the thread the kick names is the task's. This replaces cancel.c's `signalers` count.
 * Wakes: arming wakes the alarm thread only when the new time is earlier than the one it sleeps toward
 *   (wake_at). Reads that all take the same timeout arm ever later times and cost no wake; disarming
 *   never wakes it (it wakes at wake_at, finds a later head, and sleeps again): about one wake-up per
 *   timeout period while reads come and go.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "pool.h"
#include "task.h"
#include "threaded.h"

#define ALARM_MIN_LEFT_NS 1000000LL  /* less left than this: no alarm (poll is exact and cheap then) */
#define ALARM_FIRST_STEP_NS 50000LL  /* after a kick (or a look that found no call): next look */
#define ALARM_MAX_STEP_NS 10000000LL /* the step doubles up to this */

static int64_t awake_ns(void)
{
    return cio__os_now(NULL, CIO_CLOCK_AWAKE).ns;
}

void cio__t_alarm_init(cio_threaded *t)
{
    struct cio__t_alarms *a = &t->alarms;
    cio__mu_init(&a->mu);
    a->head = a->tail = NULL;
    a->wake_at = INT64_MAX;
    a->state = CIO__T_ALARM_NONE;
    atomic_init(&a->word, 0);
}

/* With mu held: task into the list, after every task of the same or an earlier time. Times mostly
 * come in order (one timeout, later and later reads), so the walk from the tail is short. */
static void link_locked(struct cio__t_alarms *a, struct cio_any_future *task)
{
    struct cio_any_future *after = a->tail;
    while (after != NULL && after->alarm_at > task->alarm_at)
        after = after->aprev;
    task->aprev = after;
    task->anext = after != NULL ? after->anext : a->head;
    if (task->anext != NULL)
        task->anext->aprev = task;
    else
        a->tail = task;
    if (after != NULL)
        after->anext = task;
    else
        a->head = task;
}

static void unlink_locked(struct cio__t_alarms *a, struct cio_any_future *task)
{
    if (task->aprev != NULL)
        task->aprev->anext = task->anext;
    else
        a->head = task->anext;
    if (task->anext != NULL)
        task->anext->aprev = task->aprev;
    else
        a->tail = task->aprev;
    task->anext = task->aprev = NULL;
}

/* With mu held: the tasks whose time has come are marked, kicked while in a call, and listed again
 * one step later. */
static void fire_locked(struct cio__t_alarms *a, int64_t now)
{
    while (a->head != NULL && a->head->alarm_at <= now) {
        struct cio_any_future *task = a->head;
        unlink_locked(a, task);
        atomic_store_explicit(&task->alarm_fired, true, memory_order_seq_cst);
        if (atomic_load_explicit(&task->cancel, memory_order_seq_cst) & CIO__T_SYS)
            cio__t_kick(task);
        task->alarm_step = task->alarm_step == 0                      ? ALARM_FIRST_STEP_NS
                           : task->alarm_step < ALARM_MAX_STEP_NS / 2 ? task->alarm_step * 2
                                                                      : ALARM_MAX_STEP_NS;
        task->alarm_at = now + task->alarm_step;
        link_locked(a, task);
    }
}

static void *alarm_main(void *arg)
{
    struct cio__t_alarms *a = (struct cio__t_alarms *)arg;
    cio__t_lock(&a->mu);
    while (a->state == CIO__T_ALARM_RUNNING) {
        if (a->head != NULL)
            fire_locked(a, awake_ns());
        a->wake_at = a->head != NULL ? a->head->alarm_at : INT64_MAX;
        cio_timeout until = a->head != NULL ? cio_timeout_deadline(CIO_CLOCK_AWAKE, (cio_timestamp){a->wake_at})
                                            : CIO_TIMEOUT_NONE;
        uint32_t seen = atomic_load_explicit(&a->word, memory_order_acquire);
        cio__mu_unlock(&a->mu);
        (void)cio__t_os_futex_wait(&a->word, seen, until, false);
        cio__t_lock(&a->mu);
    }
    cio__mu_unlock(&a->mu);
    return NULL;
}

/* With mu held: whether the alarm thread runs (started now if it never was; a failure is final for
 * the pool, whose timed calls then wait with poll). */
static bool running_locked(struct cio__t_alarms *a)
{
    if (a->state == CIO__T_ALARM_NONE)
        a->state = CIO__SYS(pthread_create, alarm)(&a->thread, NULL, alarm_main, a) == 0 ? CIO__T_ALARM_RUNNING
                                                                                         : CIO__T_ALARM_FAILED;
    return a->state == CIO__T_ALARM_RUNNING;
}

bool cio__t_alarm_arm(cio_timeout deadline)
{
    struct cio_any_future *task = cio__t_current;
    if (task == NULL || task->protection == CIO_CANCEL_BLOCKED || deadline.kind != CIO_TIMEOUT_KIND_DEADLINE)
        return false;
    int64_t now = awake_ns(), at = deadline.ns;
    if (deadline.clock != CIO_CLOCK_AWAKE) { /* the same span from now, on the alarm thread's clock */
        if (deadline.clock != CIO_CLOCK_REAL && deadline.clock != CIO_CLOCK_BOOT)
            return false;
        int64_t there = cio__os_now(NULL, deadline.clock).ns;
        if (deadline.ns < there)
            return false; /* passed */
        at = deadline.ns - there > INT64_MAX - now ? INT64_MAX : now + (deadline.ns - there);
    }
    if (at < now || at - now < ALARM_MIN_LEFT_NS)
        return false;
    struct cio__t_alarms *a = &task->owner->alarms;
    cio__t_lock(&a->mu);
    if (!running_locked(a)) {
        cio__mu_unlock(&a->mu);
        return false;
    }
    task->alarm_at = at;
    task->alarm_step = 0;
    atomic_store_explicit(&task->alarm_fired, false, memory_order_relaxed);
    link_locked(a, task);
    bool wake = at < a->wake_at;
    if (wake) {
        a->wake_at = at;
        atomic_fetch_add_explicit(&a->word, 1, memory_order_release);
    }
    cio__mu_unlock(&a->mu);
    if (wake)
        cio__t_os_futex_wake(&a->word, 1);
    return true;
}

bool cio__t_alarm_fired(void)
{
    struct cio_any_future *task = cio__t_current;
    return task != NULL && atomic_load_explicit(&task->alarm_fired, memory_order_seq_cst);
}

void cio__t_alarm_disarm(void)
{
    struct cio_any_future *task = cio__t_current;
    struct cio__t_alarms *a = &task->owner->alarms;
    cio__t_lock(&a->mu);
    unlink_locked(a, task);
    cio__mu_unlock(&a->mu);
}

void cio__t_alarm_fini(cio_threaded *t)
{
    struct cio__t_alarms *a = &t->alarms;
    cio__t_lock(&a->mu);
    bool join = a->state == CIO__T_ALARM_RUNNING;
    a->state = CIO__T_ALARM_STOP;
    atomic_fetch_add_explicit(&a->word, 1, memory_order_release);
    cio__mu_unlock(&a->mu);
    if (join) {
        cio__t_os_futex_wake(&a->word, 1);
        pthread_join(a->thread, NULL);
    }
    cio__mu_destroy(&a->mu);
}
