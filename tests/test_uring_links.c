/*
 * The io_uring flavour's link operations (issue 21): that dir_sym_link, dir_hard_link and
 * dir_rename_preserve run as IORING_OP_SYMLINKAT, IORING_OP_LINKAT and IORING_OP_RENAMEAT (with
 * RENAME_NOREPLACE) where the kernel has them (the ring's per-opcode submission counters,
 * src/evented/uring.h), that their errors are the Threaded backend's for the same cases (the same
 * script runs on a Threaded instance and the answers are compared), and that with the native
 * operations turned off (CIO_EVENTED_URING_NATIVE=0) they take the helper pool with the same
 * answers. What the slots do is checked on every backend by test_fs_links.c and test_fs_rename.c;
 * this suite is about where they run, so on the other backends it skips.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"
#include "evented.h"
#include "uring.h"

#include "asserts.h"

enum { STEPS = 16 };

typedef struct links_ctx {
    cio_io io;
    const char *dir;
    cio_err *got; /* STEPS answers, in the script's order */
} links_ctx;

/* The script: every answer it gets goes into got[] (the caller compares them with want[]). */
static cio_err links_body(void *context)
{
    links_ctx *c = (links_ctx *)context;
    cio_io io = c->io;
    cio_err *got = c->got;
    cio_dir d;
    cio_err err = cio_dir_open_dir(io, cio_dir_cwd(), c->dir, NULL, &d);
    if (err != CIO_OK)
        return err;
    cio_file f;
    assert_ok(cio_dir_create_file(io, d, "f", NULL, &f));
    cio_file_close(io, f);
    int i = 0;
    got[i++] = cio_dir_sym_link(io, d, "f", "s", 0);                      /* SYMLINKAT */
    got[i++] = cio_dir_sym_link(io, d, "f", "s", 0);                      /* EEXIST */
    got[i++] = cio_dir_sym_link(io, d, "f", "nodir/s", 0);                /* ENOENT */
    got[i++] = cio_dir_sym_link(io, d, "loop2", "loop1", 0);              /* a loop of two */
    got[i++] = cio_dir_sym_link(io, d, "loop1", "loop2", 0);              /* */
    got[i++] = cio_dir_hard_link(io, d, "f", d, "h", 0);                  /* LINKAT */
    got[i++] = cio_dir_hard_link(io, d, "f", d, "h", 0);                  /* EEXIST */
    got[i++] = cio_dir_hard_link(io, d, "missing", d, "h2", 0);           /* ENOENT */
    got[i++] = cio_dir_hard_link(io, d, "loop1", d, "h3", 0);             /* following the loop: ELOOP */
    got[i++] = cio_dir_hard_link(io, d, "loop1", d, "h4", CIO_NO_FOLLOW); /* the link itself */
    got[i++] = cio_dir_rename_preserve(io, d, "h", d, "f");               /* RENAMEAT, EEXIST */
    got[i++] = cio_dir_rename_preserve(io, d, "h", d, "g");               /* */
    got[i++] = cio_dir_rename_preserve(io, d, "h", d, "g2");              /* ENOENT */
    got[i++] = cio_dir_rename_preserve(io, d, "g", d, "loop1/x");         /* ELOOP */
    got[i++] = cio_dir_rename_preserve(io, d, "g", d, "f/x");             /* ENOTDIR */
    cio_stat st;
    got[i++] = cio_dir_stat_file(io, d, "f", 0, &st);
    assert_int_equal(i, STEPS);
    assert_int_equal(st.nlink, 2); /* f and g (h renamed) */
    cio_stat l1, l4;
    assert_ok(cio_dir_stat_file(io, d, "loop1", CIO_STAT_NO_FOLLOW, &l1));
    assert_ok(cio_dir_stat_file(io, d, "h4", CIO_STAT_NO_FOLLOW, &l4));
    assert_int_equal(l4.kind, CIO_FILE_KIND_SYM_LINK);
    assert_int_equal(l4.inode, l1.inode); /* a hard link to the symbolic link */
    static const char *const names[] = {"f", "g", "s", "loop1", "loop2", "h4"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        assert_ok(cio_dir_delete_file(io, d, names[k]));
    cio_dir_close(io, d);
    return CIO_OK;
}

static const cio_err want[STEPS] = {
    CIO_OK,
    CIO_E_PATH_ALREADY_EXISTS,
    CIO_E_FILE_NOT_FOUND,
    CIO_OK,
    CIO_OK,
    CIO_OK,
    CIO_E_PATH_ALREADY_EXISTS,
    CIO_E_FILE_NOT_FOUND,
    CIO_E_SYM_LINK_LOOP,
    CIO_OK,
    CIO_E_PATH_ALREADY_EXISTS,
    CIO_OK,
    CIO_E_FILE_NOT_FOUND,
    CIO_E_SYM_LINK_LOOP,
    CIO_E_NOT_DIR,
    CIO_OK,
};

/* Runs the script on io in a fresh directory (as a task of io: a fiber on Evented), into got. */
static void run_links(cio_io io, cio_err got[STEPS])
{
    char dir[] = "/tmp/cio-test-uring-links-XXXXXX";
    assert_non_null(mkdtemp(dir));
    links_ctx ctx = {io, dir, got};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, links_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    assert_int_equal(rmdir(dir), 0);
}

/* The script's answers on a Threaded instance. */
static void threaded_answers(cio_err got[STEPS])
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    run_links(cio_threaded_io(t), got);
    cio_threaded_destroy(t);
}

