/*
 * The Evented backend's scheduler: instances, loop threads, run queues, spawning and stealing,
 * suspending and waking fibers, timers, and the bridge that runs a foreign thread's call on a fiber.
 *
 * Invariants (see evented.h for the model):
 * - A loop's run queue (run_head), timer heap and poller registrations are touched only by the loop
 *   thread (including fibers running on it). Other threads reach a loop through its inbox
 *   (in_head, cancels; inbox_mu) and its spawn queue (sp_head; spawn_mu), then wake it.
 * - A fiber runs only on its home loop once started; only fibers that never ran are stolen.
 * - Lost wake-ups: a loop publishes `sleeping` (seq_cst) before it re-checks its inbox and every
 *   spawn queue, and producers publish their item before they read `sleeping` (seq_cst), so either
 *   the loop sees the item or the producer sees the loop asleep and wakes it. `woken` only spares
 *   duplicate eventfd writes: whoever drains the eventfd clears it afterwards (cio__e_wake_drained),
 *   so it is never left set with nothing to wake the loop.
 * - `live` counts fibers created and not finished; destroy waits for it to reach 0 before it stops
 *   the loops, so no fiber is ever abandoned.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define BLOCK_CTX 256u
#define FREE_MAX 256u
#define DEFAULT_STACK (64u * 1024u)
#define STACKS_CACHED 1024u

_Thread_local struct cio__e_loop *cio__e_tls_loop;

int64_t cio__e_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- fiber blocks ------------------------------------------------------------------------------------ */

static struct cio_any_future *block_alloc(struct cio_evented *e, size_t ctx_size)
{
    struct cio_any_future *f = NULL;
    if (ctx_size <= BLOCK_CTX) {
        pthread_mutex_lock(&e->free_mu);
        f = e->free_list;
        if (f != NULL) {
            e->free_list = f->next;
            e->free_count--;
        }
        pthread_mutex_unlock(&e->free_mu);
    }
    if (f == NULL) {
        size_t cap = ctx_size <= BLOCK_CTX ? BLOCK_CTX : ctx_size;
        size_t header = (sizeof(struct cio_any_future) + CIO_CONTEXT_ALIGN - 1) & ~(size_t)(CIO_CONTEXT_ALIGN - 1);
        if (cap > SIZE_MAX - header)
            return NULL;
        void *mem = NULL;
        if (CIO__SYS(posix_memalign, fiber_alloc)(&mem, CIO_CONTEXT_ALIGN, header + cap) != 0)
            return NULL;
        f = (struct cio_any_future *)mem;
        f->capacity = cap;
        f->ctxbuf = (unsigned char *)mem + header;
    }
    unsigned char *buf = f->ctxbuf;
    size_t cap = f->capacity;
    memset(f, 0, sizeof *f);
    f->ctxbuf = buf;
    f->capacity = cap;
    f->owner = e;
    return f;
}

void cio__e_fiber_free(struct cio_evented *e, struct cio_any_future *f)
{
    if (f->capacity == BLOCK_CTX) {
        pthread_mutex_lock(&e->free_mu);
        if (e->free_count < FREE_MAX) {
            f->next = e->free_list;
            e->free_list = f;
            e->free_count++;
            f = NULL;
        }
        pthread_mutex_unlock(&e->free_mu);
    }
    free(f);
}

static void fiber_exit_after(void *arg);

static void fiber_entry(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    f->result = f->fn(f->ctxbuf);
    struct cio__e_loop *l = cio__e_tls_loop;
    l->after = fiber_exit_after;
    l->after_arg = f;
    cio__fiber_exit(&f->ctx, &l->sched);
}

struct cio_any_future *cio__e_fiber_new(struct cio_evented *e, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    struct cio_any_future *f = block_alloc(e, ctx_size);
    if (f == NULL)
        return NULL;
    if (cio__stack_pool_get(&e->stacks, &f->stack) != CIO_OK) {
        cio__e_fiber_free(e, f);
        return NULL;
    }
    f->fn = fn;
    f->ctx_size = ctx_size;
    if (ctx_size > 0)
        memcpy(f->ctxbuf, ctx, ctx_size);
    cio__fiber_ctx_init(&f->ctx, f->stack.lo, f->stack.size, fiber_entry, f);
    atomic_fetch_add_explicit(&e->live, 1, memory_order_acq_rel);
    return f;
}

