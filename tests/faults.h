/*
 * Shared by the fault-injection suites (tests/test_faults.c: files, clocks, memory, the table;
 * tests/test_faults_os.c: sockets, futexes, threads, signals): counting descriptors and threads,
 * the coverage line a passing case prints, and a fixture directory under /tmp with a few files.
 */
#ifndef CIO_TESTS_FAULTS_H
#define CIO_TESTS_FAULTS_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "internal/cio_oscalls_test.h"

#include "asserts.h"
#include "os_helpers.h"

/* ---- counting descriptors and threads --------------------------------------------------------- */

static inline int count_dir(const char *path)
{
#if defined(CIO_OS_LINUX)
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* opendir's own descriptor (or nothing, for task/) is not the program's */
#else
    (void)path;
    return 0; /* no /proc: nothing to compare */
#endif
}

#if defined(CIO_OS_WINDOWS)
static inline int thread_count(void);

/* Windows: the process's open handles, of any kind (os_helpers.h). */
static inline int handle_count(void)
{
    return cio_test_count_all_handles();
}

/* The process's threads (a toolhelp snapshot; Wine has it). */
static inline int thread_count(void)
{
    return cio_test_count_threads();
}

/* What the leak checks compare: open handles less one per thread. Under Wine a thread that did
 * synchronous I/O keeps a cached event handle until it exits, so a pool worker started during a case
 * and not yet retired (idle timeout 5 s) shows as one more handle without anything having leaked;
 * counted against its thread it cancels out. A real leak still raises the difference. */
static inline int fd_count(void)
{
    int n = handle_count() - thread_count();
    cio_test_snap_keep(CIO_TEST_SNAP_DERIVED + n); /* for print_new_handles */
    return n;
}

/* After a failed check against fd_count() == before: which handles are new, and their kinds. */
static inline void print_new_handles(int before)
{
    cio_test_print_new_handles(CIO_TEST_SNAP_DERIVED + before);
}

static inline void pause_ms(long ms)
{
    Sleep((DWORD)ms);
}
#else
static inline int fd_count(void)
{
    return count_dir("/proc/self/fd");
}

static inline void print_new_handles(int before)
{
    (void)before; /* /proc/self/fd names them well enough when a descriptor check fails */
}

#if defined(CIO_OS_LINUX)
/* The program's threads (opendir's descriptor is not in task/: add back the one count_dir drops). */
static inline int thread_count(void)
{
    return count_dir("/proc/self/task") + 1;
}
#endif

/* Sleeps without going through cio (the table may be storming at cio's sleep). */
static inline void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
#endif

/* On Windows the POSIX cases (errno conventions, POSIX call sites) are listed as skips; the Windows
 * call sites have their cases in tests/test_faults_windows.c. */
static inline void cio_faults_posix_only_skip(void **state)
{
    (void)state;
    CIO_SKIP("a POSIX call site's case (errno conventions): the Windows sites are in test_faults_windows");
}
#define CIO_POSIX_ONLY(f)                                             \
    {                                                                 \
        "threaded: " #f, cio_faults_posix_only_skip, NULL, NULL, NULL \
    }


#if CIO_HAVE_EVENTED && defined(__linux__)
/* The cases inject at the routed sites the Evented backend reaches through its helper pool and its
 * readiness paths; the io_uring flavour's own ring operations report through completions, not
 * routed calls (test_uring.c checks them, test_faults_evented.c the ring's own sites). So these
 * suites' io_uring instances keep to the fallback paths (read at create). */
__attribute__((constructor)) static void fx_uring_fallback_paths(void)
{
    (void)setenv("CIO_EVENTED_URING_NATIVE", "0", 0);
}
#endif

/* ---- the backend a case runs on ---------------------------------------------------------------------
 * The Evented backend runs most operations through the same Threaded slots (on its helper pool, or
 * its sockets on non-blocking descriptors), so most sites are the same. Its reads and writes are its
 * own: on the epoll flavour a first attempt with RWF_NOWAIT (preadv2/pwritev2), on the io_uring
 * flavour a ring operation whose result comes in a completion (no routed call to fail: such a case
 * is left out, saying so); and its sleep is a timer on the loop. */
typedef enum fx_backend { FX_THREADED, FX_URING, FX_EPOLL, FX_IOCP } fx_backend;

