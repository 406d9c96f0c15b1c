/*
 * Fault injection at the Evented backend's own call sites (spec/oscalls.yaml, src/evented/): creating
 * an instance (io_uring setup and its probe, the ring's mappings, epoll, the eventfd, the loop threads,
 * memory), the fibers' stacks and blocks, the pollers' waits (io_uring_enter, epoll_wait/epoll_ctl), the
 * eventfd drain, and the epoll flavour's RWF_NOWAIT attempts on a pipe; a thread's adoption failing
 * (it then works as a foreign thread), the stack pool's trim and last slab, the once-per-process guard
 * probe (each case in a fresh process: the program runs itself with PROBE_ARG), and, through
 * hand-written overrides, a saturated wake-up eventfd and a ring without IORING_FEAT_SINGLE_MMAP.
 * The operations the Evented backend runs through the Threaded slots are covered by tests/test_faults.c
 * and test_faults_os.c, which run on both flavours.
 *
 * Every case checks the exact error, the data, and that the process has as many descriptors and
 * threads afterwards as before (heap blocks: LeakSanitizer and valgrind). A create that fails must
 * leave nothing behind: a loop already started is joined, every ring, epoll and eventfd closed.
 * Under valgrind no io_uring loop is started (tests/backends.h says why): the io_uring cases that
 * would start one are left out, saying so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"

#include <pthread.h>
#include <linux/io_uring.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cio/sysnum.h"
#include "fiber.h"

/* ---- helpers ------------------------------------------------------------------------------------------ */

typedef struct snapshot {
    int fds, threads;
} snapshot;

static snapshot snap(void)
{
    snapshot s = {fd_count(), thread_count()};
    return s;
}

/* Threads may take a moment to be gone from /proc after their join. */
static void same_as(snapshot before, const char *what)
{
    snapshot now = snap();
    for (int i = 0; i < 200 && now.threads > before.threads; i++) {
        pause_ms(5);
        now = snap();
    }
    if (now.fds != before.fds || now.threads != before.threads)
        fail_msg("%s: %d descriptors and %d threads, %d and %d before", what, now.fds, now.threads, before.fds,
                 before.threads);
}

/* Inside a live instance: its helper pool's workers come and go (2 s idle timeout), so only the
 * descriptors are compared (the create cases compare threads once the instance is gone). */
static void same_fds(snapshot before, const char *what)
{
    int now = fd_count();
    if (now != before.fds)
        fail_msg("%s: %d descriptors, %d before", what, now, before.fds);
}

/* Whether this kernel lets this process set up a ring (asked without the table). */
static bool uring_here(void)
{
    unsigned char params[120]; /* struct io_uring_params */
    memset(params, 0, sizeof params);
    long fd = syscall(CIO_SYS_IO_URING_SETUP, 2, params);
    if (fd < 0)
        return false;
    close((int)fd);
    return true;
}

static cio_err make(cio_evented_flavour fl, unsigned threads, cio_evented **out)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.flavour = fl;
    o.threads = threads;
    *out = NULL;
    return cio_evented_create(&o, out);
}

static cio_err add_task(void *p)
{
    sum_ctx *c = (sum_ctx *)p;
    *c->out = c->a + c->b;
    return CIO_OK;
}

/* Real work on an instance: a file written and read back, tasks on fibers, a sleep. */
static void workload(cio_io io)
{
    char path[] = "/tmp/cio-test-faults-ev-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    static unsigned char buf[DATA_LEN];
    for (size_t i = 0; i < DATA_LEN; i++)
        data[i] = (unsigned char)(i * 13 + 1);
    cio_file f = {fd};
    assert_ok(cio_file_write_all(io, f, data, DATA_LEN));
    size_t n = 0;
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 0, &n));
    assert_true(n > 0);
    assert_memory_equal(buf, data, n);
    close(fd);
    for (int i = 0; i < 4; i++) {
        int out = 0;
        sum_ctx c;
        memset(&c, 0, sizeof c);
        c.a = i;
        c.b = 5;
        c.out = &out;
        cio_future fut;
        assert_ok(cio_concurrent(io, add_task, &c, sizeof c, &fut));
        assert_ok(cio_await(io, &fut));
        assert_int_equal(out, i + 5);
    }
    assert_ok(cio_sleep(io, cio_timeout_ms(2)));
}

/* ---- create: io_uring refused, the ring cannot be made ---------------------------------------------------- */

/* io_uring_setup says ENOSYS (qemu-user, old kernels) or EPERM (seccomp, io_uring_disabled): the
 * automatic flavour is epoll and works; a forced io_uring says OperationUnsupported. */
static void test_uring_setup_refused(void **state)
{
    (void)state;
    static const int errs[] = {ENOSYS, EPERM, ENOMEM};
    static const char *const names[] = {"ENOSYS", "EPERM", "ENOMEM"};
    static const cio_err forced_want[] = {CIO_E_OPERATION_UNSUPPORTED, CIO_E_OPERATION_UNSUPPORTED,
                                          CIO_E_SYSTEM_RESOURCES};
    for (size_t i = 0; i < 3; i++) {
        cio__fault_reset();
        snapshot before = snap();
        assert_true(cio__fault_errno("io_uring_setup@ring_setup", errs[i], 0, -1) == 1);
        cio_evented *e;
        assert_ok(make(CIO_EVENTED_AUTO, 2, &e));
        assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_EPOLL);
        workload(cio_evented_io(e));
        cio_evented_destroy(e);
        assert_err(make(CIO_EVENTED_IO_URING, 2, &e), forced_want[i]);
        assert_null(e);
        covered("io_uring_setup@ring_setup", names[i]);
        cio__fault_reset();
        same_as(before, names[i]);
    }
}

/* A fault at create: the site, its errno (and name in the report), how many calls are let through
 * first (1: the second loop's fails), and the error create must return. */
typedef struct create_case {
    const char *site;
    int err;
    const char *name;
    int skip;
    cio_err want;
} create_case;

/* Creates an instance with c's fault armed (once past `skip` calls, else every call); *injected: how
 * often it hit. The fault is disarmed again. */
