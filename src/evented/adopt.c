/*
 * The Evented backend's adopted threads (split from sched.c).
 *
 * A thread that is not a loop thread becomes a fiber of the instance when it first waits through it
 * (cio__e_self_adopt: sleep, futex waits, awaits, file and socket operations). It gets a loop of its
 * own (a poller, timers, an inbox) whose only fiber is the thread itself: `main_fiber` is the thread's
 * own context, and the scheduler runs on a small stack of its own (`sched`). When the thread's fiber
 * suspends, the thread switches to that scheduler, which waits in the poller until the fiber is made
 * ready and switches back; so the thread's waits run on its own loop with no hop to a loop thread.
 * The adopted loop never runs other fibers (they would be stranded whenever the thread runs code
 * outside the Io): what the thread spawns goes to the loop threads.
 *
 * Lifetime: the instance lists its adopted loops (adopt_mu). A thread's exit (the key's destructor)
 * unlinks and frees its loop. cio_evented_destroy releases every adopted loop's resources and
 * leaves it orphaned (ev NULL); the thread frees an orphan when it next uses an instance or exits.
 * Lock order: adopt_mu is a leaf (nothing else is taken while it is held but the poller's own).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define ADOPT_SCHED_STACK (128u * 1024u)

static cio__mutex adopt_mu = CIO__MUTEX_INIT;
static pthread_key_t adopt_key;
static _Atomic(int) adopt_key_state; /* 0: not made, 1: being made, 2: made, 3: failed */

/* adopt_mu held, l->ev alive: give back what the loop holds of its instance; l becomes an orphan. */
static void adopted_release(struct cio__e_loop *l)
{
    struct cio_evented *e = l->ev;
    atomic_fetch_add_explicit(&e->n_fibers_gone, atomic_load_explicit(&l->n_fibers, memory_order_relaxed),
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&e->n_inline_gone, atomic_load_explicit(&l->n_inline, memory_order_relaxed),
                              memory_order_relaxed);
    e->poller->deinit(l);
    while (l->blk_cache != NULL) {
        struct cio_any_future *n = l->blk_cache->next;
        cio__e_block_release(l->blk_cache);
        l->blk_cache = n;
    }
    while (l->stk_count > 0)
        cio__stack_pool_put(&e->stacks, &l->stk_cache[--l->stk_count]);
    cio__fiber_ctx_release(&l->sched);
    cio__stack_free(&l->sched_stack);
    free(l->heap);
    l->heap = NULL;
    l->heap_len = l->heap_cap = 0;
    l->tq_head = l->tq_tail = NULL;
    cio__mu_destroy(&l->inbox_mu);
    cio__mu_destroy(&l->spawn_mu);
    l->ev = NULL;
}

/* On the loop's own thread, l released (an orphan) or never linked. */
static void adopted_free(struct cio__e_loop *l)
{
    if (l->main_fiber != NULL)
        cio__fiber_ctx_release(&l->main_fiber->ctx);
    free(l->main_fiber);
    free(l);
}

static void adopt_thread_exit(void *p)
{
    struct cio__e_loop *l = (struct cio__e_loop *)p;
    cio__mu_lock(&adopt_mu);
    struct cio_evented *e = l->ev;
    if (e != NULL) {
        struct cio__e_loop **pp = &e->adopted;
        while (*pp != NULL && *pp != l)
            pp = &(*pp)->anext;
        if (*pp == l)
            *pp = l->anext;
        adopted_release(l);
    }
    cio__mu_unlock(&adopt_mu);
    if (cio__e_tls_loop == l)
        cio__e_tls_loop = NULL;
    adopted_free(l);
}

