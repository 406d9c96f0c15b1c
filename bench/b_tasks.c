/*
 * Tasks: B3 (async+await of an empty task, serial), B4 (concurrent spawn+await, serial), B5 (a group
 * of 1,000 tasks) and B6 (cancel a task blocked in a read), with their peers: libuv's uv_queue_work,
 * pthread_create+join, and for B6 a raw signal out of read(2) answered through a futex (the
 * Threaded target's yardstick: the same two hops) and a futex round trip (reported beside it).
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "bench.h"
#include "pool.h"

static cio_err nop_task(void *context)
{
    (void)context;
    return CIO_OK;
}

static bench_backend *open_cio(const char *contender, unsigned evented_threads, bench_backend *b, int *rc)
{
    bench_backend_kind kind;
    if (!bench_kind_of(contender, &kind)) {
        *rc = 2;
        return NULL;
    }
    if (!bench_backend_open(kind, evented_threads, b)) {
        *rc = BENCH_NA;
        return NULL;
    }
    b->all_concurrent = bench_conc_of(contender);
    if (b->all_concurrent && kind == BENCH_THREADED)
        cio_threaded_set_async_limit((cio_threaded *)b->instance, SIZE_MAX);
    return b;
}

/* ---- libuv: serial uv_queue_work round trips (the after-work callback queues the next) ----------- */

typedef struct uv_serial {
    uv_work_t req;
    uv_loop_t *loop;
    uint64_t left;
} uv_serial;

static void uv_nop(uv_work_t *req)
{
    (void)req;
}

static void uv_serial_after(uv_work_t *req, int status)
{
    (void)status;
    uv_serial *s = (uv_serial *)req->data;
    if (--s->left > 0)
        uv_queue_work(s->loop, &s->req, uv_nop, uv_serial_after);
}

static void uv_serial_body(void *arg, uint64_t n)
{
    uv_serial *s = (uv_serial *)arg;
    s->left = n;
    s->req.data = s;
    uv_queue_work(s->loop, &s->req, uv_nop, uv_serial_after);
    uv_run(s->loop, UV_RUN_DEFAULT);
}

static int uv_serial_run(const bench_opts *o)
{
    uv_serial s;
    memset(&s, 0, sizeof s);
    s.loop = uv_default_loop();
    bench_uv_pool_start(s.loop);
    bench_result("main", bench_measure(uv_serial_body, &s, o->seconds), "ns/op");
    return 0;
}

/* ---- B3: cio_async + cio_await of an empty task ------------------------------------------------------- */

static void b3_body(void *arg, uint64_t n)
{
    const bench_backend *b = (const bench_backend *)arg;
    cio_io io = b->io;
    if (b->all_concurrent && b->kind != BENCH_THREADED) {
        /* Evented "+conc": a concurrent task is never run inline by its await, so a fiber starts. */
        for (uint64_t i = 0; i < n; i++) {
            cio_future f;
            cio_err err = cio_concurrent(io, nop_task, NULL, 0, &f);
            if (err != CIO_OK)
                bench_fail("cio_concurrent", err);
            (void)cio_await(io, &f);
        }
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        cio_future f = cio_async(io, nop_task, NULL, 0);
        (void)cio_await(io, &f);
    }
}

static int b3(const bench_opts *o, const char *contender)
{
    if (strcmp(contender, "libuv") == 0)
        return uv_serial_run(o);
    bench_backend b;
    int rc = 0;
    if (open_cio(contender, 0, &b, &rc) == NULL)
        return rc;
    bench_result("main", bench_measure_on(&b, b3_body, &b, o->seconds), "ns/op");
    bench_backend_close(&b);
    return 0;
}

/* ---- B4: cio_concurrent + cio_await ------------------------------------------------------------------- */

static void b4_body(void *arg, uint64_t n)
{
    cio_io io = ((bench_backend *)arg)->io;
    for (uint64_t i = 0; i < n; i++) {
        cio_future f;
        cio_err err = cio_concurrent(io, nop_task, NULL, 0, &f);
        if (err != CIO_OK)
            bench_fail("cio_concurrent", err);
        (void)cio_await(io, &f);
    }
}

