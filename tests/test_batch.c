/*
 * Operations and Batch (cio/batch.h), and the select that cannot deadlock, on every backend: a
 * batch of 64 reads over 64 loopback TCP pairs completing in any order with the right bytes
 * (await_concurrent and await_async); await_concurrent's timeout leaving the rest cancelable; batch
 * cancel with operations in flight leaking nothing (the stream timeouts: test_timeouts.c); the
 * Threaded select deadlock (async limit 0, a blocking read raced against a
 * sleep); the device_io_control operation on a pipe (FIONREAD; Windows: FSCTL_PIPE_PEEK). A backend without networking
 * (NetworkDown: WASI) skips the socket tests; the file batch runs everywhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "null_arg.h"
#include "os_helpers.h"
#if defined(CIO_OS_WINDOWS)
#include <windows.h>
#elif !defined(CIO_OS_WASI)
#include <fcntl.h>
#include <unistd.h>
#endif

#include "asserts.h"
#include "stream_helpers.h"

#define PAIRS 64
#define SLACK_MS 10 /* a timeout fires within this of its deadline */

static cio_operation read_op(const cio_stream *s, cio_iovec *iov)
{
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_NET_READ;
    op.u.net_read.stream = s->handle;
    op.u.net_read.iov = iov;
    op.u.net_read.iovcnt = 1;
    return op;
}

/* ---- batch ------------------------------------------------------------------------------------- */

static void batch_of_reads(void **state, bool concurrent)
{
    cio_io io = cio_test_io(state);
    static cio_stream a[PAIRS], b[PAIRS];
    static char bufs[PAIRS][16];
    static cio_iovec iov[PAIRS];
    static cio_batch_slot slots[PAIRS];
    int fds = cio_test_count_handles();
    socket_pairs(io, a, b, PAIRS);
    cio_batch batch;
    assert_ok(cio_batch_init(&batch, slots, PAIRS));
    for (uint32_t i = 0; i < PAIRS; i++) {
        memset(bufs[i], 0, sizeof bufs[i]);
        iov[i] = (cio_iovec){bufs[i], sizeof bufs[i]};
        cio_operation op = read_op(&b[i], &iov[i]);
        uint32_t idx = UINT32_MAX;
        assert_ok(cio_batch_add(&batch, &op, &idx));
        assert_int_equal(idx, i);
    }
    cio_operation extra = read_op(&b[0], &iov[0]);
    assert_err(cio_batch_add(&batch, &extra, NULL), CIO_E_SYSTEM_RESOURCES); /* full */
    if (concurrent) {
        /* Start them all with nothing to read yet, then write in a scrambled order. */
        cio_err err = cio_batch_await_concurrent(io, &batch, cio_timeout_ms(0));
        if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
            cio_batch_cancel(io, &batch);
            close_pairs(io, a, b, PAIRS);
            CIO_SKIP("concurrency unavailable");
        }
        assert_err(err, CIO_E_TIMEOUT);
    }
    for (uint32_t k = 0; k < PAIRS; k++) {
        uint32_t i = (k * 37u + 11u) % PAIRS; /* a permutation of 0..63 */
        char msg[16];
        int len = snprintf(msg, sizeof msg, "pair-%u", (unsigned)i);
        assert_ok(cio_stream_write_all(io, &a[i], msg, (size_t)len));
    }
    bool seen[PAIRS] = {false};
    size_t got = 0;
    while (got < PAIRS) {
        if (concurrent)
            assert_ok(cio_batch_await_concurrent(io, &batch, CIO_TIMEOUT_NONE));
        else
            assert_ok(cio_batch_await_async(io, &batch));
        uint32_t idx;
        cio_operation done;
        size_t taken = 0;
        while (cio_batch_next(&batch, &idx, &done)) {
            taken++;
            assert_in_range(idx, 0, PAIRS - 1);
            assert_false(seen[idx]);
            seen[idx] = true;
            assert_ok(done.err);
            char want[16];
            int len = snprintf(want, sizeof want, "pair-%u", (unsigned)idx);
            assert_int_equal(done.count, (size_t)len); /* loopback delivers the small write whole */
            assert_memory_equal(bufs[idx], want, (size_t)len);
            got++;
        }
        assert_true(taken > 0);
    }
    assert_false(cio_batch_next(&batch, NULL, NULL));
    assert_ok(cio_batch_await_async(io, &batch)); /* nothing left: returns at once */
    cio_batch_cancel(io, &batch);
    close_pairs(io, a, b, PAIRS);
    assert_int_equal(cio_test_count_handles(), fds);
}

