/*
 * The io_uring flavour's native ring operations (issue 6): that the file, directory and socket
 * slots really run on the ring where the kernel has their opcodes (the ring's per-opcode submission
 * counters, src/evented/uring.h), that a timed receive is one RECVMSG with a linked timeout (no
 * readiness poll, no timer), that loops wake each other with MSG_RING, and that with the native
 * operations turned off
 * (CIO_EVENTED_URING_NATIVE=0, read at create) the same calls take the helper pool / readiness
 * paths and still give the same answers. What the operations do is checked on every backend by
 * test_fs.c and test_net.c; this suite is about where they run, so on the other backends it skips.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"
#include "cio/sysnum.h"
#include "evented.h"
#include "uring.h"

#include "asserts.h"
#include "cio/batch.h"
#include "uring_helpers.h"

/* The evented/io_uring instance of this test, or a skip. */
static struct cio_evented *uring_instance(void **state, cio_io *io)
{
    *io = cio_test_io(state);
    cio_test_backend *b = (cio_test_backend *)*state;
    if (b != &cio_test_backend_uring)
        CIO_SKIP("ring operations belong to the evented/io_uring backend");
    return (struct cio_evented *)b->instance;
}

enum { OPS = 8 };
static const unsigned file_ops[OPS] = {IORING_OP_OPENAT,   IORING_OP_STATX,        IORING_OP_MKDIRAT,
                                       IORING_OP_RENAMEAT, IORING_OP_UNLINKAT,     IORING_OP_CLOSE,
                                       IORING_OP_POLL_ADD, CIO_IORING_OP_FTRUNCATE};
static const unsigned net_ops[OPS] = {IORING_OP_SOCKET,  IORING_OP_CONNECT, IORING_OP_ACCEPT,   IORING_OP_SENDMSG,
                                      IORING_OP_RECVMSG, IORING_OP_CLOSE,   IORING_OP_POLL_ADD, IORING_OP_LINK_TIMEOUT};

static void snapshot(struct cio_evented *e, const unsigned ops[OPS], uint64_t out[OPS])
{
    for (int i = 0; i < OPS; i++)
        out[i] = cio__e_uring_count(e, ops[i]);
}

/* A new io_uring instance with `threads` loop threads. */
/* Submissions of ops[i] since `before`. */
static uint64_t delta(struct cio_evented *e, const unsigned ops[OPS], const uint64_t before[OPS], int i)
{
    return cio__e_uring_count(e, ops[i]) - before[i];
}

/* ---- files and directories ------------------------------------------------------------------------ */

typedef struct fs_ctx {
    cio_io io;
    const char *dir;
} fs_ctx;

/* Every native file slot once or more, from a fiber (so close runs on the ring too). */
static cio_err fs_body(void *context)
{
    fs_ctx *c = (fs_ctx *)context;
    cio_io io = c->io;
    cio_dir d;
    cio_err err = cio_dir_open_dir(io, cio_dir_cwd(), c->dir, NULL, &d); /* OPENAT */
    if (err != CIO_OK)
        return err;
    cio_file f;
    assert_ok(cio_dir_create_file(io, d, "f", NULL, &f)); /* OPENAT */
    assert_ok(cio_file_write_all(io, f, "hello", 5));
    cio_stat st;
    assert_ok(cio_file_stat(io, f, &st)); /* STATX */
    assert_int_equal(st.size, 5);
    assert_int_equal(st.kind, CIO_FILE_KIND_FILE);
    assert_ok(cio_file_set_length(io, f, 3)); /* FTRUNCATE */
    assert_ok(cio_file_stat(io, f, &st));     /* STATX */
    assert_int_equal(st.size, 3);
    assert_ok(cio_file_set_length(io, f, 5));         /* FTRUNCATE */
    cio_file_close(io, f);                            /* CLOSE */
    assert_ok(cio_dir_stat_file(io, d, "f", 0, &st)); /* STATX */
    assert_int_equal(st.size, 5);
    assert_ok(cio_dir_create_dir(io, d, "sub", 0));                             /* MKDIRAT */
    assert_err(cio_dir_create_dir(io, d, "sub", 0), CIO_E_PATH_ALREADY_EXISTS); /* MKDIRAT */
    assert_ok(cio_dir_rename(io, d, "f", d, "sub/g"));                          /* RENAMEAT */
    assert_err(cio_dir_open_file(io, d, "f", NULL, &f), CIO_E_FILE_NOT_FOUND);  /* OPENAT */
    cio_open_file_options no_dir = {CIO_OPEN_READ_ONLY, false, true};
    assert_err(cio_dir_open_file(io, d, "sub", &no_dir, &f), CIO_E_IS_DIR); /* OPENAT, STATX, CLOSE? */
    assert_err(cio_dir_delete_dir(io, d, "sub"), CIO_E_DIR_NOT_EMPTY);      /* UNLINKAT */
    assert_ok(cio_dir_delete_file(io, d, "sub/g"));                         /* UNLINKAT */
    assert_ok(cio_dir_delete_dir(io, d, "sub"));                            /* UNLINKAT */
    cio_dir_close(io, d);                                                   /* CLOSE */
    return CIO_OK;
}

