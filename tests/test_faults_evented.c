/*
 * Fault injection at the Evented backend's own call sites (spec/oscalls.yaml, src/evented/), part one:
 * creating an instance (io_uring setup and its probe, the ring's mappings, epoll, the eventfd, the loop
 * threads, memory) and tearing it down again (the ring's unmaps, the pollers' closes), the sockets the
 * backend makes non-blocking (and epoll's pending registrations for them), the ring's socket(2)
 * fallback and its splice through a pipe; through hand-written overrides, a ring without
 * IORING_OP_SOCKET. The pollers' waits (io_uring_enter, epoll_wait/epoll_ctl, the registration table,
 * duplicate registrations), the eventfd drain and a saturated wake-up eventfd, and a ring without
 * IORING_FEAT_SINGLE_MMAP are tests/test_faults_evented_pollers.c; part two (fibers, stacks, adoption,
 * timers, the clock) is tests/test_faults_evented_fibers.c; the operations the Evented backend runs
 * through the Threaded slots are covered by tests/test_faults.c and test_faults_os.c, which run on
 * both flavours.
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
#include "faults_evented.h"

#include <linux/io_uring.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "uring.h"

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
 * first (1: the second loop's fails), the error create must return, and optionally a second fault
 * (every call) at a site of the undo path that follows (a close or munmap there: ignored). */
typedef struct create_case {
    const char *site;
    int err;
    const char *name;
    int skip;
    cio_err want;
    const char *undo;
    int undo_err;
    const char *undo_name;
} create_case;

/* Creates an instance on `fl` with c's faults armed; returns how often c's first fault hit (0: the
 * site was never reached, and whatever was made is gone again). A create that reached it must
 * have failed as c says, with nothing made and nothing left behind. */
static unsigned create_fails_as(const create_case *c, cio_evented_flavour fl, unsigned loops)
{
    cio__fault_reset();
    snapshot before = settled();
    assert_true(cio__fault_errno(c->site, c->err, c->skip, c->skip > 0 ? 1 : -1) == 1);
    if (c->undo != NULL)
        assert_true(cio__fault_errno(c->undo, c->undo_err, 0, -1) == 1);
    cio_evented *e;
    cio_err err = make(fl, loops, &e);
    unsigned injected = cio__fault_injected(c->site);
    unsigned undone = c->undo != NULL ? cio__fault_injected(c->undo) : 0;
    cio__fault_reset();
    if (injected == 0 && err == CIO_OK)
        cio_evented_destroy(e);
    else if (err != c->want)
        fail_msg("%s with %s: got %s, want %s", c->site, c->name, cio_err_name(err), cio_err_name(c->want));
    else
        assert_null(e);
    same_as(before, c->site);
    if (injected > 0 && c->undo != NULL) {
        if (undone == 0)
            fail_msg("%s: the undo path after %s %s never reached it", c->undo, c->site, c->name);
        print_message("fault-covered: %s %s\n", c->undo, c->undo_name);
    }
    return injected;
}

