/*
 * The Evented scheduler's own behaviour (split from test_evented.c): direct switches that still leave
 * room for timers, spawn rings shared between loops, ready fibers that do not starve spawned ones,
 * awaits that run a future not started yet inline (LIFO) and stay within the stack, group awaits that
 * inline members, and destroy waiting for group members. Registered per backend; what only Evented
 * does skips on Threaded.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends.h"
#include "asserts.h"
#include "evented.h" /* cio__e_self: which fiber a task ran as */
#include "evented_helpers.h"

/* ---- the scheduler's direct switches and spawn rings ------------------------------------------------- */

#define PP_DONE UINT32_MAX

typedef struct {
    cio_io io;
    _Atomic(uint32_t) word; /* even: side 0 moves it, odd: side 1; PP_DONE: over */
    _Atomic(int) stop;      /* set by the sleeper */
    double t0, slept;
    _Atomic(long) hops;
    int stopped_by_sleeper;
} pingpong;

typedef struct {
    pingpong *pp;
    uint32_t me;
} side_ctx;

static cio_err pp_side(void *ctx)
{
    side_ctx *c = (side_ctx *)ctx;
    pingpong *pp = c->pp;
    for (;;) {
        uint32_t v = atomic_load(&pp->word);
        if (v == PP_DONE)
            return CIO_OK;
        if (v % 2 != c->me) {
            cio_futex_wait_uncancelable(pp->io, &pp->word, v);
            continue;
        }
        if (atomic_load(&pp->stop) || now_s() - pp->t0 > 3.0) {
            pp->stopped_by_sleeper = atomic_load(&pp->stop);
            atomic_store(&pp->word, PP_DONE);
            cio_futex_wake(pp->io, &pp->word, UINT32_MAX);
            return CIO_OK;
        }
        atomic_fetch_add(&pp->hops, 1);
        atomic_store(&pp->word, v + 1);
        cio_futex_wake(pp->io, &pp->word, 1);
    }
}

static cio_err pp_sleeper(void *ctx)
{
    pingpong *pp = *(pingpong **)ctx;
    cio_err err = cio_sleep(pp->io, cio_timeout_ms(10));
    pp->slept = now_s() - pp->t0;
    atomic_store(&pp->stop, 1);
    return err;
}

/* Starts the two sides of pp (their contexts in sides[], which must outlive them). */
static void pair_start(pingpong *pp, side_ctx sides[2], cio_future f[2])
{
    for (uint32_t i = 0; i < 2; i++) {
        sides[i].pp = pp;
        sides[i].me = i;
        assert_ok(cio_concurrent(pp->io, pp_side, &sides[i], sizeof sides[i], &f[i]));
    }
}

static void pair_join(pingpong *pp, cio_future f[2])
{
    assert_ok(cio_await(pp->io, &f[0]));
    assert_ok(cio_await(pp->io, &f[1]));
}

/* Runs fn (its context: the pointer p) as a task of e, waits for it, destroys e. */
static void run_then_destroy(cio_evented *e, cio_task_fn fn, void *p)
{
    cio_io io = cio_evented_io(e);
    cio_future f;
    assert_ok(cio_concurrent(io, fn, &p, sizeof p, &f));
    assert_ok(cio_await(io, &f));
    cio_evented_destroy(e);
}

static cio_err pp_main(void *ctx)
{
    pingpong *pp = *(pingpong **)ctx;
    side_ctx sides[2];
    cio_future f[2], fs;
    assert_ok(cio_concurrent(pp->io, pp_sleeper, &pp, sizeof pp, &fs));
    pair_start(pp, sides, f);
    pair_join(pp, f);
    return cio_await(pp->io, &fs);
}

/* Two fibers of one loop that wake each other forever switch straight from one to the other: the
 * scheduler still gets its turn (timers, inbox, I/O), so a third fiber's 10 ms sleep ends on time
 * and stops them. */
static void test_direct_switches_leave_room_for_timers(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no loop to starve");
    pingpong pp;
    memset(&pp, 0, sizeof pp);
    pp.io = cio_evented_io(e);
    pp.t0 = now_s();
    run_then_destroy(e, pp_main, &pp);
    print_message("      %ld hops; the sleeper woke after %.3f s\n", atomic_load(&pp.hops), pp.slept);
    assert_true(atomic_load(&pp.hops) > 0);
    assert_true(pp.stopped_by_sleeper);
    assert_true(pp.slept < 2.0);
}

typedef struct {
    pingpong *pp;
    _Atomic(int) *ran;
} mark_ctx;

static cio_err mark_ran(void *ctx)
{
    mark_ctx *m = (mark_ctx *)ctx;
    atomic_store(m->ran, 1);
    return CIO_OK;
}

