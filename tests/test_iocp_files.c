/*
 * The Evented backend's files on Windows (issue 24): files it opens are asynchronous handles, read
 * and written as overlapped operations on the loops' completion ports (src/evented/fs_rw_iocp.c),
 * and the Threaded backend's calls work on such handles too (src/os/fs_windows_io.c).
 *
 * What each test shows:
 * - round_trip: a file Evented opens is asynchronous (FileModeInformation), and positional and
 *   streaming transfers, small and of several MiB, vectored, read back what was written; the
 *   streaming position (FilePositionInformation) follows, and file_seek moves it.
 * - eof: a read at or past the end is 0 bytes, not an error, positional and streaming.
 * - append: a handle opened overlapped with FILE_APPEND_DATA only appends, whatever the position.
 * - many_fibers: 64 fibers on two loops write and read back their own blocks of one file at once.
 * - cross: a Threaded io reads and writes a file Evented opened (streaming at its stored position,
 *   positional), and its stat, set_length, sync, lock, memory maps and copy work; an Evented io reads a file
 *   Threaded opened (synchronous: the helper pool).
 * - pipe_cancel: a read that pends (an overlapped named pipe with no data): canceled, it is Canceled
 *   and the pipe still works; canceled by someone else's CancelIoEx (STATUS_CANCELLED), it is made
 *   again and gets the data written later; the same through a Threaded io, whose cancel knocks the
 *   wait out and CancelIoEx's the transfer; a timed read times out and consumes nothing.
 * - stdio: a child's stdin and stdout are files Evented opened (spawn reopens them synchronously).
 * Every test checks the process's handles before and after (no leak); test_iocp_files_faults.c
 * makes every new call site fail.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"
#include "cio/evented.h"
#include "cio/ntapi.h"
#include "cio/ntstatus.h"
#include "internal/cio_oscalls_test.h"

#include "iocp_files_helpers.h"


/* ---- round trips -------------------------------------------------------------------------------------------- */

struct rt {
    cio_io io;
    cio_file f;
    size_t big;
};

