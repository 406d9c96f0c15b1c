/*
 * The io_uring flavour's zero-copy whole-file slots (issue 21, src/evented/splice_uring.c): that
 * cio_file_write_file_streaming into a pipe and cio_net_write_file (file -> pipe -> socket) run as
 * IORING_OP_SPLICE where the kernel has it (the ring's per-opcode submission counters), that every
 * answer and count is the Threaded backend's for the same script (a file the kernel will not splice
 * from, open for writing only, included: the ring's refusal hands the call on), that file to file
 * stays on copy_file_range (no SPLICE), and that with CIO_EVENTED_URING_NATIVE=0 the same script
 * gives the same answers with no SPLICE. The cancel tests run on every backend: a transfer into a
 * pipe or a socket nobody reads ends Canceled with exactly the bytes the reader side holds
 * (FIONREAD), and no descriptor is left behind.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "backends.h"
#include "evented.h"
#include "uring.h"

#include "asserts.h"
#include "os_helpers.h"
#include "uring_helpers.h"

#define BIG ((uint64_t)1 << 20)
enum { STEPS = 8 };

static unsigned char pattern(uint64_t i)
{
    return (unsigned char)((i * 7u + i / 251u) & 0xffu);
}

/* ---- a reader thread: everything from fd until the end (EOF), waiting on a non-blocking one ---- */
typedef struct reader {
    pthread_t thread;
    int fd;
    unsigned char *buf;
    size_t len;
} reader;

static void *read_all(void *p)
{
    reader *r = (reader *)p;
    size_t cap = 1 << 16;
    r->buf = (unsigned char *)malloc(cap);
    for (;;) {
        if (r->len == cap) {
            cap *= 2;
            r->buf = (unsigned char *)realloc(r->buf, cap);
        }
        ssize_t n = read(r->fd, r->buf + r->len, cap - r->len);
        if (n > 0) {
            r->len += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd pfd = {r->fd, POLLIN, 0};
            (void)poll(&pfd, 1, 1000);
            continue;
        }
        return NULL;
    }
}

static void reader_start(reader *r, int fd)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    assert_int_equal(pthread_create(&r->thread, NULL, read_all, r), 0);
}

/* Joins the reader and checks it got n bytes of the pattern from `from`. */
static void reader_check(reader *r, uint64_t from, uint64_t n)
{
    assert_int_equal(pthread_join(r->thread, NULL), 0);
    assert_int_equal(r->len, n);
    for (uint64_t i = 0; i < n; i++)
        if (r->buf[i] != pattern(from + i))
            fail_msg("byte %llu: %u, want %u", (unsigned long long)i, r->buf[i], pattern(from + i));
    free(r->buf);
}

/* ---- the script ---- */
typedef struct answer {
    cio_err err;
    uint64_t n;
    uint64_t splices; /* IORING_OP_SPLICE submitted during the step (0 off the ring) */
} answer;

typedef struct script_ctx {
    cio_io io;
    struct cio_evented *e; /* the io_uring instance, or NULL */
    const char *dir;
    answer *got;
} script_ctx;

static uint64_t splices(const script_ctx *c)
{
    return c->e != NULL ? cio__e_uring_count(c->e, IORING_OP_SPLICE) : 0;
}

/* A file into a pipe a reader drains: streaming, or positional at out_offset. */
static void to_pipe(script_ctx *c, answer *a, bool positional, cio_file in, uint64_t in_offset, uint64_t len)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    reader r;
    reader_start(&r, p[0]);
    uint64_t s = splices(c);
    a->err = positional ? cio_file_write_file_positional(c->io, (cio_file){p[1]}, 0, in, in_offset, len, &a->n)
                        : cio_file_write_file_streaming(c->io, (cio_file){p[1]}, in, in_offset, len, &a->n);
    a->splices = splices(c) - s;
    close(p[1]);
    reader_check(&r, in_offset, a->n);
    close(p[0]);
}

