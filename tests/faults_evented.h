/*
 * Shared by the Evented backend's own fault suites (tests/test_faults_evented.c: creating an
 * instance, the ring, the pollers, wake-ups, sockets; tests/test_faults_evented_fibers.c: fibers,
 * stacks, adoption, the once-per-process set-ups, timers and the clock): descriptor and thread
 * snapshots, fresh instances, a workload that touches files, fibers and timers, and the gate many
 * fibers wait at.
 *
 * Every case checks the exact error, the data, and that the process has as many descriptors and
 * threads afterwards as before (heap blocks: LeakSanitizer and valgrind).
 */
#ifndef CIO_TESTS_FAULTS_EVENTED_H
#define CIO_TESTS_FAULTS_EVENTED_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"

#include <pthread.h>
#include <sys/syscall.h>

#include "cio/sysnum.h"

typedef struct snapshot {
    int fds, threads;
} snapshot;

static inline snapshot snap(void)
{
    snapshot s = {fd_count(), thread_count()};
    return s;
}

/* Threads may take a moment to be gone from /proc after their join. Fewer threads than before is no
 * leak: a thread of an earlier test (a helper pool worker past its idle timeout) may end meanwhile
 * (2 vs 3 seen under qemu-aarch64 on a loaded machine). */
static inline void same_as(snapshot before, const char *what)
{
    snapshot now = snap();
    for (int i = 0; i < 200 && now.threads > before.threads; i++) {
        pause_ms(5);
        now = snap();
    }
    if (now.fds != before.fds || now.threads > before.threads)
        fail_msg("%s: %d descriptors and %d threads, %d and %d before", what, now.fds, now.threads, before.fds,
                 before.threads);
}

/* The snapshot once the thread count has settled: threads of an earlier test's instance (joined, or
 * retiring past their idle timeout) may still be listed in /proc for a moment after destroy. The
 * `before` of a case is taken only when the count has not changed for 50 ms (at most 2 s), so a
 * thread that ends during the case cannot make it look like a leak or hide one. */
static inline snapshot settled(void)
{
    snapshot s = snap();
    for (int stable = 0, i = 0; stable < 5 && i < 200; i++) {
        pause_ms(10);
        snapshot t = snap();
        stable = t.threads == s.threads ? stable + 1 : 0;
        s = t;
    }
    return s;
}

/* Inside a live instance: its helper pool's workers come and go (2 s idle timeout), so only the
 * descriptors are compared (the create cases compare threads once the instance is gone). */
static inline void same_fds(snapshot before, const char *what)
{
    int now = fd_count();
    if (now != before.fds)
        fail_msg("%s: %d descriptors, %d before", what, now, before.fds);
}

/* Whether this kernel lets this process set up a ring (asked without the table). */
static inline bool uring_here(void)
{
    unsigned char params[120]; /* struct io_uring_params */
    memset(params, 0, sizeof params);
    long fd = syscall(CIO_SYS_IO_URING_SETUP, 2, params);
    if (fd < 0)
        return false;
    close((int)fd);
    return true;
}

static inline cio_err make(cio_evented_flavour fl, unsigned threads, cio_evented **out)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.flavour = fl;
    o.threads = threads;
    *out = NULL;
    return cio_evented_create(&o, out);
}

/* A fresh instance for a case (which must be made): the faults cleared, then *before counted. */
static inline cio_evented *fresh(cio_evented_flavour fl, unsigned threads, snapshot *before)
{
    cio__fault_reset();
    *before = settled();
    cio_evented *e;
    assert_ok(make(fl, threads, &e));
    return e;
}

/* Destroys e with `site` failing (err, called `name` in the report) at every call: ignored (a
 * close's descriptor, a munmap's mapping is gone all the same), at least `want` faults, and the
 * process as it was before e (`before`). */
static inline void destroy_with_fault(cio_evented *e, snapshot before, const char *site, int err, const char *name,
                                      unsigned want)
{
    assert_true(cio__fault_errno(site, err, 0, -1) == 1);
    cio_evented_destroy(e);
    unsigned injected = cio__fault_injected(site);
    cio__fault_reset();
    if (injected < want)
        fail_msg("%s: %u faults at destroy, want %u at least", site, injected, want);
    same_as(before, site);
    print_message("fault-covered: %s %s\n", site, name);
}

/* Skips unless this process may start io_uring loops (`why`: what the case would need them for). */
#define REQUIRE_URING_LOOPS(why)                                         \
    do {                                                                 \
        if (!uring_here())                                               \
            CIO_SKIP("io_uring_setup is refused on this machine: " why); \
        if (cio_test_under_valgrind())                                   \
            CIO_SKIP("under valgrind no io_uring loop may start");       \
    } while (0)

/* The flavours to make fresh instances of (io_uring where this process may start one). */
static inline size_t fresh_flavours(cio_evented_flavour out[2])
{
    size_t n = 0;
    out[n++] = CIO_EVENTED_EPOLL;
    if (uring_here() && !cio_test_under_valgrind())
        out[n++] = CIO_EVENTED_IO_URING;
    return n;
}

/* Real work on an instance: a file written and read back, tasks on fibers, a sleep. */
static inline void workload(cio_io io)
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
    for (int i = 0; i < 4; i++)
        assert_ok(concurrent_sum(io));
    assert_ok(cio_sleep(io, cio_timeout_ms(2)));
}

/* Every fiber waits at a gate until all of them run, then sleeps 1 ms: all stacks are in use at once
 * and go back to the pool together. */
typedef struct gate_ctx {
    cio_io io;
    _Atomic(uint32_t) *gate;
} gate_ctx;

static inline cio_err gated_sleep(void *p)
{
    gate_ctx *c = (gate_ctx *)p;
    while (atomic_load(c->gate) == 0) {
        cio_err err = cio_futex_wait(c->io, c->gate, 0, CIO_TIMEOUT_NONE);
        if (err != CIO_OK)
            return err;
    }
    return cio_sleep(c->io, cio_timeout_ms(1));
}

/* Before the cases: the automatic flavour is under test, and one instance is made and gone first,
 * so a runtime's own lazily started threads (ThreadSanitizer's background thread) are in every
 * "before" count. */
static inline void evented_faults_warm_up(void)
{
    unsetenv("CIO_EVENTED_BACKEND");
    cio_evented *warm = NULL;
    if (make(CIO_EVENTED_EPOLL, 1, &warm) == CIO_OK)
        cio_evented_destroy(warm);
}

#endif