typedef struct {
    pingpong pp;
    _Atomic(int) ran1, ran2;
    double waited; /* until the task that was not started had run */
} starve_probe;

static cio_err starve_main(void *ctx)
{
    starve_probe *s = *(starve_probe **)ctx;
    pingpong *pp = &s->pp;
    side_ctx sides[2];
    cio_future f[2];
    pair_start(pp, sides, f);
    assert_ok(cio_sleep(pp->io, cio_timeout_ms(5))); /* the pair is going */
    mark_ctx m1 = {pp, &s->ran1}, m2 = {pp, &s->ran2};
    double t0 = now_s();
    cio_future f1 = cio_async(pp->io, mark_ran, &m1, sizeof m1); /* to the spawn ring */
    cio_future f2 = cio_async(pp->io, mark_ran, &m2, sizeof m2); /* the LIFO slot */
    assert_ok(cio_await(pp->io, &f1));
    s->waited = now_s() - t0;
    atomic_store(&pp->stop, 1);
    assert_ok(cio_await(pp->io, &f2));
    pair_join(pp, f);
    return CIO_OK;
}

/* A task waiting in the spawn ring starts although two fibers of its loop keep each other ready
 * (the scheduler lets one fiber not started yet join the run queue each round). */
static void test_ready_fibers_do_not_starve_spawned_ones(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no spawn rings");
    starve_probe s;
    memset(&s, 0, sizeof s);
    s.pp.io = cio_evented_io(e);
    s.pp.t0 = now_s();
    run_then_destroy(e, starve_main, &s);
    print_message("      the spawned task ran after %.4f s (%ld hops)\n", s.waited, atomic_load(&s.pp.hops));
    assert_int_equal(atomic_load(&s.ran1), 1);
    assert_int_equal(atomic_load(&s.ran2), 1);
    assert_true(s.pp.stopped_by_sleeper); /* stopped by the flag, not the pair's 3 s limit */
    assert_true(s.waited < 1.0);
}

#define BURST 5000

typedef struct {
    pthread_t spawner;
    _Atomic(long) ran, elsewhere;
} burst;

static cio_err burst_task(void *ctx)
{
    burst *b = *(burst **)ctx;
    double t0 = now_s();
    while (now_s() - t0 < 2e-6) {
    }
    atomic_fetch_add(&b->ran, 1);
    if (!pthread_equal(pthread_self(), b->spawner))
        atomic_fetch_add(&b->elsewhere, 1);
    return CIO_OK;
}

typedef struct {
    cio_io io;
    burst *b;
} burst_ctx;

static cio_err burst_spawner(void *ctx)
{
    burst_ctx *c = *(burst_ctx **)ctx;
    c->b->spawner = pthread_self();
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < BURST; i++)
        cio_group_async(c->io, &g, burst_task, &c->b, sizeof c->b);
    return cio_group_await(c->io, &g);
}

/* A fiber spawning far more than its loop's spawn ring holds: every task runs once, and the other
 * loop takes a share (from the ring, or the spawn queue it overflowed into). */
static void test_spawn_burst_is_shared(void **state)
{
    cio_evented *e = own_instance(state, 2, "Threaded has no spawn rings");
    burst b;
    memset(&b, 0, sizeof b);
    burst_ctx c = {cio_evented_io(e), &b};
    run_then_destroy(e, burst_spawner, &c);
    print_message("      %d tasks: %ld ran on the other loop\n", BURST, atomic_load(&b.elsewhere));
    assert_int_equal(atomic_load(&b.ran), BURST);
    assert_true(atomic_load(&b.elsewhere) > 0);
}

/* ---- await of a future not started yet ---------------------------------------------------------------- */

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *self; /* the fiber the task ran as */
    cio_err err;
} who_ctx;

static cio_err record_self(void *ctx)
{
    who_ctx *c = *(who_ctx **)ctx;
    c->self = cio__e_self(c->e);
    return CIO_OK;
}

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *parent, *lifo_child, *older_child, *newer_child;
} inline_probe;

static cio_err inline_parent(void *ctx)
{
    inline_probe *p = *(inline_probe **)ctx;
    p->parent = cio__e_self(p->e);
    /* awaited at once: still in this loop's LIFO slot, so it runs right here */
    who_ctx a = {p->io, p->e, NULL, CIO_OK}, b = a, c = a;
    who_ctx *ap = &a, *bp = &b, *cp = &c;
    cio_future fa = cio_async(p->io, record_self, &ap, sizeof ap);
    assert_ok(cio_await(p->io, &fa));
    p->lifo_child = a.self;
    /* two, the older awaited first: it is not in the LIFO slot, both run as fibers of their own */
    cio_future fb = cio_async(p->io, record_self, &bp, sizeof bp);
    cio_future fc = cio_async(p->io, record_self, &cp, sizeof cp);
    assert_ok(cio_await(p->io, &fb));
    assert_ok(cio_await(p->io, &fc));
    p->older_child = b.self;
    p->newer_child = c.self;
    return CIO_OK;
}