/* The rest of a ring's setup fails (a forced io_uring: the error; auto: epoll instead). */
static void test_uring_init_fails(void **state)
{
    (void)state;
    if (!uring_here())
        CIO_SKIP("io_uring_setup is refused on this machine: no ring to fail part-way");
    static const create_case cases[] = {
        {"io_uring_register@ring_probe", EINVAL, "EINVAL", 0, CIO_E_OPERATION_UNSUPPORTED, "close@ring_free", EINTR,
         "EINTR"},
        {"calloc@ring_probe", ENOMEM, "ENOMEM", 0, CIO_E_OPERATION_UNSUPPORTED, NULL, 0, NULL},
        {"calloc@ring", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"mmap@ring_sq", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"mmap@ring_cq", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"mmap@ring_sqes", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, "munmap@ring_free", EINVAL, "EINVAL"},
        {"eventfd@uring_init", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED, NULL, 0, NULL},
        {"eventfd@uring_init", ENFILE, "ENFILE", 0, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED, NULL, 0, NULL},
        {"io_uring_setup@ring_setup", ENOMEM, "ENOMEM-second-loop", 1, CIO_E_SYSTEM_RESOURCES, "close@uring_deinit",
         EINTR, "EINTR"},
        {"mmap@ring_sqes", ENOMEM, "ENOMEM-second-loop", 1, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const create_case *c = &cases[i];
        if (strcmp(c->site, "mmap@ring_cq") == 0 && cio_test_under_valgrind()) {
            /* not reached on kernels with IORING_FEAT_SINGLE_MMAP: create would start io_uring loops */
            print_message("      not here: %s (under valgrind no io_uring loop may start)\n", c->site);
            continue;
        }
        if (create_fails_as(c, CIO_EVENTED_IO_URING, 2) == 0) {
            /* mmap@ring_cq: only kernels without IORING_FEAT_SINGLE_MMAP (before 5.4) map it */
            print_message("      not here: %s (this kernel never makes that call)\n", c->site);
            continue;
        }
        /* auto: the same fault sends it to epoll, which works */
        snapshot before = snap();
        assert_true(cio__fault_errno(c->site, c->err, c->skip, c->skip > 0 ? 1 : -1) == 1);
        cio_evented *e;
        assert_ok(make(CIO_EVENTED_AUTO, 2, &e));
        cio__fault_reset();
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
        {"epoll_create1@epoll_init", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED, NULL, 0, NULL},
        {"epoll_create1@epoll_init", ENFILE, "ENFILE", 0, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED, NULL, 0, NULL},
        {"epoll_create1@epoll_init", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"epoll_create1@epoll_init", EMFILE, "EMFILE-second-loop", 1, CIO_E_PROCESS_FD_QUOTA_EXCEEDED,
         "close@epoll_deinit", EINTR, "EINTR"},
        {"eventfd@epoll_init", EMFILE, "EMFILE", 0, CIO_E_PROCESS_FD_QUOTA_EXCEEDED, "close@epoll_init", EINTR,
         "EINTR"},
        {"eventfd@epoll_init", ENFILE, "ENFILE", 0, CIO_E_SYSTEM_FD_QUOTA_EXCEEDED, NULL, 0, NULL},
        {"eventfd@epoll_init", EMFILE, "EMFILE-second-loop", 1, CIO_E_PROCESS_FD_QUOTA_EXCEEDED, NULL, 0, NULL},
        {"epoll_ctl@epoll_init", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, "close@epoll_init", EIO, "EIO"},
        {"epoll_ctl@epoll_init", ENOSPC, "ENOSPC", 1, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"calloc@epoll_init", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"calloc@epoll_init", ENOMEM, "ENOMEM-second-loop", 1, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"calloc@evented_create", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"calloc@evented_loops", ENOMEM, "ENOMEM", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"pthread_create@loop_start", EAGAIN, "EAGAIN", 0, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"pthread_create@loop_start", EAGAIN, "EAGAIN-second-loop", 1, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
        {"pthread_create@loop_start", EAGAIN, "EAGAIN-third-loop", 2, CIO_E_SYSTEM_RESOURCES, NULL, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const create_case *c = &cases[i];
        assert_int_equal(create_fails_as(c, CIO_EVENTED_EPOLL, 3), 1u);
        print_message("fault-covered: %s %s\n", c->site, c->name);
    }
    /* both flavours out of descriptors: the automatic one reports it */
    snapshot before = settled();
    assert_true(cio__fault_errno("eventfd", EMFILE, 0, -1) == 2);
    cio_evented *e;
    assert_err(make(CIO_EVENTED_AUTO, 2, &e), CIO_E_PROCESS_FD_QUOTA_EXCEEDED);
    cio__fault_reset();
    assert_null(e);
    same_as(before, "eventfd (auto)");
}

/* ---- destroy: the pollers' descriptors and the ring's mappings ---------------------------------------------- */

/* Closing a loop's descriptors and unmapping its ring fail at destroy (EINTR, EINVAL): ignored, and
 * nothing leaks (a close's descriptor and a munmap's mapping are gone all the same). */
static void test_destroy_fails(void **state)
{
    (void)state;
    static const struct {
        cio_evented_flavour fl;
        const char *site;
        int err;
        const char *name;
    } cases[] = {
        {CIO_EVENTED_EPOLL, "close@epoll_deinit", EINTR, "EINTR"},
        {CIO_EVENTED_IO_URING, "munmap@ring_free", EINVAL, "EINVAL"},
        {CIO_EVENTED_IO_URING, "close@ring_free", EINTR, "EINTR"},
        {CIO_EVENTED_IO_URING, "close@uring_deinit", EIO, "EIO"},
    };
    cio_evented_flavour fl[2];
    size_t nfl = fresh_flavours(fl);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].fl == CIO_EVENTED_IO_URING && nfl < 2) {
            print_message("      not here: %s (no io_uring loop may start here)\n", cases[i].site);
            continue;
        }
        snapshot before;
        cio_evented *e = fresh(cases[i].fl, 2, &before);
        workload(cio_evented_io(e));
        destroy_with_fault(e, before, cases[i].site, cases[i].err, cases[i].name, 2); /* one per loop */
    }
}