static cio_err create_with_fault(const create_case *c, cio_evented_flavour fl, unsigned loops, cio_evented **e,
                                 unsigned *injected)
{
    cio__fault_reset();
    assert_true(cio__fault_errno(c->site, c->err, c->skip, c->skip > 0 ? 1 : -1) == 1);
    cio_err err = make(fl, loops, e);
    *injected = cio__fault_injected(c->site);
    cio__fault_reset();
    return err;
}

/* The create failed as c says, with nothing made. */
static void create_failed_as(const create_case *c, cio_err err, const cio_evented *e)
{
    if (err != c->want)
        fail_msg("%s with %s: got %s, want %s", c->site, c->name, cio_err_name(err), cio_err_name(c->want));
    assert_null(e);
}

/* The rest of a ring's setup fails (a forced io_uring: the error; auto: epoll instead). */
static void test_uring_init_fails(void **state)
{
    (void)state;
    if (!uring_here())
        CIO_SKIP("io_uring_setup is refused on this machine: no ring to fail part-way");
    static const create_case cases[] = {
        {"io_uring_register@ring_probe", EINVAL, "EINVAL", 0, CIO_E_OPERATION_UNSUPPORTED},
        {"calloc@ring_probe", ENOMEM, "ENOMEM", 0, CIO_E_OPERATION_UNSUPPORTED},
        {"calloc@ring", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"mmap@ring_sq", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"mmap@ring_cq", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"mmap@ring_sqes", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"eventfd@uring_init", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"eventfd@uring_init", ENFILE, "ENFILE", 0, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED},
        {"io_uring_setup@ring_setup", ENOMEM, "ENOMEM-second-loop", 1, CIO_E_SYSTEM_RESOURCES},
        {"mmap@ring_sqes", ENOMEM, "ENOMEM-second-loop", 1, CIO_E_SYSTEM_RESOURCES},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const create_case *c = &cases[i];
        if (strcmp(c->site, "mmap@ring_cq") == 0 && cio_test_under_valgrind()) {
            /* not reached on kernels with IORING_FEAT_SINGLE_MMAP: create would start io_uring loops */
            print_message("      not here: %s (under valgrind no io_uring loop may start)\n", c->site);
            continue;
        }
        snapshot before = snap();
        cio_evented *e;
        unsigned injected;
        cio_err err = create_with_fault(c, CIO_EVENTED_IO_URING, 2, &e, &injected);
        if (injected == 0) {
            /* mmap@ring_cq: only kernels without IORING_FEAT_SINGLE_MMAP (before 5.4) map it */
            if (err == CIO_OK)
                cio_evented_destroy(e);
            print_message("      not here: %s (this kernel never makes that call)\n", c->site);
            same_as(before, c->site);
            continue;
        }
        create_failed_as(c, err, e);
        same_as(before, c->site);
        /* auto: the same fault sends it to epoll, which works */
        assert_ok(create_with_fault(c, CIO_EVENTED_AUTO, 2, &e, &injected));
        assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_EPOLL);
        workload(cio_evented_io(e));
        cio_evented_destroy(e);
        same_as(before, c->site);
        print_message("fault-covered: %s %s\n", c->site, c->name);
    }
}

/* ---- create: epoll, the eventfd, memory, the loop threads -------------------------------------------------- */

static void test_create_fails(void **state)
{
    (void)state;
    static const create_case cases[] = {
        {"epoll_create1@epoll_init", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"epoll_create1@epoll_init", ENFILE, "ENFILE", 0, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED},
        {"epoll_create1@epoll_init", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"epoll_create1@epoll_init", EMFILE, "EMFILE-second-loop", 1, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"eventfd@epoll_init", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"eventfd@epoll_init", ENFILE, "ENFILE", 0, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED},
        {"eventfd@epoll_init", EMFILE, "EMFILE-second-loop", 1, CIO_E_PROCESS_FD_QUOTA_EXCEEDED},
        {"epoll_ctl@epoll_init", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"epoll_ctl@epoll_init", ENOSPC, "ENOSPC", 1, CIO_E_SYSTEM_RESOURCES},
        {"calloc@evented_create", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"calloc@evented_loops", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES},
        {"pthread_create@loop_start", EAGAIN, "EAGAIN", 0, CIO_E_SYSTEM_RESOURCES},
        {"pthread_create@loop_start", EAGAIN, "EAGAIN-second-loop", 1, CIO_E_SYSTEM_RESOURCES},
        {"pthread_create@loop_start", EAGAIN, "EAGAIN-third-loop", 2, CIO_E_SYSTEM_RESOURCES},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const create_case *c = &cases[i];
        snapshot before = snap();
        cio_evented *e;
        unsigned injected;
        cio_err err = create_with_fault(c, CIO_EVENTED_EPOLL, 3, &e, &injected);
        create_failed_as(c, err, e);
        assert_int_equal(injected, 1u);
        same_as(before, c->site);
        print_message("fault-covered: %s %s\n", c->site, c->name);
    }
    /* both flavours out of descriptors: the automatic one reports it */
    snapshot before = snap();
    assert_true(cio__fault_errno("eventfd", EMFILE, 0, -1) == 2);
    cio_evented *e;
    assert_err(make(CIO_EVENTED_AUTO, 2, &e), CIO_E_PROCESS_FD_QUOTA_EXCEEDED);
    cio__fault_reset();
    assert_null(e);
    same_as(before, "eventfd (auto)");
}

/* ---- fibers: no stack, no block ------------------------------------------------------------------------------ */

/* With `site` failing: async runs inline, concurrent is unavailable, groups likewise; nothing leaks. */
static void no_fibers(cio_io io, const char *site, int err, const char *fault)
{
    snapshot before = snap();
    assert_true(cio__fault_errno(site, err, 0, -1) == 1);
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    cio_future f = cio_async(io, sum_task, &c, sizeof c);
    assert_ok(cio_await(io, &f));
    assert_int_equal(out, 5);
    assert_err(concurrent_sum(io), CIO_E_CONCURRENCY_UNAVAILABLE);
    group_runs_inline(io);
    unsigned injected = cio__fault_injected(site);
    cio__fault_reset();
    if (injected == 0)
        fail_msg("%s: never reached", site);
    same_fds(before, site);
    print_message("fault-covered: %s %s\n", site, fault);
}

