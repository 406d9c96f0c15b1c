/*
 * Fault injection through the OS call table (spec/oscalls.yaml -> platform/internal/cio_oscalls*):
 * every call site the Threaded backend routes gets its faults here, injected at that one site:
 * EINTR storms (retried transparently; a cancel during an endless storm still cancels), the errors
 * the OS can give there (the exact mapped cio error), short transfers (the *_all loops complete),
 * EMFILE/ENFILE (no descriptor leaks), ENOMEM and thread-creation failure (async degrades to
 * inline, concurrent says CIO_E_CONCURRENCY_UNAVAILABLE). This file: clocks, entropy, memory in the
 * core, the table itself; tests/test_faults_fs.c: files and directories; tests/test_faults_os.c
 * (Linux): sockets, futexes, the worker pool, signals; tests/test_faults_windows.c: the Windows
 * sites (on Windows the POSIX cases here are listed as skips). Shared helpers: tests/faults.h.
 *
 * Every case checks that the fault really reached its site (the injector's counters), the exact
 * error, the data (read back), and that the process has as many descriptors and threads afterwards
 * as before (/proc/self/fd, /proc/self/task; heap blocks: LeakSanitizer in the sanitize run). A case
 * that passes prints "fault-covered: <call@site> <fault>"; build.py collects those lines into
 * build/fault-report.md against the full list of sites (platform/internal/callsites.tsv), naming
 * every site no case covers.
 *
 * The table is reset before and after each case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "faults_fs.h"

#if !defined(CIO_OS_WINDOWS) /* the POSIX sites' cases; Windows': tests/test_faults_windows.c */
/* ---- clocks, sleep, entropy, futex -------------------------------------------------------------- */

static void test_time_and_entropy(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_io io = f.io;
#if defined(CIO_OS_LINUX)
    const char *now_site = "clock_gettime@now", *sleep_site = "clock_nanosleep@sleep";
    const char *secure_site = "getrandom@random_secure", *seed_site = "getrandom@os_seed";
#else
    const char *now_site = "clock_gettime@now", *sleep_site = "clock_nanosleep@wasi_sleep";
    const char *secure_site = "getentropy@wasi_random_secure", *seed_site = "getentropy@wasi_os_seed";
#endif
    /* a clock that fails reads as 0 (documented: cio_now has no error) */
    assert_true(cio__fault_errno(now_site, EINVAL, 0, 1) == 1);
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns == 0);
    cio__sys_reset();
    assert_true(cio_now(io, CIO_CLOCK_REAL).ns > 0);
    covered(now_site, "EINVAL");

    /* a sleep interrupted 20 times still sleeps its whole time, no longer (Evented: the test's
     * thread is a fiber of the instance and sleeps on a loop timer, no system call: fx_site says so) */
    if (fx_site(state, sleep_site) != NULL) {
        assert_true(cio__fault_errno(sleep_site, EINTR, 0, 20) == 1);
        int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
        assert_ok(cio_sleep(io, cio_timeout_ms(20)));
        int64_t ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
        cio__sys_reset();
        assert_true(ms >= 20 && ms < 5000);
        covered(sleep_site, "EINTR");
    }

    /* random_secure: interrupted and short reads still fill the buffer; no entropy is an error */
    unsigned char buf[300];
    memset(buf, 0, sizeof buf);
    assert_true(cio__fault_errno(secure_site, EINTR, 0, 20) == 1);
    assert_ok(cio_random_secure(io, buf, sizeof buf));
    cio__sys_reset();
    covered(secure_site, "EINTR");
    assert_true(cio__fault_errno(secure_site, ENOSYS, 0, 1) == 1);
    assert_err(cio_random_secure(io, buf, sizeof buf), CIO_E_ENTROPY_UNAVAILABLE);
    cio__sys_reset();
    covered(secure_site, "ENOSYS");