/* ---- sockets: made non-blocking, made without the ring ------------------------------------------------------ */

/* `msg` crosses from client to peer; then both streams and the server are closed. */
static void cross_and_close(cio_io io, cio_server *srv, cio_stream *client, cio_stream *peer, const char *msg)
{
    size_t len = strlen(msg), n = 0;
    unsigned char b[16];
    assert_ok(cio_stream_write_all(io, client, msg, len));
    assert_ok(cio_stream_read(io, peer, b, sizeof b, &n));
    assert_int_equal(n, len);
    assert_memory_equal(b, msg, len);
    cio_stream_close(io, client);
    cio_stream_close(io, peer);
    cio_server_close(io, srv);
}

/* A wait on a socket cio made is armed without a system call (its registration is trusted) and
 * put on the list of such waits to verify later; when that list cannot grow (ENOMEM) the wait is
 * verified at once (one epoll_ctl) instead, and nothing is lost. */
typedef struct {
    cio_io io;
    cio_stream *s;
    char got[2];
    size_t n;
} two_reads;

static cio_err read_two(void *p)
{
    two_reads *r = *(two_reads **)p;
    for (int i = 0; i < 2; i++) {
        size_t n = 0;
        cio_err err = cio_stream_read(r->io, r->s, r->got + r->n, 1, &n);
        if (err != CIO_OK)
            return err;
        r->n += n;
    }
    return CIO_OK;
}

static void test_epoll_pend_fails(void **state)
{
    (void)state;
    snapshot before;
    cio_evented *e = fresh(CIO_EVENTED_EPOLL, 1, &before);
    cio_io io = cio_evented_io(e);
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server srv;
    cio_stream client, peer;
    assert_ok(cio_net_listen(io, &lo, NULL, &srv));
    assert_ok(cio_net_connect(io, &srv.address, NULL, &client));
    assert_ok(cio_server_accept(io, &srv, &peer));
    two_reads r = {io, &peer, {0, 0}, 0};
    two_reads *rp = &r;
    assert_true(cio__fault_errno("realloc@epoll_pend", ENOMEM, 0, -1) == 1);
    cio_future f;
    assert_ok(cio_concurrent(io, read_two, &rp, sizeof rp, &f));
    for (int i = 0; i < 2; i++) {
        assert_ok(cio_sleep(io, cio_timeout_ms(20))); /* the read waits */
        assert_ok(cio_stream_write_all(io, &client, i == 0 ? "a" : "b", 1));
    }
    assert_ok(cio_await(io, &f));
    covered("realloc@epoll_pend", "ENOMEM"); /* fails the test when no wait was armed on trust */
    cio__fault_reset();
    assert_int_equal(r.n, 2);
    assert_memory_equal(r.got, "ab", 2);
    cross_and_close(io, &srv, &client, &peer, "ok");
    cio_evented_destroy(e);
    same_as(before, "realloc@epoll_pend");
}

/* The backend waits for readiness on its sockets, so each must be non-blocking; when fcntl fails
 * (ENOMEM: no mapped error, Unexpected) a socket it just made is closed again and the operation
 * says so, and a stream it was handed is left as it is. An accepted socket is non-blocking from
 * accept4 (no fcntl), and so is any socket cio made: only handed-in ones are checked. */