/* A file to a socket pair's end a reader drains. */
static void to_socket(script_ctx *c, answer *a, cio_file in, uint64_t offset, uint64_t len)
{
    cio_stream pair[2];
    assert_ok(cio_net_socket_pair(c->io, pair));
    reader r;
    reader_start(&r, pair[1].handle);
    uint64_t s = splices(c);
    a->err = cio_net_write_file(c->io, &pair[0], in, offset, len, &a->n);
    a->splices = splices(c) - s;
    assert_ok(cio_stream_close(c->io, &pair[0]));
    reader_check(&r, offset, a->n);
    assert_ok(cio_stream_close(c->io, &pair[1]));
}

static cio_err script_body(void *context)
{
    script_ctx *c = (script_ctx *)context;
    cio_io io = c->io;
    answer *got = c->got;
    cio_dir d;
    assert_ok(cio_dir_open_dir(io, cio_dir_cwd(), c->dir, NULL, &d));
    cio_file big, copy;
    static const cio_create_file_options rw = {.read = true};
    assert_ok(cio_dir_create_file(io, d, "big", &rw, &big));
    unsigned char *data = (unsigned char *)malloc(BIG);
    for (uint64_t i = 0; i < BIG; i++)
        data[i] = pattern(i);
    size_t w = 0;
    assert_ok(cio_file_write_positional(io, big, data, BIG, 0, &w));
    assert_int_equal(w, BIG);
    int i = 0;
    to_pipe(c, &got[i++], false, big, 0, BIG);          /* file -> pipe, 1 MiB */
    to_pipe(c, &got[i++], false, big, 1000, 5000);      /* at an offset */
    to_pipe(c, &got[i++], false, big, BIG - 100, 1000); /* the end of the file before len */
    /* a file open for writing only: the SPLICE's EBADF hands the call to the helper pool, whose
     * copy_file_range refuses it too, and the library's read says NotOpenForReading */
    cio_file wo;
    assert_ok(cio_dir_create_file(io, d, "write_only", NULL, &wo));
    assert_ok(cio_file_write_positional(io, wo, data, 1000, 0, &w));
    to_pipe(c, &got[i++], false, wo, 0, 1000);
    cio_file_close(io, wo);
    assert_ok(cio_dir_delete_file(io, d, "write_only"));
    /* file -> file, positional: copy_file_range on the helper pool, never SPLICE */
    assert_ok(cio_dir_create_file(io, d, "copy", &rw, &copy));
    uint64_t s = splices(c);
    got[i].err = cio_file_write_file_positional(io, copy, 7, big, 3, 200000, &got[i].n);
    got[i].splices = splices(c) - s;
    i++;
    unsigned char *back = (unsigned char *)malloc(200000);
    size_t r = 0;
    assert_ok(cio_file_read_positional(io, copy, back, 200000, 7, &r));
    assert_int_equal(r, 200000);
    assert_memory_equal(back, data + 3, 200000);
    free(back);
    cio_file_close(io, copy);
    to_socket(c, &got[i++], big, 0, BIG);         /* file -> socket, 1 MiB */
    to_socket(c, &got[i++], big, 12345, 100000);  /* at an offset */
    to_socket(c, &got[i++], big, BIG - 10, 1000); /* the end of the file before len */
    assert_int_equal(i, STEPS);
    free(data);
    cio_file_close(io, big);
    assert_ok(cio_dir_delete_file(io, d, "big"));
    assert_ok(cio_dir_delete_file(io, d, "copy"));
    cio_dir_close(io, d);
    return CIO_OK;
}

static const answer want[STEPS] = {
    {CIO_OK, BIG, 0},    {CIO_OK, 5000, 0}, {CIO_OK, 100, 0},    {CIO_E_NOT_OPEN_FOR_READING, 0, 0},
    {CIO_OK, 200000, 0}, {CIO_OK, BIG, 0},  {CIO_OK, 100000, 0}, {CIO_OK, 10, 0},
};
/* The fewest SPLICEs each step needs on the ring (a pipe holds 64 KiB: a chunk each; a socket's
 * chunk is a second SPLICE, pipe -> socket, or more); none where the ring is not used. */
static const uint64_t want_splices[STEPS] = {BIG >> 16, 1, 1, 1, 0, 2 * (BIG >> 16), 4, 2};