/* Loop thread, the fiber has switched out for good. */
static void fiber_exit_after(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    struct cio_evented *e = f->owner;
    struct cio__e_loop *l = f->home;
    pthread_mutex_lock(&l->inbox_mu);
    f->exited = true;
    if (f->cancel_posted) {
        struct cio_any_future **pp = &l->cancels;
        while (*pp != NULL && *pp != f)
            pp = &(*pp)->cnext;
        if (*pp == f)
            *pp = f->cnext;
        f->cancel_posted = false;
    }
    pthread_mutex_unlock(&l->inbox_mu);
    cio__fiber_ctx_release(&f->ctx);
    cio__stack_pool_put(&e->stacks, &f->stack);
    cio__e_finish(f); /* f may be freed from here on */
    if (atomic_fetch_sub_explicit(&e->live, 1, memory_order_acq_rel) == 1) {
        atomic_fetch_add_explicit(&e->live_seq, 1, memory_order_release);
        cio__e_futex_wake(&e->live_seq, UINT32_MAX);
    }
}

/* ---- queues ------------------------------------------------------------------------------------------- */

static void push_local(struct cio__e_loop *l, struct cio_any_future *f)
{
    f->next = NULL;
    if (l->run_tail != NULL)
        l->run_tail->next = f;
    else
        l->run_head = f;
    l->run_tail = f;
}

static struct cio_any_future *pop_local(struct cio__e_loop *l)
{
    struct cio_any_future *f = l->run_head;
    if (f != NULL) {
        l->run_head = f->next;
        if (l->run_head == NULL)
            l->run_tail = NULL;
    }
    return f;
}

static void wake_loop(struct cio__e_loop *l)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&l->sleeping, memory_order_seq_cst) &&
        atomic_exchange_explicit(&l->woken, 1, memory_order_acq_rel) == 0)
        l->ev->poller->wake(l);
}

void cio__e_wake_drained(struct cio__e_loop *l)
{
    uint64_t v;
    while (CIO__SYS(read, wake_drain)(l->wakefd, &v, sizeof v) > 0) {
    }
    atomic_store_explicit(&l->woken, 0, memory_order_seq_cst);
}

void cio__e_make_ready(struct cio_any_future *f)
{
    struct cio__e_loop *home = f->home;
    if (cio__e_tls_loop == home) {
        push_local(home, f);
        return;
    }
    pthread_mutex_lock(&home->inbox_mu);
    f->next = NULL;
    if (home->in_tail != NULL)
        home->in_tail->next = f;
    else
        home->in_head = f;
    home->in_tail = f;
    pthread_mutex_unlock(&home->inbox_mu);
    wake_loop(home);
}

void cio__e_post_cancel(struct cio_any_future *f)
{
    struct cio__e_loop *home = f->home;
    pthread_mutex_lock(&home->inbox_mu);
    bool posted = false;
    if (!f->exited && !f->cancel_posted) {
        f->cancel_posted = true;
        f->cnext = home->cancels;
        home->cancels = f;
        posted = true;
    }
    pthread_mutex_unlock(&home->inbox_mu);
    if (posted && cio__e_tls_loop != home)
        wake_loop(home);
}

void cio__e_spawn(struct cio_evented *e, struct cio_any_future *f)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    if (l == NULL || l->ev != e) {
        uint32_t i = atomic_fetch_add_explicit(&e->next_loop, 1, memory_order_relaxed);
        l = &e->loops[i % e->nloops];
    }
    f->next = NULL;
    pthread_mutex_lock(&l->spawn_mu);
    if (l->sp_tail != NULL)
        l->sp_tail->next = f;
    else
        l->sp_head = f;
    l->sp_tail = f;
    atomic_fetch_add_explicit(&l->sp_count, 1, memory_order_seq_cst);
    pthread_mutex_unlock(&l->spawn_mu);
    atomic_thread_fence(memory_order_seq_cst);
    /* The queue's own loop if it sleeps; else one sleeping loop, which will steal it. */
    if (cio__e_tls_loop != l && atomic_load_explicit(&l->sleeping, memory_order_seq_cst)) {
        wake_loop(l);
        return;
    }
    for (unsigned k = 1; k < e->nloops; k++) {
        struct cio__e_loop *o = &e->loops[(l->index + k) % e->nloops];
        if (atomic_load_explicit(&o->sleeping, memory_order_seq_cst)) {
            wake_loop(o);
            return;
        }
    }
}

