/*
 * cio_bench: runs one contender of one benchmark (see bench.h), or lists them.
 *
 *     cio_bench --list
 *     cio_bench B3 threaded --cpus same --seconds 0.3 [--param N] [--smoke]
 *
 * Also the shared helpers of bench.h: clocks, the measuring loop, CPU placement, backends.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "bench.h"

/* ---- clocks and results ---------------------------------------------------------------------------- */

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void bench_result(const char *metric, double value, const char *unit)
{
    printf("RESULT %s %.6g %s\n", metric, value, unit);
    fflush(stdout);
}

int bench_na(const char *reason)
{
    printf("NA %s\n", reason);
    fflush(stdout);
    return BENCH_NA;
}

_Noreturn void bench_fail(const char *what, cio_err err)
{
    fprintf(stderr, "cio_bench: %s: %s\n", what, cio_err_name(err));
    exit(1);
}

_Noreturn void bench_die(const char *what)
{
    fprintf(stderr, "cio_bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

double bench_measure(bench_body body, void *arg, double seconds)
{
    int64_t budget = (int64_t)(seconds * 1e9);
    /* Warm-up: about a tenth of the time, which also sizes the batches. */
    uint64_t n = 1;
    int64_t warm_end = bench_now_ns() + budget / 10;
    int64_t per = 0;
    for (;;) {
        int64_t t0 = bench_now_ns();
        body(arg, n);
        int64_t dt = bench_now_ns() - t0;
        per = dt / (int64_t)n;
        if (bench_now_ns() >= warm_end)
            break;
        if (dt < 2000000 && n < (1ull << 40))
            n *= 2;
    }
    /* Batches of ~5 ms (at least one unit) until the budget is used. */
    uint64_t batch = per > 0 ? (uint64_t)(5000000 / per) : 1024;
    if (batch == 0)
        batch = 1;
    uint64_t total = 0;
    int64_t spent = 0;
    while (spent < budget) {
        int64_t t0 = bench_now_ns();
        body(arg, batch);
        spent += bench_now_ns() - t0;
        total += batch;
    }
    return (double)spent / (double)total;
}

/* ---- CPU placement ------------------------------------------------------------------------------------ */

static bench_cpus pin_mode = BENCH_CPUS_FREE;
/* Split placement on the Evented backend: its threads (loops, helpers) may use CPUs 0 and 1. */
static bool workers_on_both = false;
bool bench_report_cpu = true;

void bench_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        bench_die("sched_setaffinity");
}

void bench_pin_init(bench_cpus cpus)
{
    pin_mode = cpus;
    if (cpus != BENCH_CPUS_FREE)
        bench_pin_self(0);
}

int bench_worker_cpu(void)
{
    return pin_mode == BENCH_CPUS_SPLIT ? 1 : -1;
}

void bench_pin_process(int cpu)
{
    if (cpu < 0)
        return;
    bench_pin_self(cpu);
    pin_mode = BENCH_CPUS_SAME; /* threads created from here on inherit `cpu` */
}

int bench_server_cpu(bench_cpus cpus)
{
    return cpus == BENCH_CPUS_SPLIT ? 1 : cpus == BENCH_CPUS_FREE ? -1 : 0;
}

int bench_client_cpu(bench_cpus cpus)
{
    return cpus == BENCH_CPUS_FREE ? -1 : 0;
}

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* Threads created by cio and bench/ go to the worker CPU under split placement. */
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    int cpu = bench_worker_cpu();
    if (cpu < 0)
        return __real_pthread_create(th, attr, fn, arg);
    pthread_attr_t a;
    if (pthread_attr_init(&a) != 0)
        return EAGAIN;
    if (attr != NULL) {
        size_t stack = 0;
        int detach = PTHREAD_CREATE_JOINABLE;
        if (pthread_attr_getstacksize(attr, &stack) == 0)
            (void)pthread_attr_setstacksize(&a, stack);
        if (pthread_attr_getdetachstate(attr, &detach) == 0)
            (void)pthread_attr_setdetachstate(&a, detach);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)cpu, &set);
    if (workers_on_both)
        CPU_SET(0, &set);
    (void)pthread_attr_setaffinity_np(&a, sizeof set, &set);
    int rc = __real_pthread_create(th, &a, fn, arg);
    pthread_attr_destroy(&a);
    return rc;
}

static void uv_nop_work(uv_work_t *req)
{
    (void)req;
}

static void uv_nop_after(uv_work_t *req, int status)
{
    (void)req;
    (void)status;
}

