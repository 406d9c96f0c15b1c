/*
 * Fault injection at the Evented backend's own call sites (spec/oscalls.yaml, src/evented/), the
 * pollers: their waits (io_uring_enter, epoll_pwait2/epoll_wait interrupted or busy, epoll_ctl and
 * the registration table, duplicate registrations), the eventfd drain, the epoll flavour's
 * RWF_NOWAIT attempts on a pipe; through hand-written overrides, a saturated wake-up eventfd and a
 * ring without IORING_FEAT_SINGLE_MMAP. Creating and destroying an instance and the sockets are
 * tests/test_faults_evented.c; fibers, stacks, adoption, timers and the clock are
 * tests/test_faults_evented_fibers.c.
 *
 * Every case checks the exact error, the data, and that the process has as many descriptors and
 * threads afterwards as before (heap blocks: LeakSanitizer and valgrind). Under valgrind no io_uring
 * loop is started (tests/backends.h says why): the io_uring cases that would start one are left
 * out, saying so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults_evented.h"

#include <linux/io_uring.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "uring.h"

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

/* Whether this kernel has epoll_pwait2 (asked directly, not through the call table). */
static bool have_epoll_pwait2(void)
{
    int fd = epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0)
        return false;
    struct epoll_event ev;
    struct timespec zero = {0, 0};
    bool have = epoll_pwait2(fd, &ev, 1, &zero, NULL) >= 0 || errno != ENOSYS;
    close(fd);
    return have;
}

/* `site` interrupted 50 times (EINTR, armed with whatever else the caller armed): the loop waits
 * again, sleeps and readiness waits still end, no descriptor is left behind. */
static void poller_interrupted(cio_io io, snapshot before, const char *site)
{
    assert_true(cio__fault_errno(site, EINTR, 0, 50) == 1);
    for (int round = 0; round < 200 && cio__fault_injected(site) < 50; round++)
        workload(io);
    unsigned injected = cio__fault_injected(site);
    cio__fault_reset();
    assert_int_equal(injected, 50u);
    same_fds(before, site);
    print_message("fault-covered: %s EINTR\n", site);
}

static void test_epoll_pwait2_interrupted(void **state)
{
    cio_io io = cio_test_io(state);
    if (!have_epoll_pwait2())
        CIO_SKIP("no epoll_pwait2 here (kernel before 5.11, or qemu-user): the loops use epoll_wait");
    cio__fault_reset();
    poller_interrupted(io, settled(), "epoll_pwait2@epoll_wait_ns");
}

/* A kernel without epoll_pwait2 (ENOSYS, injected): every loop falls back to epoll_wait, which is
 * then interrupted 50 times. */
static void test_epoll_wait_interrupted(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    snapshot before = settled();
    assert_true(cio__fault_errno("epoll_pwait2@epoll_wait_ns", ENOSYS, 0, -1) == 1);
    poller_interrupted(io, before, "epoll_wait@epoll_wait");
    print_message("fault-covered: epoll_pwait2@epoll_wait_ns ENOSYS\n");
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
    snapshot before = settled();
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

#define REQUIRE_NOWAIT_PIPES()                                                                             \
    do {                                                                                                   \
        if (!nowait_pipe_reads())                                                                          \
            CIO_SKIP("RWF_NOWAIT pipe reads are refused here (qemu-user): the epoll flavour's pipe reads " \
                     "go to the helper pool, no readiness wait to fail");                                  \
    } while (0)

/* A fresh one-loop epoll instance and a pipe, for the readiness cases (skipped where a pipe's
 * RWF_NOWAIT read makes no readiness wait). */
typedef struct pipe_fx {
    snapshot before;
    cio_evented *e;
    cio_io io;
    int p[2];
} pipe_fx;

static void pipe_fx_open(pipe_fx *x)
{
    REQUIRE_NOWAIT_PIPES();
    x->e = fresh(CIO_EVENTED_EPOLL, 1, &x->before);
    x->io = cio_evented_io(x->e);
    assert_int_equal(pipe(x->p), 0);
}

/* The faults cleared, the pipe closed, the instance gone: the process as before. */
static void pipe_fx_close(pipe_fx *x, const char *what)
{
    cio__fault_reset();
    close(x->p[0]);
    close(x->p[1]);
    cio_evented_destroy(x->e);
    same_as(x->before, what);
}

/* Two fibers of one loop wait on one descriptor: the second registers a duplicate (EEXIST). */
static void two_readers(cio_io io, int fd, pipe_ctx c[2], pipe_ctx *cp[2], cio_future f[2])
{
    for (int i = 0; i < 2; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].io = io;
        c[i].fd = fd;
        cp[i] = &c[i];
        assert_ok(cio_concurrent(io, pipe_reader, &cp[i], sizeof cp[i], &f[i]));
        pause_ms(20); /* the reader is registered */
    }
}

