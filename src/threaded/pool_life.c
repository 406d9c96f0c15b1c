/*
 * The Threaded pool's life: create (limits, stack size, idle timeout), destroy, the limit setters
 * and the stats. Destroy sets `shutdown` under the pool mu and waits for the workers to leave
 * (destroy_wait: running tasks that outlast a grace period are canceled, and reported in debug
 * builds if they still run); the invariants of the pool are at the top of pool.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "overflow.h"
#include "pool.h"
#include "task.h"
#include "stderr_lock.h"
#include "threaded.h"

#define DEFAULT_STACK (256u * 1024u)
#define DEFAULT_IDLE_MS 5000u
#define ASYNC_FLOOR 4u         /* the least default async limit */
#define TARGET_FLOOR 4u        /* the least number of workers started without waiting (pool.c) */
#define DESTROY_GRACE_MS 1000  /* destroy_wait: running tasks are canceled after this */
#define DESTROY_REPORT_MS 5000 /* destroy_wait: and reported (debug) if still running after this */

/* ---- create / destroy --------------------------------------------------------------------------------- */

cio_err cio_threaded_create(const cio_threaded_options *options, cio_threaded **out)
{
    cio_threaded_options o;
    memset(&o, 0, sizeof o);
    if (options != NULL)
        o = *options;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio__stderr_set_threads(cio__t_futex_wait, cio__t_futex_wake); /* how threads wait for the stderr lock */
    cio_threaded *t = (cio_threaded *)CIO__SYS(calloc, threaded_create)(1, sizeof *t);
    if (t == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio__overflow_install(cio__t_worker_overflow); /* a task's stack overflow: a message, then abort */
    if (cio__t_signals_acquire() != CIO_OK) {
        free(t);
        return CIO_E_UNEXPECTED;
    }
    cio__mu_init(&t->mu);
    cio__cv_init(&t->work);
    cio__cv_init(&t->quiet);
    size_t cpus = cio__t_cpu_count();
    /* Zig's default is CPU count - 1; but async tasks are mostly blocking I/O, which overlaps even
     * on one CPU: with that default a process pinned to one CPU ran every async inline (measured,
     * B13: 64 files written 5-7x slower than by libuv's pool of 4). So at least ASYNC_FLOOR. */
    t->async_limit = o.async_limit != 0 ? o.async_limit : (cpus - 1 > ASYNC_FLOOR ? cpus - 1 : ASYNC_FLOOR);
    atomic_init(&t->async_full, t->async_limit == 0);
    atomic_init(&t->wake_gen, 0);
    atomic_init(&t->mon_word, 0);
    t->target = cpus > TARGET_FLOOR ? cpus : TARGET_FLOOR;
    t->monitor = CIO__T_MON_NONE;
    atomic_init(&t->signalers, 0);
    atomic_init(&t->kicks, 0);
    atomic_init(&t->n_inline, 0);
    atomic_init(&t->n_workers, 0);
    t->concurrent_limit = o.concurrent_limit != 0 ? o.concurrent_limit : SIZE_MAX;
    t->stack_size = cio__t_stack_size(o.stack_size != 0 ? o.stack_size : DEFAULT_STACK);
    t->idle_timeout_ms = o.idle_timeout_ms != 0 ? o.idle_timeout_ms : DEFAULT_IDLE_MS;
    cio__t_alarm_init(t);
    *out = t;
    return CIO_OK;
}

/* With mu held, shutdown set: waits until no task runs and neither a worker nor the monitor is left. Tasks still running
 * after DESTROY_GRACE_MS get a cancel request (signalled again on each round while they sit in a
 * call); those still running after DESTROY_REPORT_MS are listed on stderr (debug builds), once.
 * Queued tasks have workers and run (canceled ones see the request at their first point). */
static void destroy_wait(cio_threaded *t)
{
    _Atomic(uint32_t) never = 0; /* a word nobody wakes: the futex wait is a timed sleep */
    int64_t waited_ms = 0, step_ms = 1;
    bool canceled = false, reported = false;
    while (t->busy > 0 || t->workers > 0 || t->monitor != CIO__T_MON_NONE) {
        if (t->busy == 0) { /* only threads leaving: each broadcasts `quiet` as it goes */
            cio__cv_wait(&t->quiet, &t->mu);
            continue;
        }
        if (waited_ms >= DESTROY_GRACE_MS) {
            for (struct cio_any_future *r = t->running; r != NULL; r = r->rnext)
                (void)(canceled ? cio__t_resignal(r) : cio__t_request_cancel(r));
            canceled = true;
        }
        if (canceled && !reported && waited_ms >= DESTROY_REPORT_MS) {
            reported = true;
            size_t n = 0;
            for (struct cio_any_future *r = t->running; r != NULL; r = r->rnext) {
                char what[400];
                cio__fmt(what, sizeof what,
                         "task %p (function %p, spawned at %s) still runs %lld ms after "
                         "destroy began and a cancel request; waiting for it",
                         (void *)r, *(void **)&r->fn, r->site != NULL ? r->site : "an unknown place",
                         (long long)waited_ms);
                cio__debug_note("cio_threaded_destroy", what);
                n++;
            }
            (void)n;
        }
        cio__mu_unlock(&t->mu);
        (void)cio__t_os_futex_wait(&never, 0, cio_timeout_ms(step_ms), false);
        cio__t_lock(&t->mu);
        waited_ms += step_ms;
        if (step_ms < 20)
            step_ms *= 2;
    }
}

void cio_threaded_destroy(cio_threaded *t)
{
    if (t == NULL)
        return;
    cio__t_lock(&t->mu);
    t->shutdown = true;
    cio__cv_broadcast(&t->work);
    atomic_fetch_add_explicit(&t->mon_word, 1, memory_order_release);
    cio__t_os_futex_wake(&t->mon_word, 1); /* the monitor, parked or between ticks */
    destroy_wait(t);
    struct cio_any_future *f = t->free_list;
    t->free_list = NULL;
    cio__mu_unlock(&t->mu);
    cio__t_alarm_fini(t); /* no task runs: none is armed */
    while (f != NULL) {
        struct cio_any_future *next = f->next;
        cio__t_block_free(f);
        f = next;
    }
    cio__cv_destroy(&t->work);
    cio__cv_destroy(&t->quiet);
    cio__mu_destroy(&t->mu);
    cio__t_signals_release();
    free(t);
}

void cio_threaded_set_async_limit(cio_threaded *t, size_t limit)
{
    cio__t_lock(&t->mu);
    t->async_limit = limit;
    cio__t_update_full(t);
    cio__mu_unlock(&t->mu);
}

void cio_threaded_set_concurrent_limit(cio_threaded *t, size_t limit)
{
    cio__t_lock(&t->mu);
    t->concurrent_limit = limit;
    cio__mu_unlock(&t->mu);
}

void cio_threaded_get_stats(cio_threaded *t, cio_threaded_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (t == NULL)
        return;
    out->kicks = atomic_load_explicit(&t->kicks, memory_order_relaxed);
    out->tasks_inline = atomic_load_explicit(&t->n_inline, memory_order_relaxed);
    out->tasks_on_workers = atomic_load_explicit(&t->n_workers, memory_order_relaxed);
}