static void test_fiber_stack_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    /* a fresh instance has no stack cached: every fiber maps one */
    no_fibers(io, "mmap@fiber_stack", ENOMEM, "ENOMEM");
    /* no guard region (a kernel before 6.13 refuses the advice: EINVAL), then no PROT_NONE page */
    assert_true(cio__fault_errno("madvise@stack_guard", EINVAL, 0, -1) == 1);
    no_fibers(io, "mprotect@stack_guard", ENOMEM, "ENOMEM");
    print_message("fault-covered: madvise@stack_guard EINVAL\n");
    /* the rest of a slab whose guard failed is unmapped; that munmap failing is ignored */
    assert_true(cio__fault_errno("madvise@stack_guard", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("mprotect@stack_guard", ENOMEM, 0, 1) == 1);
    assert_true(cio__fault_errno("munmap@stack_undo", EINVAL, 0, 1) == 1);
    cio_future g;
    int out = 0;
    sum_ctx c;
    memset(&c, 0, sizeof c);
    c.a = 2;
    c.b = 3;
    c.out = &out;
    assert_err(cio_concurrent(io, sum_task, &c, sizeof c, &g), CIO_E_CONCURRENCY_UNAVAILABLE);
    assert_int_equal(cio__fault_injected("munmap@stack_undo"), 1u);
    cio__fault_reset();
    print_message("fault-covered: munmap@stack_undo EINVAL\n");
    /* and then fibers work again */
    assert_ok(cio_concurrent(io, sum_task, &c, sizeof c, &g));
    assert_ok(cio_await(io, &g));
    assert_int_equal(out, 5);
}

static void test_fiber_block_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    no_fibers(io, "posix_memalign@fiber_alloc", ENOMEM, "ENOMEM");
}

/* Stacks are unmapped when the instance goes (the pool's cache); a failing munmap is ignored. */
static void test_stack_free_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = snap();
    cio_evented *e;
    assert_ok(make(CIO_EVENTED_EPOLL, 2, &e));
    workload(cio_evented_io(e));
    assert_true(cio__fault_errno("munmap@stack_free", EINVAL, 0, -1) == 1);
    cio_evented_destroy(e);
    unsigned injected = cio__fault_injected("munmap@stack_free");
    cio__fault_reset();
    assert_true(injected > 0);
    same_as(before, "munmap@stack_free");
    print_message("fault-covered: munmap@stack_free EINVAL\n");
}

/* ---- the pollers' waits -------------------------------------------------------------------------------------- */

/* io_uring_enter interrupted (EINTR) or busy (EBUSY, EAGAIN: the completion queue is full) 100
 * times: the loop submits and waits again; no completion is lost (the data is right, every task
 * and sleep returns). */
static void test_ring_enter_interrupted(void **state)
{
    cio_io io = cio_test_io(state);
    static const int errs[] = {EINTR, EBUSY, EAGAIN};
    static const char *const names[] = {"EINTR", "EBUSY", "EAGAIN"};
    for (size_t i = 0; i < 3; i++) {
        cio__fault_reset();
        snapshot before = snap();
        assert_true(cio__fault_errno("io_uring_enter@ring_enter", errs[i], 0, 100) == 1);
        for (int round = 0; round < 200 && cio__fault_injected("io_uring_enter@ring_enter") < 100; round++)
            workload(io);
        unsigned injected = cio__fault_injected("io_uring_enter@ring_enter");
        cio__fault_reset();
        if (injected < 100)
            fail_msg("io_uring_enter: %u of 100 faults injected", injected);
        workload(io);
        same_fds(before, names[i]);
        print_message("fault-covered: io_uring_enter@ring_enter %s\n", names[i]);
    }
}

/* epoll_wait interrupted 50 times: the loop waits again, sleeps and readiness waits still end. */
static void test_epoll_wait_interrupted(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    snapshot before = snap();
    assert_true(cio__fault_errno("epoll_wait@epoll_wait", EINTR, 0, 50) == 1);
    for (int round = 0; round < 200 && cio__fault_injected("epoll_wait@epoll_wait") < 50; round++)
        workload(io);
    unsigned injected = cio__fault_injected("epoll_wait@epoll_wait");
    cio__fault_reset();
    assert_int_equal(injected, 50u);
    same_fds(before, "epoll_wait");
    print_message("fault-covered: epoll_wait@epoll_wait EINTR\n");
}

/* A pipe read as a fiber on the epoll flavour: the RWF_NOWAIT attempt (preadv2) says EAGAIN, the
 * fiber waits for readiness (epoll_ctl), the writer's bytes arrive. */
typedef struct pipe_ctx {
    cio_io io;
    int fd;
    unsigned char buf[64];
    size_t n;
} pipe_ctx;

static cio_err pipe_reader(void *p)
{
    pipe_ctx *c = *(pipe_ctx **)p;
    return cio_file_read_streaming(c->io, (cio_file){c->fd}, c->buf, sizeof c->buf, &c->n);
}

static cio_err pipe_read_after(cio_io io, int p[2], pipe_ctx *c)
{
    c->io = io;
    c->fd = p[0];
    c->n = 0;
    pipe_ctx *cp = c;
    cio_future f;
    cio_err err = cio_concurrent(io, pipe_reader, &cp, sizeof cp, &f);
    if (err != CIO_OK)
        return err;
    pause_ms(20);
    assert_int_equal(write(p[1], "hello, pipe", 11), 11);
    return cio_await(io, &f);
}

/* The first re-arm (EPOLL_CTL_MOD) finds the descriptor gone: it is really taken out of the set (as
 * its close would), and the MOD says ENOENT. */
static _Atomic(unsigned) mod_gone;

static int epoll_mod_gone(int epfd, int op, int fd, struct epoll_event *ev)
{
    unsigned zero = 0;
    if (op == EPOLL_CTL_MOD && atomic_compare_exchange_strong(&mod_gone, &zero, 1)) {
        (void)(cio__sys_default.epoll_ctl)(epfd, EPOLL_CTL_DEL, fd, NULL);
        errno = ENOENT;
        return -1;
    }
    return (cio__sys_default.epoll_ctl)(epfd, op, fd, ev);
}