/* The thread-exit key, made once (by hand: the BSD stand-in headers have no pthread_once). */
static bool adopt_key_ready(void)
{
    int s = atomic_load_explicit(&adopt_key_state, memory_order_acquire);
    if (s == 0) {
        int expected = 0;
        if (atomic_compare_exchange_strong_explicit(&adopt_key_state, &expected, 1, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            s = CIO__SYS(pthread_key_create, adopt_key)(&adopt_key, adopt_thread_exit) == 0 ? 2 : 3;
            atomic_store_explicit(&adopt_key_state, s, memory_order_release);
        }
    }
    while ((s = atomic_load_explicit(&adopt_key_state, memory_order_acquire)) == 1)
        cio__cpu_relax();
    return s == 2;
}

/* The adopted loop's scheduler context: entered by the thread fiber's first suspend. */
static void adopted_main(void *arg)
{
    struct cio__e_loop *l = (struct cio__e_loop *)arg;
    cio__e_switched_out(l);
    cio__e_loop_run(l); /* never returns: the loop is adopted */
    abort();
}

static struct cio_any_future *adopt(struct cio_evented *e)
{
    if (!adopt_key_ready())
        return NULL;
    struct cio__e_loop *l = (struct cio__e_loop *)CIO__SYS(calloc, adopt_loop)(1, sizeof *l);
    struct cio_any_future *f = (struct cio_any_future *)CIO__SYS(calloc, adopt_fiber)(1, sizeof *f);
    if (l == NULL || f == NULL) {
        free(l);
        free(f);
        return NULL;
    }
    cio__e_loop_init(l, e, UINT32_MAX);
    l->adopted = true;
    if (cio__stack_alloc(ADOPT_SCHED_STACK, &l->sched_stack) != CIO_OK)
        goto fail;
    if (e->poller->init(l) != CIO_OK) {
        cio__stack_free(&l->sched_stack);
        goto fail;
    }
    f->owner = e;
    atomic_store_explicit(&f->home, l, memory_order_relaxed);
    f->protection = CIO_CANCEL_UNBLOCKED;
    cio__fiber_ctx_thread(&f->ctx);
    cio__fiber_ctx_init(&l->sched, l->sched_stack.lo, l->sched_stack.size, adopted_main, l);
    l->main_fiber = f;
    l->current = f;
    cio__mu_lock(&adopt_mu);
    if (atomic_load_explicit(&e->shutdown, memory_order_acquire) || pthread_setspecific(adopt_key, l) != 0) {
        adopted_release(l);
        cio__mu_unlock(&adopt_mu);
        adopted_free(l);
        return NULL;
    }
    l->anext = e->adopted;
    e->adopted = l;
    cio__mu_unlock(&adopt_mu);
    cio__e_tls_loop = l;
    return f;
fail:
    cio__mu_destroy(&l->inbox_mu);
    cio__mu_destroy(&l->spawn_mu);
    free(f);
    free(l);
    return NULL;
}

struct cio_any_future *cio__e_self_adopt(struct cio_evented *e)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    if (l != NULL) {
        if (l->ev == e)
            return l->current;
        if (!l->adopted)
            return NULL; /* a loop thread of another instance */
        cio__mu_lock(&adopt_mu);
        bool orphan = l->ev == NULL;
        cio__mu_unlock(&adopt_mu);
        if (!orphan)
            return NULL; /* the thread is another instance's fiber */
        /* Its instance is gone: drop the orphan and be adopted by this one. */
        (void)pthread_setspecific(adopt_key, NULL);
        cio__e_tls_loop = NULL;
        adopted_free(l);
    }
    return adopt(e);
}

void cio__e_for_each_loop(const struct cio_evented *e, void (*fn)(const struct cio__e_loop *, void *), void *arg)
{
    for (unsigned i = 0; i < e->nloops; i++)
        fn(&e->loops[i], arg);
    cio__mu_lock(&adopt_mu);
    for (const struct cio__e_loop *l = e->adopted; l != NULL; l = l->anext)
        fn(l, arg);
    cio__mu_unlock(&adopt_mu);
}

void cio__e_release_adopted(struct cio_evented *e)
{
    cio__mu_lock(&adopt_mu);
    while (e->adopted != NULL) {
        struct cio__e_loop *l = e->adopted;
        e->adopted = l->anext;
        adopted_release(l);
    }
    cio__mu_unlock(&adopt_mu);
    struct cio__e_loop *mine = cio__e_tls_loop;
    if (mine != NULL && mine->adopted && mine->ev == NULL) {
        (void)pthread_setspecific(adopt_key, NULL);
        cio__e_tls_loop = NULL;
        adopted_free(mine);
    }
}
