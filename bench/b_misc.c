/*
 * B1 (an Io call through the vtable vs a direct call) and B12 (100,000 sleeping tasks); B2 (fiber
 * switch) is bench/fiber_switch.c.
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <uv.h>

#include "bench.h"

/* ---- B1 -------------------------------------------------------------------------------------------------- */

/* The Threaded backend's `now` slot itself (src/os/time_posix.c), called directly. */
cio_timestamp cio__os_now(void *ud, cio_clock clock);

static volatile int64_t sink;

static void b1_vtable(void *arg, uint64_t n)
{
    cio_io io = *(cio_io *)arg;
    int64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += cio_now(io, CIO_CLOCK_AWAKE).ns;
    sink = acc;
}

static void b1_direct(void *arg, uint64_t n)
{
    (void)arg;
    int64_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc += cio__os_now(NULL, CIO_CLOCK_AWAKE).ns;
    sink = acc;
}

static void b1_clock(void *arg, uint64_t n)
{
    (void)arg;
    int64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += ts.tv_nsec;
    }
    sink = acc;
}

static int b1(const bench_opts *o, const char *contender)
{
    if (strcmp(contender, "threaded") == 0) {
        bench_backend b;
        (void)bench_backend_open(BENCH_THREADED, 0, &b);
        bench_result("main", bench_measure(b1_vtable, &b.io, o->seconds), "ns/call");
        bench_backend_close(&b);
    } else if (strcmp(contender, "direct") == 0) {
        bench_result("main", bench_measure(b1_direct, NULL, o->seconds), "ns/call");
    } else {
        bench_result("main", bench_measure(b1_clock, NULL, o->seconds), "ns/call");
    }
    return 0;
}

/* ---- B12: 100,000 tasks each sleeping 1 s ----------------------------------------------------------------- */

static long b12_count(const bench_opts *o)
{
    return o->smoke ? 1000 : o->param > 0 ? o->param : 100000;
}

/* A fiber stack is at most two mappings (the stack and its guard page, where the kernel has no guard
 * regions; with them a slab of up to 64 stacks is one mapping): the kernel's vm.max_map_count
 * (65530 by default; `build.py bench` raises it to 262144 when it runs as root) caps the fibers that
 * can exist at once. Returns how many tasks fit beside the process's other mappings, counting two per
 * stack. */
static long b12_fitting(long want)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long max = 0;
    if (f == NULL)
        return want;
    if (fscanf(f, "%ld", &max) != 1)
        max = 0;
    fclose(f);
    long fit = (max - 2000) / 2; /* the other mappings: libraries, heap, loop threads, … */
    return max <= 0 || fit >= want ? want : fit > 0 ? fit : 1;
}

static int64_t b12_sleep_ns(const bench_opts *o)
{
    return o->smoke ? 10000000 : 1000000000;
}

static void b12_report(int64_t wall_ns, int64_t spawned_ns)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    bench_result("main", (double)wall_ns / 1e9, "s");
    bench_result("rss", (double)ru.ru_maxrss / 1024.0, "MiB");
    bench_result("spawn", (double)spawned_ns / 1e9, "s");
}

static void b12_timer_cb(uv_timer_t *t)
{
    uv_close((uv_handle_t *)t, NULL);
}

static int b12_libuv(const bench_opts *o, const char *contender)
{
    (void)contender;
    long n = b12_count(o);
    uv_timer_t *timers = (uv_timer_t *)calloc((size_t)n, sizeof *timers);
    uv_loop_t *loop = uv_default_loop();
    if (timers == NULL)
        bench_die("calloc");
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        uv_timer_init(loop, &timers[i]);
        uv_timer_start(&timers[i], b12_timer_cb, (uint64_t)(b12_sleep_ns(o) / 1000000), 0);
    }
    int64_t spawned = bench_now_ns() - t0;
    uv_run(loop, UV_RUN_DEFAULT);
    b12_report(bench_now_ns() - t0, spawned);
    bench_result("tasks", (double)n, "n");
    free(timers);
    return 0;
}

typedef struct b12_args {
    cio_io io;
    int64_t ns;
} b12_args;

static cio_err b12_sleeper(void *context)
{
    b12_args *a = (b12_args *)context;
    return cio_sleep(a->io, cio_timeout_ns(a->ns));
}

typedef struct b12_run {
    long n;
    int64_t ns;
    int64_t wall;
    int64_t spawned; /* from the start until the last task was created */
} b12_run;

static void b12_cio_body(bench_backend *b, void *arg)
{
    b12_run *r = (b12_run *)arg;
    cio_group g = CIO_GROUP_INIT;
    b12_args a = {b->io, r->ns};
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < r->n; i++) {
        cio_err err = cio_group_concurrent(b->io, &g, b12_sleeper, &a, sizeof a);
        if (err != CIO_OK)
            bench_fail("cio_group_concurrent", err);
    }
    r->spawned = bench_now_ns() - t0;
    cio_err err = cio_group_await(b->io, &g);
    if (err != CIO_OK)
        bench_fail("cio_group_await (sleepers)", err);
    r->wall = bench_now_ns() - t0;
}

static int b12_cio(const bench_opts *o, const char *contender)
{
    bench_backend_kind kind;
    bench_backend b;
    if (!bench_kind_of(contender, &kind))
        return 2;
    if (kind == BENCH_THREADED)
        return bench_na("one thread per sleeping task: not a Threaded workload");
    if (!bench_backend_open(kind, 0, &b))
        return BENCH_NA;
    b12_run r = {b12_fitting(b12_count(o)), b12_sleep_ns(o), 0, 0};
    if (r.n < b12_count(o))
        fprintf(stderr, "cio_bench: B12: vm.max_map_count allows %ld fibers at once, not %ld\n", r.n, b12_count(o));
    bench_backend_run(&b, b12_cio_body, &r);
    bench_backend_close(&b);
    b12_report(r.wall, r.spawned);
    bench_result("tasks", (double)r.n, "n");
    return 0;
}

const bench_entry bench_misc_entries[] = {
    {"B1", "threaded", b1},
    {"B1", "direct", b1},
    {"B1", "clock_gettime", b1},
    {"B12", "evented-uring", b12_cio},
    {"B12", "evented-epoll", b12_cio},
    {"B12", "libuv", b12_libuv},
    {NULL, NULL, NULL},
};