static void test_epoll_readiness_faults(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    snapshot before = snap();
    int p[2];
    assert_int_equal(pipe(p), 0);
    pipe_ctx c;
    /* EAGAIN from the first attempt: wait, then the data */
    assert_true(cio__fault_errno("preadv2@nowait_read", EAGAIN, 0, 2) == 1);
    assert_ok(pipe_read_after(io, p, &c));
    assert_int_equal(c.n, 11);
    assert_memory_equal(c.buf, "hello, pipe", 11);
    covered("preadv2@nowait_read", "EAGAIN-then-readiness");
    cio__fault_reset();
    /* short reads: 3 bytes per call */
    assert_true(cio__fault_short("preadv2@nowait_read", 3, 0, -1) == 1);
    assert_ok(pipe_read_after(io, p, &c));
    assert_int_equal(c.n, 3);
    assert_memory_equal(c.buf, "hel", 3);
    unsigned char rest[16];
    size_t n = 0;
    cio__fault_reset();
    assert_ok(cio_file_read_streaming(io, (cio_file){p[0]}, rest, sizeof rest, &n));
    assert_int_equal(n, 8);
    assert_memory_equal(rest, "lo, pipe", 8);
    print_message("fault-covered: preadv2@nowait_read short-pipe\n");
    /* no memory to register the wait: the read says so, nothing is lost */
    assert_true(cio__fault_errno("epoll_ctl@epoll_arm", ENOMEM, 0, 1) == 1);
    assert_err(pipe_read_after(io, p, &c), CIO_E_SYSTEM_RESOURCES);
    covered("epoll_ctl@epoll_arm", "ENOMEM");
    cio__fault_reset();
    n = 0;
    assert_ok(cio_file_read_streaming(io, (cio_file){p[0]}, rest, sizeof rest, &n));
    assert_int_equal(n, 11);
    /* the registration's re-arm finding the descriptor gone (ENOENT: closed and reused) adds it again.
     * A hand-written override, not the injector: ENOENT is a MOD's answer only, and the descriptor
     * must really be out of the set (an ADD failing ENOENT, which no kernel says, is a bug to cio) */
    atomic_store(&mod_gone, 0);
    cio__sys_set(epoll_ctl__epoll_arm, epoll_mod_gone);
    for (int round = 0; round < 20 && atomic_load(&mod_gone) == 0; round++) {
        assert_ok(pipe_read_after(io, p, &c));
        assert_int_equal(c.n, 11);
    }
    cio__sys_reset();
    if (atomic_load(&mod_gone) == 0)
        fail_msg("epoll_ctl@epoll_arm: no re-arm (EPOLL_CTL_MOD) in 20 reads");
    print_message("fault-covered: epoll_ctl@epoll_arm ENOENT\n");
    cio__fault_reset();
    /* RWF_NOWAIT writes to a pipe: short ones complete with write_all; EAGAIN waits */
    assert_true(cio__fault_short("pwritev2@nowait_write", 4, 0, -1) == 1);
    assert_ok(cio_file_write_all(io, (cio_file){p[1]}, "abcdefghij", 10));
    covered("pwritev2@nowait_write", "short-pipe");
    cio__fault_reset();
    assert_true(cio__fault_errno("pwritev2@nowait_write", EAGAIN, 0, 1) == 1);
    assert_ok(cio_file_write_all(io, (cio_file){p[1]}, "klm", 3));
    covered("pwritev2@nowait_write", "EAGAIN-then-readiness");
    cio__fault_reset();
    n = 0;
    assert_ok(cio_file_read_streaming(io, (cio_file){p[0]}, rest, sizeof rest, &n));
    assert_int_equal(n, 13);
    assert_memory_equal(rest, "abcdefghijklm", 13);
    close(p[0]);
    close(p[1]);
    same_fds(before, "epoll readiness");
}

/* Whether an empty pipe says EAGAIN to a RWF_NOWAIT read (qemu-user says EOPNOTSUPP: the epoll
 * flavour's pipe reads then block on the helper pool, and no readiness wait is ever made). */
static bool nowait_pipe_reads(void)
{
    int p[2];
    if (pipe(p) != 0)
        return false;
    char b;
    struct iovec v = {&b, 1};
    ssize_t n = preadv2(p[0], &v, 1, -1, RWF_NOWAIT);
    bool ok = n < 0 && errno == EAGAIN;
    close(p[0]);
    close(p[1]);
    return ok;
}

#define REQUIRE_NOWAIT_PIPES()                                                                           \
    do {                                                                                                 \
        if (!nowait_pipe_reads())                                                                        \
            CIO_SKIP("RWF_NOWAIT pipe reads are refused here (qemu-user): the epoll flavour's pipe reads " \
                     "go to the helper pool, no readiness wait to fail");                                \
    } while (0)

/* Two fibers of one loop wait on one descriptor: the second registers a duplicate (EEXIST). No
 * memory for that registration: the second read says so, its duplicate is closed, the first read
 * gets the data. */