static void *pthread_nop(void *arg)
{
    return arg;
}

static void b4_pthread_body(void *arg, uint64_t n)
{
    (void)arg;
    for (uint64_t i = 0; i < n; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, pthread_nop, NULL) != 0)
            bench_die("pthread_create");
        pthread_join(th, NULL);
    }
}

static int b4(const bench_opts *o, const char *contender)
{
    if (strcmp(contender, "libuv") == 0)
        return uv_serial_run(o);
    if (strcmp(contender, "pthread") == 0) {
        bench_result("main", bench_measure(b4_pthread_body, NULL, o->seconds), "ns/op");
        return 0;
    }
    bench_backend b;
    int rc = 0;
    if (open_cio(contender, 0, &b, &rc) == NULL)
        return rc;
    bench_result("main", bench_measure_on(&b, b4_body, &b, o->seconds), "ns/op");
    bench_backend_close(&b);
    return 0;
}

/* ---- B5: a group of 1,000 tasks, spawned then awaited ------------------------------------------------- */

#define B5_TASKS 1000

static void b5_body(void *arg, uint64_t n)
{
    const bench_backend *b = (const bench_backend *)arg;
    cio_io io = b->io;
    bool conc = b->all_concurrent && b->kind != BENCH_THREADED;
    for (uint64_t i = 0; i < n; i++) {
        cio_group g = CIO_GROUP_INIT;
        for (int k = 0; k < B5_TASKS; k++) {
            if (!conc) {
                cio_group_async(io, &g, nop_task, NULL, 0);
                continue;
            }
            cio_err err = cio_group_concurrent(io, &g, nop_task, NULL, 0);
            if (err != CIO_OK)
                bench_fail("cio_group_concurrent", err);
        }
        (void)cio_group_await(io, &g);
    }
}

typedef struct uv_batch {
    uv_loop_t *loop;
    uv_work_t reqs[B5_TASKS];
} uv_batch;

static void uv_batch_after(uv_work_t *req, int status)
{
    (void)req;
    (void)status;
}

static void uv_batch_body(void *arg, uint64_t n)
{
    uv_batch *u = (uv_batch *)arg;
    for (uint64_t i = 0; i < n; i++) {
        for (int k = 0; k < B5_TASKS; k++)
            uv_queue_work(u->loop, &u->reqs[k], uv_nop, uv_batch_after);
        uv_run(u->loop, UV_RUN_DEFAULT);
    }
}

static void pool_nop(void *arg)
{
    (void)arg;
}

typedef struct b5_pool {
    bench_pool *pool;
    bench_pool_job jobs[B5_TASKS];
} b5_pool;

static void b5_pool_body(void *arg, uint64_t n)
{
    b5_pool *p = (b5_pool *)arg;
    for (uint64_t i = 0; i < n; i++) {
        for (int k = 0; k < B5_TASKS; k++) {
            p->jobs[k].fn = pool_nop;
            p->jobs[k].arg = NULL;
            bench_pool_submit(p->pool, &p->jobs[k]);
        }
        for (int k = 0; k < B5_TASKS; k++)
            bench_pool_wait(p->pool, &p->jobs[k]);
    }
}

static int b5(const bench_opts *o, const char *contender)
{
    if (strcmp(contender, "pthread-pool") == 0) {
        b5_pool *p = (b5_pool *)calloc(1, sizeof *p);
        if (p == NULL || (p->pool = bench_pool_create()) == NULL)
            bench_die("bench_pool_create");
        bench_result("main", bench_measure(b5_pool_body, p, o->seconds) / B5_TASKS, "ns/task");
        bench_pool_destroy(p->pool);
        free(p);
        return 0;
    }
    if (strcmp(contender, "libuv") == 0) {
        uv_batch *u = (uv_batch *)calloc(1, sizeof *u);
        if (u == NULL)
            bench_die("calloc");
        u->loop = uv_default_loop();
        bench_uv_pool_start(u->loop);
        bench_result("main", bench_measure(uv_batch_body, u, o->seconds) / B5_TASKS, "ns/task");
        free(u);
        return 0;
    }
    bench_backend b;
    int rc = 0;
    if (open_cio(contender, 0, &b, &rc) == NULL)
        return rc;
    bench_result("main", bench_measure_on(&b, b5_body, &b, o->seconds) / B5_TASKS, "ns/task");
    bench_backend_close(&b);
    return 0;
}

