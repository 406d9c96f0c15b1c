/*
 * The io_uring flavour's link operations (issue 21): that dir_sym_link, dir_hard_link, file_hard_link
 * and dir_rename_preserve run as IORING_OP_SYMLINKAT, IORING_OP_LINKAT (file_hard_link: with
 * AT_EMPTY_PATH, then of the /proc/self/fd name after ENOENT, as fs_linkfd_linux.c) and
 * IORING_OP_RENAMEAT (with RENAME_NOREPLACE) where the kernel has them (the ring's per-opcode
 * submission counters, src/evented/uring.h), that their errors are the Threaded backend's for the
 * same cases (the same script runs on a Threaded instance and the answers are compared, also in a
 * child without CAP_DAC_READ_SEARCH, where the /proc name is what links), that a canceled task's
 * calls end Canceled, and that with the native operations turned off (CIO_EVENTED_URING_NATIVE=0)
 * they take the helper pool with the same answers. What the slots do is checked on every backend by
 * test_fs_links.c and test_fs_rename.c; this suite is about where they run, so on the other backends
 * it skips.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends.h"
#include "evented.h"
#include "uring.h"

#include "asserts.h"
#include "uring_helpers.h"

enum { STEPS = 21 };

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
    static const cio_open_file_options rw = {CIO_OPEN_READ_WRITE, false, false};
    assert_ok(cio_dir_open_file(io, d, "f", &rw, &f));
    got[i++] = cio_file_hard_link(io, f, d, "fh");                    /* LINKAT AT_EMPTY_PATH */
    got[i++] = cio_file_hard_link(io, f, d, "fh");                    /* EEXIST */
    got[i++] = cio_file_hard_link(io, f, d, "nodir/fh");              /* ENOENT, and again by /proc/self/fd */
    got[i++] = cio_file_hard_link(io, (cio_file){d.handle}, d, "dh"); /* a directory: EPERM */
    cio_file_close(io, f);
    cio_file_atomic af; /* an unnamed file (O_TMPFILE), given its name by file_hard_link */
    assert_ok(cio_dir_create_file_atomic(io, d, "a", NULL, &af));
    got[i++] = cio_file_atomic_link(io, &af);
    cio_file_atomic_discard(io, &af);
    cio_stat st;
    got[i++] = cio_dir_stat_file(io, d, "f", 0, &st);
    assert_int_equal(i, STEPS);
    assert_int_equal(st.nlink, 3); /* f, g (h renamed) and fh */
    cio_stat l1, l4;
    assert_ok(cio_dir_stat_file(io, d, "loop1", CIO_STAT_NO_FOLLOW, &l1));
    assert_ok(cio_dir_stat_file(io, d, "h4", CIO_STAT_NO_FOLLOW, &l4));
    assert_int_equal(l4.kind, CIO_FILE_KIND_SYM_LINK);
    assert_int_equal(l4.inode, l1.inode); /* a hard link to the symbolic link */
    static const char *const names[] = {"f", "g", "s", "loop1", "loop2", "h4", "fh", "a"};
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
    CIO_E_PATH_ALREADY_EXISTS,
    CIO_E_FILE_NOT_FOUND,
    CIO_E_PERMISSION_DENIED,
    CIO_OK,
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
/* The script's submissions of each: 5 symbolic links; 5 hard links by path and 6 for the 5 names of open
 * files (with CAP_DAC_READ_SEARCH, as root: one AT_EMPTY_PATH LINKAT each, and a second, of the /proc/self/fd
 * name, only after the ENOENT of "nodir/fh"); 5 renames. */