static void run_script(cio_io io, struct cio_evented *e, answer got[STEPS])
{
    char dir[] = "/tmp/cio-test-uring-splice-XXXXXX";
    assert_non_null(mkdtemp(dir));
    script_ctx ctx = {io, e, dir, got};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, script_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_await(io, &fut));
    assert_int_equal(rmdir(dir), 0);
}

static void check_answers(const answer got[STEPS], const answer threaded[STEPS])
{
    for (int i = 0; i < STEPS; i++) {
        if (got[i].err != threaded[i].err || got[i].err != want[i].err || got[i].n != threaded[i].n ||
            got[i].n != want[i].n)
            print_message("step %d: %s %llu here, %s %llu on Threaded, %s %llu wanted\n", i, cio_err_name(got[i].err),
                          (unsigned long long)got[i].n, cio_err_name(threaded[i].err),
                          (unsigned long long)threaded[i].n, cio_err_name(want[i].err), (unsigned long long)want[i].n);
        assert_int_equal(got[i].err, threaded[i].err);
        assert_int_equal(got[i].err, want[i].err);
        assert_int_equal(got[i].n, threaded[i].n);
        assert_int_equal(got[i].n, want[i].n);
    }
}

static void threaded_answers(answer got[STEPS])
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    run_script(cio_threaded_io(t), NULL, got);
    cio_threaded_destroy(t);
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

static void test_splice_runs_on_the_ring(void **state)
{
    cio_io io;
    struct cio_evented *e = uring_instance(state, &io);
    if (!cio__e_uring_has(e, IORING_OP_SPLICE))
        CIO_SKIP("the kernel's io_uring has no IORING_OP_SPLICE (the helper pool runs both slots)");
    answer got[STEPS], threaded[STEPS];
    int fds = cio_test_count_handles();
    run_script(io, e, got);
    assert_int_equal(cio_test_count_handles(), fds);
    uint64_t total = 0;
    for (int i = 0; i < STEPS; i++) {
        print_message("step %d: %s, %llu bytes, %llu SPLICEs\n", i, cio_err_name(got[i].err),
                      (unsigned long long)got[i].n, (unsigned long long)got[i].splices);
        total += got[i].splices;
        if (want_splices[i] == 0)
            assert_int_equal(got[i].splices, 0);
        else
            assert_true(got[i].splices >= want_splices[i]);
    }
    print_message("SPLICEs in all: %llu\n", (unsigned long long)total);
    threaded_answers(threaded);
    check_answers(got, threaded);
}

/* CIO_EVENTED_URING_NATIVE=0: the helper pool for both slots, no SPLICE, the same answers. */
static void test_splice_fallback(void **state)
{
    cio_io unused;
    (void)uring_instance(state, &unused);
    cio_evented *e = uring_fallback(1);
    answer got[STEPS], threaded[STEPS];
    run_script(cio_evented_io(e), (struct cio_evented *)e, got);
    for (int i = 0; i < STEPS; i++)
        assert_int_equal(got[i].splices, 0);
    assert_int_equal(cio__e_uring_count((struct cio_evented *)e, IORING_OP_SPLICE), 0);
    cio_evented_destroy(e);
    threaded_answers(threaded);
    check_answers(got, threaded);
}

/* ---- cancel: a transfer nobody reads, on every backend ---- */
typedef struct cancel_ctx {
    cio_io io;
    cio_file in;
    bool socket;
    int out;            /* the pipe's write end */
    cio_stream *stream; /* or the socket's */
    uint64_t *n;        /* the caller's (the task has a copy of this context) */
} cancel_ctx;

static cio_err cancel_body(void *context)
{
    cancel_ctx *c = (cancel_ctx *)context;
    return c->socket ? cio_net_write_file(c->io, c->stream, c->in, 0, UINT64_MAX, c->n)
                     : cio_file_write_file_streaming(c->io, (cio_file){c->out}, c->in, 0, UINT64_MAX, c->n);
}

