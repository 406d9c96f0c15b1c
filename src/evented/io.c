/*
 * The Evented backend's top: its vtable (cio__e_<name> for every row of CIO_VTABLE_SLOTS, cio/io.h),
 * and creating and destroying an instance.
 *
 * Invariants: nothing else in src/evented calls into this file (it names everything below it: the
 * slot files, the scheduler, the pollers). cio_evented_create installs what the layers below call
 * back without naming: the instance's vtable is a copy of cio__e_vtable in which the io_uring flavour
 * puts the ring-operation slots the kernel has (fs_uring.c, net_uring.c); e->fiber_started and
 * e->fiber_finished are tasks.c's part of a fiber's start and finish, which sched.c calls; and the
 * Threaded backend's hooks (the outer cancellation point, the close hook of the descriptor table).
 * Destroy waits until no fiber is live (canceling those still running after a grace period, and
 * listing any that outlast the cancel, debug builds), then stops the loops.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "bridge.h" /* cio__t_cpu_count */
#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "slots.h"
#include "os.h"
#include "overflow.h"

#define DEFAULT_STACK (64u * 1024u)
#define STACKS_CACHED 1024u

#define CIO__E_SLOT(ret, name, params) .name = cio__e_##name,
const struct cio_vtable cio__e_vtable = {CIO_VTABLE_SLOTS(CIO__E_SLOT)};

static bool owns(cio_io io)
{
    return io.userdata != NULL && io.vtable == &((cio_evented *)io.userdata)->vtable; /* no dereference */
}

/* For cio's own tests (their warm-up): the helper pool of an Evented io, NULL for any other io. */
cio_threaded *cio__e_helper_pool(cio_io io)
{
    return owns(io) ? ((cio_evented *)io.userdata)->helper : NULL;
}

static void destroy(void *userdata)
{
    cio_evented_destroy((cio_evented *)userdata);
}

cio_io cio_evented_io(cio_evented *evented)
{
    cio__register_backend(owns, destroy); /* for cio_io_destroy */
    return (cio_io){evented, &evented->vtable};
}

/* ---- create / destroy
 * ------------------------------------------------------------------------------------------------- */

static unsigned cpu_count(void)
{
    size_t n = cio__t_cpu_count(); /* the affinity mask: `taskset -c 0` means one loop */
    return n < 1024 ? (unsigned)n : 1024u;
}

static void free_instance(struct cio_evented *e)
{
    for (unsigned i = 0; i < e->nloops; i++) {
        struct cio__e_loop *l = &e->loops[i];
        while (l->stk_count > 0)
            cio__stack_free(&l->stk_cache[--l->stk_count]);
        cio__mu_destroy(&e->loops[i].inbox_mu);
        cio__mu_destroy(&e->loops[i].spawn_mu);
        free(e->loops[i].heap);
    }
    cio__e_blocks_free(e); /* before the loops go: their block caches */
    free(e->loops);
    cio__stack_pool_destroy(&e->stacks);
    cio__mu_destroy(&e->free_mu);
    free(e);
}

cio_err cio_evented_create(const cio_evented_options *options, cio_evented **out)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    if (options != NULL)
        o = *options;
    if (out == NULL || (unsigned)o.flavour > (unsigned)CIO_EVENTED_IOCP)
        return CIO_E_INVALID_ARGUMENT;
    struct cio_evented *e = (struct cio_evented *)CIO__SYS(calloc, evented_create)(1, sizeof *e);
    if (e == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio__t_set_outer_cancel(cio__e_outer_cancel); /* inline Threaded calls: cancelable as fibers */
    cio__os_set_close_hook(cio__e_fd_forget);     /* closes through Threaded slots renew the descriptor table */
    cio__e_stderr_install();                      /* diagnostics made on fibers take the stderr lock as the fiber */
    cio__overflow_install(cio__e_overflow);       /* a fiber's stack overflow: a message, then abort */
    static _Atomic(uint32_t) last_id;
    e->id = atomic_fetch_add_explicit(&last_id, 1, memory_order_relaxed) + 1;
    e->fiber_started = cio__e_group_started; /* tasks.c's part of a fiber's life, called by sched.c */
    e->fiber_finished = cio__e_finish;
    e->nloops = o.threads != 0 ? o.threads : cpu_count();
    e->stack_size = o.stack_size != 0 ? o.stack_size : DEFAULT_STACK;
    e->ring_entries = o.ring_entries != 0 ? o.ring_entries : 256u;
    cio__mu_init(&e->free_mu);
    cio__stack_pool_init(&e->stacks, e->stack_size, STACKS_CACHED);
    e->loops = (struct cio__e_loop *)CIO__SYS(calloc, evented_loops)(e->nloops, sizeof *e->loops);
    if (e->loops == NULL) {
        e->nloops = 0;
        free_instance(e);
        return CIO_E_SYSTEM_RESOURCES;
    }
    for (unsigned i = 0; i < e->nloops; i++)
        cio__e_loop_init(&e->loops[i], e, i);
    cio_err err = cio__e_choose_poller(e, o.flavour); /* flavour_<os>.c */
    if (err != CIO_OK) {
        free_instance(e);
        return err;
    }
    e->vtable = cio__e_vtable;
    if (e->flavour == CIO_EVENTED_IO_URING) { /* the ring operations the kernel has (poll_uring_none.c: never) */
        cio__e_uring_fs_override(e, &e->vtable);
        cio__e_uring_net_override(e, &e->vtable);
        cio__e_uring_splice_override(e, &e->vtable);
        cio__e_uring_process_override(e, &e->vtable);
    }
    cio_threaded_options ho;
    memset(&ho, 0, sizeof ho);
    ho.async_limit = 0;
    ho.idle_timeout_ms = 2000;
    err = cio_threaded_create(&ho, &e->helper);
    if (err != CIO_OK) {
        for (unsigned i = 0; i < e->nloops; i++)
            e->poller->deinit(&e->loops[i]);
        free_instance(e);
        return err;
    }
    if (o.helper_threads != 0)
        cio_threaded_set_concurrent_limit(e->helper, o.helper_threads);
    for (unsigned i = 0; i < e->nloops; i++) {
        if (CIO__SYS(pthread_create, loop_start)(&e->loops[i].thread, NULL, cio__e_loop_main, &e->loops[i]) != 0) {
            atomic_store(&e->shutdown, 1);
            for (unsigned j = 0; j < i; j++) {
                atomic_store(&e->loops[j].sleeping, 1);
                cio__e_wake_loop(&e->loops[j]);
                pthread_join(e->loops[j].thread, NULL);
            }
            for (unsigned j = 0; j < e->nloops; j++)
                e->poller->deinit(&e->loops[j]);
            cio_threaded_destroy(e->helper);
            free_instance(e);
            return CIO_E_SYSTEM_RESOURCES;
        }
    }
    *out = e;
    return CIO_OK;
}