static void run_fs_body(cio_io io)
{
    char dir[] = "/tmp/cio-test-uring-XXXXXX";
    assert_non_null(mkdtemp(dir));
    fs_ctx ctx = {io, dir};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, fs_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    assert_int_equal(rmdir(dir), 0);
}

static void test_file_ops_run_on_the_ring(void **state)
{
    cio_io io;
    struct cio_evented *e = uring_instance(state, &io);
    uint64_t before[OPS];
    snapshot(e, file_ops, before);
    run_fs_body(io);
    /* opens: the dir, create, missing, the directory refused = 4; stat 3 (+1 for the refusal);
     * mkdir 2; rename 1; unlink 3; close: the file, the dir (the refused directory is closed
     * directly on its error path); no readiness poll; ftruncate 2. */
    static const uint64_t want[OPS] = {4, 4, 2, 1, 3, 2, 0, 2};
    for (int i = 0; i < OPS; i++) {
        uint64_t got = delta(e, file_ops, before, i);
        if (cio__e_uring_has(e, file_ops[i]) || want[i] == 0)
            assert_int_equal(got, want[i]);
        else
            assert_int_equal(got, 0); /* the kernel lacks it: the helper pool did it */
    }
}

/* ---- sockets ---------------------------------------------------------------------------------------- */

typedef struct net_ctx {
    cio_io io;
} net_ctx;

static cio_err net_body(void *context)
{
    cio_io io = ((net_ctx *)context)->io;
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server srv;
    cio_err err = cio_net_listen(io, &lo, NULL, &srv);
    if (err != CIO_OK)
        return err;
    cio_stream c, s;
    assert_ok(cio_net_connect(io, &srv.address, NULL, &c)); /* SOCKET, CONNECT */
    assert_ok(cio_server_accept(io, &srv, &s));             /* ACCEPT */
    assert_ok(cio_stream_write_all(io, &c, "ping", 4));     /* SEND (one buffer) */
    char buf[8];
    size_t n = 0;
    assert_ok(cio_stream_read(io, &s, buf, sizeof buf, &n)); /* RECV (one buffer) */
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "ping", 4);
    cio_stream_close(io, &s);   /* CLOSE */
    cio_stream_close(io, &c);   /* CLOSE */
    cio_server_close(io, &srv); /* CLOSE */
    return CIO_OK;
}

static void test_socket_ops_run_on_the_ring(void **state)
{
    cio_io io;
    struct cio_evented *e = uring_instance(state, &io);
    uint64_t before[OPS];
    snapshot(e, net_ops, before);
    uint64_t send0 = cio__e_uring_count(e, IORING_OP_SEND), recv0 = cio__e_uring_count(e, IORING_OP_RECV);
    net_ctx ctx = {io};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, net_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    /* A one-buffer write or read is a SEND / RECV where the kernel has them (no message header to
     * copy), else a SENDMSG / RECVMSG. */
    uint64_t sends = cio__e_uring_count(e, IORING_OP_SEND) - send0,
             recvs = cio__e_uring_count(e, IORING_OP_RECV) - recv0;
    if (cio__e_uring_has(e, IORING_OP_SEND))
        assert_int_equal(delta(e, net_ops, before, 3), 0);
    if (cio__e_uring_has(e, IORING_OP_RECV))
        assert_int_equal(delta(e, net_ops, before, 4), 0);
    /* no readiness poll at all when every opcode is there */
    static const uint64_t want[OPS] = {1, 1, 1, 1, 1, 3, 0, 0};
    bool all = true;
    for (int i = 0; i < 6; i++) {
        uint64_t got = delta(e, net_ops, before, i) + (i == 3 ? sends : i == 4 ? recvs : 0);
        if (i == 2 && got == 0)
            continue; /* ACCEPT: the connection was already queued and accept4 took it directly */
        if (cio__e_uring_has(e, net_ops[i]))
            assert_int_equal(got, want[i]);
        else
            all = false;
    }
    if (all)
        assert_int_equal(delta(e, net_ops, before, 6), 0);
}