/* ---- B6: cancel a task blocked in a read of an empty pipe --------------------------------------------------
 *
 * Per round: concurrent(task), wait until the task is blocked, cio_cancel (timed: "main"), which
 * returns once the task has seen CIO_E_CANCELED and finished. The task sets an Event just before its
 * read. On Threaded the waiting side then also polls /proc/self/task/<tid>/stat until the worker
 * sleeps (it is in read(2) then); on Evented one loop thread makes the Event enough (the task's
 * fiber runs on into its read and suspends before the waiter resumes). "main" is the median
 * cancel+join of the rounds (p90 and mean beside it); "cycle" is the mean whole round.
 *
 * Wake hops, per cancel (means over the rounds; read outside the timed window, just before and just
 * after it): "kicks" the signals cio sent (cio_threaded_get_stats; not reported for Evented), "sleeps"
 * the canceling thread's voluntary context switches (getrusage(RUSAGE_THREAD) ru_nvcsw: each sleep
 * needs a wake-up to end), "yields" its involuntary ones (a sched_yield or a preemption: no wake-up
 * needed), "wsleeps" the worker's voluntary switches (/proc/self/task/<tid>/status, read right after
 * cancel returned: the worker then idles by yielding for 20 µs before it sleeps, so its idle sleep
 * is not counted unless the read is late). "hops" = kicks + sleeps + wsleeps, and "over2" the share
 * of rounds with more than 2. On Evented the task runs on the canceler's loop thread: hops = sleeps.
 * signal-read reports the same for its raw signal and futex reply (its partner sleeps only in
 * read(2): wsleeps are its voluntary switches from one round's start to the next, less the one
 * back into read). */

typedef struct b6_shared {
    cio_io io;
    cio_event started;
    _Atomic(int) tid;
    int fd;
} b6_shared;

static cio_err b6_task(void *context)
{
    b6_shared *s = *(b6_shared **)context;
    char byte;
    size_t n = 0;
    atomic_store(&s->tid, (int)syscall(SYS_gettid));
    cio_event_set(s->io, &s->started);
    cio_err err = cio_file_read_streaming(s->io, (cio_file){s->fd}, &byte, 1, &n);
    return err;
}

/* Reads /proc/self/task/<tid>/<name> into buf (NUL-terminated); false if it cannot be read. */
static bool read_task_file(int tid, const char *name, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t len = read(fd, buf, size - 1);
    close(fd);
    if (len <= 0)
        return false;
    buf[len] = 0;
    return true;
}

/* Thread `tid`'s voluntary context switches (/proc/self/task/<tid>/status), -1 if unreadable. */
static long thread_nvcsw(int tid)
{
    char buf[2048];
    if (!read_task_file(tid, "status", buf, sizeof buf))
        return -1;
    const char *p = strstr(buf, "\nvoluntary_ctxt_switches:");
    return p != NULL ? strtol(p + 26, NULL, 10) : -1;
}

/* The calling thread's voluntary (sleeps) and involuntary context switches. */
static void self_switches(long *vol, long *invol)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        bench_die("getrusage");
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
}

/* Per-cancel wake-hop counts, summed over the rounds (see the comment above). */
typedef struct b6_hops {
    long kicks, sleeps, yields, wsleeps, over2;
} b6_hops;

static void b6_hops_add(b6_hops *h, long kicks, long sleeps, long yields, long wsleeps)
{
    h->kicks += kicks;
    h->sleeps += sleeps;
    h->yields += yields;
    h->wsleeps += wsleeps;
    h->over2 += kicks + sleeps + wsleeps > 2;
}

/* with_kicks: false on Evented, whose counters the bench cannot read (its pipe read is a poll or an
 * io_uring read of the loop, canceled without a signal). */