static void test_epoll_arm_dup_fails(void **state)
{
    (void)state;
    REQUIRE_NOWAIT_PIPES();
    cio__fault_reset();
    snapshot before = snap();
    cio_evented *e;
    assert_ok(make(CIO_EVENTED_EPOLL, 1, &e));
    cio_io io = cio_evented_io(e);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pipe_ctx c1, c2;
    memset(&c1, 0, sizeof c1);
    memset(&c2, 0, sizeof c2);
    c1.io = c2.io = io;
    c1.fd = c2.fd = p[0];
    pipe_ctx *cp1 = &c1, *cp2 = &c2;
    assert_true(cio__fault_errno("epoll_ctl@epoll_arm_dup", ENOMEM, 0, 1) == 1);
    cio_future f1, f2;
    assert_ok(cio_concurrent(io, pipe_reader, &cp1, sizeof cp1, &f1));
    pause_ms(20); /* the first reader is registered */
    assert_ok(cio_concurrent(io, pipe_reader, &cp2, sizeof cp2, &f2));
    assert_err(cio_await(io, &f2), CIO_E_SYSTEM_RESOURCES);
    unsigned injected = cio__fault_injected("epoll_ctl@epoll_arm_dup");
    cio__fault_reset();
    assert_int_equal(write(p[1], "dup", 3), 3);
    assert_ok(cio_await(io, &f1));
    assert_int_equal(c1.n, 3);
    assert_memory_equal(c1.buf, "dup", 3);
    assert_int_equal(injected, 1u);
    print_message("fault-covered: epoll_ctl@epoll_arm_dup ENOMEM\n");
    /* again with the duplicate registered: deleting it when its wait completes fails (ignored; the
     * duplicate descriptor is closed all the same), both readers get their bytes */
    assert_true(cio__fault_errno("epoll_ctl@epoll_deregister", ENOENT, 0, -1) == 1);
    c1.n = c2.n = 0;
    assert_ok(cio_concurrent(io, pipe_reader, &cp1, sizeof cp1, &f1));
    pause_ms(20);
    assert_ok(cio_concurrent(io, pipe_reader, &cp2, sizeof cp2, &f2));
    pause_ms(20);
    assert_int_equal(write(p[1], "a", 1), 1);
    pause_ms(20);
    assert_int_equal(write(p[1], "b", 1), 1);
    assert_ok(cio_await(io, &f1));
    assert_ok(cio_await(io, &f2));
    assert_int_equal(c1.n + c2.n, 2);
    covered("epoll_ctl@epoll_deregister", "ENOENT");
    cio__fault_reset();
    close(p[0]);
    close(p[1]);
    cio_evented_destroy(e);
    same_as(before, "epoll_ctl@epoll_arm_dup");
}

/* The loop's eventfd drain fails a few times (the count stays): the poller reports the eventfd
 * again and the next drain takes it; cross-thread wake-ups (helper-pool completions) still arrive. */
static cio_err stat_many(void *p)
{
    cio_io io = *(cio_io *)p;
    for (int i = 0; i < 20; i++) {
        cio_stat st;
        cio_err err = cio_dir_stat_file(io, cio_dir_cwd(), "/tmp", 0, &st);
        if (err != CIO_OK)
            return err;
    }
    return CIO_OK;
}

static void test_wake_drain_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    assert_true(cio__fault_errno("read@wake_drain", EINTR, 0, 3) == 1);
    for (int round = 0; round < 100 && cio__fault_injected("read@wake_drain") < 3; round++) {
        cio_future f;
        assert_ok(cio_concurrent(io, stat_many, &io, sizeof io, &f));
        assert_ok(cio_await(io, &f));
    }
    unsigned injected = cio__fault_injected("read@wake_drain");
    cio__fault_reset();
    assert_int_equal(injected, 3u);
    print_message("fault-covered: read@wake_drain EINTR\n");
}

/* ---- adopted threads: adoption fails, the thread works as a foreign thread ----------------------------------- */

/* A thread of the test's own (not a loop thread): its first wait through the instance would make it
 * a fiber of the instance (sched.c adopt). With adoption failing it takes the foreign-thread path
 * (its operations run as fibers on a loop thread): a sleep and a pipe round trip still work. No
 * cmocka assertion runs on that thread: it records what it saw and the test thread checks. */
typedef struct foreign_ctx {
    cio_io io;
    cio_err sleep_err, write_err, read_err;
    unsigned char buf[32];
    size_t n;
} foreign_ctx;

static void *foreign_thread(void *p)
{
    foreign_ctx *c = (foreign_ctx *)p;
    c->sleep_err = cio_sleep(c->io, cio_timeout_ms(2));
    int fds[2];
    if (pipe(fds) != 0) {
        c->write_err = CIO_E_UNEXPECTED;
        return NULL;
    }
    c->write_err = cio_file_write_all(c->io, (cio_file){fds[1]}, "foreign", 7);
    c->read_err = cio_file_read_streaming(c->io, (cio_file){fds[0]}, c->buf, sizeof c->buf, &c->n);
    close(fds[0]);
    close(fds[1]);
    return NULL;
}

static void run_foreign(cio_io io)
{
    foreign_ctx c;
    memset(&c, 0, sizeof c);
    c.io = io;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, foreign_thread, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_ok(c.sleep_err);
    assert_ok(c.write_err);
    assert_ok(c.read_err);
    assert_int_equal(c.n, 7);
    assert_memory_equal(c.buf, "foreign", 7);
}

/* The flavours to make fresh instances of (io_uring where this process may start one). */
static size_t fresh_flavours(cio_evented_flavour out[2])
{
    size_t n = 0;
    out[n++] = CIO_EVENTED_EPOLL;
    if (uring_here() && !cio_test_under_valgrind())
        out[n++] = CIO_EVENTED_IO_URING;
    return n;
}

static void test_adopt_fails(void **state)
{
    (void)state;
    static const char *const sites[] = {"calloc@adopt_loop", "calloc@adopt_fiber"};
    cio_evented_flavour fl[2];
    size_t nfl = fresh_flavours(fl);
    for (size_t k = 0; k < nfl; k++)
        for (size_t i = 0; i < 2; i++) {
            cio__fault_reset();
            snapshot before = snap();
            cio_evented *e;
            assert_ok(make(fl[k], 2, &e));
            assert_true(cio__fault_errno(sites[i], ENOMEM, 0, -1) == 1);
            run_foreign(cio_evented_io(e));
            covered(sites[i], "ENOMEM");
            cio__fault_reset();
            /* and a thread that can be adopted works too */
            run_foreign(cio_evented_io(e));
            cio_evented_destroy(e);
            same_as(before, sites[i]);
        }
}

/* The adopted thread's scheduler stack cannot get its guard (no guard region, no PROT_NONE page):
 * the stack is unmapped again (stack_alloc_undo; that munmap failing is ignored) and the thread
 * works as a foreign thread. */