/* A timed receive on an empty socket is one RECVMSG whose deadline is a loop timer: no linked
 * timeout, no readiness poll; the deadline firing costs one ASYNC_CANCEL and ends it: Timeout, not
 * before the deadline. Then a datagram that is there beats its (long) timeout at once, with no
 * submission but the RECVMSG (the unfired timer costs nothing). */
static void test_receive_timer_deadline(void **state)
{
    cio_io io;
    struct cio_evented *e = uring_instance(state, &io);
    if (!cio__e_uring_has(e, IORING_OP_RECVMSG))
        CIO_SKIP("this kernel has no RECVMSG: receive waits for readiness");
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_socket a, b;
    assert_ok(cio_net_bind(io, &lo, NULL, &a));
    assert_ok(cio_net_bind(io, &lo, NULL, &b));
    char buf[16];
    cio_message m = {buf, sizeof buf, 0, {0}, false};
    size_t count = 9;
    uint64_t before[OPS];
    snapshot(e, net_ops, before);
    uint64_t cancels0 = cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_socket_receive_batch(io, &b, &m, 1, cio_timeout_ms(50), &count), CIO_E_TIMEOUT);
    int64_t waited = cio_now(io, CIO_CLOCK_AWAKE).ns - t0;
    assert_int_equal(count, 0);
    assert_true(waited >= INT64_C(50000000));
    assert_true(waited < INT64_C(2000000000));
    assert_int_equal(delta(e, net_ops, before, 4), 1); /* RECVMSG */
    assert_int_equal(delta(e, net_ops, before, 7), 0); /* no LINK_TIMEOUT */
    assert_int_equal(delta(e, net_ops, before, 6), 0); /* no POLL_ADD */
    assert_int_equal(cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL) - cancels0, 1);
    for (int round = 0; round < 3; round++) {
        assert_ok(cio_socket_send_to(io, &a, &b.address, "dgram", 5, NULL));
        snapshot(e, net_ops, before);
        cancels0 = cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL);
        t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
        assert_ok(cio_socket_receive_batch(io, &b, &m, 1, cio_timeout_ms(10000), &count));
        assert_int_equal(delta(e, net_ops, before, 4), 1); /* RECVMSG */
        assert_int_equal(delta(e, net_ops, before, 7), 0);
        assert_int_equal(cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL), cancels0);
        assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns - t0 < INT64_C(2000000000));
        assert_int_equal(count, 1);
        assert_int_equal(m.len, 5);
        assert_memory_equal(buf, "dgram", 5);
        assert_true(cio_ip_equal(&m.from, &a.address));
    }
    cio_socket_close(io, &a);
    cio_socket_close(io, &b);
}

/* ---- wake-ups between loops: MSG_RING ------------------------------------------------------------------ */

typedef struct pong_ctx {
    cio_io io;
    _Atomic(uint32_t) *word;
    uint32_t me;
    uint32_t rounds;
} pong_ctx;

/* The word counts 0, 1, 2, ...: side 0 moves it from even to odd, side 1 from odd to even. */
static cio_err pong_side(void *context)
{
    pong_ctx *c = (pong_ctx *)context;
    for (uint32_t i = 0; i < c->rounds; i++) {
        uint32_t want = 2 * i + c->me, v;
        while ((v = atomic_load(c->word)) != want)
            cio_futex_wait_uncancelable(c->io, c->word, v);
        /* Longer than a loop spins for work before it sleeps (sched.c SPIN_NS): the other side's
         * loop is asleep in io_uring_enter when it is woken, so the wake-up is a real one. */
        (void)cio_sleep(c->io, cio_timeout_ns(100000));
        atomic_store(c->word, want + 1);
        cio_futex_wake(c->io, c->word, 1);
    }
    return CIO_OK;
}