static inline fx_backend fx_backend_of(void **state)
{
#if CIO_HAVE_EVENTED
    if (*state == (void *)&cio_test_backend_uring)
        return FX_URING;
#if defined(CIO_OS_WINDOWS)
    if (*state == (void *)&cio_test_backend_epoll) /* Windows' one flavour sits in the readiness place */
        return FX_IOCP;
#else
    if (*state == (void *)&cio_test_backend_epoll)
        return FX_EPOLL;
#endif
#else
    (void)state;
#endif
    return FX_THREADED;
}

static inline bool fx_is_rw_site(const char *site)
{
    static const char *const rw[] = {"readv@file_read_streaming", "writev@file_write_streaming",
                                     "preadv@file_read_positional", "pwritev@file_write_positional"};
    for (size_t i = 0; i < sizeof rw / sizeof rw[0]; i++)
        if (strcmp(site, rw[i]) == 0)
            return true;
    return false;
}

/* The site the Threaded backend's `site` operation reaches on this case's backend, or NULL (after a
 * note saying why) where that backend makes no routed call for it. */
static inline const char *fx_site(void **state, const char *site)
{
    fx_backend b = fx_backend_of(state);
    if (b == FX_THREADED)
        return site;
    if (strcmp(site, "clock_nanosleep@sleep") == 0) {
        print_message("      not here: %s (Evented sleeps on a loop timer, no system call)\n", site);
        return NULL;
    }
    if (b == FX_URING && (fx_is_rw_site(site) || strcmp(site, "fsync@file_sync") == 0)) {
        print_message("      not here: %s (a native io_uring operation: its result comes in a completion, "
                      "not through a routed call)\n",
                      site);
        return NULL;
    }
    if (b == FX_EPOLL && fx_is_rw_site(site))
        return strstr(site, "read") != NULL ? "preadv2@nowait_read" : "pwritev2@nowait_write";
    return site;
}

/* Skips a test of the Threaded worker pool's own machinery on the Evented backend (whose tasks are
 * fibers; its helper pool is a Threaded instance, whose workers the Threaded runs cover). */
#define FX_THREADED_POOL_ONLY(state)                                                                \
    do {                                                                                            \
        if (fx_backend_of(state) != FX_THREADED) {                                                  \
            (void)cio_test_io(state);                                                               \
            CIO_SKIP("a Threaded worker-pool site: Evented tasks are fibers, no worker runs them"); \
        }                                                                                           \
    } while (0)

#if CIO_HAVE_EVENTED && defined(CIO_OS_LINUX)
#include <sys/uio.h>
/* Whether this file system takes buffered writes with RWF_NOWAIT (ext4 says EOPNOTSUPP, and the epoll
 * flavour's writes then go to the helper pool, through the Threaded sites). */
static inline bool fx_nowait_writes(void)
{
    char p[] = "/tmp/cio-test-faults-nowait-XXXXXX";
    int fd = mkstemp(p);
    if (fd < 0)
        return false;
    unlink(p);
    struct iovec v = {(void *)"x", 1};
    ssize_t n = pwritev2(fd, &v, 1, -1, RWF_NOWAIT);
    close(fd);
    return n == 1;
}
#endif

/* The count `now()` returns is again at most `before` within about eight seconds: threads that were
 * starting (a worker and its handle) have settled; a worker that retired meanwhile only lowers the
 * count. A worker that started during the case is not a leak either: on a loaded machine a granted
 * worker can take longer than the monitor's 250 us tick to wake, and the monitor then starts one more
 * (pool.c), which keeps its thread and, under Wine, its cached event until it has been idle for the
 * pool's 5 s. So the wait outlasts that idle timeout (a passing case returns at its first look).
 * False if the count stays higher (a leak). */
static inline bool settled_at_most(int (*now)(void), int before)
{
    for (int i = 0; i < 800; i++) {
        if (now() <= before)
            return true;
        pause_ms(10);
    }
    return false;
}

#define assert_handles(before)                                                         \
    do {                                                                               \
        int b_ = (before);                                                             \
        if (!settled_at_most(fd_count, b_)) {                                          \
            print_new_handles(b_);                                                     \
            fail_msg("handles: %d open, %d before (a handle leaked)", fd_count(), b_); \
        }                                                                              \
    } while (0)

/* Before a count of handles or threads: one worker exists (its thread and handle are not the case's
 * doing) and has used a socket, as has this thread (Winsock's start-up and, under Wine, each
 * thread's cached synchronous-I/O event are not a case's either). */