/* No duplicate descriptor (EMFILE) or no memory for its registration (whose undo close fails,
 * ignored): the second read says SystemResources (a read has no ProcessFdQuotaExceeded), the first
 * read gets the data. */
static void dup_refused(pipe_fx *x, const char *site, int err, cio_err want)
{
    pipe_ctx c[2], *cp[2];
    cio_future f[2];
    assert_true(cio__fault_errno(site, err, 0, 1) == 1);
    two_readers(x->io, x->p[0], c, cp, f);
    assert_err(cio_await(x->io, &f[1]), want);
    covered(site, err == EMFILE ? "EMFILE" : "ENOMEM");
    assert_int_equal(write(x->p[1], "dup", 3), 3);
    assert_ok(cio_await(x->io, &f[0]));
    assert_int_equal(c[0].n, 3);
    assert_memory_equal(c[0].buf, "dup", 3);
}

static void test_epoll_arm_dup_fails(void **state)
{
    (void)state;
    pipe_fx x;
    pipe_fx_open(&x);
    dup_refused(&x, "fcntl@epoll_arm_dup", EMFILE, CIO_E_SYSTEM_RESOURCES);
    cio__fault_reset();
    assert_true(cio__fault_errno("close@epoll_arm_dup", EINTR, 0, -1) == 1);
    dup_refused(&x, "epoll_ctl@epoll_arm_dup", ENOMEM, CIO_E_SYSTEM_RESOURCES);
    covered("close@epoll_arm_dup", "EINTR");
    cio__fault_reset();
    /* again with the duplicate registered: deleting it when its wait completes fails, and so does
     * closing it (both ignored; the duplicate descriptor is gone all the same), both readers get
     * their bytes */
    assert_true(cio__fault_errno("epoll_ctl@epoll_deregister", ENOENT, 0, -1) == 1);
    assert_true(cio__fault_errno("close@epoll_deregister", EINTR, 0, -1) == 1);
    pipe_ctx c[2], *cp[2];
    cio_future f[2];
    two_readers(x.io, x.p[0], c, cp, f);
    assert_int_equal(write(x.p[1], "a", 1), 1);
    pause_ms(20);
    assert_int_equal(write(x.p[1], "b", 1), 1);
    assert_ok(cio_await(x.io, &f[0]));
    assert_ok(cio_await(x.io, &f[1]));
    assert_int_equal(c[0].n + c[1].n, 2);
    covered("epoll_ctl@epoll_deregister", "ENOENT");
    covered("close@epoll_deregister", "EINTR");
    pipe_fx_close(&x, "epoll_ctl@epoll_arm_dup");
}

/* A fresh loop has no registration table yet: growing it fails (ENOMEM), so a readiness wait says
 * SystemResources and nothing is lost; once it can grow, the same pipe reads. */
static void test_epoll_slots_fail(void **state)
{
    (void)state;
    pipe_fx x;
    pipe_fx_open(&x);
    cio_io io = x.io;
    int *p = x.p;
    pipe_ctx c;
    assert_true(cio__fault_errno("realloc@epoll_slots", ENOMEM, 0, -1) == 1);
    assert_err(pipe_read_after(io, p, &c), CIO_E_SYSTEM_RESOURCES);
    covered("realloc@epoll_slots", "ENOMEM");
    cio__fault_reset();
    assert_ok(pipe_read_after(io, p, &c)); /* the first write's bytes, then the second's */
    if (c.n < 22) {
        size_t n = 0;
        assert_ok(cio_file_read_streaming(io, (cio_file){p[0]}, c.buf + c.n, sizeof c.buf - c.n, &n));
        c.n += n;
    }
    assert_int_equal(c.n, 22);
    assert_memory_equal(c.buf, "hello, pipehello, pipe", 22);
    pipe_fx_close(&x, "realloc@epoll_slots");
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
    REQUIRE_URING_LOOPS("no ring to map");
    cio__fault_reset();
    snapshot before = settled();
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

static void test_epoll_pwait2(void **state)
{
    only_epoll(state, test_epoll_pwait2_interrupted);
}

static void test_epoll_readiness(void **state)
{
    REQUIRE_NOWAIT_PIPES();
    only_epoll(state, test_epoll_readiness_faults);
}

int main(void)
{
    evented_faults_warm_up();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epoll_arm_dup_fails),
        cmocka_unit_test(test_epoll_slots_fail),
        cmocka_unit_test(test_ring_cq_separate) CIO_TESTS_EVENTED(test_uring_enter) CIO_TESTS_EVENTED(test_epoll_wait)
            CIO_TESTS_EVENTED(test_epoll_pwait2) CIO_TESTS_EVENTED(test_epoll_readiness)
                CIO_TESTS_EVENTED(test_wake_drain_fails) CIO_TESTS_EVENTED(test_wake_saturated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