#if defined(CIO_OS_LINUX)
    memset(buf, 0, sizeof buf);
    assert_true(cio__fault_short(secure_site, 5, 0, -1) == 1);
    assert_ok(cio_random_secure(io, buf, sizeof buf));
    cio__sys_reset();
    assert_true(cio__fault_injected(secure_site) >= sizeof buf / 5);
    size_t zeros = 0;
    for (size_t i = 0; i < sizeof buf; i++)
        zeros += buf[i] == 0;
    assert_true(zeros < 20); /* filled to the end */
    covered(secure_site, "short");
#endif
    assert_true(cio__fault_errno(secure_site, EAGAIN, 0, 1) == 1);
    assert_err(cio_random_secure(io, buf, sizeof buf), CIO_E_ENTROPY_UNAVAILABLE);
    cio__sys_reset();
    covered(secure_site, "EAGAIN");

    /* cio_random's seed: with no OS entropy it falls back and still produces output (on a thread
     * that has not seeded yet: a fresh worker) */
    if (CIO_HAVE_THREADS) {
        random_in_task_despite(io, seed_site, EAGAIN);
        covered(seed_site, "EAGAIN");
    }
    fx_close(&f);
}

#if defined(CIO_OS_WASI)
/* Single-threaded: the only thread's generator is seeded on its first use, which is here (this
 * test runs first). No entropy: the fallback seed still gives output. */
static void test_wasi_seed(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    assert_true(cio__fault_errno("getentropy@wasi_os_seed", EIO, 0, -1) == 1);
    unsigned char out[32];
    memset(out, 0, sizeof out);
    cio_random(io, out, sizeof out);
    cio__sys_reset();
    size_t z = 0;
    for (size_t i = 0; i < sizeof out; i++)
        z += out[i] == 0;
    assert_true(z < 8);
    covered("getentropy@wasi_os_seed", "EIO");
}
#endif
#endif /* !CIO_OS_WINDOWS: the POSIX sites' cases */

/* ---- tasks: ENOMEM and no threads ---------------------------------------------------------------- */

#if defined(CIO_OS_WASI)
static void test_threaded_create_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    cio_threaded *t = NULL;
    assert_true(cio__fault_errno("calloc@wasi_threaded_create", ENOMEM, 0, 1) == 1);
    assert_err(cio_threaded_create(NULL, &t), CIO_E_SYSTEM_RESOURCES);
    assert_null(t);
    covered("calloc@wasi_threaded_create", "ENOMEM");
    cio__fault_reset();
}
#endif

/* Evented's fiber memory: a stack region and the fiber's block (per OS). */
#if defined(CIO_OS_WINDOWS)
#define BLOCK_REGION_SITE "VirtualAlloc@block_region"
#define BLOCK_REGION_ERR ERROR_NOT_ENOUGH_MEMORY
#define FIBER_ALLOC_SITE "_aligned_malloc@fiber_alloc"
#else
#define BLOCK_REGION_SITE "mmap@block_region"
#define BLOCK_REGION_ERR ENOMEM
#define FIBER_ALLOC_SITE "posix_memalign@fiber_alloc"
#endif

/* Inline runs of a large context copy it to aligned memory; without memory they run on the
 * caller's bytes, with the same result. */
static void test_inline_copy_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    cio_threaded *t = cio_test_threaded(state);
    if (t != NULL)
        cio_threaded_set_async_limit(t, 0); /* async always inline */
    assert_true(cio__fault_errno("malloc@run_inline", ENOMEM, 0, -1) == 1);
    if (fx_backend_of(state) != FX_THREADED) { /* Evented runs async inline when it gets no fiber */
        assert_true(cio__fault_errno(BLOCK_REGION_SITE, BLOCK_REGION_ERR, 0, -1) == 1);
        assert_true(cio__fault_errno(FIBER_ALLOC_SITE, ENOMEM, 0, -1) == 1);
    }
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    cio_future f = cio_async(io, sum_task, &c, sizeof c);
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    cio__sys_reset();
    covered("malloc@run_inline", "ENOMEM");
    if (fx_backend_of(state) != FX_THREADED)
        covered(FIBER_ALLOC_SITE, "ENOMEM");
}