static cio_err rt_fiber(void *ctx)
{
    struct rt *r = *(struct rt **)ctx;
    cio_io io = r->io;
    cio_file f = r->f;
    /* positional, vectored, several MiB: three buffers of odd sizes */
    unsigned char *src = pattern(r->big, 1), *back = (unsigned char *)calloc(1, r->big);
    assert_non_null(back);
    size_t a = r->big / 3 + 17, b = r->big / 3 - 5, c = r->big - a - b;
    cio_const_iovec wv[3] = {{src, a}, {src + a, b}, {src + a + b, c}};
    size_t n = 0;
    assert_ok(cio_file_write_positional_v(io, f, wv, 3, 4096, &n));
    assert_int_equal(n, r->big);
    cio_iovec rv[3] = {{back, c}, {back + c, a}, {back + c + a, b}};
    assert_ok(cio_file_read_positional_v(io, f, rv, 3, 4096, &n));
    assert_int_equal(n, r->big);
    assert_memory_equal(src, back, r->big);
    uint64_t pos = 99;
    assert_ok(cio_file_position(io, f, &pos));
    assert_int_equal(pos, 0); /* positional calls leave the position */
    /* streaming, small */
    assert_ok(cio_file_write_all(io, f, "abc", 3));
    assert_ok(cio_file_write_all(io, f, "def", 3));
    assert_ok(cio_file_position(io, f, &pos));
    assert_int_equal(pos, 6);
    char small[8] = {0};
    assert_ok(cio_file_read_positional(io, f, small, 6, 0, &n));
    assert_int_equal(n, 6);
    assert_memory_equal(small, "abcdef", 6);
    assert_ok(cio_file_seek_to(io, f, 2));
    assert_ok(cio_file_read_all(io, f, small, 3, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(small, "cde", 3);
    /* streaming, several MiB, vectored, from the start */
    assert_ok(cio_file_seek_to(io, f, 0));
    size_t done = 0;
    while (done < r->big) {
        cio_const_iovec sv[2] = {{src + done, (r->big - done) / 2},
                                 {src + done + (r->big - done) / 2, r->big - done - (r->big - done) / 2}};
        assert_ok(cio_file_write_streaming_v(io, f, sv, 2, &n));
        assert_true(n > 0);
        done += n;
    }
    assert_ok(cio_file_position(io, f, &pos));
    assert_int_equal(pos, r->big);
    assert_ok(cio_file_seek_to(io, f, 0));
    memset(back, 0, r->big);
    assert_ok(cio_file_read_all(io, f, back, r->big, &n));
    assert_int_equal(n, r->big);
    assert_memory_equal(src, back, r->big);
    free(src);
    free(back);
    return CIO_OK;
}

static void body_round_trip(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    const char *name = fresh("rt");
    struct rt r = {io, create(io, name), 5 * MIB + 333};
    assert_true(is_async(r.f));
    struct rt *rp = &r;
    cio_future f;
    assert_ok(cio_concurrent(io, rt_fiber, &rp, sizeof rp, &f));
    assert_ok(cio_await(io, &f));
    /* from a thread that is no fiber (cio__e_run makes it one for the call) */
    char buf[3];
    size_t n = 0;
    assert_ok(cio_file_read_positional(io, r.f, buf, 3, 1, &n));
    assert_int_equal(n, 3);
    assert_ok(cio_file_close(io, r.f));
    remove_file(io, name);
    cio_evented_destroy(e);
}

static void test_iocp_files_round_trip(void **state)
{
    (void)state;
    body_round_trip(); /* first: what Wine makes once per process (seen: one more object by the 4th run) */
    body_round_trip();
    run_counted(body_round_trip, "round trip");
}

/* ---- end of file ---------------------------------------------------------------------------------------- */

static void body_eof(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    const char *name = fresh("eof");
    cio_file f = create(io, name);
    char buf[16];
    size_t n = 7;
    assert_ok(cio_file_read_streaming(io, f, buf, sizeof buf, &n)); /* empty */
    assert_int_equal(n, 0);
    assert_ok(cio_file_write_all(io, f, "0123456789", 10));
    assert_ok(cio_file_read_streaming(io, f, buf, sizeof buf, &n)); /* at the end */
    assert_int_equal(n, 0);
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 10, &n));
    assert_int_equal(n, 0);
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 1000, &n));
    assert_int_equal(n, 0);
    assert_ok(cio_file_read_positional(io, f, buf, sizeof buf, 6, &n)); /* short: what is there */
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "6789", 4);
    uint64_t pos = 0;
    assert_ok(cio_file_position(io, f, &pos));
    assert_int_equal(pos, 10);
    assert_ok(cio_file_close(io, f));
    remove_file(io, name);
    cio_evented_destroy(e);
}

static void test_iocp_files_eof(void **state)
{
    (void)state;
    run_counted(body_eof, "eof");
}

/* ---- append ------------------------------------------------------------------------------------------------- */

static void body_append(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    const char *name = fresh("append");
    cio_file f = create(io, name);
    assert_ok(cio_file_write_all(io, f, "head-", 5));
    assert_ok(cio_file_close(io, f));
    HANDLE h = CreateFileA(name, FILE_APPEND_DATA | SYNCHRONIZE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, FILE_FLAG_OVERLAPPED, NULL);
    assert_true(h != INVALID_HANDLE_VALUE);
    cio_file a = {h};
    assert_true(is_async(a));
    assert_ok(cio_file_write_all(io, a, "one-", 4));
    assert_ok(cio_file_write_all(io, a, "two", 3));
    size_t n = 0;
    assert_ok(cio_file_write_positional(io, a, "!", 1, 0, &n)); /* appended too */
    assert_int_equal(n, 1);
    assert_ok(cio_file_close(io, a));
    cio_open_file_options o = {CIO_OPEN_READ_ONLY, false, false};
    assert_ok(cio_dir_open_file(io, cio_dir_cwd(), name, &o, &f));
    char buf[32];
    assert_ok(cio_file_read_all(io, f, buf, sizeof buf, &n));
    assert_int_equal(n, 13);
    assert_memory_equal(buf, "head-one-two!", 13);
    assert_ok(cio_file_close(io, f));
    remove_file(io, name);
    cio_evented_destroy(e);
}