static void b6_hops_report(const b6_hops *h, long rounds, bool with_kicks)
{
    double n = (double)rounds;
    bench_result("hops", (double)(h->kicks + h->sleeps + h->wsleeps) / n, "per-cancel");
    if (with_kicks)
        bench_result("kicks", (double)h->kicks / n, "per-cancel");
    bench_result("sleeps", (double)h->sleeps / n, "per-cancel");
    bench_result("yields", (double)h->yields / n, "per-cancel");
    bench_result("wsleeps", (double)h->wsleeps / n, "per-cancel");
    bench_result("over2", 100.0 * (double)h->over2 / n, "%");
}

/* Whether thread `tid` of this process is sleeping ('S' in /proc/self/task/<tid>/stat). */
static bool thread_sleeps(int tid)
{
    char buf[512];
    if (!read_task_file(tid, "stat", buf, sizeof buf))
        return false;
    const char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' && p[2] == 'S';
}

#define B6_MAX_ROUNDS 100000

typedef struct b6_run {
    const bench_opts *o;
    bool threaded;
    double cancel_ns; /* mean */
    double cycle_ns;  /* mean */
    long canceled, rounds;
    int64_t *each; /* every round's cancel+join, for the median and p90 */
    b6_hops hops;
} b6_run;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void b6_body(bench_backend *b, void *arg)
{
    b6_run *r = (b6_run *)arg;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        bench_die("pipe2");
    b6_shared s;
    memset(&s, 0, sizeof s);
    s.io = b->io;
    s.fd = fds[0];
    b6_shared *sp = &s;
    int64_t budget = (int64_t)(r->o->seconds * 1e9), start = bench_now_ns(), cancel_total = 0;
    long rounds = 0, warm = 20;
    while (warm > 0 || (bench_now_ns() - start < budget && rounds < B6_MAX_ROUNDS)) {
        int64_t t0 = bench_now_ns();
        cio_event_reset(&s.started);
        atomic_store(&s.tid, 0);
        cio_future f;
        cio_err err = cio_concurrent(b->io, b6_task, &sp, sizeof sp, &f);
        if (err != CIO_OK)
            bench_fail("cio_concurrent", err);
        cio_event_wait_uncancelable(b->io, &s.started);
        int tid = atomic_load(&s.tid);
        if (r->threaded)
            while (!thread_sleeps(tid))
                sched_yield();
        /* untimed: the counters before and after */
        long w0 = r->threaded ? thread_nvcsw(tid) : 0, v0, i0, v1, i1;
        cio_threaded_stats k0 = {0}, k1 = {0};
        if (r->threaded)
            cio_threaded_get_stats((cio_threaded *)b->instance, &k0);
        self_switches(&v0, &i0);
        int64_t t1 = bench_now_ns();
        err = cio_cancel(b->io, &f);
        int64_t t2 = bench_now_ns();
        self_switches(&v1, &i1);
        long w1 = r->threaded ? thread_nvcsw(tid) : 0;
        if (r->threaded)
            cio_threaded_get_stats((cio_threaded *)b->instance, &k1);
        if (warm > 0) {
            warm--;
            if (warm == 0)
                start = bench_now_ns();
            continue;
        }
        if (err == CIO_E_CANCELED)
            r->canceled++;
        cancel_total += t2 - t1;
        r->each[rounds] = t2 - t1;
        r->cycle_ns += (double)(t2 - t0);
        b6_hops_add(&r->hops, (long)(k1.kicks - k0.kicks), v1 - v0, i1 - i0, w0 < 0 || w1 < 0 ? 0 : w1 - w0);
        rounds++;
    }
    close(fds[0]);
    close(fds[1]);
    r->rounds = rounds;
    r->cancel_ns = (double)cancel_total / (double)rounds;
    r->cycle_ns /= (double)rounds;
}

/* A futex round trip with a partner thread (two futex wake hops, each a sleeping thread): reported
 * beside the Threaded row, not its yardstick (a thread blocked in read(2) cannot be woken by a
 * futex; see bench/README.md). */