/* cio_select: no memory for a large context (async runs inline on the caller's context, concurrent
 * is unavailable) or for a large result (the task cannot run; the select fails: await reports
 * CIO_E_OUT_OF_MEMORY instead of waiting forever, after canceling and awaiting every other task). */
typedef struct big_result {
    int value;
    char pad[400];
} big_result;

typedef struct big_ctx {
    int value;
    char pad[600];
} big_ctx;

static cio_err select_fn(void *context, void *result)
{
    big_ctx *c = (big_ctx *)context;
    ((big_result *)result)->value = c->value;
    return CIO_OK;
}

/* A select task that announces it runs, then sleeps until canceled; `finished` says it returned. */
typedef struct select_blocker {
    cio_io io;
    _Atomic(uint32_t) *started, *finished;
} select_blocker;

static cio_err select_blocker_fn(void *context, void *result)
{
    select_blocker *b = (select_blocker *)context;
    ((big_result *)result)->value = -1;
    atomic_store(b->started, 1);
    cio_futex_wake(b->io, b->started, 1);
    cio_err err = cio_sleep(b->io, CIO_TIMEOUT_NONE);
    atomic_store(b->finished, 1);
    return err;
}

typedef struct select_awaiter {
    cio_io io;
    cio_select *sel;
    big_result *r;
    cio_err *err;
    _Atomic(uint32_t) *done;
} select_awaiter;

static cio_err select_await_task(void *context)
{
    select_awaiter *a = (select_awaiter *)context;
    *a->err = cio_select_await(a->io, a->sel, a->r);
    atomic_store(a->done, 1);
    cio_futex_wake(a->io, a->done, 1);
    return CIO_OK;
}