static void test_batch_64_reads_concurrent(void **state)
{
    batch_of_reads(state, true);
}

static void test_batch_64_reads_async(void **state)
{
    batch_of_reads(state, false);
}

/* Timeout with nothing ready: Timeout, every operation still in flight; one completes after a
 * write; cancel ends the rest and the streams stay usable. */
static void test_batch_timeout_then_cancel(void **state)
{
    cio_io io = cio_test_io(state);
    enum { N = 4 };
    cio_stream a[N], b[N];
    char bufs[N][8];
    cio_iovec iov[N];
    cio_batch_slot slots[N];
    int fds = cio_test_count_handles();
    socket_pairs(io, a, b, N);
    cio_batch batch;
    assert_ok(cio_batch_init(&batch, slots, N));
    for (uint32_t i = 0; i < N; i++) {
        iov[i] = (cio_iovec){bufs[i], sizeof bufs[i]};
        cio_operation op = read_op(&b[i], &iov[i]);
        assert_ok(cio_batch_add_at(&batch, N - 1 - i, &op)); /* slot N-1-i reads b[i] */
    }
    cio_operation again = read_op(&b[0], &iov[0]);
    assert_err(cio_batch_add_at(&batch, 0, &again), CIO_E_INVALID_ARGUMENT); /* in use */
    assert_err(cio_batch_add_at(&batch, N, &again), CIO_E_INVALID_ARGUMENT); /* out of range */
    int64_t t0 = now_ms(io);
    cio_err err = cio_batch_await_concurrent(io, &batch, cio_timeout_ms(30));
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
        cio_batch_cancel(io, &batch);
        close_pairs(io, a, b, N);
        CIO_SKIP("concurrency unavailable");
    }
    assert_err(err, CIO_E_TIMEOUT);
    assert_true(now_ms(io) - t0 >= 30);
    assert_false(cio_batch_next(&batch, NULL, NULL));
    assert_ok(cio_stream_write_all(io, &a[2], "two", 3));
    assert_ok(cio_batch_await_concurrent(io, &batch, cio_timeout_ms(5000)));
    uint32_t idx;
    cio_operation done;
    assert_true(cio_batch_next(&batch, &idx, &done));
    assert_int_equal(idx, N - 1 - 2);
    assert_ok(done.err);
    assert_int_equal(done.count, 3);
    assert_memory_equal(bufs[2], "two", 3);
    assert_false(cio_batch_next(&batch, NULL, NULL));
    t0 = now_ms(io);
    cio_batch_cancel(io, &batch);
    assert_in_range(now_ms(io) - t0, 0, 1000);
    assert_false(cio_batch_next(&batch, NULL, NULL)); /* the canceled ones are gone */
    /* the slots are free again, the streams usable */
    for (uint32_t i = 0; i < N; i++) {
        assert_ok(cio_stream_write_all(io, &a[i], "ok", 2));
        size_t n = 0;
        assert_ok(cio_stream_read_timeout(io, &b[i], bufs[i], sizeof bufs[i], &n, cio_timeout_ms(5000)));
        assert_int_equal(n, 2);
        assert_memory_equal(bufs[i], "ok", 2);
    }
    close_pairs(io, a, b, N);
    assert_int_equal(cio_test_count_handles(), fds);
}

/* Cancel with everything in flight, many times: nothing leaks (descriptors here; memory under the
 * sanitizers and valgrind), nothing is left to take. */