static struct cio_any_future *take_spawn(struct cio__e_loop *l)
{
    if (atomic_load_explicit(&l->sp_count, memory_order_acquire) == 0)
        return NULL;
    pthread_mutex_lock(&l->spawn_mu);
    struct cio_any_future *f = l->sp_head;
    if (f != NULL) {
        l->sp_head = f->next;
        if (l->sp_head == NULL)
            l->sp_tail = NULL;
        atomic_fetch_sub_explicit(&l->sp_count, 1, memory_order_acq_rel);
    }
    pthread_mutex_unlock(&l->spawn_mu);
    return f;
}

static struct cio_any_future *steal(struct cio__e_loop *l)
{
    struct cio_evented *e = l->ev;
    for (unsigned k = 1; k < e->nloops; k++) {
        struct cio_any_future *f = take_spawn(&e->loops[(l->index + k) % e->nloops]);
        if (f != NULL)
            return f;
    }
    return NULL;
}

static bool any_spawned(const struct cio__e_loop *l)
{
    const struct cio_evented *e = l->ev;
    for (unsigned k = 0; k < e->nloops; k++)
        if (atomic_load_explicit(&e->loops[k].sp_count, memory_order_seq_cst) != 0)
            return true;
    return false;
}

/* ---- timers (binary min-heap on deadline) ------------------------------------------------------------------ */

static void heap_set(struct cio__e_loop *l, size_t i, struct cio__e_timer *t)
{
    l->heap[i] = t;
    t->index = i;
}

static void heap_up(struct cio__e_loop *l, size_t i)
{
    struct cio__e_timer *t = l->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (l->heap[p]->deadline <= t->deadline)
            break;
        heap_set(l, i, l->heap[p]);
        i = p;
    }
    heap_set(l, i, t);
}

static void heap_down(struct cio__e_loop *l, size_t i)
{
    struct cio__e_timer *t = l->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->heap_len)
            break;
        if (c + 1 < l->heap_len && l->heap[c + 1]->deadline < l->heap[c]->deadline)
            c++;
        if (t->deadline <= l->heap[c]->deadline)
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

void cio__e_timer_add(struct cio__e_loop *l, struct cio__e_timer *t)
{
    if (l->heap_len == l->heap_cap) {
        size_t cap = l->heap_cap ? l->heap_cap * 2 : 64;
        struct cio__e_timer **h = (struct cio__e_timer **)realloc(l->heap, cap * sizeof *h);
        if (h == NULL) {
            /* No room to remember the deadline: fire it now (an early timeout beats a lost one). */
            t->index = SIZE_MAX;
            t->deadline = 0;
            t->fire(l, t);
            return;
        }
        l->heap = h;
        l->heap_cap = cap;
    }
    l->heap_len++;
    heap_set(l, l->heap_len - 1, t);
    heap_up(l, l->heap_len - 1);
}

void cio__e_timer_remove(struct cio__e_loop *l, struct cio__e_timer *t)
{
    size_t i = t->index;
    if (i == SIZE_MAX)
        return;
    t->index = SIZE_MAX;
    l->heap_len--;
    if (i == l->heap_len)
        return;
    heap_set(l, i, l->heap[l->heap_len]);
    heap_down(l, i);
    heap_up(l, l->heap[i]->index);
}

static void fire_timers(struct cio__e_loop *l)
{
    if (l->heap_len == 0)
        return;
    int64_t now = cio__e_now_ns();
    while (l->heap_len > 0 && l->heap[0]->deadline <= now) {
        struct cio__e_timer *t = l->heap[0];
        cio__e_timer_remove(l, t);
        t->fire(l, t);
    }
}