static void test_iocp_files_append(void **state)
{
    (void)state;
    run_counted(body_append, "append");
}

/* ---- many fibers on one file ------------------------------------------------------------------------------ */

#define FIBERS 64
#define BLOCK (64u * 1024u)

struct many {
    cio_io io;
    cio_file f;
    _Atomic(int) next;
};

static cio_err many_fiber(void *ctx)
{
    struct many *m = *(struct many **)ctx;
    unsigned id = (unsigned)atomic_fetch_add(&m->next, 1);
    unsigned char *src = pattern(BLOCK, id + 10), *back = (unsigned char *)malloc(BLOCK);
    if (back == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    cio_err err = CIO_OK;
    /* in 4 pieces, yielding between them, so the fibers interleave */
    for (unsigned k = 0; k < 4 && err == CIO_OK; k++) {
        size_t n = 0;
        err = cio_file_write_positional(m->io, m->f, src + k * (BLOCK / 4), BLOCK / 4,
                                        (uint64_t)id * BLOCK + k * (BLOCK / 4), &n);
        if (err == CIO_OK && n != BLOCK / 4)
            err = CIO_E_UNEXPECTED;
    }
    size_t n = 0;
    if (err == CIO_OK)
        err = cio_file_read_positional(m->io, m->f, back, BLOCK, (uint64_t)id * BLOCK, &n);
    if (err == CIO_OK && (n != BLOCK || memcmp(src, back, BLOCK) != 0))
        err = CIO_E_UNEXPECTED;
    free(src);
    free(back);
    return err;
}

static void body_many(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    const char *name = fresh("many");
    struct many m;
    memset(&m, 0, sizeof m);
    m.io = io;
    m.f = create(io, name);
    struct many *mp = &m;
    cio_future fs[FIBERS];
    for (int i = 0; i < FIBERS; i++)
        assert_ok(cio_concurrent(io, many_fiber, &mp, sizeof mp, &fs[i]));
    int failed = 0;
    cio_err first = CIO_OK;
    for (int i = 0; i < FIBERS; i++) {
        cio_err err = cio_await(io, &fs[i]);
        if (err != CIO_OK && failed++ == 0)
            first = err;
    }
    if (failed != 0)
        fail_msg("many: %d of %d fibers failed, the first with %s", failed, FIBERS, cio_err_name(first));
    uint64_t len = 0;
    assert_ok(cio_file_length(io, m.f, &len));
    assert_int_equal(len, (uint64_t)FIBERS * BLOCK);
    assert_ok(cio_file_close(io, m.f));
    remove_file(io, name);
    cio_evented_destroy(e);
}

static void test_iocp_files_many_fibers(void **state)
{
    (void)state;
    run_counted(body_many, "many fibers");
}

/* ---- Threaded and Evented on each other's files ----------------------------------------------------------- */

static void body_cross(void)
{
    cio_evented *e = make(1);
    cio_threaded *t = make_threaded();
    cio_io ev = cio_evented_io(e), th = cio_threaded_io(t);
    char name[64];
    snprintf(name, sizeof name, "%s", fresh("cross"));
    cio_file f = create(ev, name);
    assert_true(is_async(f));
    size_t n = 0;
    /* Threaded on the asynchronous handle: streaming at the stored position, positional */
    assert_ok(cio_file_write_all(th, f, "threaded", 8));
    uint64_t pos = 0;
    assert_ok(cio_file_position(th, f, &pos));
    assert_int_equal(pos, 8);
    assert_ok(cio_file_write_all(ev, f, "+evented", 8)); /* Evented goes on from there */
    assert_ok(cio_file_position(ev, f, &pos));
    assert_int_equal(pos, 16);
    char buf[32] = {0};
    assert_ok(cio_file_read_positional(th, f, buf, sizeof buf, 0, &n));
    assert_int_equal(n, 16);
    assert_memory_equal(buf, "threaded+evented", 16);
    assert_ok(cio_file_seek_to(th, f, 8));
    assert_ok(cio_file_read_all(th, f, buf, 4, &n));
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "+eve", 4);
    assert_ok(cio_file_read_all(ev, f, buf, 4, &n));
    assert_memory_equal(buf, "nted", 4);
    assert_ok(cio_file_read_streaming(th, f, buf, 4, &n)); /* at the end */
    assert_int_equal(n, 0);
    unsigned char *big = pattern(3 * MIB, 5), *back = (unsigned char *)malloc(3 * MIB);
    assert_non_null(back);
    assert_ok(cio_file_write_positional(th, f, big, 3 * MIB, 16, &n));
    assert_int_equal(n, 3 * MIB);
    assert_ok(cio_file_read_positional(ev, f, back, 3 * MIB, 16, &n));
    assert_int_equal(n, 3 * MIB);
    assert_memory_equal(big, back, 3 * MIB);
    /* the other calls on the asynchronous handle, both backends */
    cio_io ios[2] = {th, ev};
    for (int i = 0; i < 2; i++) {
        cio_stat st;
        assert_ok(cio_file_stat(ios[i], f, &st));
        assert_int_equal(st.size, 16 + 3 * MIB);
        assert_int_equal(st.kind, CIO_FILE_KIND_FILE);
        assert_ok(cio_file_sync(ios[i], f));
        assert_ok(cio_file_lock(ios[i], f, CIO_LOCK_EXCLUSIVE));
        cio_file_unlock(ios[i], f);
    }
    /* memory maps of it, the OS's and the fallback (positional reads and writes through the io) */
    for (int i = 0; i < 4; i++) {
        cio_memory_map_options mo;
        memset(&mo, 0, sizeof mo);
        mo.len = 65536;
        mo.fallback = i >= 2;
        cio_memory_map mm;
        assert_ok(cio_file_memory_map_create(ios[i % 2], f, &mo, &mm));
        assert_int_equal(mm.mapped, i < 2);
        assert_memory_equal(mm.memory, "threaded+evented", 16);
        mm.memory[16 + i] = (uint8_t)(0xA0 + i);
        assert_ok(cio_file_memory_map_write(ios[i % 2], &mm));
        cio_file_memory_map_destroy(ios[i % 2], &mm);
        unsigned char got = 0;
        assert_ok(cio_file_read_positional(ios[(i + 1) % 2], f, &got, 1, 16 + (uint64_t)i, &n));
        assert_int_equal(got, 0xA0 + i);
        big[i] = (unsigned char)(0xA0 + i); /* what the copy below reads there */
    }
    assert_ok(cio_file_set_length(ev, f, 16 + MIB));
    uint64_t len = 0;
    assert_ok(cio_file_length(th, f, &len));
    assert_int_equal(len, 16 + MIB);
    /* a copy between two asynchronous handles */
    char keep[64];
    snprintf(keep, sizeof keep, "%s", fresh("cross2"));
    cio_file g = create(ev, keep);
    uint64_t copied = 0;
    assert_ok(cio_file_write_file_positional(th, g, 0, f, 16, MIB, &copied));
    assert_int_equal(copied, MIB);
    assert_ok(cio_file_read_positional(ev, g, back, MIB, 0, &n));
    assert_int_equal(n, MIB);
    assert_memory_equal(big, back, MIB);
    assert_ok(cio_file_close(ev, g));
    remove_file(ev, keep);
    assert_ok(cio_file_close(th, f));
    /* Evented on a file Threaded opened: synchronous, the helper pool */
    cio_open_file_options o = {CIO_OPEN_READ_WRITE, false, false};
    assert_ok(cio_dir_open_file(th, cio_dir_cwd(), name, &o, &f));
    assert_false(is_async(f));
    assert_ok(cio_file_read_all(ev, f, buf, 8, &n));
    assert_int_equal(n, 8);
    assert_memory_equal(buf, "threaded", 8);
    assert_ok(cio_file_write_positional(ev, f, "T", 1, 0, &n));
    assert_ok(cio_file_read_positional(ev, f, buf, 2, 0, &n));
    assert_memory_equal(buf, "Th", 2);
    assert_ok(cio_file_position(ev, f, &pos));
    assert_int_equal(pos, 8);
    assert_ok(cio_file_close(ev, f));
    free(big);
    free(back);
    remove_file(th, name);
    cio_threaded_destroy(t);
    cio_evented_destroy(e);
}