static inline cio_err warm_net(void *p)
{
#if defined(CIO_OS_WASI)
    (void)p;
#else
    cio_io io = *(cio_io *)p;
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server s;
    if (cio_net_listen(io, &lo, NULL, &s) == CIO_OK)
        cio_server_close(io, &s);
#endif
    return CIO_OK;
}

/* WARM_WORKERS tasks that wait for each other before they warm: each runs on a worker of its own. */
#define WARM_WORKERS 4
typedef struct warm_ctx {
    cio_io io;
    _Atomic(int) *started;
} warm_ctx;

static inline cio_err warm_net_together(void *p)
{
    warm_ctx *c = (warm_ctx *)p;
    atomic_fetch_add(c->started, 1);
    for (int i = 0; i < 2000 && atomic_load(c->started) < WARM_WORKERS; i++)
        pause_ms(1);
    return warm_net(&c->io);
}

#if CIO_HAVE_EVENTED
cio_threaded *cio__e_helper_pool(cio_io io); /* src/evented/io.c: an Evented io's helper pool, else NULL */
#endif

static inline void warm_up(cio_io io)
{
    cio__fault_reset();
#if CIO_HAVE_EVENTED
    /* Evented: its helper pool's workers too (the blocking calls a case routes there). */
    cio_threaded *helper = cio__e_helper_pool(io);
    if (helper != NULL)
        warm_up(cio_threaded_io(helper));
#endif
    if (CIO_HAVE_THREADS) {
        /* Several workers at once, so that whichever worker a case's task lands on has used a
         * socket already (under Wine that caches a handle per thread for the thread's life). */
        _Atomic(int) started = 0;
        warm_ctx c = {io, &started};
        cio_future f[WARM_WORKERS];
        int n = 0;
        while (n < WARM_WORKERS && cio_concurrent(io, warm_net_together, &c, sizeof c, &f[n]) == CIO_OK)
            n++;
        if (n < WARM_WORKERS)
            atomic_fetch_add(&started, WARM_WORKERS); /* no more workers: nobody waits for them */
        for (int i = 0; i < n; i++)
            (void)cio_await(io, &f[i]);
    }
    (void)warm_net(&io);
}

/* A passing case names what it covered (build.py reads these lines). The fault must have been
 * injected at that site. */
static inline void covered(const char *site, const char *fault)
{
    if (cio__fault_injected(site) == 0)
        fail_msg("%s: the %s fault was never injected (the operation did not reach the site)", site, fault);
    print_message("fault-covered: %s %s\n", site, fault);
}

/* ---- the fixture: a fresh directory with a few files --------------------------------------------- */

#define DATA_LEN 20000
static unsigned char data[DATA_LEN];

typedef struct fx {
    cio_io io;
#if defined(CIO_OS_WINDOWS)
    char path[128]; /* %TEMP%\cio-test-faults-... */
#else
    char path[64];
#endif
    cio_dir dir;
    cio_file file; /* "f" opened read-write by cases that need it */
    bool file_open;
    cio_stream a, b; /* a connected TCP pair for the stream cases */
    cio_server server;
    cio_socket udp1, udp2;
    int fds, threads;
} fx;


static const cio_open_dir_options iterate_opts = {true, false};

static inline void write_file(fx *f, const char *name, size_t len)
{
    cio_file h;
    assert_ok(cio_dir_create_file(f->io, f->dir, name, NULL, &h));
    assert_ok(cio_file_write_all(f->io, h, data, len));
    cio_file_close(f->io, h);
}

/* The file's whole content, read back without any fault armed. */
static inline size_t read_back(fx *f, const char *name, unsigned char *buf, size_t cap)
{
    cio_file h;
    size_t n = 0;
    assert_ok(cio_dir_open_file(f->io, f->dir, name, NULL, &h));
    assert_ok(cio_file_read_all(f->io, h, buf, cap, &n));
    cio_file_close(f->io, h);
    return n;
}

static inline void fx_open(void **state, fx *f)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < DATA_LEN; i++)
        data[i] = (unsigned char)(i * 7 + i / 251);
    cio__fault_reset();
    f->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(f->path, sizeof f->path, "cio-test-faults"));
    assert_ok(cio_dir_open_dir(f->io, cio_dir_cwd(), f->path, &iterate_opts, &f->dir));
    write_file(f, "f", 1000);
    assert_ok(cio_dir_create_dir(f->io, f->dir, "d", 0));
