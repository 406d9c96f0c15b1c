/*
 * The OS error behind an Unexpected (cio/diag.h, issue 22): recorded for the task that made the
 * call, on every backend. An unmapped buffer handed to a write is EFAULT, which the write maps call a
 * bug (Unexpected): that is the error these tests provoke, on a pipe (streaming) and a regular file
 * (positional). Which thread makes the write differs by backend and flavour: the calling worker
 * (Threaded), a ring operation completed for the fiber (io_uring), the readiness path or the helper
 * pool (epoll: files have no readiness); the record must reach the calling task each time.
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
#include "os_helpers.h"

#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
#include <errno.h>
#include <unistd.h>
#define HAVE_EFAULT 1 /* WASI: address 16 is linear memory; Windows: no EFAULT to provoke */
#endif

#ifdef HAVE_EFAULT
#define BAD_BUFFER ((const void *)(uintptr_t)16)

static void skip_under_valgrind(void)
{
    const char *vg = getenv("CIO_TEST_VALGRIND"); /* set by build.py --valgrind */
    if (vg != NULL && vg[0] == '1')
        CIO_SKIP("under valgrind, which reports the deliberately unmapped buffer of these writes");
}

static void expect_efault_record(const char *what)
{
    cio_os_error os = cio_last_os_error();
    print_message("      %s: last OS error kind %d, %s %lld\n", what, (int)os.kind, os.operation, (long long)os.code);
    assert_int_equal(os.kind, CIO_OS_ERROR_ERRNO);
    assert_int_equal(os.code, EFAULT);
    assert_non_null(os.operation);
    assert_true(os.operation[0] != '\0');
}
#endif

/* From the test's thread: a pipe write and a file write, each recorded, each cleared. */
static void test_unexpected_has_os_error(void **state)
{
    cio_io io = cio_test_io(state);
#ifdef HAVE_EFAULT
    skip_under_valgrind();
    int p[2];
    assert_int_equal(pipe(p), 0);
    cio_clear_last_os_error();
    assert_int_equal(cio_last_os_error().kind, CIO_OS_ERROR_NONE);
    size_t n = 0;
    cio_err e = cio_file_write_streaming(io, (cio_file){p[1]}, BAD_BUFFER, 8, &n);
    close(p[0]);
    close(p[1]);
    assert_err(e, CIO_E_UNEXPECTED);
    expect_efault_record("pipe write");
    cio_clear_last_os_error();
    assert_int_equal(cio_last_os_error().kind, CIO_OS_ERROR_NONE);

    char dir[300];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-test-oserr"));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    cio_file f;
    assert_ok(cio_dir_create_file(io, d, "f", NULL, &f));
    e = cio_file_write_positional(io, f, BAD_BUFFER, 8, 0, &n);
    assert_ok(cio_file_close(io, f));
    assert_ok(cio_dir_delete_file(io, d, "f"));
    assert_ok(cio_dir_close(io, d));
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), dir));
    assert_err(e, CIO_E_UNEXPECTED);
    expect_efault_record("file write");
    cio_clear_last_os_error();
#else
    (void)io;
    CIO_SKIP("no EFAULT to provoke on this target (WASI: address 16 is memory; Windows: no errno)");
#endif
}

#ifdef HAVE_EFAULT
/* Two tasks that interleave: A's write fails and A waits; B starts, finds no record of its own, clears
 * (its own), lets A go; A still has its record. On Evented both are fibers of one loop thread (an
 * instance with one loop), so a record kept per thread would fail both checks. */
struct pair_ctx {
    cio_io io;
    cio_file file;
    cio_event a_failed, b_checked;
    cio_err a_write;
    cio_os_error a_before, a_after, b_start;
};

static cio_err task_a(void *arg)
{
    struct pair_ctx *c = *(struct pair_ctx **)arg;
    size_t n = 0;
    c->a_write = cio_file_write_positional(c->io, c->file, BAD_BUFFER, 8, 0, &n);
    c->a_before = cio_last_os_error();
    cio_event_set(c->io, &c->a_failed);
    cio_err e = cio_event_wait(c->io, &c->b_checked);
    c->a_after = cio_last_os_error();
    return e;
}

static cio_err task_b(void *arg)
{
    struct pair_ctx *c = *(struct pair_ctx **)arg;
    cio_err e = cio_event_wait(c->io, &c->a_failed);
    c->b_start = cio_last_os_error();
    cio_clear_last_os_error();
    cio_event_set(c->io, &c->b_checked);
    return e;
}

static void run_pair(cio_io io, const char *dir)
{
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    struct pair_ctx c;
    memset(&c, 0, sizeof c);
    c.io = io;
    assert_ok(cio_dir_create_file(io, d, "f", NULL, &c.file));
    struct pair_ctx *cp = &c;
    cio_future fa, fb;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, task_a, &cp, sizeof cp, &fa));
    assert_ok(cio_concurrent(io, task_b, &cp, sizeof cp, &fb));
    assert_ok(cio_await(io, &fb));
    assert_ok(cio_await(io, &fa));
    assert_ok(cio_file_close(io, c.file));
    assert_ok(cio_dir_delete_file(io, d, "f"));
    assert_ok(cio_dir_close(io, d));
    assert_err(c.a_write, CIO_E_UNEXPECTED);
    print_message("      A before: kind %d code %lld; B at start: kind %d; A after: kind %d code %lld\n",
                  (int)c.a_before.kind, (long long)c.a_before.code, (int)c.b_start.kind, (int)c.a_after.kind,
                  (long long)c.a_after.code);
    assert_int_equal(c.a_before.kind, CIO_OS_ERROR_ERRNO);
    assert_int_equal(c.a_before.code, EFAULT);
    assert_int_equal(c.b_start.kind, CIO_OS_ERROR_NONE); /* a task starts with none */
    assert_int_equal(c.a_after.kind, c.a_before.kind);   /* and keeps its own across B's clear */
    assert_int_equal(c.a_after.code, c.a_before.code);
}
#endif

static void test_os_error_per_task(void **state)
{
    cio_io io = cio_test_io(state);
#ifdef HAVE_EFAULT
    skip_under_valgrind();
    char dir[300];
    assert_true(cio_test_make_tmp_dir(dir, sizeof dir, "cio-test-oserr"));
#if CIO_HAVE_EVENTED
    cio_evented *mine = NULL;
    if (cio_test_evented(state) != NULL) { /* one loop thread: A and B are fibers of it */
        mine = cio_test_evented_new(cio_evented_flavour_of((cio_evented *)cio_test_evented(state)), 1, 0);
        assert_non_null(mine);
        io = cio_evented_io(mine);
    }
#endif
    run_pair(io, dir);
#if CIO_HAVE_EVENTED
    if (mine != NULL)
        cio_evented_destroy(mine);
#endif
    assert_ok(cio_dir_delete_dir(cio_test_io(state), cio_dir_cwd(), dir));
#else
    (void)io;
    CIO_SKIP("no EFAULT to provoke on this target (WASI: address 16 is memory; Windows: no errno)");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_unexpected_has_os_error),
        CIO_TESTS(test_os_error_per_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