static void test_iocp_files_cross(void **state)
{
    (void)state;
    run_counted(body_cross, "cross");
}

/* ---- a thread that is no fiber, gone ---------------------------------------------------------------------- */

struct first {
    cio_io io;
    cio_file f;
    cio_err err;
};

static DWORD WINAPI first_write(void *p)
{
    struct first *x = (struct first *)p;
    x->err = cio_file_write_all(x->io, x->f, "first", 5); /* this thread's first overlapped call */
    return 0;
}

/* A file first used by a thread that then exits (its adopted loop goes with it): later calls on
 * it, from fibers and from this thread, still complete. */
static void body_thread_gone(void)
{
    cio_evented *e = make(2);
    cio_io io = cio_evented_io(e);
    char name[64];
    snprintf(name, sizeof name, "%s", fresh("gone"));
    struct first x = {io, create(io, name), CIO_E_UNEXPECTED};
    HANDLE t = CreateThread(NULL, 0, first_write, &x, 0, NULL);
    assert_non_null(t);
    assert_int_equal(WaitForSingleObject(t, 30000), WAIT_OBJECT_0);
    assert_true(CloseHandle(t));
    assert_ok(x.err);
    assert_ok(cio_file_seek_to(io, x.f, 0)); /* rt_fiber starts there */
    struct rt r = {io, x.f, 64 * 1024};
    struct rt *rp = &r;
    cio_future f;
    assert_ok(cio_concurrent(io, rt_fiber, &rp, sizeof rp, &f));
    assert_ok(cio_await(io, &f));
    char buf[5];
    size_t n = 0;
    assert_ok(cio_file_read_positional(io, x.f, buf, 5, 4096, &n));
    assert_int_equal(n, 5);
    assert_ok(cio_file_close(io, x.f));
    remove_file(io, name);
    cio_evented_destroy(e);
}

