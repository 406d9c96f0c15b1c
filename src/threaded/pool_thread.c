/*
 * The Threaded pool's per-thread pieces (split from pool_slots.c and pool_life.c so that the pool's
 * files call each other in one direction only): yielding before sleeping (cio__t_yield_while, used
 * by idle workers, awaiters, cancelers and the futex slots) and the worker's stack record for the
 * stack-overflow resolver. Calls nothing in the other pool files.
 *
 * Invariants: nobody spins: a yield ends as soon as the word changes or the time is up, and a clock
 * that cannot be read means no yielding at all (the caller sleeps at once). The stack record is
 * thread-local, written only by its own worker (pool.c's worker_main) and read by the resolver on
 * the same thread.
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "overflow.h"
#include "task.h"
#include "threaded.h"
#include "pool.h"

/* ---- yielding before sleeping ---------------------------------------------------------------------- */

/* -1 when the clock cannot be read (then nobody yields: they sleep at once). */
int64_t cio__t_mono_ns(void)
{
    struct timespec ts;
    if (CIO__SYS(clock_gettime, yield_clock)(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void cio__t_yield_while(const _Atomic(uint32_t) *word, uint32_t value, bool equal, int64_t ns)
{
    int64_t start = cio__t_mono_ns();
    if (start < 0)
        return;
    int64_t end = start + ns;
    for (;;) {
        uint32_t v = atomic_load_explicit(word, memory_order_acquire);
        if ((v == value) != equal)
            return;
        int64_t now = cio__t_mono_ns();
        if (now < 0 || now >= end)
            return;
        sched_yield();
    }
}

/* ---- the worker's stack ---------------------------------------------------------------------- */

/* The stack-overflow resolver (src/core/overflow.h): the worker's stack bottom (cio__t_thread_stack)
 * is an estimate on POSIX (the thread library keeps its own thread block and TLS at the top, and the
 * guard below the stack); on Windows the guard pages and the pages kept back for the handler lie
 * just above the reservation's bottom. So a fault counts as this worker's overflow from WORKER_SLACK
 * above the bottom down to CIO__OVERFLOW_REACH below it. */
#define WORKER_SLACK ((uintptr_t)64 * 1024)
static _Thread_local uintptr_t worker_lo;
static _Thread_local size_t worker_size;

void cio__t_worker_stack(uintptr_t lo, size_t size)
{
    worker_lo = lo;
    worker_size = size;
}

bool cio__t_worker_overflow(const void *addr, cio__overflow_info *out)
{
    if (worker_size == 0)
        return false;
    uintptr_t a = (uintptr_t)addr, lo = worker_lo;
    if (a >= lo + WORKER_SLACK || a + CIO__OVERFLOW_REACH < lo)
        return false;
    struct cio_any_future *task = cio__t_current;
    out->stack_size = worker_size;
    out->kind = "a Threaded worker";
    out->option = "cio_threaded_options.stack_size";
    out->site = task != NULL ? task->site : NULL;
    out->fn = task != NULL ? *(const void *const *)&task->fn : NULL;
    return true;
}