static void test_adopt_stack_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = snap();
    cio_evented *e;
    assert_ok(make(CIO_EVENTED_EPOLL, 2, &e));
    assert_true(cio__fault_errno("madvise@stack_guard", EINVAL, 0, -1) == 1);
    assert_true(cio__fault_errno("mprotect@stack_guard", ENOMEM, 0, 1) == 1);
    assert_true(cio__fault_errno("munmap@stack_alloc_undo", EINVAL, 0, 1) == 1);
    run_foreign(cio_evented_io(e));
    unsigned undo = cio__fault_injected("munmap@stack_alloc_undo");
    unsigned guard = cio__fault_injected("mprotect@stack_guard");
    cio__fault_reset();
    assert_int_equal(guard, 1u);
    assert_int_equal(undo, 1u);
    print_message("fault-covered: munmap@stack_alloc_undo EINVAL\n");
    cio_evented_destroy(e);
    same_as(before, "munmap@stack_alloc_undo");
}

/* ---- the stack pool: trimming its cache, the last slab's rest ------------------------------------------------- */

#define TRIM_FIBERS 2600 /* past 2 x 1024 cached in the pool, plus the loop's own 256 */

/* Every fiber waits at a gate until all of them run, then sleeps 1 ms: all stacks are in use at once
 * and go back to the pool together. */
typedef struct gate_ctx {
    cio_io io;
    _Atomic(uint32_t) *gate;
} gate_ctx;

static cio_err gated_sleep(void *p)
{
    gate_ctx *c = (gate_ctx *)p;
    while (atomic_load(c->gate) == 0) {
        cio_err err = cio_futex_wait(c->io, c->gate, 0, CIO_TIMEOUT_NONE);
        if (err != CIO_OK)
            return err;
    }
    return cio_sleep(c->io, cio_timeout_ms(1));
}

static void many_fibers(cio_io io, int n)
{
    static _Atomic(uint32_t) gate;
    atomic_store(&gate, 0);
    gate_ctx c = {io, &gate};
    cio_group g = CIO_GROUP_INIT;
    for (int i = 0; i < n; i++)
        assert_ok(cio_group_concurrent(io, &g, gated_sleep, &c, sizeof c));
    atomic_store(&gate, 1);
    cio_futex_wake(io, &gate, UINT32_MAX);
    assert_ok(cio_group_await(io, &g));
}

static void test_stack_trim_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = snap();
    cio_evented *e;
    assert_ok(make(CIO_EVENTED_EPOLL, 1, &e));
    cio_io io = cio_evented_io(e);
    assert_true(cio__fault_errno("munmap@stack_trim", EINVAL, 0, -1) == 1);
    many_fibers(io, TRIM_FIBERS);
    /* the pool's keeper thread unmaps trimmed stacks: give it a moment */
    unsigned injected = 0;
    for (int i = 0; i < 500 && (injected = cio__fault_injected("munmap@stack_trim")) == 0; i++)
        pause_ms(10);
    cio__fault_reset();
    if (injected == 0)
        fail_msg("munmap@stack_trim: %d fibers at once did not make the pool trim its cache", TRIM_FIBERS);
    print_message("fault-covered: munmap@stack_trim EINVAL\n");
    /* the stacks were unmapped all the same (after: true); fibers still work */
    many_fibers(io, 50);
    workload(io);
    cio_evented_destroy(e);
    same_as(before, "munmap@stack_trim");
}

static void test_slab_left_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = snap();
    cio_evented *e;
    assert_ok(make(CIO_EVENTED_EPOLL, 1, &e));
    /* one fiber at a time: the first slab (4 stacks) keeps an unused rest */
    for (int i = 0; i < 3; i++)
        assert_ok(concurrent_sum(cio_evented_io(e)));
    assert_true(cio__fault_errno("munmap@slab_left", EINVAL, 0, -1) == 1);
    cio_evented_destroy(e);
    unsigned injected = cio__fault_injected("munmap@slab_left");
    cio__fault_reset();
    assert_true(injected > 0);
    same_as(before, "munmap@slab_left");
    print_message("fault-covered: munmap@slab_left EINVAL\n");
}

/* ---- the stack pool's keeper: its thread, its vectored madvise ------------------------------------------------ */

#define KEEPER_STACKS 400 /* past the slabs of 4 .. 64 a pool maps itself (124 stacks): the keeper starts */

/* Whether the guard page right below s holds: the kernel cannot write into it. (Not asked under
 * valgrind, where memcheck would report the write into a PROT_NONE page as an error of its own.) */
static bool guarded(const cio__stack *s)
{
    if (cio_test_under_valgrind())
        return true;
    return syscall(SYS_getrandom, s->map, 1, 1 /* GRND_NONBLOCK */) == -1 && errno == EFAULT;
}

/* Takes n stacks from p (all distinct, each guarded, its top writable), then gives them back. */
static void pool_round(cio__stack_pool *p, size_t n)
{
    cio__stack *v = (cio__stack *)calloc(n, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        assert_ok(cio__stack_pool_get(p, &v[i]));
        if (!guarded(&v[i]))
            fail_msg("stack %zu of %zu: no guard below it", i, n);
        ((volatile char *)v[i].lo)[v[i].size - 1] = 1;
        if (i > 0 && v[i].map == v[i - 1].map)
            fail_msg("stack %zu handed out twice", i);
    }
    for (size_t i = 0; i < n; i++)
        cio__stack_pool_put(p, &v[i]);
    free(v);
}

/* No thread for the keeper: the pool maps and guards its slabs itself, and asks only once. */
static void test_stack_keeper_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = snap();
    cio__stack_pool p;
    cio__stack_pool_init(&p, 64 * 1024, 64);
    assert_true(cio__fault_errno("pthread_create@stack_keeper", EAGAIN, 0, -1) == 1);
    pool_round(&p, KEEPER_STACKS);
    pool_round(&p, KEEPER_STACKS);
    unsigned injected = cio__fault_injected("pthread_create@stack_keeper");
    cio__fault_reset();
    assert_int_equal(injected, 1u);
    assert_int_equal(p.prepared, 0u);
    cio__stack_pool_destroy(&p);
    same_as(before, "pthread_create@stack_keeper");
    print_message("fault-covered: pthread_create@stack_keeper EAGAIN\n");
}

/* The vectored madvise failing (ENOMEM: for that slab only) while the keeper and the pool prepare
 * slabs: guards are installed and top pages committed one stack at a time, and every stack is
 * guarded. Where the vectored call is never made (no guard regions; a kernel or valgrind that refused
 * it once) this is a skip. */