/* Destroy's view of the fibers still running (started, not finished; each loop's live list): with
 * report unset, posts each a cancel request (a no-op for one that has one pending or delivered); with
 * report set, lists them on stderr (debug builds), with where they were spawned. Never the calling
 * fiber (a destroy from a fiber of the instance waits for every other). */
static void live_fibers(struct cio_evented *e, bool report, unsigned waited_ms)
{
    struct cio_any_future *self = cio__e_self(e);
    for (unsigned i = 0; i < e->nloops; i++) {
        struct cio__e_loop *l = &e->loops[i];
        cio__e_live_lock(l);
        for (struct cio_any_future *f = l->live_head; f != NULL; f = f->lnext) {
            if (f == self)
                continue;
            if (!report) {
                cio__e_request_cancel(f);
                continue;
            }
            char what[400];
            cio__fmt(what, sizeof what,
                     "fiber %p (function %p, spawned at %s) still runs %u ms after destroy "
                     "began and a cancel request; waiting for it",
                     (void *)f, *(void **)&f->fn, f->site != NULL ? f->site : "an unknown place", waited_ms);
            cio__debug_note("cio_evented_destroy", what);
        }
        cio__e_live_unlock(l);
    }
}

#define DESTROY_ROUND_MS 100
#define DESTROY_GRACE_ROUNDS 10  /* 1 s: then every fiber still running gets a cancel request */
#define DESTROY_REPORT_ROUNDS 50 /* 5 s: and those still running are listed (debug builds) */

void cio_evented_destroy(cio_evented *e)
{
    if (e == NULL)
        return;
    for (unsigned rounds = 0;; rounds++) {
        uint32_t seq = atomic_load_explicit(&e->live_seq, memory_order_acquire);
        uint32_t live = (uint32_t)atomic_load_explicit(&e->live, memory_order_acquire);
        if (live == 0)
            break;
        if (rounds >= DESTROY_GRACE_ROUNDS) /* each round: fibers started since get theirs */
            live_fibers(e, false, 0);
        if (rounds == DESTROY_REPORT_ROUNDS)
            live_fibers(e, true, rounds * DESTROY_ROUND_MS);
        if (cio__e_self(e) != NULL)
            (void)cio__e_fiber_futex_wait(e, &e->live_seq, seq, cio_timeout_ms(DESTROY_ROUND_MS), false);
        else
            (void)cio__e_futex_wait_foreign(&e->live_seq, seq, cio_timeout_ms(DESTROY_ROUND_MS));
    }
    atomic_store_explicit(&e->shutdown, 1, memory_order_seq_cst);
    cio__e_release_adopted(e);
    for (unsigned i = 0; i < e->nloops; i++) {
        struct cio__e_loop *l = &e->loops[i];
        atomic_store_explicit(&l->woken, 1, memory_order_seq_cst);
        e->poller->wake(l);
    }
    for (unsigned i = 0; i < e->nloops; i++)
        pthread_join(e->loops[i].thread, NULL);
    for (unsigned i = 0; i < e->nloops; i++)
        e->poller->deinit(&e->loops[i]);
    cio_threaded_destroy(e->helper);
    free_instance(e);
}

cio_evented_flavour cio_evented_flavour_of(const cio_evented *e)
{
    return e->flavour;
}

static void add_loop_stats(const struct cio__e_loop *l, void *arg)
{
    cio_evented_stats *out = (cio_evented_stats *)arg;
    out->fibers_started += atomic_load_explicit(&l->n_fibers, memory_order_relaxed);
    out->tasks_inline += atomic_load_explicit(&l->n_inline, memory_order_relaxed);
}

void cio_evented_get_stats(const cio_evented *e, cio_evented_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (e == NULL)
        return;
    out->fibers_started = atomic_load_explicit(&e->n_fibers_gone, memory_order_relaxed);
    out->tasks_inline = atomic_load_explicit(&e->n_inline_gone, memory_order_relaxed);
    cio__e_for_each_loop(e, add_loop_stats, out);
}