/* ---- suspending ----------------------------------------------------------------------------------------------- */

void cio__e_suspend(void (*after)(void *), void *arg)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    struct cio_any_future *f = l->current;
    l->after = after;
    l->after_arg = arg;
    cio__fiber_switch(&f->ctx, &l->sched);
}

static void yield_after(void *arg)
{
    struct cio_any_future *f = (struct cio_any_future *)arg;
    push_local(f->home, f);
}

void cio__e_yield(void)
{
    cio__e_suspend(yield_after, cio__e_tls_loop->current);
}

void cio__e_poller_complete(struct cio__e_wait *w, int32_t res)
{
    w->res = res;
    w->in_flight = false;
    struct cio__e_loop *l = w->fiber->home;
    l->armed--;
    push_local(l, w->fiber);
}

static void poller_timeout_fire(struct cio__e_loop *l, struct cio__e_timer *t)
{
    struct cio__e_wait *w = (struct cio__e_wait *)(void *)((char *)t - offsetof(struct cio__e_wait, timer));
    if (w->in_flight && !w->cancel_sent) {
        w->reason = CIO__E_R_TIMEOUT;
        w->cancel_sent = true;
        l->ev->poller->cancel(l, w);
    }
}

cio_err cio__e_wait_fd(struct cio_evented *e, int fd, uint32_t events, int64_t deadline_ns, bool cancelable,
                       uint32_t *revents)
{
    struct cio_any_future *f = cio__e_self(e);
    struct cio__e_loop *l = f->home;
    if (cancelable) {
        cio_err c = cio__e_check_cancel(e);
        if (c != CIO_OK)
            return c;
    }
    struct cio__e_wait w;
    memset(&w, 0, sizeof w);
    w.fiber = f;
    w.kind = CIO__E_W_POLLER;
    w.cancelable = cancelable;
    w.fd = fd;
    w.events = events;
    w.timer.index = SIZE_MAX;
    w.resignal.index = SIZE_MAX;
    w.in_flight = true;
    l->armed++;
    cio_err err = e->poller->arm_fd(l, &w);
    if (err != CIO_OK) {
        l->armed--;
        return err;
    }
    if (deadline_ns >= 0) {
        w.timer.deadline = deadline_ns;
        w.timer.fire = poller_timeout_fire;
        cio__e_timer_add(l, &w.timer);
    }
    f->wait = &w;
    cio__e_suspend(NULL, NULL);
    f->wait = NULL;
    cio__e_timer_remove(l, &w.timer);
    if (w.res > 0) {
        *revents = (uint32_t)w.res;
        return CIO_OK;
    }
    if (w.res < 0 && w.res != -ECANCELED && w.res != -EINTR)
        return CIO__BUG("poller: an fd wait failed");
    if (w.reason == CIO__E_R_CANCEL) {
        cio__e_ack_cancel(f);
        return CIO_E_CANCELED;
    }
    return CIO_E_TIMEOUT;
}

/* ---- the bridge for foreign threads ------------------------------------------------------------------------------- */

struct bridge {
    cio_err (*fn)(void *);
    void *arg;
};

static cio_err bridge_task(void *ctx)
{
    struct bridge *b = *(struct bridge **)ctx;
    return b->fn(b->arg);
}