static void test_batch_cancel_leaks_nothing(void **state)
{
    cio_io io = cio_test_io(state);
    enum { N = 16 };
    cio_stream a[N], b[N];
    char bufs[N][8];
    cio_iovec iov[N];
    cio_batch_slot slots[N + 1];
    socket_pairs(io, a, b, N);
    int fds = cio_test_count_handles();
    cio_server srv;
    listen_loopback_n(io, PAIRS * 2, &srv);
    for (int round = 0; round < 10; round++) {
        cio_batch batch;
        assert_ok(cio_batch_init(&batch, slots, N + 1));
        for (uint32_t i = 0; i < N; i++) {
            iov[i] = (cio_iovec){bufs[i], sizeof bufs[i]};
            cio_operation op = read_op(&b[i], &iov[i]);
            assert_ok(cio_batch_add(&batch, &op, NULL));
        }
        cio_operation acc;
        memset(&acc, 0, sizeof acc);
        acc.kind = CIO_OP_NET_ACCEPT;
        acc.u.net_accept.listener = srv.handle;
        assert_ok(cio_batch_add(&batch, &acc, NULL));
        cio_err err = cio_batch_await_concurrent(io, &batch, cio_timeout_ms(round % 2 == 0 ? 0 : 5));
        if (err == CIO_E_CONCURRENCY_UNAVAILABLE) {
            cio_batch_cancel(io, &batch);
            CIO_SKIP("concurrency unavailable");
        }
        assert_err(err, CIO_E_TIMEOUT);
        cio_batch_cancel(io, &batch);
        assert_false(cio_batch_next(&batch, NULL, NULL));
    }
    /* a submitted batch never awaited: cancel just drops it */
    cio_batch batch;
    assert_ok(cio_batch_init(&batch, slots, 1));
    cio_operation op = read_op(&b[0], &iov[0]);
    assert_ok(cio_batch_add(&batch, &op, NULL));
    cio_batch_cancel(io, &batch);
    assert_false(cio_batch_next(&batch, NULL, NULL));
    cio_server_close(io, &srv);
    assert_int_equal(cio_test_count_handles(), fds - 1 + 1); /* the listener came and went */
    close_pairs(io, a, b, N);
}

/* ---- files (every target, WASI included) ------------------------------------------------------- */

static void test_batch_files(void **state)
{
    cio_io io = cio_test_io(state);
    enum { N = 8 };
    char dir_path[512];
    assert_true(cio_test_make_tmp_dir(dir_path, sizeof dir_path, "cio-batch"));
    cio_dir dir;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), dir_path, NULL, &dir));
    cio_file files[N];
    char bufs[N][16];
    cio_iovec iov[N];
    cio_batch_slot slots[N];
    cio_batch batch;
    assert_ok(cio_batch_init(&batch, slots, N));
    for (uint32_t i = 0; i < N; i++) {
        char name[16], text[16];
        snprintf(name, sizeof name, "f%u", (unsigned)i);
        int len = snprintf(text, sizeof text, "file %u", (unsigned)i);
        cio_file w;
        assert_ok(cio_dir_create_file(io, dir, name, NULL, &w));
        cio_operation op;
        memset(&op, 0, sizeof op);
        cio_const_iovec wv = {text, (size_t)len};
        op.kind = CIO_OP_FILE_WRITE_STREAMING;
        op.u.file_write_streaming.file = w;
        op.u.file_write_streaming.iov = &wv;
        op.u.file_write_streaming.iovcnt = 1;
        assert_ok(cio_operate(io, &op));
        assert_ok(op.err);
        assert_int_equal(op.count, (size_t)len);
        cio_file_close(io, w);
        assert_ok(cio_dir_open_file(io, dir, name, NULL, &files[i]));
        iov[i] = (cio_iovec){bufs[i], sizeof bufs[i]};
        memset(&op, 0, sizeof op);
        op.kind = CIO_OP_FILE_READ_STREAMING;
        op.u.file_read_streaming.file = files[i];
        op.u.file_read_streaming.iov = &iov[i];
        op.u.file_read_streaming.iovcnt = 1;
        assert_ok(cio_batch_add(&batch, &op, NULL));
    }
    size_t got = 0;
    while (got < N) {
        assert_ok(cio_batch_await_async(io, &batch));
        uint32_t idx;
        cio_operation done;
        while (cio_batch_next(&batch, &idx, &done)) {
            char want[16];
            int len = snprintf(want, sizeof want, "file %u", (unsigned)idx);
            assert_ok(done.err);
            assert_int_equal(done.count, (size_t)len);
            assert_memory_equal(bufs[idx], want, (size_t)len);
            got++;
        }
    }
    /* ioctl is not implemented yet: it says so in its result */
    cio_operation ioc;
    memset(&ioc, 0, sizeof ioc);
    ioc.kind = CIO_OP_DEVICE_IO_CONTROL;
    ioc.u.device_io_control.file = files[0];
    assert_ok(cio_operate(io, &ioc));
    assert_err(ioc.err, CIO_E_OPERATION_UNSUPPORTED);
    for (uint32_t i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%u", (unsigned)i);
        cio_file_close(io, files[i]);
        assert_ok(cio_dir_delete_file(io, dir, name));
    }
    cio_dir_close(io, dir);
    assert_ok(cio_dir_delete_dir(io, cio_dir_cwd(), dir_path));
}