static void test_stack_slab_fails(void **state)
{
    (void)state;
    cio__fault_reset();
    snapshot before = snap();
    cio__stack_pool p;
    cio__stack_pool_init(&p, 64 * 1024, 64);
    assert_true(cio__fault_errno("process_madvise@stack_slab", ENOMEM, 0, -1) == 1);
    pool_round(&p, KEEPER_STACKS);
    for (int i = 0; i < 500; i++) { /* the keeper's slabs */
        pthread_mutex_lock(&p.lock);
        size_t prepared = p.prepared;
        pthread_mutex_unlock(&p.lock);
        if (prepared > 0)
            break;
        pause_ms(10);
    }
    pool_round(&p, KEEPER_STACKS);
    unsigned injected = cio__fault_injected("process_madvise@stack_slab");
    cio__fault_reset();
    pthread_mutex_lock(&p.lock);
    size_t prepared = p.prepared;
    pthread_mutex_unlock(&p.lock);
    pool_round(&p, KEEPER_STACKS); /* and with the vectored call back */
    cio__stack_pool_destroy(&p);
    same_as(before, "process_madvise@stack_slab");
    if (prepared == 0)
        fail_msg("the keeper prepared no slab");
    if (injected == 0)
        CIO_SKIP("no vectored madvise here (no guard regions, or process_madvise refused once: an older "
                 "kernel, valgrind): slabs are guarded stack by stack");
    print_message("fault-covered: process_madvise@stack_slab ENOMEM\n");
}

/* ---- the guard-region probe (once per process: each case in a fresh process) ------------------------------- */

typedef struct probe_case {
    const char *site;
    int err;
    const char *name;
} probe_case;

static const probe_case probe_cases[] = {
    {"mmap@guard_probe", ENOMEM, "ENOMEM"},
    {"madvise@guard_probe", EINVAL, "EINVAL"},
    {"getrandom@guard_probe", EAGAIN, "EAGAIN"}, /* not EFAULT: the probe decides there is no guard */
    {"munmap@guard_probe", EINVAL, "EINVAL"},
};

#define PROBE_ARG "--guard-probe-case"
#define PROBE_NOT_REACHED 3

/* In the child (a fresh process image, so the probe has not run): the fault armed, an instance, a
 * fiber and its data, the covered line. Exit 0: covered; PROBE_NOT_REACHED: the probe never made
 * that call here (no guard regions: getrandom is not reached); anything else: a failure (said why). */
static int probe_child(const char *which)
{
    const probe_case *c = NULL;
    for (size_t i = 0; i < sizeof probe_cases / sizeof probe_cases[0]; i++)
        if (strcmp(probe_cases[i].site, which) == 0)
            c = &probe_cases[i];
    if (c == NULL) {
        fprintf(stderr, "guard probe child: no case %s\n", which);
        return 1;
    }
    if (cio__fault_errno(c->site, c->err, 0, -1) != 1) {
        fprintf(stderr, "guard probe child: %s is not a site\n", c->site);
        return 1;
    }
    cio_evented *e;
    cio_err err = make(CIO_EVENTED_EPOLL, 1, &e);
    if (err != CIO_OK) {
        fprintf(stderr, "guard probe child: create: %s\n", cio_err_name(err));
        return 1;
    }
    cio_io io = cio_evented_io(e);
    int out = 0;
    sum_ctx s;
    memset(&s, 0, sizeof s);
    s.a = 2;
    s.b = 3;
    s.out = &out;
    cio_future f;
    err = cio_concurrent(io, sum_task, &s, sizeof s, &f);
    if (err == CIO_OK)
        err = cio_await(io, &f);
    if (err == CIO_OK)
        err = cio_sleep(io, cio_timeout_ms(1));
    unsigned injected = cio__fault_injected(c->site);
    cio__fault_reset();
    cio_evented_destroy(e);
    if (err != CIO_OK || out != 5) {
        fprintf(stderr, "guard probe child: %s %s: a fiber failed: %s (out %d)\n", c->site, c->name,
                cio_err_name(err), out);
        return 1;
    }
    if (injected == 0) {
        printf("      not here: %s (the probe never made that call in this process)\n", c->site);
        fflush(stdout);
        return PROBE_NOT_REACHED;
    }
    printf("fault-covered: %s %s\n", c->site, c->name);
    fflush(stdout);
    return 0;
}

static void test_guard_probe_fails(void **state)
{
    (void)state;
    /* the program's path (under valgrind readlink names the program, not the tool: the child then
     * runs natively) */
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0 || (size_t)len >= sizeof self - 1)
        CIO_SKIP("the test program's own path is unknown (/proc/self/exe): no fresh process for the probe");
    self[len] = '\0';
    for (size_t i = 0; i < sizeof probe_cases / sizeof probe_cases[0]; i++) {
        const probe_case *c = &probe_cases[i];
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl(self, self, PROBE_ARG, c->site, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status))
            fail_msg("%s: the child died (status %#x)", c->site, (unsigned)status);
        int code = WEXITSTATUS(status);
        if (code == 127)
            CIO_SKIP("the test program cannot run itself again: no fresh process for the probe");
        if (code == PROBE_NOT_REACHED)
            continue;
        if (code != 0)
            fail_msg("%s %s: the child exited with %d", c->site, c->name, code);
    }
}

/* ---- cross-thread wake-ups: the eventfd counter already set ------------------------------------------------ */

/* The wake-up write lands, then says EAGAIN, which is what a saturated eventfd counter reports (a
 * wake-up is already pending): the loop must wake all the same. (An injected failure would skip the
 * write: a lost wake-up no kernel produces.) */
static _Atomic(unsigned) wake_writes;

static ssize_t write_then_eagain(int fd, const void *buf, size_t n)
{
    ssize_t r = (cio__sys_default.write)(fd, buf, n);
    (void)r;
    atomic_fetch_add(&wake_writes, 1);
    errno = EAGAIN;
    return -1;
}