/* cio_async + cio_await with nothing in between runs the task on the awaiting fiber (the order is
 * the same: a suspending fiber runs its LIFO slot first); a task that is not in the LIFO slot gets
 * a fiber of its own. */
static void test_await_runs_lifo_future_inline(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded has no LIFO slot");
    inline_probe p;
    memset(&p, 0, sizeof p);
    p.io = cio_evented_io(e);
    p.e = e;
    run_then_destroy(e, inline_parent, &p);
    assert_non_null(p.parent);
    assert_ptr_equal(p.lifo_child, p.parent);
    assert_non_null(p.older_child);
    assert_non_null(p.newer_child);
    assert_ptr_not_equal(p.older_child, p.parent);
    assert_ptr_not_equal(p.newer_child, p.parent);
    assert_ptr_not_equal(p.older_child, p.newer_child);
}

static cio_err sleepy_member(void *ctx)
{
    who_ctx *m = *(who_ctx **)ctx;
    m->self = cio__e_self(m->e);
    m->err = cio_sleep(m->io, cio_timeout_ms(10000));
    return m->err;
}

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *self;
    who_ctx a, b;
    cio_err awaited;
    cio_event started;
} group_parent;

static cio_err group_parent_task(void *ctx)
{
    group_parent *p = *(group_parent **)ctx;
    p->self = cio__e_self(p->e);
    who_ctx *ap = &p->a, *bp = &p->b;
    cio_group g = CIO_GROUP_INIT;
    cio_group_async(p->io, &g, sleepy_member, &ap, sizeof ap);
    cio_group_async(p->io, &g, sleepy_member, &bp, sizeof bp);
    cio_event_set(p->io, &p->started);
    p->awaited = cio_group_await(p->io, &g);
    return p->awaited;
}

/* cio_group_await runs members that have not started on the awaiting fiber (the newest, in the LIFO
 * slot, first); one of them sleeping there takes the awaiter's cancel request, and the await still
 * ends as canceled: the other member is canceled too, and the await returns CANCELED. */
static void test_group_await_inline_member_takes_the_cancel(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded runs members on workers");
    group_parent p;
    memset(&p, 0, sizeof p);
    p.io = cio_evented_io(e);
    p.e = e;
    p.a.io = p.b.io = p.io;
    p.a.e = p.b.e = e;
    group_parent *pp = &p;
    cio_future f;
    double t0 = now_s();
    assert_ok(cio_concurrent(p.io, group_parent_task, &pp, sizeof pp, &f));
    cio_event_wait_uncancelable(p.io, &p.started);
    assert_ok(cio_sleep(p.io, cio_timeout_ms(50))); /* both members asleep */
    assert_err(cio_cancel(p.io, &f), CIO_E_CANCELED);
    double took = now_s() - t0;
    cio_evented_destroy(e);
    assert_err(p.awaited, CIO_E_CANCELED);
    assert_err(p.a.err, CIO_E_CANCELED);
    assert_err(p.b.err, CIO_E_CANCELED);
    assert_true(took < 5.0);
    /* the newest member ran on the parent's fiber, the other as a fiber of its own */
    assert_ptr_equal(p.b.self, p.self);
    assert_ptr_not_equal(p.a.self, p.self);
}

typedef struct {
    cio_io io;
    cio_evented *e;
    const void *parent;
    int members, inline_runs;
    _Atomic(int) stop;
    cio_err awaited;
} busy_group;

static cio_err count_inline_member(void *ctx)
{
    busy_group *b = *(busy_group **)ctx;
    b->members++; /* one loop: members never run at the same time */
    if (cio__e_self(b->e) == b->parent)
        b->inline_runs++;
    return CIO_OK;
}

/* Always ready: yields until told to stop. */
static cio_err busy_yielder(void *ctx)
{
    busy_group *b = *(busy_group **)ctx;
    while (!atomic_load(&b->stop))
        cio__e_yield();
    return CIO_OK;
}

#define BUSY_MEMBERS 400