static const unsigned link_ops[3] = {IORING_OP_SYMLINKAT, IORING_OP_LINKAT, IORING_OP_RENAMEAT};
/* The script's submissions of each: 5 symbolic links, 5 hard links, 5 renames. */
static const uint64_t link_want[3] = {5, 5, 5};

static void check_answers(const cio_err got[STEPS], const cio_err threaded[STEPS])
{
    for (int i = 0; i < STEPS; i++) {
        if (got[i] != threaded[i] || got[i] != want[i])
            print_message("step %d: %s here, %s on Threaded, %s wanted\n", i, cio_err_name(got[i]),
                          cio_err_name(threaded[i]), cio_err_name(want[i]));
        assert_int_equal(got[i], threaded[i]);
        assert_int_equal(got[i], want[i]);
    }
}

/* The evented/io_uring instance of this test, or a skip. */
static struct cio_evented *uring_instance(void **state, cio_io *io)
{
    *io = cio_test_io(state);
    cio_test_backend *b = (cio_test_backend *)*state;
    if (b != &cio_test_backend_uring)
        CIO_SKIP("ring operations belong to the evented/io_uring backend");
    return (struct cio_evented *)b->instance;
}

static void test_link_ops_run_on_the_ring(void **state)
{
    cio_io io;
    struct cio_evented *e = uring_instance(state, &io);
    uint64_t before[3];
    for (int i = 0; i < 3; i++)
        before[i] = cio__e_uring_count(e, link_ops[i]);
    cio_err got[STEPS], threaded[STEPS];
    run_links(io, got);
    for (int i = 0; i < 3; i++) {
        uint64_t n = cio__e_uring_count(e, link_ops[i]) - before[i];
        print_message("opcode %u: %llu submitted (the kernel %s it)\n", link_ops[i], (unsigned long long)n,
                      cio__e_uring_has(e, link_ops[i]) ? "has" : "lacks");
        /* where the kernel lacks the opcode the helper pool did it */
        assert_int_equal(n, cio__e_uring_has(e, link_ops[i]) ? link_want[i] : 0);
    }
    threaded_answers(threaded);
    check_answers(got, threaded);
}

/* A canceled task's link operations end Canceled (a ring operation is cancelable like the Threaded
 * call): the task sleeps until canceled, then re-arms the request (cio_recancel) before each. */
typedef struct cancel_ctx {
    cio_io io;
    cio_dir d;
    cio_err *got;
} cancel_ctx;

static cio_err canceled_body(void *context)
{
    cancel_ctx *c = (cancel_ctx *)context;
    cio_err slept = cio_sleep(c->io, cio_timeout_ms(10000));
    cio_recancel(c->io);
    c->got[0] = cio_dir_sym_link(c->io, c->d, "f", "s", 0);
    cio_recancel(c->io);
    c->got[1] = cio_dir_hard_link(c->io, c->d, "f", c->d, "h", 0);
    cio_recancel(c->io);
    c->got[2] = cio_dir_rename_preserve(c->io, c->d, "f", c->d, "g");
    return slept;
}

static void test_link_ops_cancel(void **state)
{
    cio_io io;
    (void)uring_instance(state, &io);
    char dir[] = "/tmp/cio-test-uring-links-XXXXXX";
    assert_non_null(mkdtemp(dir));
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir, NULL, &d));
    cio_file f;
    assert_ok(cio_dir_create_file(io, d, "f", NULL, &f));
    cio_file_close(io, f);
    cio_err got[3] = {CIO_OK, CIO_OK, CIO_OK};
    cancel_ctx ctx = {io, d, got};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, canceled_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
    assert_err(cio_cancel(io, &fut), CIO_E_CANCELED);
    for (int i = 0; i < 3; i++)
        assert_err(got[i], CIO_E_CANCELED);
    /* nothing was linked or renamed: f is the directory's only entry */
    assert_ok(cio_dir_delete_file(io, d, "f"));
    cio_dir_close(io, d);
    assert_int_equal(rmdir(dir), 0);
}

/* With CIO_EVENTED_URING_NATIVE=0 the same script takes the helper pool: no link opcode on the ring,
 * the same answers. */
static void test_link_ops_fallback(void **state)
{
    cio_io unused;
    (void)uring_instance(state, &unused);
    assert_int_equal(setenv("CIO_EVENTED_URING_NATIVE", "0", 1), 0);
    cio_evented_options o = {0};
    o.flavour = CIO_EVENTED_IO_URING;
    o.threads = 1;
    cio_evented *e = NULL;
    cio_err err = cio_evented_create(&o, &e);
    unsetenv("CIO_EVENTED_URING_NATIVE");
    assert_ok(err);
    cio_err got[STEPS], threaded[STEPS];
    run_links(cio_evented_io(e), got);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cio__e_uring_count(e, link_ops[i]), 0);
    cio_evented_destroy(e);
    threaded_answers(threaded);
    check_answers(got, threaded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_link_ops_run_on_the_ring),
        CIO_TESTS(test_link_ops_cancel),
        CIO_TESTS(test_link_ops_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