static void test_operate_bad_arguments(void **state)
{
    cio_io io = cio_test_io(state);
    cio_operation op;
    memset(&op, 0, sizeof op);
    assert_err(cio_operate(io, &op), CIO_E_INVALID_ARGUMENT); /* CIO_OP_NONE */
    op.kind = (cio_op_kind)99;
    assert_err(cio_operate_timeout(io, &op, cio_timeout_ms(1)), CIO_E_INVALID_ARGUMENT);
    cio_batch_slot slot;
    cio_batch batch;
    assert_err(cio_batch_init(&batch, &slot, 0), CIO_E_INVALID_ARGUMENT);
    assert_ok(cio_batch_init(&batch, &slot, 1));
    assert_err(cio_batch_add(&batch, &op, NULL), CIO_E_INVALID_ARGUMENT);
    assert_false(cio_batch_next(&batch, NULL, NULL));
    assert_ok(cio_batch_await_async(io, &batch)); /* nothing to wait for */
    assert_ok(cio_batch_await_concurrent(io, &batch, cio_timeout_ms(1000)));
    cio_batch_cancel(io, &batch);
    assert_null_arg(cio_operate(io, NULL));
    assert_null_arg(cio_batch_add(NULL, &op, NULL));
}

/* The device_io_control operation on a real object: how many bytes wait in a pipe. POSIX: ioctl
 * FIONREAD (its int argument gets the count); Windows: FSCTL_PIPE_PEEK (the output buffer gets
 * FILE_PIPE_PEEK_BUFFER, whose ReadDataAvailable is the count). A request the object does not
 * know is OperationUnsupported; WASI has no ioctl: OperationUnsupported. Through cio_operate and
 * through a batch. */
#if defined(CIO_OS_WINDOWS)
typedef struct {
    ULONG state, read_data_available, number_of_messages, message_length;
    char data[1];
} peek_buffer;                      /* FILE_PIPE_PEEK_BUFFER */
#define PIPE_PEEK_CODE 0x0011400Cul /* FSCTL_PIPE_PEEK */
#define BAD_CODE 0x00ff0003ul       /* no driver's request */
#else
#include <sys/ioctl.h>
#define BAD_CODE 0x7fe0ul /* no object's request: ENOTTY */
#endif

static cio_operation ioctl_op(cio_file f, unsigned long code, void *arg, void *out, size_t out_len)
{
    cio_operation op;
    memset(&op, 0, sizeof op);
    op.kind = CIO_OP_DEVICE_IO_CONTROL;
    op.u.device_io_control.file = f;
    op.u.device_io_control.code = code;
    op.u.device_io_control.arg = arg;
    op.u.device_io_control.out = out;
    op.u.device_io_control.out_len = out_len;
    return op;
}

