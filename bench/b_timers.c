/*
 * B19: timers. `chains` (--param: 1,000 or 10,000) timers are pending at any time: each chain is a
 * task (cio: a task of a cio_group; Evented: a fiber, Threaded: a worker) or a handle (libuv: a
 * uv_timer_t re-armed from its callback) that waits 100 times in a row (10,000 chains: 1,000,000
 * timers), for durations of 1-1000 µs from one formula (the same in every contender, Go's and
 * Tokio's too: bench/peers; libuv's timers have millisecond resolution, so it rounds them up). The
 * headline is the wall time per timer (bounded below by the durations); "cpu_op" (the driver: the
 * process's CPU share times that) is the CPU time per timer, armed, fired and its waiter woken:
 * what the row is judged on.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "bench.h"

#define PER_CHAIN 100L

/* The duration of chain c's k-th timer, in µs (1..1000). */
static uint32_t timer_us(uint32_t c, uint32_t k)
{
    return (c * 2654435761u + k * 40503u) % 1000u + 1u;
}

static void counts(const bench_opts *o, long *chains, long *per)
{
    *chains = o->smoke ? 100 : o->param > 0 ? o->param : 10000;
    *per = o->smoke ? 10 : PER_CHAIN;
}

/* cpu: the process's CPU time over the timed span only (not the backend's creation and teardown,
 * which 100,000 timers do not amortise; Go and Tokio measure from a running runtime too). */
static void report(int64_t wall, double cpu_s, long chains, long per)
{
    bench_report_cpu = false;
    bench_result("cpu", 100.0 * cpu_s / ((double)wall / 1e9), "%");
    bench_result("main", (double)wall / (double)(chains * per), "ns/timer");
    bench_result("timers", (double)(chains * per), "n");
}

/* ---- cio: a group of sleeping tasks ---------------------------------------------------------------- */

typedef struct chain_args {
    cio_io io;
    uint32_t chain;
    uint32_t per;
} chain_args;

static cio_err chain_task(void *context)
{
    chain_args *a = (chain_args *)context;
    for (uint32_t k = 0; k < a->per; k++) {
        cio_err err = cio_sleep(a->io, cio_timeout_ns((int64_t)timer_us(a->chain, k) * 1000));
        if (err != CIO_OK)
            return err;
    }
    return CIO_OK;
}

typedef struct cio_run {
    long chains, per;
    int64_t wall;
    double cpu;
} cio_run;

static void cio_body(bench_backend *b, void *arg)
{
    cio_run *r = (cio_run *)arg;
    cio_group g = CIO_GROUP_INIT;
    double c0 = bench_cpu_seconds();
    int64_t t0 = bench_now_ns();
    for (long c = 0; c < r->chains; c++) {
        chain_args a = {b->io, (uint32_t)c, (uint32_t)r->per};
        cio_err err = cio_group_concurrent(b->io, &g, chain_task, &a, sizeof a);
        if (err != CIO_OK)
            bench_fail("cio_group_concurrent", err);
    }
    cio_err err = cio_group_await(b->io, &g);
    if (err != CIO_OK)
        bench_fail("cio_group_await (timer chains)", err);
    r->wall = bench_now_ns() - t0;
    r->cpu = bench_cpu_seconds() - c0;
}

static int timers_cio(const bench_opts *o, const char *contender)
{
    bench_backend_kind kind;
    bench_backend b;
    if (!bench_kind_of(contender, &kind))
        return 2;
    cio_run r = {0, 0, 0, 0};
    counts(o, &r.chains, &r.per);
    if (!bench_backend_open(kind, 0, &b))
        return BENCH_NA;
    bench_backend_run(&b, cio_body, &r);
    bench_backend_close(&b);
    report(r.wall, r.cpu, r.chains, r.per);
    return 0;
}

/* ---- libuv: uv_timer_t handles re-armed from their callbacks ----------------------------------------- */

typedef struct uv_chain {
    uv_timer_t t;
    uint32_t chain, k, per;
} uv_chain;

static void uv_chain_cb(uv_timer_t *t)
{
    uv_chain *c = (uv_chain *)t->data;
    if (++c->k == c->per) {
        uv_close((uv_handle_t *)t, NULL);
        return;
    }
    /* libuv's timers have millisecond resolution: the µs durations are rounded up to whole ms */
    uv_timer_start(t, uv_chain_cb, (timer_us(c->chain, c->k) + 999) / 1000, 0);
}

static int timers_libuv(const bench_opts *o, const char *contender)
{
    (void)contender;
    long chains, per;
    counts(o, &chains, &per);
    uv_chain *cs = (uv_chain *)calloc((size_t)chains, sizeof *cs);
    if (cs == NULL)
        bench_die("calloc");
    uv_loop_t *loop = uv_default_loop();
    double c0 = bench_cpu_seconds();
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < chains; i++) {
        uv_chain *c = &cs[i];
        c->chain = (uint32_t)i;
        c->per = (uint32_t)per;
        uv_timer_init(loop, &c->t);
        c->t.data = c;
        uv_timer_start(&c->t, uv_chain_cb, (timer_us(c->chain, 0) + 999) / 1000, 0);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    int64_t wall = bench_now_ns() - t0;
    report(wall, bench_cpu_seconds() - c0, chains, per);
    free(cs);
    return 0;
}

const bench_entry bench_timer_entries[] = {
    {"B19", "threaded", timers_cio},
    {"B19", "evented-uring", timers_cio},
    {"B19", "evented-epoll", timers_cio},
    {"B19", "libuv", timers_libuv},
    {NULL, NULL, NULL},
};