static const uint64_t link_want[3] = {5, 11, 5};

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
    cio_file f; /* "f", open */
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
    cio_recancel(c->io);
    c->got[3] = cio_file_hard_link(c->io, c->f, c->d, "fh");
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
    cio_err got[4] = {CIO_OK, CIO_OK, CIO_OK, CIO_OK};
    cancel_ctx ctx = {io, d, f, got};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, canceled_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_sleep(io, cio_timeout_ms(20)));
    assert_err(cio_cancel(io, &fut), CIO_E_CANCELED);
    cio_file_close(io, f);
    for (int i = 0; i < 4; i++)
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
    cio_evented *e = uring_fallback(1);
    cio_err got[STEPS], threaded[STEPS];
    run_links(cio_evented_io(e), got);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cio__e_uring_count(e, link_ops[i]), 0);
    cio_evented_destroy(e);
    threaded_answers(threaded);
    check_answers(got, threaded);
}

/* ---- file_hard_link without CAP_DAC_READ_SEARCH ----------------------------------------------------------------
 * linkat(fd, "", AT_EMPTY_PATH) says ENOENT to a caller without the capability (since Linux 6.10 only when the file
 * was opened with other credentials than the caller's), so the second LINKAT, of the file's /proc/self/fd name,
 * runs: the suite runs itself again ("--no-dac-read-search <dir> <fd>") in a child whose bounding set lost the
 * capability before the exec (root's new permitted and effective sets are the bounding set; the exec makes new
 * credentials), handing it a descriptor of "f" opened before the exec. The child runs a script on an io_uring
 * instance (two LINKATs per call) and on a Threaded one, with the same answers. Its exit status says what went
 * wrong (cmocka's asserts outside a test exit non-zero too). */
enum { NOCAP_STEPS = 3 };
enum { NOCAP_STILL_CAPABLE = 3, NOCAP_NO_ENOENT = 4, NOCAP_NO_URING = 5, NOCAP_NO_DROP = 6, NOCAP_BAD = 7 };

static char self_path[512];

/* Whether CAP_DAC_READ_SEARCH (2) is in this process's effective set (/proc/self/status's CapEff). */
static bool dac_read_search_effective(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (fp == NULL)
        return true;
    char line[256];
    unsigned long long eff = ~0ull;
    while (fgets(line, sizeof line, fp) != NULL)
        if (sscanf(line, "CapEff: %llx", &eff) == 1)
            break;
    fclose(fp);
    return (eff >> 2) & 1u;
}

typedef struct nocap_ctx {
    cio_io io;
    const char *dir;
    cio_file f; /* "f", opened before the exec */
    cio_err *got;
} nocap_ctx;

static cio_err nocap_body(void *context)
{
    nocap_ctx *c = (nocap_ctx *)context;
    cio_io io = c->io;
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), c->dir, NULL, &d));
    int i = 0;
    c->got[i++] = cio_file_hard_link(io, c->f, d, "fh");       /* ENOENT, then the /proc name: linked */
    c->got[i++] = cio_file_hard_link(io, c->f, d, "fh");       /* ENOENT, then EEXIST */
    c->got[i++] = cio_file_hard_link(io, c->f, d, "nodir/fh"); /* ENOENT twice */
    assert_int_equal(i, NOCAP_STEPS);
    cio_stat st;
    assert_ok(cio_dir_stat_file(io, d, "f", 0, &st));
    assert_int_equal(st.nlink, 2); /* f and fh */
    assert_ok(cio_dir_delete_file(io, d, "fh"));
    cio_dir_close(io, d);
    return CIO_OK;
}