/* Two fibers on two loops wake each other through MSG_RING (one loop's ring posts a completion to
 * the other's): a ping-pong of 400 hops completes. Which loop a fiber starts on is the scheduler's
 * choice, so pairs are started until one lands on different loops (the MSG_RING counter moves). */
static void test_cross_loop_wakes(void **state)
{
    cio_io unused;
    struct cio_evented *probe = uring_instance(state, &unused);
    if (!cio__e_uring_has(probe, IORING_OP_MSG_RING))
        CIO_SKIP("this kernel has no MSG_RING: loops wake each other through their eventfd");
    cio_evented *e = uring_with(2);
    cio_io io = cio_evented_io(e);
    bool crossed = false;
    for (int attempt = 0; attempt < 50 && !crossed; attempt++) {
        _Atomic(uint32_t) word = 0;
        uint64_t before = cio__e_uring_count(e, IORING_OP_MSG_RING);
        pong_ctx a = {io, &word, 0, 200}, b = {io, &word, 1, 200};
        cio_future fa, fb;
        assert_ok(cio_concurrent(io, pong_side, &a, sizeof a, &fa));
        assert_ok(cio_concurrent(io, pong_side, &b, sizeof b, &fb));
        assert_ok(cio_await(io, &fa));
        assert_ok(cio_await(io, &fb));
        assert_int_equal(atomic_load(&word), 400);
        crossed = cio__e_uring_count(e, IORING_OP_MSG_RING) - before >= 100;
    }
    cio_evented_destroy(e);
    if (!crossed)
        CIO_SKIP("the scheduler kept every pair on one loop: no wake-up crossed");
}

/* ---- cancel before and after submission ---------------------------------------------------------------- */

typedef struct withdraw_ctx {
    cio_io io;
    int rfd, wfd;
    bool submitted; /* let the loop submit the read (a sleep) before it is canceled */
    cio_event started;
    char got;
} withdraw_ctx;

static cio_err blocked_reader(void *context)
{
    withdraw_ctx *c = *(withdraw_ctx **)context;
    size_t n = 0;
    cio_event_set(c->io, &c->started);
    return cio_file_read_streaming(c->io, (cio_file){c->rfd}, &c->got, 1, &n);
}

/* A reader blocked on an empty pipe is canceled by a fiber of its own loop. */
static cio_err cancel_reader(void *context)
{
    withdraw_ctx *c = *(withdraw_ctx **)context;
    withdraw_ctx *cp = c;
    cio_future r;
    cio_err err = cio_concurrent(c->io, blocked_reader, &cp, sizeof cp, &r);
    if (err != CIO_OK)
        return err;
    cio_event_wait_uncancelable(c->io, &c->started);
    if (c->submitted)
        (void)cio_sleep(c->io, cio_timeout_ms(5));
    return cio_cancel(c->io, &r);
}

/* A read still in the submission queue when it is canceled is withdrawn (made a NOP: no
 * ASYNC_CANCEL, no kernel round trip); one the kernel has is canceled there. Either way the read
 * ends CANCELED and consumes nothing: a byte written afterwards is still in the pipe. */