static void test_iocp_files_thread_gone(void **state)
{
    (void)state;
    run_counted(body_thread_gone, "thread gone");
}

/* ---- a child's stdio: files Evented opened ------------------------------------------------------------------ */

/* A child's stdin and stdout are asynchronous handles: it reads and writes them with plain
 * ReadFile/WriteFile, from the positions they store. */
static void body_stdio(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    char in_name[64], out_name[64];
    snprintf(in_name, sizeof in_name, "%s", fresh("stdin"));
    snprintf(out_name, sizeof out_name, "%s", fresh("stdout"));
    cio_file in = create(io, in_name), out = create(io, out_name);
    assert_true(is_async(in) && is_async(out));
    assert_ok(cio_file_write_all(io, in, "skip|data for the child", 23));
    assert_ok(cio_file_seek_to(io, in, 5));
    assert_ok(cio_file_write_all(io, out, "pre:", 4));
    cio_spawn_options o;
    memset(&o, 0, sizeof o);
    const char *argv[] = {child_path(io), "cat", NULL};
    o.argv = argv;
    o.stdio[0].kind = CIO_STDIO_FILE;
    o.stdio[0].file = in;
    o.stdio[1].kind = CIO_STDIO_FILE;
    o.stdio[1].file = out;
    cio_child c;
    assert_ok(cio_process_spawn(io, &o, &c));
    cio_term t;
    assert_ok(cio_child_wait(io, &c, &t));
    assert_int_equal(t.code, 0);
    char buf[64] = {0};
    size_t n = 0;
    assert_ok(cio_file_read_positional(io, out, buf, sizeof buf, 0, &n));
    assert_int_equal(n, 22);
    assert_memory_equal(buf, "pre:data for the child", 22);
    assert_ok(cio_file_close(io, in));
    assert_ok(cio_file_close(io, out));
    remove_file(io, in_name);
    remove_file(io, out_name);
    cio_evented_destroy(e);
}

