/*
 * Misuse (issue 22): each mistake a user can make gets a clean error, or — where no return value can
 * carry one — a death with a message naming the misuse (the rule of cio/diag.h). Every test runs on
 * every backend. Death tests run the misuse in a child process (tests/death.h: fork on POSIX, the
 * program itself again under Windows/Wine; skipped on WASI, which has no processes).
 */
#define _GNU_SOURCE /* mkdtemp (os_helpers.h) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

#include "asserts.h"
#include "backends.h"
#include "death.h"
#include "null_arg.h"
#include "os_helpers.h"
#include "overflow_task.h"

#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
#include <errno.h>
#include <unistd.h>
#define HAVE_PIPE 1
#endif

/* ---- clean errors --------------------------------------------------------------------------------- */

static void test_async_null_fn(void **state)
{
    cio_io io = cio_test_io(state);
    cio_future f = cio_async(io, NULL, NULL, 0);
    assert_null(f.any);
    assert_err(cio_await(io, &f), CIO_E_INVALID_ARGUMENT);
    int x = 1;
    f = cio_async(io, cio_test_nop_task, NULL, sizeof x); /* bytes to copy from nowhere */
    assert_err(cio_await(io, &f), CIO_E_INVALID_ARGUMENT);
}

static void test_concurrent_null_fn_and_out(void **state)
{
    cio_io io = cio_test_io(state);
    cio_future f;
    memset(&f, 0xff, sizeof f);
    assert_err(cio_concurrent(io, NULL, NULL, 0, &f), CIO_E_INVALID_ARGUMENT);
    assert_null(f.any); /* an empty future: awaiting it is harmless */
    assert_err(cio_await(io, &f), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_concurrent(io, cio_test_nop_task, NULL, 0, NULL), CIO_E_INVALID_ARGUMENT);
}

static void test_group_null_arguments(void **state)
{
    cio_io io = cio_test_io(state);
    cio_group g = CIO_GROUP_INIT;
    assert_err(cio_group_await(io, NULL), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_group_concurrent(io, NULL, cio_test_nop_task, NULL, 0), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_group_concurrent(io, &g, NULL, NULL, 0), CIO_E_INVALID_ARGUMENT);
    cio_group_async(io, &g, NULL, NULL, 0); /* not added: the group stays empty */
    cio_group_async(io, NULL, cio_test_nop_task, NULL, 0);
    assert_int_equal(g.token, 0);
    assert_ok(cio_group_await(io, &g));
}

static void test_null_path_and_out(void **state)
{
    cio_io io = cio_test_io(state);
    cio_file f = {0};
    assert_null_arg(cio_dir_open_file(io, cio_dir_cwd(), NULL, NULL, &f));
    assert_null_arg(cio_dir_open_file(io, cio_dir_cwd(), ".", NULL, NULL));
    assert_null_arg(cio_dir_create_file(io, cio_dir_cwd(), NULL, NULL, &f));
    assert_null_arg(cio_dir_delete_file(io, cio_dir_cwd(), NULL));
    assert_null_arg(cio_process_executable_path(io, NULL, 16, NULL));
}

/* A write and a read through CIO_FILE_INVALID: the operation's error for a bad handle, no crash. */
static void test_invalid_handle(void **state)
{
    cio_io io = cio_test_io(state);
    unsigned char b[4] = {0};
    size_t n = 0;
    cio_err w = cio_file_write_streaming(io, CIO_FILE_INVALID, b, sizeof b, &n);
    cio_err r = cio_file_read_streaming(io, CIO_FILE_INVALID, b, sizeof b, &n);
    print_message("      write: %s, read: %s\n", cio_err_name(w), cio_err_name(r));
    assert_true(w != CIO_OK && r != CIO_OK);
#if defined(CIO_OS_WINDOWS)
    /* INVALID_HANDLE_VALUE is NT's pseudo-handle of the current process: NtWriteFile says
     * STATUS_OBJECT_TYPE_MISMATCH, which the maps leave Unexpected; the status is recorded. */
    if (w == CIO_E_UNEXPECTED || r == CIO_E_UNEXPECTED) {
        assert_int_equal(cio_last_os_error().kind, CIO_OS_ERROR_NTSTATUS);
        return;
    }
#endif
    assert_true(w != CIO_E_UNEXPECTED && r != CIO_E_UNEXPECTED);
}