void bench_uv_pool_start(uv_loop_t *loop)
{
    int cpu = bench_worker_cpu();
    if (cpu >= 0)
        bench_pin_self(cpu);
    uv_work_t req;
    if (uv_queue_work(loop, &req, uv_nop_work, uv_nop_after) != 0)
        bench_die("uv_queue_work");
    uv_run(loop, UV_RUN_DEFAULT);
    if (cpu >= 0)
        bench_pin_self(0);
}

/* ---- cio backends -------------------------------------------------------------------------------------- */

bool bench_conc_of(const char *contender)
{
    size_t n = strlen(contender);
    return n > 5 && strcmp(contender + n - 5, "+conc") == 0;
}

bool bench_kind_of(const char *contender, bench_backend_kind *kind)
{
    char base[32];
    size_t n = strlen(contender);
    if (bench_conc_of(contender))
        n -= 5;
    if (n >= sizeof base)
        return false;
    memcpy(base, contender, n);
    base[n] = '\0';
    if (strcmp(base, "threaded") == 0)
        *kind = BENCH_THREADED;
    else if (strcmp(base, "evented-uring") == 0)
        *kind = BENCH_EVENTED_URING;
    else if (strcmp(base, "evented-epoll") == 0)
        *kind = BENCH_EVENTED_EPOLL;
    else
        return false;
    return true;
}

bool bench_backend_open(bench_backend_kind kind, unsigned evented_threads, bench_backend *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (kind == BENCH_THREADED) {
        /* CIO_BENCH_ASYNC_LIMIT: try another async limit (exploration; the driver never sets it). */
        cio_threaded_options to;
        memset(&to, 0, sizeof to);
        const char *limit = getenv("CIO_BENCH_ASYNC_LIMIT");
        if (limit != NULL)
            to.async_limit = (size_t)strtoul(limit, NULL, 10);
        cio_threaded *t = NULL;
        cio_err err = cio_threaded_create(&to, &t);
        if (err != CIO_OK)
            bench_fail("cio_threaded_create", err);
        out->instance = t;
        out->io = cio_threaded_io(t);
        return true;
    }
#if CIO_HAVE_EVENTED
    /* The measuring code runs in a fiber of a loop thread, so "the measuring thread on CPU 0, the
     * others on CPU 1" would put all of it on CPU 1: split lets Evented's threads use both CPUs. */
    workers_on_both = pin_mode == BENCH_CPUS_SPLIT;
    cio_evented_options eo;
    memset(&eo, 0, sizeof eo);
    eo.flavour = kind == BENCH_EVENTED_URING ? CIO_EVENTED_IO_URING : CIO_EVENTED_EPOLL;
    eo.threads = evented_threads;
    /* CIO_BENCH_EVENTED_THREADS: try another loop-thread count (exploration; the driver never sets it). */
    const char *threads = getenv("CIO_BENCH_EVENTED_THREADS");
    if (threads != NULL)
        eo.threads = (unsigned)strtoul(threads, NULL, 10);
    cio_evented *e = NULL;
    cio_err err = cio_evented_create(&eo, &e);
    if (err != CIO_OK) {
        char why[128];
        snprintf(why, sizeof why, "cio_evented_create: %s", cio_err_name(err));
        (void)bench_na(why);
        return false;
    }
    if (cio_evented_flavour_of(e) != eo.flavour) {
        cio_evented_destroy(e);
        (void)bench_na("cio_evented_create: another flavour than the one forced");
        return false;
    }
    out->instance = e;
    out->io = cio_evented_io(e);
    return true;
#else
    (void)evented_threads;
    (void)bench_na("Evented not built");
    return false;
#endif
}

/* (inline, on a unit of their own) task counts of the backend. */
static void task_counts(const bench_backend *b, size_t *inl, size_t *units)
{
    *inl = *units = 0;
    if (b->kind == BENCH_THREADED) {
        cio_threaded_stats s;
        cio_threaded_get_stats((cio_threaded *)b->instance, &s);
        *inl = s.tasks_inline;
        *units = s.tasks_on_workers;
    }
#if CIO_HAVE_EVENTED
    else {
        cio_evented_stats s;
        cio_evented_get_stats((const cio_evented *)b->instance, &s);
        *inl = s.tasks_inline;
        *units = s.fibers_started;
    }
#endif
}