static void test_cancel_before_and_after_submission(void **state)
{
    cio_io unused;
    (void)uring_instance(state, &unused);
    cio_evented *e = uring_with(1);
    cio_io io = cio_evented_io(e);
    for (int submitted = 0; submitted < 2; submitted++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        withdraw_ctx c;
        memset(&c, 0, sizeof c);
        c.io = io;
        c.rfd = p[0];
        c.wfd = p[1];
        c.submitted = submitted != 0;
        withdraw_ctx *cp = &c;
        uint64_t nop = cio__e_uring_count(e, IORING_OP_NOP);
        uint64_t kcancel = cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL);
        cio_future f;
        assert_ok(cio_concurrent(io, cancel_reader, &cp, sizeof cp, &f));
        assert_int_equal(cio_await(io, &f), CIO_E_CANCELED);
        if (submitted) {
            assert_int_equal(cio__e_uring_count(e, IORING_OP_NOP) - nop, 0);
            assert_int_equal(cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL) - kcancel, 1);
        } else {
            assert_int_equal(cio__e_uring_count(e, IORING_OP_NOP) - nop, 1);
            assert_int_equal(cio__e_uring_count(e, IORING_OP_ASYNC_CANCEL) - kcancel, 0);
        }
        assert_int_equal(write(p[1], "x", 1), 1);
        char b = 0;
        assert_int_equal(read(p[0], &b, 1), 1);
        assert_int_equal(b, 'x');
        close(p[0]);
        close(p[1]);
    }
    cio_evented_destroy(e);
}

/* ---- the fallback paths ------------------------------------------------------------------------------ */

/* With CIO_EVENTED_URING_NATIVE=0 an io_uring instance keeps only the opcodes the flavour cannot do
 * without: the same calls work, none as a native file or socket operation. */