/* Closing a handle twice: the second close returns NotOpen (no abort, no later Unexpected), and a
 * file opened between the two closes is left alone. a and b are opened, closed b first and a
 * second; the next open takes one of their numbers (POSIX: the lowest free descriptor; Wine: the
 * lowest free handle slot; NT: the last freed), and the test closes the other one again, whose
 * number is still free (cio_file_close's documentation: a reused number would be closed instead). */
static void test_double_close_returns_not_open(void **state)
{
    cio_io io = cio_test_io(state);
    char path[300];
    assert_true(cio_test_make_tmp_dir(path, sizeof path, "cio-test-misuse"));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), path, NULL, &d));
    cio_create_file_options rw = CIO_CREATE_FILE_DEFAULTS;
    rw.read = true;
    cio_file a, b, c;
    assert_ok(cio_dir_create_file(io, d, "a", NULL, &a));
    assert_ok(cio_dir_create_file(io, d, "b", NULL, &b));
    assert_ok(cio_file_close(io, b));
    assert_ok(cio_file_close(io, a));
    assert_ok(cio_dir_create_file(io, d, "c", &rw, &c)); /* opened between the two closes */
    cio_file again = c.handle == b.handle ? a : b;
    assert_true(again.handle != c.handle);
    cio_clear_last_os_error();
    assert_err(cio_file_close(io, again), CIO_E_NOT_OPEN);
    assert_int_equal(cio_last_os_error().kind, CIO_OS_ERROR_NONE); /* an error of its own, not Unexpected */
    /* c still works, and a write to the closed number is no Unexpected either */
    size_t n = 0;
    assert_ok(cio_file_write_positional(io, c, "still", 5, 0, &n));
    assert_int_equal(n, 5);
    char buf[8] = {0};
    assert_ok(cio_file_read_positional(io, c, buf, sizeof buf, 0, &n));
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "still", 5);
    cio_err w = cio_file_write_streaming(io, again, "x", 1, &n);
    print_message("      write to the closed handle: %s\n", cio_err_name(w));
    assert_true(w != CIO_OK && w != CIO_E_UNEXPECTED);
    assert_ok(cio_file_close(io, c));
    /* the invalid constants, and a directory closed twice */
    assert_err(cio_file_close(io, CIO_FILE_INVALID), CIO_E_NOT_OPEN);
    assert_err(cio_dir_close(io, CIO_DIR_INVALID), CIO_E_NOT_OPEN);
    cio_dir sub;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), path, NULL, &sub));
    assert_ok(cio_dir_close(io, sub));
    assert_err(cio_dir_close(io, sub), CIO_E_NOT_OPEN);
    assert_ok(cio_dir_delete_file(io, d, "a"));
    assert_ok(cio_dir_delete_file(io, d, "b"));
    assert_ok(cio_dir_delete_file(io, d, "c"));
    assert_ok(cio_dir_close(io, d));
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), path));
}

/* The same from inside a task: on Evented a fiber's close goes through the loop (io_uring: a ring
 * CLOSE), which answers a double close with NotOpen as well. */
static cio_err double_close_task(void *p)
{
    cio_io io = *(cio_io *)p;
    cio_file f;
    cio_err e = cio_process_executable_open(io, NULL, &f);
    if (e != CIO_OK)
        return e;
    e = cio_file_close(io, f);
    if (e != CIO_OK)
        return CIO_E_UNEXPECTED;
    return cio_file_close(io, f);
}