static void test_nonblocking_fails(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    snapshot before = settled();
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server srv;
    assert_true(cio__fault_errno("fcntl@nonblocking", ENOMEM, 0, 1) == 1);
    assert_err(cio_net_listen(io, &lo, NULL, &srv), CIO_E_UNEXPECTED);
    same_fds(before, "fcntl@nonblocking (listen)");
    cio__fault_reset();
    assert_ok(cio_net_listen(io, &lo, NULL, &srv));
    cio_stream client, peer;
    /* connect: on the helper pool, the new socket closed again */
    assert_true(cio__fault_errno("fcntl@nonblocking", ENOMEM, 0, 1) == 1);
    assert_err(cio_net_connect(io, &srv.address, NULL, &client), CIO_E_UNEXPECTED);
    cio__fault_reset();
    assert_ok(cio_server_accept(io, &srv, &peer)); /* the connection the kernel made all the same */
    size_t n = 1;
    unsigned char b[8];
    assert_ok(cio_stream_read(io, &peer, b, sizeof b, &n));
    assert_int_equal(n, 0); /* the closed client: end of stream */
    cio_stream_close(io, &peer);
    /* accept and reads of what cio made: no fcntl at all */
    assert_ok(cio_net_connect(io, &srv.address, NULL, &client));
    assert_true(cio__fault_errno("fcntl@nonblocking", ENOMEM, 0, -1) == 1);
    assert_ok(cio_server_accept(io, &srv, &peer));
    assert_ok(cio_stream_write_all(io, &client, "x", 1));
    assert_ok(cio_stream_read(io, &peer, b, sizeof b, &n));
    assert_int_equal(cio__fault_injected("fcntl@nonblocking"), 0);
    cio__fault_reset();
    cross_and_close(io, &srv, &client, &peer, "ok");
    /* a read on a stream the caller made, whose flags cannot be read: the error, the stream works */
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    cio_stream mine = {.handle = sv[0]};
    assert_true(cio__fault_errno("fcntl@nonblocking", ENOMEM, 0, 1) == 1);
    assert_err(cio_stream_read(io, &mine, b, sizeof b, &n), CIO_E_UNEXPECTED);
    covered("fcntl@nonblocking", "ENOMEM");
    cio__fault_reset();
    assert_int_equal(write(sv[1], "y", 1), 1);
    assert_ok(cio_stream_read(io, &mine, b, sizeof b, &n));
    assert_int_equal(n, 1);
    assert_int_equal(b[0], 'y');
    close(sv[0]);
    close(sv[1]);
    same_fds(before, "fcntl@nonblocking");
}

/* The real probe with IORING_OP_SOCKET hidden (a kernel before 5.19): the io_uring flavour's
 * connect makes its socket with socket(2) (socket@uring_socket). */
static int probe_without_socket(int fd, unsigned int op, void *arg, unsigned int n)
{
    int r = (cio__sys_default.io_uring_register)(fd, op, arg, n);
    struct io_uring_probe *p = (struct io_uring_probe *)arg;
    if (r == 0 && op == IORING_REGISTER_PROBE && IORING_OP_SOCKET < p->ops_len)
        p->ops[IORING_OP_SOCKET].flags &= (__u16)~IO_URING_OP_SUPPORTED;
    return r;
}

/* A one-loop io_uring instance that runs the ring's own operations (CIO_EVENTED_URING_NATIVE=1; the
 * suites keep to the fallback paths otherwise); `probe`, if not NULL, stands in for the ring's probe
 * while it is made (native_ring_without_socket: no IORING_OP_SOCKET). */
static cio_evented *native_ring_probed(cio__sys_io_uring_register_fn probe)
{
    const char *was = getenv("CIO_EVENTED_URING_NATIVE");
    char saved[16];
    snprintf(saved, sizeof saved, "%s", was != NULL ? was : "");
    setenv("CIO_EVENTED_URING_NATIVE", "1", 1);
    if (probe != NULL)
        cio__sys_set(io_uring_register__ring_probe, probe);
    cio_evented *e;
    cio_err err = make(CIO_EVENTED_IO_URING, 1, &e);
    if (probe != NULL)
        cio__sys_reset();
    if (was != NULL)
        setenv("CIO_EVENTED_URING_NATIVE", saved, 1);
    else
        unsetenv("CIO_EVENTED_URING_NATIVE");
    assert_ok(err);
    return e;
}

static cio_evented *native_ring(void)
{
    return native_ring_probed(NULL);
}

static cio_evented *native_ring_without_socket(void)
{
    return native_ring_probed(probe_without_socket);
}