static void test_fallback_without_native_ops(void **state)
{
    cio_io unused;
    (void)uring_instance(state, &unused);
    cio_evented *e = uring_fallback(1);
    cio_io io = cio_evented_io(e);
    assert_false(cio__e_uring_has(e, IORING_OP_OPENAT));
    assert_false(cio__e_uring_has(e, IORING_OP_ACCEPT));
    run_fs_body(io);
    net_ctx ctx = {io};
    cio_future fut;
    assert_ok(cio_concurrent(io, net_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    for (int i = 0; i < 6; i++) {
        assert_int_equal(cio__e_uring_count(e, file_ops[i]), 0);
        assert_int_equal(cio__e_uring_count(e, net_ops[i]), 0);
    }
    cio_evented_destroy(e);
}

struct wait_ctx {
    cio_io io;
    cio_child *child;
};

static cio_err wait_child(void *p)
{
    struct wait_ctx *w = (struct wait_ctx *)p;
    cio_term term;
    return cio_child_wait(w->io, w->child, &term);
}

/* Spawns `sh -c "exit 7"` and waits for it: exited 7, the child cleared. */
static void wait_exit_7(cio_io io)
{
    const char *argv[] = {"sh", "-c", "exit 7", NULL};
    cio_spawn_options o = {.argv = argv};
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    cio_term term;
    assert_ok(cio_child_wait(io, &c, &term));
    assert_int_equal(term.kind, CIO_TERM_EXITED);
    assert_int_equal(term.code, 7);
    assert_int_equal(c.id, 0);
}

/* A child wait is one IORING_OP_WAITID where the kernel has it (6.7+), no readiness poll of the
 * pidfd; with the native operations off it polls the pidfd instead, with the same result. A canceled
 * WAITID leaves the child waitable. */
static void test_child_wait_is_waitid(void **state)
{
    cio_io io;
    struct cio_evented *e = uring_instance(state, &io);
    if (!cio__e_uring_has(e, CIO_IORING_OP_WAITID))
        CIO_SKIP("this kernel has no IORING_OP_WAITID (Linux 6.7+): child waits poll the pidfd");
    uint64_t w0 = cio__e_uring_count(e, CIO_IORING_OP_WAITID), p0 = cio__e_uring_count(e, IORING_OP_POLL_ADD);
    wait_exit_7(io);
    assert_int_equal(cio__e_uring_count(e, CIO_IORING_OP_WAITID), w0 + 1);
    assert_int_equal(cio__e_uring_count(e, IORING_OP_POLL_ADD), p0);
    /* canceled while the child sleeps: Canceled promptly, then the child is still there to kill */
    const char *argv[] = {"sleep", "10", NULL};
    cio_spawn_options o = {.argv = argv};
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    cio_timestamp t0 = cio_now(io, CIO_CLOCK_AWAKE);
    cio_future f;
    struct wait_ctx ctx = {io, &c};
    assert_ok(cio_concurrent(io, wait_child, &ctx, sizeof ctx, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(30)));
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_true(cio_now(io, CIO_CLOCK_AWAKE).ns - t0.ns < 5000000000);
    assert_true(c.id > 0);
    assert_int_equal(cio__e_uring_count(e, CIO_IORING_OP_WAITID), w0 + 2);
    cio_child_kill(io, &c);
    assert_int_equal(c.id, 0);
    /* the native operations off: the same wait polls the pidfd */
    cio_evented *plain = uring_fallback(1);
    wait_exit_7(cio_evented_io(plain));
    assert_int_equal(cio__e_uring_count(plain, CIO_IORING_OP_WAITID), 0);
    assert_true(cio__e_uring_count(plain, IORING_OP_POLL_ADD) >= 1);
    cio_evented_destroy(plain);
}

/* ---- a batch reaches the kernel in one submission ------------------------------------------------ */

enum { BATCH_OPS = 64 };

typedef struct batch_ctx {
    cio_io io;
    cio_stream (*pairs)[2];
    uint64_t *enters; /* out: submitting io_uring_enter calls while the batch ran */
    struct cio_evented *e;
} batch_ctx;

/* From a fiber: 64 reads over 64 socket pairs (data already there) in one batch, started with
 * await_async; every member is a fiber that queues its RECV; the loop submits them together. */
static cio_err batch_body(void *context)
{
    batch_ctx *c = (batch_ctx *)context;
    static cio_batch_slot slots[BATCH_OPS];
    static char bufs[BATCH_OPS][8];
    static cio_iovec iov[BATCH_OPS];
    cio_batch b;
    assert_ok(cio_batch_init(&b, slots, BATCH_OPS));
    for (int i = 0; i < BATCH_OPS; i++) {
        iov[i] = (cio_iovec){bufs[i], sizeof bufs[i]};
        cio_operation op;
        memset(&op, 0, sizeof op);
        op.kind = CIO_OP_NET_READ;
        op.u.net_read.stream = c->pairs[i][1].handle;
        op.u.net_read.iov = &iov[i];
        op.u.net_read.iovcnt = 1;
        assert_ok(cio_batch_add_at(&b, (uint32_t)i, &op));
    }
    uint64_t before = cio__e_uring_enters(c->e);
    int got = 0;
    while (got < BATCH_OPS) {
        assert_ok(cio_batch_await_async(c->io, &b));
        uint32_t idx;
        cio_operation done;
        while (cio_batch_next(&b, &idx, &done)) {
            assert_ok(done.err);
            assert_int_equal(done.count, 1);
            assert_int_equal(bufs[idx][0], (char)('A' + idx % 26));
            got++;
        }
    }
    *c->enters = cio__e_uring_enters(c->e) - before;
    return CIO_OK;
}

/* A batch of 64 reads is submitted as 64 RECV (or RECVMSG) SQEs in one io_uring_enter (a small number at
 * most: a loop that had other work may submit what was queued so far first), not one per fiber. */
static void test_batch_one_submission(void **state)
{
    cio_io unused;
    (void)uring_instance(state, &unused);
    cio_evented *e = uring_with(1);
    cio_io io = cio_evented_io(e);
    if (!cio__e_uring_has(e, IORING_OP_RECVMSG)) {
        cio_evented_destroy(e);
        CIO_SKIP("this kernel has no RECVMSG: reads wait for readiness");
    }
    static cio_stream pairs[BATCH_OPS][2];
    for (int i = 0; i < BATCH_OPS; i++) {
        assert_ok(cio_net_socket_pair(io, pairs[i]));
        char ch = (char)('A' + i % 26);
        assert_ok(cio_stream_write_all(io, &pairs[i][0], &ch, 1));
    }
    uint64_t recv0 = cio__e_uring_count(e, IORING_OP_RECVMSG) + cio__e_uring_count(e, IORING_OP_RECV);
    uint64_t enters = 0;
    batch_ctx ctx = {io, pairs, &enters, e};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, batch_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    uint64_t recvs = cio__e_uring_count(e, IORING_OP_RECVMSG) + cio__e_uring_count(e, IORING_OP_RECV) - recv0;
    print_message("batch of %d reads: %llu RECV/RECVMSG, %llu submitting io_uring_enter\n", BATCH_OPS,
                  (unsigned long long)recvs, (unsigned long long)enters);
    assert_int_equal(recvs, BATCH_OPS);
    assert_in_range(enters, 1, 2);
    for (int i = 0; i < BATCH_OPS; i++) {
        cio_stream_close(io, &pairs[i][0]);
        cio_stream_close(io, &pairs[i][1]);
    }
    cio_evented_destroy(e);
}

/* ---- one buffer: READ / WRITE ------------------------------------------------------------------------ */

typedef struct rw_ctx {
    cio_io io;
    const char *path;
} rw_ctx;

/* A positional write and read of one buffer, then of two (cio_file_*_positional_v). */
static cio_err rw_body(void *context)
{
    rw_ctx *c = (rw_ctx *)context;
    cio_file f;
    cio_create_file_options rw = {true, true, false, 0};
    assert_ok(cio_dir_create_file(c->io, cio_dir_cwd(), c->path, &rw, &f));
    size_t n = 0;
    assert_ok(cio_file_write_positional(c->io, f, "hello ", 6, 0, &n));
    assert_int_equal(n, 6);
    cio_const_iovec wv[2] = {{"wor", 3}, {"ld", 2}};
    assert_ok(cio_file_write_positional_v(c->io, f, wv, 2, 6, &n));
    assert_int_equal(n, 5);
    char buf[16] = {0};
    assert_ok(cio_file_read_positional(c->io, f, buf, sizeof buf, 0, &n));
    assert_int_equal(n, 11);
    assert_memory_equal(buf, "hello world", 11);
    char a[4] = {0}, b[8] = {0};
    cio_iovec rv[2] = {{a, 4}, {b, 8}};
    assert_ok(cio_file_read_positional_v(c->io, f, rv, 2, 2, &n));
    assert_int_equal(n, 9);
    assert_memory_equal(a, "llo ", 4);
    assert_memory_equal(b, "world", 5);
    cio_file_close(c->io, f);
    return CIO_OK;
}

/* Submissions of READ, WRITE, READV, WRITEV made by rw_body on e. */
static void run_rw_body(cio_evented *e, uint64_t got[4])
{
    static const unsigned ops[4] = {IORING_OP_READ, IORING_OP_WRITE, IORING_OP_READV, IORING_OP_WRITEV};
    uint64_t before[4];
    for (int i = 0; i < 4; i++)
        before[i] = cio__e_uring_count(e, ops[i]);
    char dir[] = "/tmp/cio-test-uring-rw-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/f", dir);
    cio_io io = cio_evented_io(e);
    rw_ctx ctx = {io, path};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, rw_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    for (int i = 0; i < 4; i++)
        got[i] = cio__e_uring_count(e, ops[i]) - before[i];
}

/* A transfer of one buffer is one READ / WRITE where the kernel has them (no iovec for the kernel to
 * copy in); of more, READV / WRITEV; without the native operations, READV / WRITEV always. */
static void test_one_buffer_is_read_or_write(void **state)
{
    cio_io unused;
    (void)uring_instance(state, &unused);
    cio_evented *e = uring_with(1);
    uint64_t got[4];
    run_rw_body(e, got);
    if (cio__e_uring_has(e, IORING_OP_READ) && cio__e_uring_has(e, IORING_OP_WRITE)) {
        assert_int_equal(got[0], 1);
        assert_int_equal(got[1], 1);
        assert_int_equal(got[2], 1);
        assert_int_equal(got[3], 1);
    } else {
        assert_int_equal(got[0] + got[1], 0);
        assert_int_equal(got[2], 2);
        assert_int_equal(got[3], 2);
    }
    cio_evented_destroy(e);
    e = uring_fallback(1);
    run_rw_body(e, got);
    assert_int_equal(got[0] + got[1], 0);
    assert_int_equal(got[2], 2);
    assert_int_equal(got[3], 2);
    cio_evented_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_file_ops_run_on_the_ring),
        CIO_TESTS(test_socket_ops_run_on_the_ring),
        CIO_TESTS(test_receive_timer_deadline),
        CIO_TESTS(test_cross_loop_wakes),
        CIO_TESTS(test_cancel_before_and_after_submission),
        CIO_TESTS(test_fallback_without_native_ops),
        CIO_TESTS(test_child_wait_is_waitid),
        CIO_TESTS(test_batch_one_submission),
        CIO_TESTS(test_one_buffer_is_read_or_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