static void run_nocap(cio_io io, const char *dir, cio_file f, cio_err got[NOCAP_STEPS])
{
    nocap_ctx ctx = {io, dir, f, got};
    cio_future fut;
    assert_ok(cio_concurrent(io, nocap_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
}

static int nocap_child(const char *dir, const char *fd_text)
{
    if (dac_read_search_effective())
        return NOCAP_STILL_CAPABLE;
    int fd = atoi(fd_text);
    /* The premise: the kernel refuses AT_EMPTY_PATH here (so what follows is the /proc path's work). */
    char probe[600];
    snprintf(probe, sizeof probe, "%s/probe", dir);
    if (linkat(fd, "", AT_FDCWD, probe, AT_EMPTY_PATH) == 0) {
        unlink(probe);
        return NOCAP_NO_ENOENT;
    }
    if (errno != ENOENT)
        return NOCAP_NO_ENOENT;
    cio_file f = {fd};
    cio_evented_options o = {0};
    o.flavour = CIO_EVENTED_IO_URING;
    o.threads = 1;
    cio_evented *e = NULL;
    if (cio_evented_create(&o, &e) != CIO_OK)
        return NOCAP_NO_URING;
    if (!cio__e_uring_has(e, IORING_OP_LINKAT)) {
        cio_evented_destroy(e);
        return NOCAP_NO_URING;
    }
    static const cio_err want_nocap[NOCAP_STEPS] = {CIO_OK, CIO_E_PATH_ALREADY_EXISTS, CIO_E_FILE_NOT_FOUND};
    cio_err got[NOCAP_STEPS], threaded[NOCAP_STEPS];
    uint64_t before = cio__e_uring_count(e, IORING_OP_LINKAT);
    run_nocap(cio_evented_io(e), dir, f, got);
    uint64_t n = cio__e_uring_count(e, IORING_OP_LINKAT) - before;
    cio_evented_destroy(e);
    cio_threaded *t = NULL;
    if (cio_threaded_create(NULL, &t) != CIO_OK)
        return NOCAP_BAD;
    run_nocap(cio_threaded_io(t), dir, f, threaded);
    cio_threaded_destroy(t);
    int bad = 0;
    for (int i = 0; i < NOCAP_STEPS; i++)
        if (got[i] != threaded[i] || got[i] != want_nocap[i]) {
            fprintf(stderr, "step %d: %s on the ring, %s on Threaded, %s wanted\n", i, cio_err_name(got[i]),
                    cio_err_name(threaded[i]), cio_err_name(want_nocap[i]));
            bad = 1;
        }
    fprintf(stderr, "without CAP_DAC_READ_SEARCH: %llu LINKATs for %d names of open files\n", (unsigned long long)n,
            NOCAP_STEPS);
    if (n != 2 * NOCAP_STEPS) /* each: AT_EMPTY_PATH (ENOENT), then the /proc/self/fd name */
        bad = 1;
    return bad ? NOCAP_BAD : 0;
}

static void test_file_hard_link_without_dac_read_search(void **state)
{
    cio_io io;
    (void)uring_instance(state, &io);
    char dir[] = "/tmp/cio-test-uring-nocap-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[600];
    snprintf(path, sizeof path, "%s/f", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (dac_read_search_effective() && prctl(PR_CAPBSET_DROP, 2 /* CAP_DAC_READ_SEARCH */, 0, 0, 0) != 0)
            _exit(NOCAP_NO_DROP);
        int fd = open(path, O_RDWR); /* kept open across the exec, with the credentials before it */
        char fd_text[16];
        snprintf(fd_text, sizeof fd_text, "%d", fd);
        execl(self_path, self_path, "--no-dac-read-search", dir, fd_text, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    assert_true(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    if (code == NOCAP_NO_DROP)
        CIO_SKIP("cannot drop CAP_DAC_READ_SEARCH (PR_CAPBSET_DROP needs CAP_SETPCAP)");
    if (code == NOCAP_NO_URING)
        CIO_SKIP("the child's io_uring instance has no LINKAT");
    if (code != 0)
        fail_msg("the child without CAP_DAC_READ_SEARCH exited %d (3: still capable; 4: AT_EMPTY_PATH did not say "
                 "ENOENT; 7: wrong answers or LINKAT count; 127: no exec; else an assert)",
                 code);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--no-dac-read-search") == 0)
        return nocap_child(argv[2], argv[3]);
    if (realpath(argv[0], self_path) == NULL)
        snprintf(self_path, sizeof self_path, "%s", argv[0]);
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_link_ops_run_on_the_ring),
        CIO_TESTS(test_link_ops_cancel),
        CIO_TESTS(test_link_ops_fallback),
        CIO_TESTS(test_file_hard_link_without_dac_read_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