void bench_backend_report_tasks(const bench_backend *b)
{
    size_t inl, units;
    task_counts(b, &inl, &units);
    if (inl + units == 0)
        return;
    bench_result("inline", 100.0 * (double)inl / (double)(inl + units), "%");
    bench_result("units", (double)units, "n");
}

void bench_backend_close(bench_backend *b)
{
    bench_backend_report_tasks(b);
    if (b->kind == BENCH_THREADED)
        cio_threaded_destroy((cio_threaded *)b->instance);
#if CIO_HAVE_EVENTED
    else
        cio_evented_destroy((cio_evented *)b->instance);
#endif
    b->instance = NULL;
}

typedef struct run_ctx {
    bench_backend *b;
    void (*fn)(bench_backend *b, void *arg);
    void *arg;
} run_ctx;

static cio_err run_task(void *context)
{
    run_ctx *c = (run_ctx *)context;
    c->fn(c->b, c->arg);
    return CIO_OK;
}

void bench_backend_run(bench_backend *b, void (*fn)(bench_backend *b, void *arg), void *arg)
{
    if (b->kind == BENCH_THREADED) {
        fn(b, arg);
        return;
    }
    run_ctx c = {b, fn, arg};
    cio_future f;
    cio_err err = cio_concurrent(b->io, run_task, &c, sizeof c, &f);
    if (err != CIO_OK)
        bench_fail("cio_concurrent (benchmark body)", err);
    (void)cio_await(b->io, &f);
}

typedef struct measure_ctx {
    bench_body body;
    void *arg;
    double seconds;
    double ns;
} measure_ctx;

static void measure_fn(bench_backend *b, void *arg)
{
    (void)b;
    measure_ctx *m = (measure_ctx *)arg;
    m->ns = bench_measure(m->body, m->arg, m->seconds);
}

double bench_measure_on(bench_backend *b, bench_body body, void *arg, double seconds)
{
    measure_ctx m = {body, arg, seconds, 0};
    bench_backend_run(b, measure_fn, &m);
    return m.ns;
}

/* CPU time of this process (all threads), in seconds. */
double bench_cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* ---- main ---------------------------------------------------------------------------------------------- */

static const bench_entry *const tables[] = {bench_misc_entries, bench_fiber_entries, bench_tasks_entries,
                                            bench_sync_entries, bench_fs_entries,    bench_net_entries,
                                            bench_http_entries, bench_tree_entries,  bench_timer_entries};

static int usage(void)
{
    fprintf(stderr, "usage: cio_bench --list | cio_bench BENCH CONTENDER [--cpus one|same|split|free] "
                    "[--seconds S] [--param N] [--smoke]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
            for (const bench_entry *e = tables[i]; e->bench != NULL; e++)
                printf("%s %s\n", e->bench, e->contender);
        printf("evented %d\n", CIO_HAVE_EVENTED);
        return 0;
    }
    if (argc < 3)
        return usage();
    bench_opts o = {BENCH_CPUS_FREE, 0.3, 0, false};
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--cpus") == 0 && i + 1 < argc) {
            const char *c = argv[++i];
            o.cpus = strcmp(c, "one") == 0     ? BENCH_CPUS_ONE
                     : strcmp(c, "same") == 0  ? BENCH_CPUS_SAME
                     : strcmp(c, "split") == 0 ? BENCH_CPUS_SPLIT
                                               : BENCH_CPUS_FREE;
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            o.seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "--param") == 0 && i + 1 < argc) {
            o.param = atol(argv[++i]);
        } else if (strcmp(argv[i], "--smoke") == 0) {
            o.smoke = true;
        } else {
            return usage();
        }
    }
    if (o.cpus == BENCH_CPUS_SPLIT && sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return bench_na("split placement needs 2 CPUs");
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        for (const bench_entry *e = tables[i]; e->bench != NULL; e++)
            if (strcmp(e->bench, argv[1]) == 0 && strcmp(e->contender, argv[2]) == 0) {
                bench_pin_init(o.cpus);
                int64_t t0 = bench_now_ns();
                double c0 = bench_cpu_seconds();
                int rc = e->fn(&o, argv[2]);
                /* The whole process (set-up included): shows what polling or spinning costs. */
                if (rc == 0 && bench_report_cpu)
                    bench_result("cpu", 100.0 * (bench_cpu_seconds() - c0) / ((double)(bench_now_ns() - t0) / 1e9),
                                 "%");
                return rc;
            }
    fprintf(stderr, "cio_bench: no benchmark %s %s (see --list)\n", argv[1], argv[2]);
    return 2;
}