typedef struct futex_pp {
    _Atomic(uint32_t) word; /* 0: main's turn, 1: partner's turn, 2: stop */
} futex_pp;

static void futex_wait(_Atomic(uint32_t) *w, uint32_t v)
{
    syscall(SYS_futex, (void *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic(uint32_t) *w)
{
    syscall(SYS_futex, (void *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *futex_partner(void *arg)
{
    futex_pp *p = (futex_pp *)arg;
    for (;;) {
        uint32_t v;
        while ((v = atomic_load(&p->word)) == 0)
            futex_wait(&p->word, 0);
        if (v == 2)
            return NULL;
        atomic_store(&p->word, 0);
        futex_wake(&p->word);
    }
}

static void futex_pp_body(void *arg, uint64_t n)
{
    futex_pp *p = (futex_pp *)arg;
    for (uint64_t i = 0; i < n; i++) {
        atomic_store(&p->word, 1);
        futex_wake(&p->word);
        while (atomic_load(&p->word) == 1)
            futex_wait(&p->word, 1);
    }
}

/* The floor for knocking a thread out of a blocked read, and the Threaded target's yardstick: a raw
 * signal to a thread blocked in read(2) on an empty pipe (handler without SA_RESTART: EINTR), which
 * answers through a futex. The signal is one tgkill(2) with the ids known beforehand: the cheapest
 * kick Linux has, and cio's own on Linux (glibc's pthread_kill makes four system calls, ~1 µs
 * more here; the floor used it until cio's kick became a tgkill). Timed per round like cio's
 * cancel+join: signal sent -> answer seen; rounds start only once the partner sleeps in read
 * (polled through /proc, untimed). */
typedef struct sig_pp {
    _Atomic(uint32_t) word; /* bumped by the partner after each EINTR; UINT32_MAX: stop */
    _Atomic(int) tid;
    _Atomic(int) stop;
    int fd;
} sig_pp;

static void on_bench_signal(int signo)
{
    (void)signo;
}

static void *sig_partner(void *arg)
{
    sig_pp *p = (sig_pp *)arg;
    atomic_store(&p->tid, (int)syscall(SYS_gettid));
    char byte;
    while (!atomic_load(&p->stop)) {
        if (read(p->fd, &byte, 1) < 0 && errno != EINTR)
            bench_die("read");
        atomic_fetch_add(&p->word, 1);
        futex_wake(&p->word);
    }
    return NULL;
}

static int b6_signal(const bench_opts *o)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_bench_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR2, &sa, NULL) != 0)
        bench_die("sigaction");
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        bench_die("pipe2");
    sig_pp p;
    memset(&p, 0, sizeof p);
    p.fd = fds[0];
    pthread_t th;
    if (pthread_create(&th, NULL, sig_partner, &p) != 0)
        bench_die("pthread_create");
    while (atomic_load(&p.tid) == 0)
        sched_yield();
    int64_t *each = (int64_t *)calloc(B6_MAX_ROUNDS, sizeof *each);
    if (each == NULL)
        bench_die("calloc");
    int64_t budget = (int64_t)(o->seconds * 1e9), start = bench_now_ns();
    long rounds = 0, warm = 20;
    b6_hops hops = {0};
    long w_prev = -1, sleeps = 0, yields = 0; /* the partner's count at the last round's start */
    int tid = atomic_load(&p.tid);
    pid_t pid = getpid();
    while (warm > 0 || (bench_now_ns() - start < budget && rounds < B6_MAX_ROUNDS)) {
        while (!thread_sleeps(tid))
            sched_yield();
        long w = thread_nvcsw(tid), v0, i0, v1, i1;
        if (rounds > 0 && w_prev >= 0 && w >= 0) /* the last round's, less the sleep back into read */
            b6_hops_add(&hops, 1, sleeps, yields, w - w_prev - 1);
        uint32_t seen = atomic_load(&p.word);
        self_switches(&v0, &i0);
        int64_t t1 = bench_now_ns();
        syscall(SYS_tgkill, pid, tid, SIGUSR2);
        uint32_t v;
        while ((v = atomic_load(&p.word)) == seen)
            futex_wait(&p.word, seen);
        int64_t t2 = bench_now_ns();
        self_switches(&v1, &i1);
        if (warm > 0) {
            if (--warm == 0)
                start = bench_now_ns();
            continue;
        }
        w_prev = w;
        sleeps = v1 - v0;
        yields = i1 - i0;
        each[rounds++] = t2 - t1;
    }
    atomic_store(&p.stop, 1);
    for (;;) { /* the partner may be past its stop check: signal until it is gone */
        pthread_kill(th, SIGUSR2);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_timedjoin_np(th, NULL, &ts) == 0)
            break;
    }
    close(fds[0]);
    close(fds[1]);
    qsort(each, (size_t)rounds, sizeof *each, cmp_i64);
    bench_result("main", (double)each[rounds / 2], "ns/op");
    bench_result("p90", (double)each[rounds * 9 / 10], "ns/op");
    bench_result("rounds", (double)rounds, "n");
    if (rounds > 1)
        b6_hops_report(&hops, rounds - 1, true); /* the last round's partner count is not read */
    free(each);
    return 0;
}

static int b6(const bench_opts *o, const char *contender)
{
    if (strcmp(contender, "signal-read") == 0)
        return b6_signal(o);
    if (strcmp(contender, "futex-2hops") == 0) {
        futex_pp p;
        atomic_init(&p.word, 0);
        pthread_t th;
        if (pthread_create(&th, NULL, futex_partner, &p) != 0)
            bench_die("pthread_create");
        bench_result("main", bench_measure(futex_pp_body, &p, o->seconds), "ns/op");
        atomic_store(&p.word, 2);
        futex_wake(&p.word);
        pthread_join(th, NULL);
        return 0;
    }
    bench_backend b;
    int rc = 0;
    if (open_cio(contender, 1, &b, &rc) == NULL)
        return rc;
    b6_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.threaded = b.kind == BENCH_THREADED;
    r.each = (int64_t *)calloc(B6_MAX_ROUNDS, sizeof *r.each);
    if (r.each == NULL)
        bench_die("calloc");
    bench_backend_run(&b, b6_body, &r);
    bench_backend_close(&b);
    if (r.canceled != r.rounds) {
        fprintf(stderr, "cio_bench: B6: %ld of %ld cancels did not return Canceled\n", r.rounds - r.canceled, r.rounds);
        return 1;
    }
    qsort(r.each, (size_t)r.rounds, sizeof *r.each, cmp_i64);
    bench_result("main", (double)r.each[r.rounds / 2], "ns/op");
    bench_result("p90", (double)r.each[r.rounds * 9 / 10], "ns/op");
    bench_result("mean", r.cancel_ns, "ns/op");
    bench_result("cycle", r.cycle_ns, "ns/op");
    bench_result("rounds", (double)r.rounds, "n");
    b6_hops_report(&r.hops, r.rounds, r.threaded);
    free(r.each);
    return 0;
}

const bench_entry bench_tasks_entries[] = {
    {"B3", "threaded", b3},
    {"B3", "evented-uring", b3},
    {"B3", "evented-epoll", b3},
    {"B3", "libuv", b3},
    {"B3", "threaded+conc", b3},
    {"B3", "evented-uring+conc", b3},
    {"B3", "evented-epoll+conc", b3},
    {"B4", "threaded", b4},
    {"B4", "pthread", b4},
    {"B4", "libuv", b4},
    {"B5", "threaded", b5},
    {"B5", "evented-uring", b5},
    {"B5", "evented-epoll", b5},
    {"B5", "libuv", b5},
    {"B5", "threaded+conc", b5},
    {"B5", "pthread-pool", b5},
    {"B5", "evented-uring+conc", b5},
    {"B5", "evented-epoll+conc", b5},
    {"B6", "threaded", b6},
    {"B6", "evented-uring", b6},
    {"B6", "evented-epoll", b6},
    {"B6", "futex-2hops", b6},
    {"B6", "signal-read", b6},
    {NULL, NULL, NULL},
};