/* Bytes waiting in the pipe's read end, through cio_operate. */
static size_t pending_bytes(cio_io io, cio_file r)
{
#if defined(CIO_OS_WINDOWS)
    peek_buffer pb;
    memset(&pb, 0, sizeof pb);
    cio_operation op = ioctl_op(r, PIPE_PEEK_CODE, NULL, &pb, offsetof(peek_buffer, data));
    assert_ok(cio_operate(io, &op));
    assert_ok(op.err);
    assert_int_equal(op.count, offsetof(peek_buffer, data));
    return pb.read_data_available;
#else
    int n = -1;
    cio_operation op = ioctl_op(r, FIONREAD, &n, NULL, 0);
    assert_ok(cio_operate(io, &op));
    assert_ok(op.err);
    assert_true(n >= 0);
    return (size_t)n;
#endif
}

static void test_device_io_control(void **state)
{
    cio_io io = cio_test_io(state);
    cio_file r = CIO_FILE_INVALID, w = CIO_FILE_INVALID; /* -O2 cannot see the skip end the test */
    if (!make_pipe(&r, &w)) {
        cio_operation op = ioctl_op(CIO_FILE_INVALID, 1, NULL, NULL, 0);
        assert_ok(cio_operate(io, &op));
        assert_err(op.err, CIO_E_OPERATION_UNSUPPORTED);
        CIO_SKIP("no pipes and no ioctl on this target (OperationUnsupported checked)");
    }
    assert_int_equal(pending_bytes(io, r), 0);
    size_t wrote = 0;
    assert_ok(cio_file_write_streaming(io, w, "hello", 5, &wrote));
    assert_int_equal(wrote, 5);
    assert_int_equal(pending_bytes(io, r), 5);
    /* in a batch, beside a read that takes the bytes afterwards */
    cio_batch_slot slots[1];
    cio_batch b;
    assert_ok(cio_batch_init(&b, slots, 1));
#if defined(CIO_OS_WINDOWS)
    peek_buffer pb;
    memset(&pb, 0, sizeof pb);
    cio_operation op = ioctl_op(r, PIPE_PEEK_CODE, NULL, &pb, offsetof(peek_buffer, data));
#else
    int n = -1;
    cio_operation op = ioctl_op(r, FIONREAD, &n, NULL, 0);
#endif
    assert_ok(cio_batch_add(&b, &op, NULL));
    assert_ok(cio_batch_await_async(io, &b));
    cio_operation done;
    assert_true(cio_batch_next(&b, NULL, &done));
    assert_ok(done.err);
#if defined(CIO_OS_WINDOWS)
    assert_int_equal(pb.read_data_available, 5);
#else
    assert_int_equal(n, 5);
#endif
    char buf[8];
    size_t got = 0;
    assert_ok(cio_file_read_streaming(io, r, buf, sizeof buf, &got));
    assert_int_equal(got, 5);
    assert_int_equal(pending_bytes(io, r), 0);
    /* a request the pipe does not know */
    cio_operation bad = ioctl_op(r, BAD_CODE, NULL, NULL, 0);
    assert_ok(cio_operate(io, &bad));
    assert_err(bad.err, CIO_E_OPERATION_UNSUPPORTED);
    cio_file_close(io, r);
    cio_file_close(io, w);
}

/* ---- select that cannot deadlock --------------------------------------------------------------- */

typedef enum { WON_READ = 1, WON_SLEEP = 2 } winner;

typedef struct race_result {
    winner which;
    cio_err err;
} race_result;

typedef struct race_ctx {
    cio_io io;
    cio_stream stream;
    int sleep_ms;
} race_ctx;

static cio_err race_read(void *context, void *result)
{
    race_ctx *c = (race_ctx *)context;
    race_result *r = (race_result *)result;
    char buf[8];
    size_t n = 0;
    r->which = WON_READ;
    r->err = cio_stream_read(c->io, &c->stream, buf, sizeof buf, &n);
    return r->err;
}

static cio_err race_sleep(void *context, void *result)
{
    race_ctx *c = (race_ctx *)context;
    race_result *r = (race_result *)result;
    r->which = WON_SLEEP;
    r->err = cio_sleep(c->io, cio_timeout_ms(c->sleep_ms));
    return r->err;
}

/* The new user's idle timeout: a blocking read raced against a sleep with cio_select_async, on a
 * Threaded instance whose async limit is reached (0: async always inline). Before issue 19 the read
 * ran inline on the awaiter and the sleep never started: a hang. */