static void test_double_close_in_task(void **state)
{
    cio_io io = cio_test_io(state);
    cio_future f;
    cio_err e = cio_concurrent(io, double_close_task, &io, sizeof io, &f);
    if (e == CIO_E_CONCURRENCY_UNAVAILABLE)
        f = cio_async(io, double_close_task, &io, sizeof io);
    else
        assert_ok(e);
    e = cio_await(io, &f);
    if (e == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no executable file to open on this target (WASI)");
    assert_err(e, CIO_E_NOT_OPEN);
}

/* A stream (one of a connected pair) closed twice: NotOpen, and its peer is left alone. */
static void test_double_close_stream(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream pair[2];
    cio_err e = cio_net_socket_pair(io, pair);
    if (e == CIO_E_NETWORK_DOWN || e == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no socket pair on this target");
    assert_ok(e);
    assert_ok(cio_stream_close(io, &pair[0]));
    assert_err(cio_stream_close(io, &pair[0]), CIO_E_NOT_OPEN);
    assert_null_arg(cio_stream_close(io, NULL));
    assert_null_arg(cio_server_close(io, NULL));
    assert_null_arg(cio_socket_close(io, NULL));
    size_t n = 0;
    cio_err w = cio_stream_write(io, &pair[1], "x", 1, &n); /* the peer is gone: BrokenPipe or a reset */
    print_message("      write to the peer of the closed stream: %s\n", cio_err_name(w));
    assert_true(w != CIO_E_UNEXPECTED && w != CIO_E_NOT_OPEN);
    assert_ok(cio_stream_close(io, &pair[1]));
}

#if defined(HAVE_PIPE)
typedef struct blocked_read {
    cio_io io;
    int fd;
} blocked_read;

static cio_err read_forever(void *p)
{
    blocked_read *b = (blocked_read *)p;
    unsigned char c;
    size_t n;
    return cio_file_read_streaming(b->io, (cio_file){b->fd}, &c, 1, &n);
}
#endif

/* Destroying a Threaded instance while a task is blocked in a read that never completes: destroy
 * cancels it after its grace period and returns, instead of hanging. (The future is never awaited:
 * its block stays reachable from `lost`, as a user's forgotten future would.) */
static void test_destroy_cancels_blocked_task(void **state)
{
    (void)state;
#if defined(HAVE_PIPE) && CIO_HAVE_THREADS
    static cio_future lost;
    int p[2];
    assert_int_equal(pipe(p), 0);
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    blocked_read b = {cio_threaded_io(t), p[0]};
    assert_ok(cio_concurrent(b.io, read_forever, &b, sizeof b, &lost));
    cio_timestamp t0 = cio_now(b.io, CIO_CLOCK_AWAKE);
    cio_threaded_destroy(t);
    cio_threaded *clock_src = NULL;
    assert_ok(cio_threaded_create(NULL, &clock_src));
    int64_t ms = (cio_now(cio_threaded_io(clock_src), CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    cio_threaded_destroy(clock_src);
    close(p[0]);
    close(p[1]);
    print_message("      destroy returned after %lld ms\n", (long long)ms);
    assert_true(ms >= 900);  /* the grace period first */
    assert_true(ms < 30000); /* then the cancel ends the read (generous: a loaded machine) */
#else
    CIO_SKIP("needs pipe(2) and threads");
#endif
}

#if defined(HAVE_PIPE) && CIO_HAVE_EVENTED
typedef struct blocked_wait {
    cio_io io;
    CIO_ATOMIC(uint32_t) * word;
} blocked_wait;

static cio_err sleep_forever(void *p)
{
    return cio_sleep(((blocked_read *)p)->io, cio_timeout_ms(3600 * 1000));
}

static cio_err futex_forever(void *p)
{
    blocked_wait *b = (blocked_wait *)p;
    return cio_futex_wait(b->io, b->word, 0, CIO_TIMEOUT_NONE);
}

/* Destroying an Evented instance whose fibers are blocked in a read, a sleep and a futex wait that
 * never end: after its grace period destroy cancels them, waits for them to finish, then frees
 * everything and returns, on each flavour. (The futures are never awaited, as a user's forgotten
 * ones would not be.) */
static void destroy_evented_blocked(cio_evented_flavour flavour, cio_future lost[3])
{
    static CIO_ATOMIC(uint32_t) word;
    if (flavour == CIO_EVENTED_IO_URING && cio_test_under_valgrind())
        CIO_SKIP("io_uring is not run under valgrind (tests/backends.h)");
    int p[2];
    assert_int_equal(pipe(p), 0);
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.flavour = flavour;
    o.threads = 2;
    cio_evented *e = NULL;
    cio_err ce = cio_evented_create(&o, &e);
    if (ce != CIO_OK) {
        close(p[0]);
        close(p[1]);
        print_message("      skip: cio_evented_create: %s\n", cio_err_name(ce));
        skip();
    }
    blocked_read r = {cio_evented_io(e), p[0]};
    blocked_wait w = {r.io, &word};
    assert_ok(cio_concurrent(r.io, read_forever, &r, sizeof r, &lost[0]));
    assert_ok(cio_concurrent(r.io, sleep_forever, &r, sizeof r, &lost[1]));
    assert_ok(cio_concurrent(r.io, futex_forever, &w, sizeof w, &lost[2]));
    assert_ok(cio_sleep(r.io, cio_timeout_ms(50))); /* they start and block */
    cio_threaded *clock_src = NULL;
    assert_ok(cio_threaded_create(NULL, &clock_src));
    cio_io clock = cio_threaded_io(clock_src);
    cio_timestamp t0 = cio_now(clock, CIO_CLOCK_AWAKE);
    cio_evented_destroy(e);
    int64_t ms = (cio_now(clock, CIO_CLOCK_AWAKE).ns - t0.ns) / 1000000;
    cio_threaded_destroy(clock_src);
    close(p[0]);
    close(p[1]);
    print_message("      destroy returned after %lld ms\n", (long long)ms);
    assert_true(ms >= 900);  /* the grace period first */
    assert_true(ms < 30000); /* then the cancels end the waits (generous: a loaded machine) */
}
#endif

static void test_evented_destroy_cancels_blocked_uring(void **state)
{
    (void)state;
#if defined(HAVE_PIPE) && CIO_HAVE_EVENTED
    static cio_future lost[3]; /* the blocks stay reachable, as Threaded's above */
    destroy_evented_blocked(CIO_EVENTED_IO_URING, lost);
#else
    CIO_SKIP("needs pipe(2) and the Evented backend");
#endif
}

static void test_evented_destroy_cancels_blocked_readiness(void **state)
{
    (void)state;
#if defined(HAVE_PIPE) && CIO_HAVE_EVENTED
    static cio_future lost[3];
    destroy_evented_blocked(CIO_TEST_READINESS_FLAVOUR, lost);
#else
    CIO_SKIP("needs pipe(2) and the Evented backend");
#endif
}

/* cio_io_destroy destroys whichever backend made the io; a zeroed or failing io is left alone. */
static void test_io_destroy_any_backend(void **state)
{
    (void)state;
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    cio_io io = cio_threaded_io(t);
    assert_ok(cio_sleep(io, cio_timeout_ms(1)));
    cio_io_destroy(io);
#if CIO_HAVE_EVENTED
    cio_evented *e = NULL;
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.flavour = CIO_TEST_READINESS_FLAVOUR;
    assert_ok(cio_evented_create(&o, &e));
    io = cio_evented_io(e);
    assert_ok(cio_sleep(io, cio_timeout_ms(1)));
    cio_io_destroy(io);
#endif
    cio_io zero;
    memset(&zero, 0, sizeof zero);
    cio_io_destroy(zero);
    cio_io_destroy(cio_failing_io());
}

/* Positional I/O at an offset above INT64_MAX is InvalidArgument on every backend (io_uring and
 * preadv2 would take UINT64_MAX, -1, as "the current position"), on a file open for reading only
 * or for writing only alike. */
static void test_positional_offset_above_int64_max(void **state)
{
    cio_io io = cio_test_io(state);
    cio_file f;
    cio_err oe = cio_process_executable_open(io, NULL, &f);
    if (oe == CIO_E_OPERATION_UNSUPPORTED)
        CIO_SKIP("no executable file to open on this target (WASI)");
    assert_ok(oe);
    unsigned char b[4];
    size_t n = 0;
    assert_err(cio_file_read_positional(io, f, b, sizeof b, UINT64_MAX, &n), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_file_write_positional(io, f, b, sizeof b, UINT64_MAX, &n), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_file_read_positional(io, f, b, sizeof b, (uint64_t)INT64_MAX + 1, &n), CIO_E_INVALID_ARGUMENT);
    cio_file_close(io, f);
}

/* ---- deaths ---------------------------------------------------------------------------------------- */

static void die_await_null(cio_io io, void *s)
{
    (void)s;
    (void)cio_await(io, NULL);
}

static void die_cancel_null(cio_io io, void *s)
{
    (void)s;
    (void)cio_cancel(io, NULL);
}

static void die_group_cancel_null(cio_io io, void *s)
{
    (void)s;
    cio_group_cancel(io, NULL);
}

/* Two copies of one future: the first is awaited (here, in the parent), the second is the misuse. */
static void prepare_stale(cio_io io, void *s)
{
    cio_future f;
    cio_err e = cio_concurrent(io, cio_test_nop_task, NULL, 0, &f);
    if (e != CIO_OK) { /* no concurrency: an async future that may have run inline */
        f = cio_async(io, cio_test_nop_task, NULL, 0);
    }
    cio_future copy = f;
    (void)cio_await(io, &f);
    memcpy(s, &copy, sizeof copy);
}

static void die_stale_await(cio_io io, void *s)
{
    cio_future copy;
    memcpy(&copy, s, sizeof copy);
    if (copy.any == NULL)
        abort(); /* ran inline: no misuse to see (the parent's check below tells) */
    (void)cio_await(io, &copy);
}

static void die_stale_cancel(cio_io io, void *s)
{
    cio_future copy;
    memcpy(&copy, s, sizeof copy);
    (void)cio_cancel(io, &copy);
}

static void die_zeroed_io(cio_io io, void *s)
{
    (void)io;
    (void)s;
    cio_io zero;
    memset(&zero, 0, sizeof zero);
    (void)cio_sleep(zero, cio_timeout_ms(1));
}

/* Stack overflow in a task: the child makes an instance of its own (death.h: it has none of the
 * parent's threads) with a known stack size, and a task recurses until it runs off its stack. */
static int overflow_backend; /* 0: Threaded, else 1 + the cio_evented_flavour (set before the fork) */

/* The spawn and its expected site on one line: the same __FILE__ and __LINE__ (kept from clang-format). */
/* clang-format off */
static const char overflow_site[] = CIO_SPAWN_SITE; static cio_err spawn_overflow(cio_io io, cio_future *f) { return cio_concurrent(io, overflow_task, NULL, 0, f); }
/* clang-format on */

static void die_stack_overflow(cio_io io, void *s)
{
    (void)io;
    (void)s;
    cio_io child;
    if (overflow_backend == 0) {
        cio_threaded_options o;
        memset(&o, 0, sizeof o);
        o.stack_size = 128 * 1024;
        cio_threaded *t = NULL;
        if (cio_threaded_create(&o, &t) != CIO_OK)
            _Exit(2);
        child = cio_threaded_io(t);
    } else {
#if CIO_HAVE_EVENTED
        cio_evented *e = cio_test_evented_new((cio_evented_flavour)(overflow_backend - 1), 1, 64 * 1024);
        if (e == NULL)
            _Exit(2);
        child = cio_evented_io(e);
#else
        _Exit(2);
#endif
    }
    cio_future f;
    if (spawn_overflow(child, &f) != CIO_OK)
        _Exit(3);
    (void)cio_await(child, &f);
    _Exit(4); /* survived: the test fails (it wants SIGABRT) */
}

/* A double close in the child: the second returns NotOpen and (debug builds) prints its line; the
 * child then aborts so that the parent can read that line. */
static void die_double_close(cio_io io, void *s)
{
    (void)s;
    cio_file f;
    if (cio_process_executable_open(io, NULL, &f) != CIO_OK || cio_file_close(io, f) != CIO_OK)
        _Exit(2);
    if (cio_file_close(io, f) != CIO_E_NOT_OPEN)
        _Exit(3);
    abort();
}

static const cio_death_case deaths[] = {
    {"double_close", NULL, die_double_close},
    {"await_null", NULL, die_await_null},
    {"cancel_null", NULL, die_cancel_null},
    {"group_cancel_null", NULL, die_group_cancel_null},
    {"stale_await", prepare_stale, die_stale_await},
    {"stale_cancel", prepare_stale, die_stale_cancel},
    {"zeroed_io", NULL, die_zeroed_io},
    {"stack_overflow", NULL, die_stack_overflow},
};

static const cio_death_case *death(const char *name)
{
    for (size_t i = 0; i < sizeof deaths / sizeof deaths[0]; i++)
        if (strcmp(deaths[i].name, name) == 0)
            return &deaths[i];
    fail_msg("no death case %s", name);
    return NULL;
}

static void test_await_null_dies(void **state)
{
    cio_death_run(cio_test_io(state), death("await_null"), "cio_await: the future is NULL");
}

static void test_cancel_null_dies(void **state)
{
    cio_death_run(cio_test_io(state), death("cancel_null"), "cio_cancel: the future is NULL");
}

static void test_group_cancel_null_dies(void **state)
{
    cio_death_run(cio_test_io(state), death("group_cancel_null"), "cio_group_cancel: the group is NULL");
}

static void test_await_stale_copy_dies(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio_death_run(io, death("stale_await"), "cio_await: future awaited through a stale copy");
}

static void test_cancel_stale_copy_dies(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio_death_run(io, death("stale_cancel"), "cio_cancel: future awaited through a stale copy");
}

static void test_zeroed_io_dies(void **state)
{
    cio_death_run(cio_test_io(state), death("zeroed_io"), "cio_sleep: called through a zeroed cio_io");
}

/* Debug builds name the function and the handle of a double close (one line, then NotOpen). */
/* An Evented death child starts loop threads of its own after the fork, which two runners refuse:
 * skips an Evented death test there (the Threaded child starts its workers lazily, which both let
 * by); returns on every other backend and runner. */
static void skip_evented_death_child(void **state)
{
    bool evented = (cio_test_backend *)*state != &cio_test_backend_threaded;
    (void)evented;
#if !defined(CIO_ARCH_X86_64)
    if (evented) /* (as test_evented.c: other arches' suites run under qemu-user here) */
        CIO_SKIP("not on this arch's suite runner (qemu-user), which asserts when a forked child starts "
                 "threads (qemu_plugin_vcpu_init_hook); the Threaded case and x86_64 cover it");
#endif
#if defined(__SANITIZE_THREAD__)
    if (evented)
        CIO_SKIP("under TSan, which refuses to start threads in a child forked from a threaded process "
                 "(the Evented child needs loop threads of its own)");
#endif
}

static void test_double_close_debug_line(void **state)
{
#if defined(NDEBUG)
    (void)state;
    (void)skip_evented_death_child;
    CIO_SKIP("a release build prints no debug line (the NotOpen result is tested above)");
#else
    skip_evented_death_child(state);
    cio_death_run(cio_test_io(state), death("double_close"), "cio: cio_file_close: handle ");
#endif
}

/* The message names the stack's size, the kind of task and where it was spawned. */
#if defined(CIO_OS_WINDOWS)
/* A winpthreads worker asked for `asked` bytes gets them as its commit; its reservation (the stack
 * it can grow to, which the message names) is this executable's default unless `asked` reaches it,
 * when Windows rounds `asked` up to whole MiB. */
static unsigned windows_stack_kib(size_t asked)
{
    const unsigned char *image = (const unsigned char *)GetModuleHandleW(NULL);
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)image;
    const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(image + dos->e_lfanew);
    size_t reserve = (size_t)nt->OptionalHeader.SizeOfStackReserve;
    if (asked >= reserve)
        reserve = (asked + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    return (unsigned)(reserve / 1024);
}
#endif

static void overflow_dies(void **state)
{
#if defined(CIO_OS_WINDOWS)
    (void)state;
    char want[512]; /* the death child runs die_stack_overflow on Threaded (overflow_backend 0) */
    snprintf(want, sizeof want, "stack overflow in a cio task (stack %u KiB; a Threaded worker spawned at %s,",
             windows_stack_kib(128 * 1024), overflow_site);
    cio_death_run(cio_test_io(state), death("stack_overflow"), want);
#else
    cio_test_backend *b = (cio_test_backend *)*state;
    cio_io io = cio_test_io(state);
    (void)b; /* (no Evented here: only the Threaded case) */
    overflow_backend = 0;
#if CIO_HAVE_EVENTED
    if (b != &cio_test_backend_threaded)
        overflow_backend = 1 + (int)cio_evented_flavour_of((cio_evented *)b->instance);
#endif
    skip_evented_death_child(state);
    char want[512];
    snprintf(want, sizeof want, "stack overflow in a cio task (stack %s; %s spawned at %s,",
             overflow_backend == 0 ? "128 KiB" : "64 KiB",
             overflow_backend == 0 ? "a Threaded worker" : "an Evented fiber", overflow_site);
    cio_death_run(io, death("stack_overflow"), want);
#endif
}

static void test_stack_overflow_dies(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    overflow_dies(state);
}

int main(int argc, char **argv)
{
    cio_death_child(argc, argv, deaths, sizeof deaths / sizeof deaths[0]);
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_async_null_fn),
        CIO_TESTS(test_concurrent_null_fn_and_out),
        CIO_TESTS(test_group_null_arguments),
        CIO_TESTS(test_null_path_and_out),
        CIO_TESTS(test_invalid_handle),
        CIO_TESTS(test_positional_offset_above_int64_max),
        CIO_TESTS(test_double_close_returns_not_open),
        CIO_TESTS(test_double_close_in_task),
        CIO_TESTS(test_double_close_stream),
        CIO_TESTS(test_double_close_debug_line),
        cmocka_unit_test(test_destroy_cancels_blocked_task),
        cmocka_unit_test(test_evented_destroy_cancels_blocked_uring),
        cmocka_unit_test(test_evented_destroy_cancels_blocked_readiness),
        cmocka_unit_test(test_io_destroy_any_backend),
        CIO_TESTS(test_await_null_dies),
        CIO_TESTS(test_cancel_null_dies),
        CIO_TESTS(test_group_cancel_null_dies),
        CIO_TESTS(test_await_stale_copy_dies),
        CIO_TESTS(test_cancel_stale_copy_dies),
        CIO_TESTS(test_zeroed_io_dies),
        CIO_TESTS(test_stack_overflow_dies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