static cio_err busy_parent(void *ctx)
{
    busy_group *b = *(busy_group **)ctx;
    b->parent = cio__e_self(b->e);
    cio_future y;
    cio_err err = cio_concurrent(b->io, busy_yielder, &b, sizeof b, &y);
    if (err != CIO_OK)
        return err;
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < BUSY_MEMBERS; i++)
        cio_group_async(b->io, &g, count_inline_member, &b, sizeof b);
    b->awaited = cio_group_await(b->io, &g);
    atomic_store(&b->stop, 1);
    return cio_await(b->io, &y);
}

/* cio_group_await goes on running members on the awaiting fiber when another fiber is ready (it
 * yields to it in between) and when the next in line is not a member (that one runs as a fiber of
 * its own first): with a fiber that is always ready, and spawned before the members, nearly all
 * members still run inline (before: only those before the first ready fiber; the rest each got a
 * fiber). */
static void test_group_await_inlines_beside_ready_fibers(void **state)
{
    cio_evented *e = own_instance(state, 1, "Threaded runs members on workers");
    busy_group b;
    memset(&b, 0, sizeof b);
    b.io = cio_evented_io(e);
    b.e = e;
    run_then_destroy(e, busy_parent, &b);
    assert_ok(b.awaited);
    assert_int_equal(b.members, BUSY_MEMBERS);
    assert_true(b.inline_runs >= BUSY_MEMBERS * 9 / 10);
}

typedef struct {
    cio_io io;
    _Atomic(int) finished;
} sleepy_count;

static cio_err sleep_then_count(void *ctx)
{
    sleepy_count *c = *(sleepy_count **)ctx;
    (void)cio_sleep(c->io, cio_timeout_ms(50));
    atomic_fetch_add(&c->finished, 1);
    return CIO_OK;
}

/* A group's members count for cio_evented_destroy as long as the group has any (the group counts
 * once, not each member): destroy with members still asleep and the group never awaited returns
 * only after all of them finished, on one loop and on two. */
static void test_destroy_waits_for_group_members(void **state)
{
    for (unsigned threads = 1; threads <= 2; threads++) {
        cio_evented *e = own_instance(state, threads, "Threaded has no fibers");
        sleepy_count c;
        c.io = cio_evented_io(e);
        atomic_init(&c.finished, 0);
        sleepy_count *cp = &c;
        cio_group g = CIO_GROUP_INIT;
        for (int i = 0; i < 8; i++)
            assert_ok(cio_group_concurrent(c.io, &g, sleep_then_count, &cp, sizeof cp));
        cio_evented_destroy(e);
        assert_int_equal(atomic_load(&c.finished), 8);
        free((void *)atomic_load(&g.token)); /* the record an await would have freed */
    }
}

#define DEEP 3000

typedef struct {
    cio_io io;
    int depth;
} deep_ctx;

/* Each level keeps 512 bytes live across its await: 3,000 levels inline on one fiber's 64 KiB stack
 * would overflow it many times over. */
static cio_err deep(void *ctx)
{
    deep_ctx *c = (deep_ctx *)ctx;
    volatile unsigned char pad[512];
    for (size_t i = 0; i < sizeof pad; i++)
        pad[i] = (unsigned char)(c->depth + (int)i);
    cio_err err = CIO_OK;
    if (c->depth < DEEP) {
        deep_ctx child = {c->io, c->depth + 1};
        cio_future f = cio_async(c->io, deep, &child, sizeof child);
        err = cio_await(c->io, &f);
    }
    for (size_t i = 0; i < sizeof pad; i++)
        if (pad[i] != (unsigned char)(c->depth + (int)i))
            return CIO_E_UNEXPECTED;
    return err;
}

/* Inline awaits nest only while half the fiber's stack is free; deeper ones get fibers: a recursion
 * 3,000 async+await levels deep completes. */
static void test_inline_awaits_stay_within_the_stack(void **state)
{
    cio_evented *t = test_evented(state);
    if (t == NULL)
        CIO_SKIP("Threaded has no fiber stacks");
    cio_io io = cio_test_io(state);
    deep_ctx c = {io, 0};
    cio_future f;
    assert_ok(cio_concurrent(io, deep, &c, sizeof c, &f));
    assert_ok(cio_await(io, &f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_direct_switches_leave_room_for_timers),
        CIO_TESTS(test_spawn_burst_is_shared),
        CIO_TESTS(test_await_runs_lifo_future_inline),
        CIO_TESTS(test_inline_awaits_stay_within_the_stack),
        CIO_TESTS(test_group_await_inline_member_takes_the_cancel),
        CIO_TESTS(test_group_await_inlines_beside_ready_fibers),
        CIO_TESTS(test_destroy_waits_for_group_members),
        CIO_TESTS(test_ready_fibers_do_not_starve_spawned_ones),
    };
    return cmocka_run_group_tests_name("evented scheduler", tests, NULL, NULL);
}