static void test_select_memory_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    static big_result buf[4];
    cio_select sel;
    cio_select_init(&sel, buf, sizeof buf[0], 4);
    big_ctx c;
    memset(&c, 0, sizeof c);
    c.value = 42;
    assert_true(cio__fault_errno("malloc@select_blob", ENOMEM, 0, -1) == 1);
    cio_select_async(io, &sel, select_fn, &c, sizeof c);
    assert_err(cio_select_concurrent(io, &sel, select_fn, &c, sizeof c), CIO_E_CONCURRENCY_UNAVAILABLE);
    cio__sys_reset();
    big_result r;
    assert_ok(cio_select_await(io, &sel, &r));
    assert_int_equal(r.value, 42);
    covered("malloc@select_blob", "ENOMEM");
    assert_false(cio_select_cancel(io, &sel, &r));

    cio_select_init(&sel, buf, sizeof buf[0], 4);
    assert_true(cio__fault_errno("malloc@select_result", ENOMEM, 0, -1) == 1);
    cio_select_async(io, &sel, select_fn, &c, sizeof c);
    assert_false(cio_select_cancel(io, &sel, &r)); /* nothing was posted */
    cio__sys_reset();
    covered("malloc@select_result", "ENOMEM");

    /* The select fails: a task blocked until canceled, then one whose result finds no memory. The
     * await (in a task of its own, so that a hang fails the test rather than stopping it) reports
     * OutOfMemory, and by then the blocked task has been canceled and has returned. */
    cio_select_init(&sel, buf, sizeof buf[0], 4);
    static _Atomic(uint32_t) started, finished, done;
    atomic_store(&started, 0);
    atomic_store(&finished, 0);
    atomic_store(&done, 0);
    select_blocker b = {io, &started, &finished};
    cio_err err = cio_select_concurrent(io, &sel, select_blocker_fn, &b, sizeof b);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) { /* single-threaded: the failure alone, inline */
        assert_true(cio__fault_errno("malloc@select_result", ENOMEM, 0, -1) == 1);
        cio_select_async(io, &sel, select_fn, &c, sizeof c);
        cio__sys_reset();
        assert_err(cio_select_await(io, &sel, &r), CIO_E_OUT_OF_MEMORY);
        assert_false(cio_select_cancel(io, &sel, &r));
        return;
    }
    assert_ok(err);
    while (atomic_load(&started) == 0) /* past its result's malloc */
        (void)cio_futex_wait(io, &started, 0, cio_timeout_ms(100));
    assert_true(cio__fault_errno("malloc@select_result", ENOMEM, 0, -1) == 1);
    cio_select_async(io, &sel, select_fn, &c, sizeof c);
    cio_err await_err = CIO_E_UNEXPECTED;
    select_awaiter a = {io, &sel, &r, &await_err, &done};
    cio_future fa;
    assert_ok(cio_concurrent(io, select_await_task, &a, sizeof a, &fa));
    cio_timestamp until = {cio_now(io, CIO_CLOCK_AWAKE).ns + 20 * (int64_t)1000000000};
    while (atomic_load(&done) == 0 && cio_now(io, CIO_CLOCK_AWAKE).ns < until.ns)
        (void)cio_futex_wait(io, &done, 0, cio_timeout_ms(100));
    cio__sys_reset();
    if (atomic_load(&done) == 0) {
        (void)cio_cancel(io, &fa);
        cio_select_cancel_discard(io, &sel);
        fail_msg("cio_select_await still waits 20 s after a task found no memory for its result");
    }
    assert_ok(cio_await(io, &fa));
    assert_err(await_err, CIO_E_OUT_OF_MEMORY);
    assert_int_equal(atomic_load(&finished), 1);                     /* canceled and awaited before await returned */
    assert_false(cio_select_cancel(io, &sel, &r));                   /* the blocker's late result was dropped */
    assert_err(cio_select_await(io, &sel, &r), CIO_E_OUT_OF_MEMORY); /* the select stays failed */
}

/* The hosts file cannot be read into memory: the lookup says SystemResources (rather than asking
 * DNS as if there were no hosts file), leaks nothing. */