static void test_iocp_files_stdio(void **state)
{
    (void)state;
    run_counted(body_stdio, "stdio");
}


static void pipe_cancel_on(cio_io io)
{
    struct pipe p;
    pipe_open(&p, io);
    /* canceled: Canceled, and the pipe still works */
    cio_future f = pipe_read_pending(&p);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    pipe_write(&p, "after");
    struct pipe *pp = &p;
    assert_ok(pipe_read(&pp));
    assert_int_equal(p.n, 5);
    assert_memory_equal(p.buf, "after", 5);
    /* someone else's CancelIoEx (every transfer on the handle): made again, then the data */
    f = pipe_read_pending(&p);
    assert_true(CancelIoEx(p.server.handle, NULL));
    Sleep(30);
    pipe_write(&p, "again");
    assert_ok(cio_await(io, &f));
    assert_int_equal(p.n, 5);
    assert_memory_equal(p.buf, "again", 5);
    /* a timed read with nothing to read: Timeout, nothing consumed, and the pipe still works */
    char t[8];
    size_t tn = 9;
    assert_err(cio_file_read_streaming_timeout(io, p.server, t, sizeof t, &tn, cio_timeout_ms(50)), CIO_E_TIMEOUT);
    assert_int_equal(tn, 0);
    pipe_write(&p, "timed");
    assert_ok(cio_file_read_streaming_timeout(io, p.server, t, sizeof t, &tn, cio_timeout_ms(5000)));
    assert_int_equal(tn, 5);
    assert_memory_equal(t, "timed", 5);
    /* positional on a pipe: Unseekable */
    size_t n = 0;
    char c;
    assert_err(cio_file_read_positional(io, p.server, &c, 1, 0, &n), CIO_E_UNSEEKABLE);
    /* a write, read by the client */
    assert_ok(cio_file_write_all(io, p.server, "back", 4));
    char buf[4];
    DWORD got = 0;
    assert_true(ReadFile(p.client, buf, 4, &got, NULL));
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "back", 4);
    pipe_close(&p);
}

static void body_pipe_cancel(void)
{
    cio_evented *e = make(2);
    pipe_cancel_on(cio_evented_io(e));
    cio_evented_destroy(e);
    cio_threaded *t = make_threaded();
    pipe_cancel_on(cio_threaded_io(t));
    cio_threaded_destroy(t);
}

static void test_iocp_files_pipe_cancel(void **state)
{
    (void)state;
    run_counted(body_pipe_cancel, "pipe cancel");
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iocp_files_round_trip),  cmocka_unit_test(test_iocp_files_eof),
        cmocka_unit_test(test_iocp_files_append),      cmocka_unit_test(test_iocp_files_many_fibers),
        cmocka_unit_test(test_iocp_files_cross),       cmocka_unit_test(test_iocp_files_stdio),
        cmocka_unit_test(test_iocp_files_pipe_cancel), cmocka_unit_test(test_iocp_files_thread_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