#if CIO_HAVE_EVENTED
    /* Evented runs file calls on its helper pool: its workers exist before a case counts handles */
    cio_threaded *helper = cio__e_helper_pool(f->io);
    if (helper != NULL)
        warm_up(cio_threaded_io(helper));
#endif
    f->fds = fd_count();
}

/* Removes what the cases leave (names are known) and the directory. */
static inline void fx_close(fx *f)
{
    cio__fault_reset();
    if (f->file_open)
        cio_file_close(f->io, f->file);
    static const char *const files[] = {"f", "g", "h", "new", "moved"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        (void)cio_dir_delete_file(f->io, f->dir, files[i]);
    static const char *const dirs[] = {"d/e", "d", "d2", "e"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        (void)cio_dir_delete_dir(f->io, f->dir, dirs[i]);
    cio_dir_close(f->io, f->dir);
    assert_ok(cio_dir_delete_dir(f->io, cio_dir_cwd(), f->path));
}

/* A case step that does nothing. */
static inline void prep_none(fx *f)
{
    (void)f;
}

/* The entry called `name` in a table of `count` cases of `size` bytes whose first member is the case's
 * name (const char *); fails the test if there is none. */
static inline const void *case_named(const void *table, size_t count, size_t size, const char *name)
{
    const char *entry = (const char *)table;
    for (size_t i = 0; i < count; i++, entry += size)
        if (strcmp(*(const char *const *)(const void *)entry, name) == 0)
            return entry;
    fail_msg("no case %s", name);
    return NULL;
}

/* Runs run(f) with one fault armed at `site` ('e': the error `code`, `count` times or -1 for ever; 's':
 * transfers of at most `max` bytes) and resets the table after; the result must be `want` (`what` names
 * the case, `fault` the fault, in a failure). Returns how many faults were injected. */
static inline unsigned run_with_fault(fx *f, cio_err (*run)(fx *f), const char *site, const char *what, char mode,
                                      int code, int count, size_t max, cio_err want, const char *fault)
{
    if (mode == 'e')
        assert_int_equal(cio__fault_errno(site, code, 0, count), 1);
    else
        assert_int_equal(cio__fault_short(site, max, 0, count), 1);
    cio_err got = run(f);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (got != want)
        fail_msg("%s (%s) with %s: got %s, want %s", site, what, fault, cio_err_name(got), cio_err_name(want));
    return injected;
}

/* One errno injected once at a site, and the error the call must return: E(site, errno, want). */
typedef struct errno_case {
    const char *site;
    int err;
    const char *name; /* the errno's name, for covered() */
    cio_err want;
} errno_case;

#define E(site, e, want)  \
    {                     \
        site, e, #e, want \
    }

/* cio_threaded_create with no memory for its record: SystemResources and nothing made. */
static inline void threaded_create_without_memory(void)
{
    cio_threaded *t = NULL;
    cio__fault_reset();
    assert_true(cio__fault_errno("calloc@threaded_create", ENOMEM, 0, 1) == 1);
    assert_err(cio_threaded_create(NULL, &t), CIO_E_SYSTEM_RESOURCES);
    assert_null(t);
    covered("calloc@threaded_create", "ENOMEM");
}

/* An endless EINTR storm at `site` while run(f) runs in a concurrent task; once 100 interruptions
 * went by, a cancel must end the task with CIO_E_CANCELED (a storm never hides a cancel request).
 * Returns false (after skipping) where there is no concurrency. */
typedef struct storm_run {
    cio_err (*run)(fx *f);
    fx *f;
} storm_run;

static inline cio_err storm_run_task(void *p)
{
    storm_run *s = (storm_run *)p;
    return s->run(s->f);
}

static inline void storm_then_cancel(fx *f, const char *site, cio_err (*run)(fx *f))
{
    assert_true(cio__fault_errno(site, EINTR, 0, -1) == 1);
    storm_run s = {run, f};
    cio_future fut;
    cio_err err = cio_concurrent(f->io, storm_run_task, &s, sizeof s, &fut);
    if (err != CIO_OK)
        cio__sys_reset();
    CIO_REQUIRE_CONCURRENT(err);
    for (int waited = 0; cio__fault_injected(site) < 100 && waited < 10000; waited++)
        pause_ms(1); /* not cio_sleep: its own site may be the one storming */
    err = cio_cancel(f->io, &fut);
    unsigned n = cio__fault_injected(site);
    cio__sys_reset();
    if (n < 100)
        fail_msg("%s: the storm did not reach the site (%u interruptions)", site, n);
    if (err != CIO_E_CANCELED)
        fail_msg("%s: canceled during an EINTR storm: got %s, want Canceled", site, cio_err_name(err));
}

/* A task with a context larger than an inline copy (cio__run_inline mallocs for it): 2 + 3. */
typedef struct sum_ctx {
    int a, b;
    int *out;
    char pad[300]; /* larger than an inline copy (run_inline mallocs) */
} sum_ctx;

static inline cio_err sum_task(void *p)
{
    sum_ctx *c = (sum_ctx *)p;
    *c->out = c->a + c->b;
    return (cio_err)(c->a + c->b == 5 ? CIO_OK : CIO_E_UNEXPECTED);
}

/* 2 + 3 in a concurrent task: its error (CIO_E_CONCURRENCY_UNAVAILABLE where the pool cannot
 * start one); when it started, it must complete with 5. */
static inline cio_err concurrent_sum(cio_io io)
{
    int out = 0;
    sum_ctx c = {.a = 2, .b = 3, .out = &out};
    cio_future f;
    cio_err err = cio_concurrent(io, sum_task, &c, sizeof c, &f);
    if (err != CIO_OK)
        return err;
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    return CIO_OK;
}

/* A group that cannot get a record or start a task: group_async runs the task inline (done before
 * it returns), group_concurrent is unavailable, the group's await succeeds. */
static inline void group_runs_inline(cio_io io)
{
    int out = 0;
    sum_ctx c = {.a = 2, .b = 3, .out = &out};
    cio_group grp = CIO_GROUP_INIT;
    cio_group_async(io, &grp, sum_task, &c, sizeof c);
    assert_int_equal(out, 5); /* it ran inline, before group_async returned */
    assert_err(cio_group_concurrent(io, &grp, sum_task, &c, sizeof c), CIO_E_CONCURRENCY_UNAVAILABLE);
    assert_ok(cio_group_await(io, &grp));
}

/* A pool that cannot start a task (no memory for it, no thread): async runs it inline, concurrent is
 * CIO_E_CONCURRENCY_UNAVAILABLE, and so for a group's tasks. */
static inline void tasks_run_inline(cio_io io)
{
    int out = 0;
    sum_ctx c = {.a = 2, .b = 3, .out = &out};
    cio_future f = cio_async(io, sum_task, &c, sizeof c);
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    cio_future g;
    assert_err(cio_concurrent(io, sum_task, &c, sizeof c, &g), CIO_E_CONCURRENCY_UNAVAILABLE);
    group_runs_inline(io);
}

/* A task that fills 32 bytes from cio_random (its context is a pointer to the record). */
typedef struct seed_ctx {
    cio_io io;
    unsigned char out[32];
} seed_ctx;

static inline cio_err seed_task(void *p)
{
    seed_ctx *c = *(seed_ctx **)p;
    cio_random(c->io, c->out, sizeof c->out);
    return CIO_OK;
}

/* cio_random in a concurrent task (a fresh worker, not seeded yet) while the seed's source fails for
 * good at `site` (the error `code`): the task still gets bytes, not zeros (fewer than 8 of 32 zero). */
static inline void random_in_task_despite(cio_io io, const char *site, int code)
{
    seed_ctx sc;
    memset(&sc, 0, sizeof sc);
    sc.io = io;
    seed_ctx *p = &sc;
    assert_true(cio__fault_errno(site, code, 0, -1) == 1);
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, seed_task, &p, sizeof p, &fut));
    assert_ok(cio_await(io, &fut));
    cio__sys_reset();
    size_t z = 0;
    for (size_t i = 0; i < sizeof sc.out; i++)
        z += sc.out[i] == 0;
    assert_true(z < 8);
}

/* A group whose record cannot be allocated: its tasks run inline (group_runs_inline). */
static inline void group_record_fails(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    const char *site = fx_backend_of(state) == FX_THREADED ? "calloc@group_get" : "calloc@evented_group";
    assert_true(cio__fault_errno(site, ENOMEM, 0, -1) == 1);
    group_runs_inline(io);
    cio__sys_reset();
    covered(site, "ENOMEM");
}

#endif