static void test_resolve_memory_fails(void **state)
{
    fx f;
    fx_open(state, &f);
    cio_file h;
    assert_ok(cio_dir_create_file(f.io, f.dir, "h", NULL, &h));
    static const char line[] = "127.0.0.9 box.test\n";
    assert_ok(cio_file_write_all(f.io, h, line, sizeof line - 1));
    cio_file_close(f.io, h);
    char hosts[96];
    snprintf(hosts, sizeof hosts, "%s/h", f.path);
    int fds = fd_count();
    static cio_lookup_result results[16];
    cio_queue q;
    cio_queue_init(&q, results, sizeof results[0], 16);
    cio_lookup_options o;
    memset(&o, 0, sizeof o);
    o.hosts_file = hosts;
    o.resolv_conf = "/nonexistent/resolv.conf";
    assert_true(cio__fault_errno("malloc@resolve_read_file", ENOMEM, 0, -1) == 1);
    cio_err err = cio_hostname_lookup(f.io, "box.test", &o, &q);
    cio__sys_reset();
    assert_err(err, CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(fd_count(), fds);
    covered("malloc@resolve_read_file", "ENOMEM");
    /* and with memory, the same lookup finds the address in the file */
    cio_queue_init(&q, results, sizeof results[0], 16);
    assert_ok(cio_hostname_lookup(f.io, "box.test", &o, &q));
    cio_lookup_result r;
    assert_ok(cio_queue_get_one(f.io, &q, &r));
    assert_int_equal(r.kind, CIO_LOOKUP_ADDRESS);
    assert_int_equal(r.address.bytes[3], 9);
    /* no hosts file, and resolv.conf cannot be read into memory: SystemResources as well, not
     * ResolvConfParseFailed (the file is fine; memory is what ran out) */
    assert_ok(cio_dir_create_file(f.io, f.dir, "g", NULL, &h)); /* a name fx_close removes */
    static const char conf[] = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";
    assert_ok(cio_file_write_all(f.io, h, conf, sizeof conf - 1));
    cio_file_close(f.io, h);
    char resolv[96];
    snprintf(resolv, sizeof resolv, "%s/g", f.path);
    o.hosts_file = "/nonexistent/hosts";
    o.resolv_conf = resolv;
    cio_queue_init(&q, results, sizeof results[0], 16);
    cio__fault_reset();
    assert_true(cio__fault_errno("malloc@resolve_read_file", ENOMEM, 0, -1) == 1);
    err = cio_hostname_lookup(f.io, "box.test", &o, &q);
    unsigned hits = cio__fault_hits("malloc@resolve_read_file");
    cio__sys_reset();
    assert_err(err, CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(hits, 1);
    assert_int_equal(fd_count(), fds);
    fx_close(&f);
}

/* The table itself: every site has a name, overriding by call name reaches all its sites, and reset
 * puts the defaults back. */
static void test_table(void **state)
{
    (void)state;
    cio__fault_reset();
    size_t n = cio__sys_site_count();
    assert_true(n > 10);
    for (size_t i = 0; i < n; i++)
        assert_non_null(strchr(cio__sys_site_name(i), '@'));
    assert_null(cio__sys_site_name(n));
    assert_int_equal(cio__sys_override("no_such_call", NULL), 0);
#if defined(CIO_OS_WINDOWS)
    assert_int_equal(cio__sys_override("wsa_bind@no_such_site", NULL), 0);
    /* wsa_bind's sites: listen_ip, bind_ip, listen_unix (net_windows.c) and iocp_connect_bind (the
     * Evented connect, src/evented/net_iocp.c) */
    assert_int_equal(cio__sys_override("wsa_bind", NULL), 4);
    assert_int_equal(cio__fault_errno("wsa_bind", WSAEADDRINUSE, 0, 1), 4);
    cio__fault_reset();
    assert_true(atomic_load(&cio__sys.wsa_bind__listen_ip) == cio__sys_default.wsa_bind);
#else
    assert_int_equal(cio__sys_override("openat@no_such_site", NULL), 0);
    /* openat's sites: open_file, create_file, open_dir (fs_posix.c) and, on Linux, spawn_devnull
     * (process_spawn_posix.c), real_path_open and create_tmp_file (fs_copy_linux.c) */
#if defined(CIO_OS_LINUX)
    int openat_sites = 6;
#else
    int openat_sites = 3;
#endif
    assert_int_equal(cio__sys_override("openat", NULL), openat_sites);
    assert_int_equal(cio__fault_errno("openat", EMFILE, 0, 1), openat_sites);
    cio__fault_reset();
    assert_true(atomic_load(&cio__sys.openat__open_file) == cio__sys_default.openat);
#endif
}

/* The release forms of the argument and bug checks (tests/null_arg_release.c, built with NDEBUG):
 * a clean error, no assertion. */
cio_err cio_test_release_null_arg(void);
cio_err cio_test_release_bug(void);

static void test_release_checks(void **state)
{
    (void)state;
    assert_err(cio_test_release_null_arg(), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_test_release_bug(), CIO_E_UNEXPECTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(CIO_OS_WASI)
        CIO_TESTS(test_wasi_seed),
#endif
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_release_checks),
#if defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_resolve_memory_fails),
        CIO_POSIX_ONLY(test_time_and_entropy),
#else
        CIO_TESTS(test_resolve_memory_fails),
        CIO_TESTS(test_time_and_entropy),
#endif
        CIO_TESTS(test_inline_copy_fails),
        CIO_TESTS(test_select_memory_fails),
#if defined(CIO_OS_WASI)
        cmocka_unit_test(test_threaded_create_faults),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