static void test_select_read_vs_sleep_no_deadlock(void **state)
{
    cio_io io = cio_test_io(state);
    cio_threaded *t = cio_test_threaded(state);
    if (t != NULL)
        cio_threaded_set_async_limit(t, 0);
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    for (int round = 0; round < 3; round++) {
        race_result buf[2];
        cio_select sel;
        cio_select_init(&sel, buf, sizeof buf[0], 2);
        race_ctx c = {io, b, 30};
        int64_t t0 = now_ms(io);
        cio_select_async(io, &sel, race_read, &c, sizeof c);
        cio_select_async(io, &sel, race_sleep, &c, sizeof c);
        race_result r;
        assert_ok(cio_select_await(io, &sel, &r));
        assert_int_equal(r.which, WON_SLEEP);
        assert_ok(r.err);
        assert_true(now_ms(io) - t0 >= 30);
        cio_select_cancel_discard(io, &sel); /* knocks the read out */
    }
    /* nothing was read by the canceled reads: the stream still delivers everything */
    assert_ok(cio_stream_write_all(io, &a, "late", 4));
    char rb[8];
    size_t n = 0;
    assert_ok(cio_stream_read(io, &b, rb, sizeof rb, &n));
    assert_int_equal(n, 4);
    close_pairs(io, &a, &b, 1);
}

/* ---- queued tasks behind workers blocked in reads ------------------------------------------------ */

enum { STARVE_READERS = 16 };

typedef struct starve_ctx {
    cio_io io;
    cio_stream *streams; /* the readers' sides (readers) or the writers' sides (the writer) */
    size_t index;
} starve_ctx;

static cio_err starve_reader(void *context)
{
    starve_ctx *c = (starve_ctx *)context;
    char buf[4];
    size_t n = 0;
    cio_err e = cio_stream_read(c->io, &c->streams[c->index], buf, sizeof buf, &n);
    return e == CIO_OK && n == 0 ? CIO_E_UNEXPECTED : e;
}

static cio_err starve_writer(void *context)
{
    starve_ctx *c = (starve_ctx *)context;
    for (size_t i = 0; i < STARVE_READERS; i++) {
        cio_err e = cio_stream_write_all(c->io, &c->streams[i], "x", 1);
        if (e != CIO_OK)
            return e;
    }
    return CIO_OK;
}

/* More concurrent tasks blocked in reads than the Threaded pool starts workers for at once (its
 * target: max(CPUs, 4)), then the one task that unblocks them, queued behind them: concurrent still
 * means a unit of concurrency each (the pool's monitor starts workers while the queue makes no
 * progress), so the writer runs and every reader returns. Twice, the second time with the workers
 * of the first idle. */
static void test_blocked_readers_do_not_starve_the_queue(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    static cio_stream a[STARVE_READERS], b[STARVE_READERS];
    socket_pairs(io, a, b, STARVE_READERS);
    for (int round = 0; round < 2; round++) {
        cio_future readers[STARVE_READERS], writer;
        for (size_t i = 0; i < STARVE_READERS; i++) {
            starve_ctx c = {io, b, i};
            CIO_REQUIRE_CONCURRENT(cio_concurrent(io, starve_reader, &c, sizeof c, &readers[i]));
        }
        starve_ctx w = {io, a, 0};
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, starve_writer, &w, sizeof w, &writer));
        assert_ok(cio_await(io, &writer));
        for (size_t i = 0; i < STARVE_READERS; i++)
            assert_ok(cio_await(io, &readers[i]));
    }
    close_pairs(io, a, b, STARVE_READERS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_batch_64_reads_concurrent),
        CIO_TESTS(test_batch_64_reads_async),
        CIO_TESTS(test_batch_timeout_then_cancel),
        CIO_TESTS(test_batch_cancel_leaks_nothing),
        CIO_TESTS(test_batch_files),
        CIO_TESTS(test_operate_bad_arguments),
        CIO_TESTS(test_device_io_control),
        CIO_TESTS(test_select_read_vs_sleep_no_deadlock),
        CIO_TESTS(test_blocked_readers_do_not_starve_the_queue),
    };
    return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