static void test_wake_saturated(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    const char *site = fx_backend_of(state) == FX_URING ? "write@uring_wake" : "write@epoll_wake";
    atomic_store(&wake_writes, 0);
    cio__sys_set(write__epoll_wake, write_then_eagain);
    cio__sys_set(write__uring_wake, write_then_eagain);
    /* helper-pool completions and the task's completion wake loops from other threads */
    for (int round = 0; round < 20; round++) {
        cio_future f;
        assert_ok(cio_concurrent(io, stat_many, &io, sizeof io, &f));
        assert_ok(cio_await(io, &f));
    }
    /* the test thread (its own adopted loop) wakes a fiber's futex wait on a loop thread */
    static _Atomic(uint32_t) gate;
    atomic_store(&gate, 0);
    gate_ctx c = {io, &gate};
    cio_future f;
    assert_ok(cio_concurrent(io, gated_sleep, &c, sizeof c, &f));
    pause_ms(10);
    atomic_store(&gate, 1);
    cio_futex_wake(io, &gate, UINT32_MAX);
    assert_ok(cio_await(io, &f));
    unsigned n = atomic_load(&wake_writes);
    cio__sys_reset();
    if (n == 0)
        fail_msg("%s: no cross-thread wake-up went through the eventfd", site);
    print_message("fault-covered: %s EAGAIN-after-write\n", site);
}

/* ---- io_uring: the completion ring mapped on its own -------------------------------------------------------- */

/* The real setup, with IORING_FEAT_SINGLE_MMAP hidden (a kernel before 5.4): ur_init then maps the
 * completion ring separately (mmap@ring_cq). */
static int setup_no_single_mmap(unsigned int entries, struct io_uring_params *p)
{
    int fd = (cio__sys_default.io_uring_setup)(entries, p);
    if (fd >= 0)
        p->features &= ~(unsigned)IORING_FEAT_SINGLE_MMAP;
    return fd;
}

static void test_ring_cq_separate(void **state)
{
    (void)state;
    if (!uring_here())
        CIO_SKIP("io_uring_setup is refused on this machine: no ring to map");
    if (cio_test_under_valgrind())
        CIO_SKIP("under valgrind no io_uring loop may start");
    cio__fault_reset();
    snapshot before = snap();
    cio__sys_set(io_uring_setup__ring_setup, setup_no_single_mmap);
    assert_true(cio__fault_watch("mmap@ring_cq") == 1);
    cio_evented *e;
    assert_ok(make(CIO_EVENTED_IO_URING, 2, &e));
    assert_true(cio__fault_hits("mmap@ring_cq") >= 1);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pipe_ctx c;
    assert_ok(pipe_read_after(cio_evented_io(e), p, &c));
    assert_int_equal(c.n, 11);
    assert_memory_equal(c.buf, "hello, pipe", 11);
    close(p[0]);
    close(p[1]);
    workload(cio_evented_io(e));
    cio_evented_destroy(e);
    same_as(before, "io_uring without IORING_FEAT_SINGLE_MMAP");
    /* the separate mapping fails: a forced io_uring says so, auto is epoll */
    cio__fault_reset();
    cio__sys_set(io_uring_setup__ring_setup, setup_no_single_mmap);
    assert_true(cio__fault_errno("mmap@ring_cq", ENOMEM, 0, -1) == 1);
    assert_err(make(CIO_EVENTED_IO_URING, 2, &e), CIO_E_SYSTEM_RESOURCES);
    assert_null(e);
    covered("mmap@ring_cq", "ENOMEM");
    same_as(before, "mmap@ring_cq");
    assert_ok(make(CIO_EVENTED_AUTO, 2, &e));
    assert_int_equal(cio_evented_flavour_of(e), CIO_EVENTED_EPOLL);
    cio__fault_reset();
    workload(cio_evented_io(e));
    cio_evented_destroy(e);
    same_as(before, "mmap@ring_cq (auto)");
}

/* Per flavour: the io_uring cases skip on epoll and the other way round. */
static void only_uring(void **state, void (*fn)(void **))
{
    (void)cio_test_io(state);
    if (fx_backend_of(state) != FX_URING)
        CIO_SKIP("an io_uring poller site (the epoll flavour makes no such call)");
    fn(state);
}

static void only_epoll(void **state, void (*fn)(void **))
{
    (void)cio_test_io(state);
    if (fx_backend_of(state) != FX_EPOLL)
        CIO_SKIP("an epoll poller site (the io_uring flavour makes no such call)");
    fn(state);
}

static void test_uring_enter(void **state)
{
    only_uring(state, test_ring_enter_interrupted);
}

static void test_epoll_wait(void **state)
{
    only_epoll(state, test_epoll_wait_interrupted);
}

static void test_epoll_readiness(void **state)
{
    REQUIRE_NOWAIT_PIPES();
    only_epoll(state, test_epoll_readiness_faults);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], PROBE_ARG) == 0)
        return probe_child(argv[2]);
    unsetenv("CIO_EVENTED_BACKEND"); /* the automatic flavour is under test */
    /* one instance made and gone first: a runtime's own lazily started threads (ThreadSanitizer's
     * background thread) are then in every "before" count */
    cio_evented *warm = NULL;
    if (make(CIO_EVENTED_EPOLL, 1, &warm) == CIO_OK)
        cio_evented_destroy(warm);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uring_setup_refused),
        cmocka_unit_test(test_uring_init_fails),
        cmocka_unit_test(test_create_fails),
        cmocka_unit_test(test_epoll_arm_dup_fails),
        cmocka_unit_test(test_adopt_fails),
        cmocka_unit_test(test_adopt_stack_fails),
        cmocka_unit_test(test_stack_trim_fails),
        cmocka_unit_test(test_slab_left_fails),
        cmocka_unit_test(test_stack_keeper_fails),
        cmocka_unit_test(test_stack_slab_fails),
        cmocka_unit_test(test_guard_probe_fails),
        cmocka_unit_test(test_ring_cq_separate),
        cmocka_unit_test(test_stack_free_fails) CIO_TESTS_EVENTED(test_fiber_stack_fails)
            CIO_TESTS_EVENTED(test_fiber_block_fails) CIO_TESTS_EVENTED(test_uring_enter)
                CIO_TESTS_EVENTED(test_epoll_wait) CIO_TESTS_EVENTED(test_epoll_readiness)
                    CIO_TESTS_EVENTED(test_wake_drain_fails) CIO_TESTS_EVENTED(test_wake_saturated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