static void cancel_case(void **state, bool socket)
{
    cio_io io = cio_test_io(state);
    cio_test_backend *b = (cio_test_backend *)*state;
    struct cio_evented *e = b == &cio_test_backend_uring ? (struct cio_evented *)b->instance : NULL;
    char path[] = "/tmp/cio-test-uring-splice-cancel-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    const size_t size = 8u << 20; /* more than a socket's buffers hold */
    unsigned char *data = (unsigned char *)calloc(1, size);
    assert_int_equal(write(fd, data, size), (ssize_t)size);
    free(data);
    int fds = cio_test_count_handles();
    uint64_t s = e != NULL ? cio__e_uring_count(e, IORING_OP_SPLICE) : 0;
    int p[2] = {-1, -1};
    cio_stream pair[2];
    int reader_side;
    if (socket) {
        assert_ok(cio_net_socket_pair(io, pair));
        reader_side = pair[1].handle;
    } else {
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        reader_side = p[0];
    }
    uint64_t n = 0;
    cancel_ctx ctx = {io, (cio_file){fd}, socket, p[1], &pair[0], &n};
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, cancel_body, &ctx, sizeof ctx, &fut));
    assert_ok(cio_sleep(io, cio_timeout_ms(100)));
    assert_err(cio_cancel(io, &fut), CIO_E_CANCELED);
    int queued = -1;
    assert_int_equal(ioctl(reader_side, FIONREAD, &queued), 0);
    print_message("canceled after %llu bytes (%d queued for the reader), %llu SPLICEs\n", (unsigned long long)n, queued,
                  (unsigned long long)(e != NULL ? cio__e_uring_count(e, IORING_OP_SPLICE) - s : 0));
    assert_true(n > 0);
    assert_int_equal((uint64_t)queued, n);
    if (e != NULL && cio__e_uring_has(e, IORING_OP_SPLICE))
        assert_true(cio__e_uring_count(e, IORING_OP_SPLICE) - s >= 1);
    if (socket) {
        assert_ok(cio_stream_close(io, &pair[0]));
        assert_ok(cio_stream_close(io, &pair[1]));
    } else {
        close(p[0]);
        close(p[1]);
    }
    assert_int_equal(cio_test_count_handles(), fds); /* the call's own pipe closed */
    close(fd);
}

static void test_cancel_into_pipe(void **state)
{
    cancel_case(state, false);
}

static void test_cancel_into_socket(void **state)
{
    cancel_case(state, true);
}

/* A socket whose peer is gone: BrokenPipe with nothing counted on every backend (the SPLICE's EPIPE
 * hands the call to the helper pool's sendfile, which says it), and no SIGPIPE ends the process. */
static void test_broken_pipe(void **state)
{
    cio_io io = cio_test_io(state);
    cio_test_backend *b = (cio_test_backend *)*state;
    struct cio_evented *e = b == &cio_test_backend_uring ? (struct cio_evented *)b->instance : NULL;
    char path[] = "/tmp/cio-test-uring-splice-epipe-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    static unsigned char data[100000];
    assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
    int fds = cio_test_count_handles();
    cio_stream pair[2];
    assert_ok(cio_net_socket_pair(io, pair));
    assert_ok(cio_stream_close(io, &pair[1]));
    uint64_t n = 1, s = e != NULL ? cio__e_uring_count(e, IORING_OP_SPLICE) : 0;
    assert_err(cio_net_write_file(io, &pair[0], (cio_file){fd}, 0, sizeof data, &n), CIO_E_BROKEN_PIPE);
    assert_int_equal(n, 0);
    if (e != NULL && cio__e_uring_has(e, IORING_OP_SPLICE)) /* into the pipe, then the socket's EPIPE */
        assert_int_equal(cio__e_uring_count(e, IORING_OP_SPLICE) - s, 2);
    assert_ok(cio_stream_close(io, &pair[0]));
    assert_int_equal(cio_test_count_handles(), fds);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_splice_runs_on_the_ring), CIO_TESTS(test_splice_fallback), CIO_TESTS(test_cancel_into_pipe),
        CIO_TESTS(test_cancel_into_socket),      CIO_TESTS(test_broken_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