static void test_ring_socket_fails(void **state)
{
    (void)state;
    REQUIRE_URING_LOOPS("no ring connect");
    snapshot before = settled();
    cio_evented *e = native_ring_without_socket();
    cio_io io = cio_evented_io(e);
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server srv;
    assert_ok(cio_net_listen(io, &lo, NULL, &srv));
    cio_stream s, peer;
    assert_true(cio__fault_errno("socket@uring_socket", EMFILE, 0, 1) == 1);
    cio_err err = cio_net_connect(io, &srv.address, NULL, &s);
    if (cio__fault_injected("socket@uring_socket") == 0) {
        /* no IORING_OP_CONNECT: connect is the helper pool's, through the Threaded sites */
        cio__fault_reset();
        assert_ok(err);
        cio_stream_close(io, &s);
        cio_server_close(io, &srv);
        cio_evented_destroy(e);
        same_as(before, "socket@uring_socket");
        print_message("      not here: socket@uring_socket (this kernel's ring has no IORING_OP_CONNECT)\n");
        return;
    }
    assert_err(err, CIO_E_PROCESS_FD_QUOTA_EXCEEDED);
    covered("socket@uring_socket", "EMFILE");
    cio__fault_reset();
    assert_true(cio__fault_errno("socket@uring_socket", EINTR, 0, 5) == 1);
    assert_ok(cio_net_connect(io, &srv.address, NULL, &s));
    assert_int_equal(cio__fault_injected("socket@uring_socket"), 5u);
    covered("socket@uring_socket", "EINTR");
    cio__fault_reset();
    assert_ok(cio_server_accept(io, &srv, &peer));
    cross_and_close(io, &srv, &s, &peer, "ring");
    cio_evented_destroy(e);
    same_as(before, "socket@uring_socket");
}

/* net_write_file's own pipe on the ring (src/evented/splice_uring.c): a pipe2 that fails
 * (pipe2@splice_pipe) leaves the call to the helper pool's sendfile, same answer, no SPLICE; a close
 * that reports an error (close@splice_pipe_close: the descriptor is gone all the same) changes
 * nothing. No descriptor is left behind either way. */
static void test_ring_splice_pipe_fails(void **state)
{
    (void)state;
    REQUIRE_URING_LOOPS("no ring splice");
    snapshot before = settled();
    cio_evented *e = native_ring();
    if (!cio__e_uring_has((struct cio_evented *)e, IORING_OP_SPLICE)) {
        cio_evented_destroy(e);
        CIO_SKIP("the kernel's io_uring has no IORING_OP_SPLICE");
    }
    cio_io io = cio_evented_io(e);
    char path[] = "/tmp/cio-faults-splice-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    static unsigned char data[50000];
    memset(data, 'x', sizeof data);
    assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
    static const struct {
        const char *site;
        int err;
        const char *name;
        bool splices; /* the ring still splices */
    } cases[] = {{"pipe2@splice_pipe", EMFILE, "EMFILE", false},
                 {"pipe2@splice_pipe", ENFILE, "ENFILE", false},
                 {"close@splice_pipe_close", EIO, "EIO", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio_stream pair[2];
        assert_ok(cio_net_socket_pair(io, pair));
        uint64_t s = cio__e_uring_count((struct cio_evented *)e, IORING_OP_SPLICE);
        assert_true(cio__fault_errno(cases[i].site, cases[i].err, 0, 1) == 1);
        uint64_t n = 0;
        assert_ok(cio_net_write_file(io, &pair[0], (cio_file){fd}, 0, sizeof data, &n));
        assert_int_equal(cio__fault_injected(cases[i].site), 1u);
        covered(cases[i].site, cases[i].name);
        cio__fault_reset();
        assert_int_equal(n, sizeof data);
        int queued = -1;
        assert_int_equal(ioctl(pair[1].handle, FIONREAD, &queued), 0);
        assert_int_equal(queued, (int)sizeof data);
        uint64_t spliced = cio__e_uring_count((struct cio_evented *)e, IORING_OP_SPLICE) - s;
        assert_true(cases[i].splices ? spliced >= 2 : spliced == 0);
        cio_stream_close(io, &pair[0]);
        cio_stream_close(io, &pair[1]);
    }
    close(fd);
    cio_evented_destroy(e);
    same_as(before, "pipe2@splice_pipe");
}

/* Per flavour: the io_uring cases skip on epoll and the other way round. */
int main(void)
{
    evented_faults_warm_up();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uring_setup_refused),
        cmocka_unit_test(test_uring_init_fails),
        cmocka_unit_test(test_create_fails),
        cmocka_unit_test(test_destroy_fails),
        cmocka_unit_test(test_epoll_pend_fails),
        cmocka_unit_test(test_ring_socket_fails),
        cmocka_unit_test(test_ring_splice_pipe_fails) CIO_TESTS_EVENTED(test_nonblocking_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