cio_err cio__e_run(struct cio_evented *e, cio_err (*fn)(void *), void *arg)
{
    if (cio__e_self(e) != NULL)
        return fn(arg);
    struct bridge b = {fn, arg};
    struct bridge *bp = &b;
    struct cio_any_future *f = cio__e_fiber_new(e, bridge_task, &bp, sizeof bp);
    if (f == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio__e_spawn(e, f);
    while (atomic_load_explicit(&f->done, memory_order_acquire) == 0)
        (void)cio__e_futex_wait(e, &f->done, 0, CIO_TIMEOUT_NONE, false);
    cio_err r = f->result;
    cio__e_fiber_free(e, f);
    return r;
}

/* ---- loops ------------------------------------------------------------------------------------------------------------ */

static void run_fiber(struct cio__e_loop *l, struct cio_any_future *f)
{
    if (f->home == NULL)
        f->home = l;
    l->current = f;
    cio__fiber_switch(&l->sched, &f->ctx);
    l->current = NULL;
    if (l->after != NULL) {
        void (*after)(void *) = l->after;
        l->after = NULL;
        after(l->after_arg);
    }
}

/* Moves the inbox to the run queue and delivers cancel requests; true if anything was there. */
static bool drain_inbox(struct cio__e_loop *l)
{
    pthread_mutex_lock(&l->inbox_mu);
    struct cio_any_future *ready = l->in_head;
    struct cio_any_future *cancels = l->cancels;
    l->in_head = l->in_tail = NULL;
    l->cancels = NULL;
    pthread_mutex_unlock(&l->inbox_mu);
    bool any = ready != NULL || cancels != NULL;
    while (ready != NULL) {
        struct cio_any_future *n = ready->next;
        push_local(l, ready);
        ready = n;
    }
    /* A fiber on this list has not exited: exiting takes it off under inbox_mu, and it can only exit
     * by running here, which does not happen during this loop. Each stays marked as posted (so no
     * canceler relinks it through cnext) until its link has been read. */
    while (cancels != NULL) {
        pthread_mutex_lock(&l->inbox_mu);
        struct cio_any_future *n = cancels->cnext;
        cancels->cancel_posted = false;
        pthread_mutex_unlock(&l->inbox_mu);
        cio__e_deliver_cancel(l, cancels);
        cancels = n;
    }
    return any;
}

static bool inbox_empty(struct cio__e_loop *l)
{
    pthread_mutex_lock(&l->inbox_mu);
    bool empty = l->in_head == NULL && l->cancels == NULL;
    pthread_mutex_unlock(&l->inbox_mu);
    return empty;
}

static void *loop_main(void *arg)
{
    struct cio__e_loop *l = (struct cio__e_loop *)arg;
    struct cio_evented *e = l->ev;
    cio__e_tls_loop = l;
    cio__fiber_ctx_thread(&l->sched);
    for (;;) {
        unsigned ran = 0;
        struct cio_any_future *f;
        while ((f = pop_local(l)) != NULL) {
            run_fiber(l, f);
            if (++ran % 64 == 0)
                break; /* let the inbox, timers and I/O in */
        }
        drain_inbox(l);
        fire_timers(l);
        if (l->armed > 0 && ran > 0)
            e->poller->wait(l, 0);
        if (l->run_head != NULL)
            continue;
        f = take_spawn(l);
        if (f == NULL)
            f = steal(l);
        if (f != NULL) {
            run_fiber(l, f);
            continue;
        }
        if (atomic_load_explicit(&e->shutdown, memory_order_acquire))
            break;
        int64_t timeout = -1;
        if (l->heap_len > 0) {
            timeout = l->heap[0]->deadline - cio__e_now_ns();
            if (timeout < 0)
                timeout = 0;
        }
        atomic_store_explicit(&l->sleeping, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (!inbox_empty(l) || any_spawned(l) || atomic_load_explicit(&e->shutdown, memory_order_seq_cst))
            timeout = 0;
        e->poller->wait(l, timeout);
        atomic_store_explicit(&l->sleeping, 0, memory_order_seq_cst);
        atomic_store_explicit(&l->woken, 0, memory_order_release);
    }
    cio__fiber_ctx_release(&l->sched);
    cio__e_tls_loop = NULL;
    return NULL;
}

/* ---- create / destroy ------------------------------------------------------------------------------------------------- */

static unsigned cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

static cio_evented_flavour flavour_from_env(cio_evented_flavour requested)
{
    if (requested != CIO_EVENTED_AUTO)
        return requested;
    const char *v = getenv("CIO_EVENTED_BACKEND");
    if (v == NULL)
        return CIO_EVENTED_AUTO;
    if (strcmp(v, "io_uring") == 0)
        return CIO_EVENTED_IO_URING;
    if (strcmp(v, "epoll") == 0)
        return CIO_EVENTED_EPOLL;
    return CIO_EVENTED_AUTO; /* unknown values are ignored, as if unset */
}

static cio_err init_pollers(struct cio_evented *e, const struct cio__e_poller_ops *ops)
{
    e->poller = ops;
    for (unsigned i = 0; i < e->nloops; i++) {
        cio_err err = ops->init(&e->loops[i]);
        if (err != CIO_OK) {
            while (i-- > 0)
                ops->deinit(&e->loops[i]);
            return err;
        }
    }
    return CIO_OK;
}

static void free_instance(struct cio_evented *e)
{
    for (unsigned i = 0; i < e->nloops; i++) {
        pthread_mutex_destroy(&e->loops[i].inbox_mu);
        pthread_mutex_destroy(&e->loops[i].spawn_mu);
        free(e->loops[i].heap);
    }
    free(e->loops);
    struct cio_any_future *f = e->free_list;
    while (f != NULL) {
        struct cio_any_future *n = f->next;
        free(f);
        f = n;
    }
    cio__stack_pool_destroy(&e->stacks);
    pthread_mutex_destroy(&e->free_mu);
    free(e);
}

cio_err cio_evented_create(const cio_evented_options *options, cio_evented **out)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    if (options != NULL)
        o = *options;
    if (out == NULL || (unsigned)o.flavour > (unsigned)CIO_EVENTED_EPOLL)
        return CIO_E_INVALID_ARGUMENT;
    struct cio_evented *e = (struct cio_evented *)CIO__SYS(calloc, evented_create)(1, sizeof *e);
    if (e == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    e->nloops = o.threads != 0 ? o.threads : cpu_count();
    e->stack_size = o.stack_size != 0 ? o.stack_size : DEFAULT_STACK;
    e->ring_entries = o.ring_entries != 0 ? o.ring_entries : 256u;
    pthread_mutex_init(&e->free_mu, NULL);
    cio__stack_pool_init(&e->stacks, e->stack_size, STACKS_CACHED);
    e->loops = (struct cio__e_loop *)CIO__SYS(calloc, evented_loops)(e->nloops, sizeof *e->loops);
    if (e->loops == NULL) {
        e->nloops = 0;
        free_instance(e);
        return CIO_E_SYSTEM_RESOURCES;
    }
    for (unsigned i = 0; i < e->nloops; i++) {
        struct cio__e_loop *l = &e->loops[i];
        l->ev = e;
        l->index = i;
        l->epfd = -1;
        l->wakefd = -1;
        pthread_mutex_init(&l->inbox_mu, NULL);
        pthread_mutex_init(&l->spawn_mu, NULL);
    }
    cio_evented_flavour fl = flavour_from_env(o.flavour);
    cio_err err;
    if (fl == CIO_EVENTED_EPOLL) {
        err = init_pollers(e, &cio__e_epoll_ops);
    } else {
        err = init_pollers(e, &cio__e_uring_ops);
        fl = CIO_EVENTED_IO_URING;
        if (err != CIO_OK && o.flavour == CIO_EVENTED_AUTO && fl != CIO_EVENTED_EPOLL) {
            fl = CIO_EVENTED_EPOLL;
            err = init_pollers(e, &cio__e_epoll_ops);
        }
    }
    if (err != CIO_OK) {
        free_instance(e);
        return err;
    }
    e->flavour = fl;
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
        if (CIO__SYS(pthread_create, loop_start)(&e->loops[i].thread, NULL, loop_main, &e->loops[i]) != 0) {
            atomic_store(&e->shutdown, 1);
            for (unsigned j = 0; j < i; j++) {
                atomic_store(&e->loops[j].sleeping, 1);
                wake_loop(&e->loops[j]);
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

void cio_evented_destroy(cio_evented *e)
{
    if (e == NULL)
        return;
    for (;;) {
        uint32_t seq = atomic_load_explicit(&e->live_seq, memory_order_acquire);
        if (atomic_load_explicit(&e->live, memory_order_acquire) == 0)
            break;
        (void)cio__e_futex_wait(e, &e->live_seq, seq, cio_timeout_ms(100), false);
    }
    atomic_store_explicit(&e->shutdown, 1, memory_order_seq_cst);
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
