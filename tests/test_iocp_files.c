/*
 * The Evented backend's files on Windows (issue 24): files it opens are asynchronous handles, read
 * and written as overlapped operations on the loops' completion ports (src/evented/fs_rw_iocp.c),
 * and the Threaded backend's calls work on such handles too (src/os/fs_windows_io.c). As
 * test_iocp.c, it sees cio/evented.h through CIO__EVENTED_PREVIEW.
 *
 * What each test shows:
 * - round_trip: a file Evented opens is asynchronous (FileModeInformation), and positional and
 *   streaming transfers, small and of several MiB, vectored, read back what was written; the
 *   streaming position (FilePositionInformation) follows, and file_seek moves it.
 * - eof: a read at or past the end is 0 bytes, not an error, positional and streaming.
 * - append: a handle opened overlapped with FILE_APPEND_DATA only appends, whatever the position.
 * - many_fibers: 64 fibers on two loops write and read back their own blocks of one file at once.
 * - cross: a Threaded io reads and writes a file Evented opened (streaming at its stored position,
 *   positional), and its stat, set_length, sync, lock and copy work; an Evented io reads a file
 *   Threaded opened (synchronous: the helper pool).
 * - pipe_cancel: a read that pends (an overlapped named pipe with no data): canceled, it is Canceled
 *   and the pipe still works; canceled by someone else's CancelIoEx (STATUS_CANCELLED), it is made
 *   again and gets the data written later; the same through a Threaded io, whose cancel knocks the
 *   wait out and CancelIoEx's the transfer.
 * - faults: every new call site failing, with the error its map gives, and nothing left open.
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

#include "iocp_helpers.h"

#define ST(x) ((int)(CIO_NTSTATUS_##x))
#define MIB (1024u * 1024u)

static cio_evented *make(unsigned threads)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    cio_evented *e = NULL;
    assert_ok(cio_evented_create(&o, &e));
    return e;
}

static cio_threaded *make_threaded(void)
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    return t;
}

static char name_buf[64];

/* A fresh file name in the current directory. */
static const char *fresh(const char *what)
{
    static int n;
    snprintf(name_buf, sizeof name_buf, "iocp_files_%lu_%s_%d.tmp", (unsigned long)GetCurrentProcessId(), what, n++);
    return name_buf;
}

static cio_file create(cio_io io, const char *name)
{
    cio_create_file_options o = CIO_CREATE_FILE_DEFAULTS;
    o.read = true;
    o.truncate = true;
    cio_file f;
    assert_ok(cio_dir_create_file(io, cio_dir_cwd(), name, &o, &f));
    return f;
}

static bool is_async(cio_file f)
{
    cio_nt_io_status_block iosb;
    uint32_t mode = 0;
    assert_true(NtQueryInformationFile(f.handle, &iosb, &mode, sizeof mode, CIO_NT_FileModeInformation) >= 0);
    return (mode & (CIO_NT_FILE_SYNCHRONOUS_IO_ALERT | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT)) == 0;
}

static unsigned char *pattern(size_t len, unsigned seed)
{
    unsigned char *p = (unsigned char *)malloc(len);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 12)) & 0xffu);
    return p;
}

static void remove_file(cio_io io, const char *name)
{
    assert_ok(cio_dir_delete_file(io, cio_dir_cwd(), name));
}

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

/* ---- a child's stdio: files Evented opened ------------------------------------------------------------------ */

static char child_exe[4096];

static const char *child_path(cio_io io)
{
    size_t n = 0;
    assert_ok(cio_process_executable_path(io, child_exe, sizeof child_exe, &n));
    while (n > 0 && child_exe[n - 1] != '\\' && child_exe[n - 1] != '/')
        n--;
    snprintf(child_exe + n, sizeof child_exe - n, "cio_test_child.exe");
    return child_exe;
}

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

/* The steps that give a child a synchronous handle failing: the spawn fails with the step's error
 * and leaves nothing open; a mode that cannot be asked gives the handle as it is. */
static void body_stdio_faults(void)
{
    static const struct {
        const char *site;
        cio_err want;
    } cases[] = {
        {"NtQueryInformationFile@spawn_stdio_mode", CIO_OK},
        {"NtQueryInformationFile@spawn_stdio_access", CIO_E_ACCESS_DENIED},
        {"NtQueryInformationFile@spawn_stdio_position", CIO_E_ACCESS_DENIED},
        {"NtSetInformationFile@spawn_stdio_position", CIO_E_ACCESS_DENIED},
    };
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    char name[64];
    snprintf(name, sizeof name, "%s", fresh("stdio_fault"));
    cio_file out = create(io, name);
    const char *argv[] = {child_path(io), "args", "x", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cio_spawn_options o;
        memset(&o, 0, sizeof o);
        o.argv = argv;
        o.stdio[1].kind = CIO_STDIO_FILE;
        o.stdio[1].file = out;
        assert_int_equal(cio__fault_errno(cases[i].site, ST(ACCESS_DENIED), 0, 1), 1);
        cio_child c;
        cio_err got = cio_process_spawn(io, &o, &c);
        unsigned injected = cio__fault_injected(cases[i].site);
        cio__fault_reset();
        assert_int_equal(injected, 1u);
        if (got != cases[i].want)
            fail_msg("%s: %s, not %s", cases[i].site, cio_err_name(got), cio_err_name(cases[i].want));
        if (got == CIO_OK) {
            cio_term t;
            assert_ok(cio_child_wait(io, &c, &t));
        }
        covered(cases[i].site, "STATUS_ACCESS_DENIED");
    }
    assert_ok(cio_file_close(io, out));
    remove_file(io, name);
    cio_evented_destroy(e);
}

static void test_iocp_files_stdio_faults(void **state)
{
    (void)state;
    run_counted(body_stdio_faults, "stdio faults");
}

/* ---- a read that pends: an overlapped pipe ------------------------------------------------------------------ */

struct pipe {
    cio_io io;
    cio_file server; /* overlapped: what is read */
    HANDLE client;   /* synchronous: written by the test */
    char buf[16];
    size_t n;
};

static void pipe_open(struct pipe *p, cio_io io)
{
    static int n;
    char name[96];
    snprintf(name, sizeof name, "\\\\.\\pipe\\cio_iocp_files_%lu_%d", (unsigned long)GetCurrentProcessId(), n++);
    memset(p, 0, sizeof *p);
    p->io = io;
    HANDLE s = CreateNamedPipeA(name, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED, PIPE_TYPE_BYTE, 1, 4096, 4096, 0,
                                NULL);
    assert_true(s != INVALID_HANDLE_VALUE);
    p->client = CreateFileA(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    assert_true(p->client != INVALID_HANDLE_VALUE);
    p->server.handle = s;
    assert_true(is_async(p->server));
}

static void pipe_close(struct pipe *p)
{
    assert_true(CloseHandle(p->client));
    assert_ok(cio_file_close(p->io, p->server));
}

static void pipe_write(struct pipe *p, const char *s)
{
    DWORD n = 0;
    assert_true(WriteFile(p->client, s, (DWORD)strlen(s), &n, NULL));
    assert_int_equal(n, strlen(s));
}

static cio_err pipe_read(void *ctx)
{
    struct pipe *p = *(struct pipe **)ctx;
    return cio_file_read_streaming(p->io, p->server, p->buf, sizeof p->buf, &p->n);
}

/* Starts a read of p on io, gives it time to pend. */
static cio_future pipe_read_pending(struct pipe *p)
{
    cio_future f;
    assert_ok(cio_concurrent(p->io, pipe_read, &p, sizeof p, &f));
    Sleep(50);
    return f;
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

/* ---- faults --------------------------------------------------------------------------------------------------- */

enum op { OP_READ, OP_WRITE, OP_READ_STREAM, OP_WRITE_STREAM };

struct fault_case {
    const char *site;
    int code;
    const char *fault;
    enum op op;
    cio_err want;
    size_t want_n; /* on success */
};

static const struct fault_case cases[] = {
    {"NtReadFile@iocp_file_read", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ, CIO_E_ACCESS_DENIED, 0},
    {"NtReadFile@iocp_file_read", ST(CANCELLED), "STATUS_CANCELLED", OP_READ, CIO_OK, 8}, /* made again */
    {"NtReadFile@iocp_file_read", ST(END_OF_FILE), "STATUS_END_OF_FILE", OP_READ, CIO_OK, 0},
    {"NtWriteFile@iocp_file_write", ST(DISK_FULL), "STATUS_DISK_FULL", OP_WRITE, CIO_E_NO_SPACE_LEFT, 0},
    {"NtWriteFile@iocp_file_write", ST(FILE_LOCK_CONFLICT), "STATUS_FILE_LOCK_CONFLICT", OP_WRITE_STREAM,
     CIO_E_LOCK_VIOLATION, 0},
    {"NtReadFile@iocp_file_probe", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ, CIO_E_ACCESS_DENIED, 0},
    {"NtWriteFile@iocp_file_probe", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_WRITE, CIO_E_NO_SPACE_LEFT, 0},
    {"NtQueryInformationFile@iocp_file_position", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM,
     CIO_E_ACCESS_DENIED, 0},
    {"NtSetInformationFile@iocp_file_advance", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM,
     CIO_E_ACCESS_DENIED, 0},
    /* the mode unknown: the helper pool, whose Threaded call reads the asynchronous handle too */
    {"NtQueryInformationFile@iocp_file_mode", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM, CIO_OK, 8},
    {"CreateIoCompletionPort@iocp_attach", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", OP_READ,
     CIO_E_SYSTEM_RESOURCES, 0},
    /* the Threaded side: an asynchronous handle's streaming call whose mode cannot be asked */
    {"NtQueryInformationFile@rw_mode", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM, CIO_E_UNEXPECTED, 0},
};

struct fx {
    cio_io io;
    cio_file f;
    const struct fault_case *c;
    cio_err got;
    size_t n;
    char buf[16];
};

static cio_err fault_fiber(void *ctx)
{
    struct fx *x = *(struct fx **)ctx;
    const struct fault_case *c = x->c;
    x->n = 0;
    switch (c->op) {
    case OP_READ: x->got = cio_file_read_positional(x->io, x->f, x->buf, 8, 0, &x->n); break;
    case OP_WRITE: x->got = cio_file_write_positional(x->io, x->f, "XXXXXXXX", 8, 0, &x->n); break;
    case OP_READ_STREAM: x->got = cio_file_read_streaming(x->io, x->f, x->buf, 8, &x->n); break;
    case OP_WRITE_STREAM: x->got = cio_file_write_streaming(x->io, x->f, "XXXXXXXX", 8, &x->n); break;
    }
    return CIO_OK;
}

/* Runs c's operation on a file of 16 bytes with c's site failing once: c's error (or result), the
 * position unmoved on a failure, nothing left open. */
static void run_case(const struct fault_case *c)
{
    cio_evented *e = make(2);
    cio_threaded *t = NULL;
    cio_io io = cio_evented_io(e);
    const char *name = fresh("fault");
    char keep[64];
    snprintf(keep, sizeof keep, "%s", name);
    struct fx x;
    memset(&x, 0, sizeof x);
    x.f = create(io, keep);
    x.c = c;
    assert_ok(cio_file_write_all(io, x.f, "0123456789abcdef", 16));
    assert_ok(cio_file_seek_to(io, x.f, 0));
    x.io = io;
    if (strstr(c->site, "@rw_") != NULL) {
        t = make_threaded();
        x.io = cio_threaded_io(t);
    }
    struct fx *xp = &x;
    assert_int_equal(cio__fault_errno(c->site, c->code, 0, 1), 1);
    if (strstr(c->site, "probe") != NULL) /* the probe runs after a failed start */
        assert_int_equal(cio__fault_errno(c->op == OP_WRITE ? "NtWriteFile@iocp_file_write"
                                                            : "NtReadFile@iocp_file_read",
                                          c->op == OP_WRITE ? ST(DISK_FULL) : ST(ACCESS_DENIED), 0, 1),
                         1);
    cio_future f;
    assert_ok(cio_concurrent(x.io, fault_fiber, &xp, sizeof xp, &f));
    assert_ok(cio_await(x.io, &f));
    unsigned injected = cio__fault_injected(c->site);
    cio__fault_reset();
    if (injected != 1)
        fail_msg("%s: %u faults injected, 1 armed", c->site, injected);
    if (x.got != c->want)
        fail_msg("%s with %s: %s, not %s", c->site, c->fault, cio_err_name(x.got), cio_err_name(c->want));
    if (x.n != c->want_n)
        fail_msg("%s with %s: %u bytes, not %u", c->site, c->fault, (unsigned)x.n, (unsigned)c->want_n);
    if (c->want == CIO_OK && c->want_n == 8 && c->op != OP_WRITE && c->op != OP_WRITE_STREAM)
        assert_memory_equal(x.buf, "01234567", 8);
    uint64_t pos = 99;
    assert_ok(cio_file_position(io, x.f, &pos));
    assert_int_equal(pos, c->op == OP_READ_STREAM || c->op == OP_WRITE_STREAM ? x.n : 0);
    assert_ok(cio_file_close(io, x.f));
    remove_file(io, keep);
    if (t != NULL)
        cio_threaded_destroy(t);
    cio_evented_destroy(e);
    covered(c->site, c->fault);
}

static void body_faults(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

static void test_iocp_files_faults(void **state)
{
    (void)state;
    run_counted(body_faults, "file faults");
}

/* Short transfers: every overlapped read and write moves at most 5 bytes; read_all and write_all
 * still move everything, and a vectored read stops at the short buffer. */
static void body_short(void)
{
    cio_evented *e = make(1);
    cio_io io = cio_evented_io(e);
    const char *name = fresh("short");
    cio_file f = create(io, name);
    assert_int_equal(cio__fault_short("NtWriteFile@iocp_file_write", 5, 0, -1), 1);
    assert_int_equal(cio__fault_short("NtReadFile@iocp_file_read", 5, 0, -1), 1);
    assert_ok(cio_file_write_all(io, f, "0123456789abcdef", 16));
    assert_ok(cio_file_seek_to(io, f, 0));
    char a[8], b[8];
    cio_iovec v[2] = {{a, 8}, {b, 8}};
    size_t n = 0;
    assert_ok(cio_file_read_streaming_v(io, f, v, 2, &n));
    assert_int_equal(n, 5);
    assert_memory_equal(a, "01234", 5);
    char all[16];
    assert_ok(cio_file_read_all(io, f, all, 11, &n));
    assert_int_equal(n, 11);
    assert_memory_equal(all, "56789abcdef", 11);
    unsigned w = cio__fault_hits("NtWriteFile@iocp_file_write"), r = cio__fault_hits("NtReadFile@iocp_file_read");
    cio__fault_reset();
    assert_true(w >= 4 && r >= 4);
    assert_ok(cio_file_close(io, f));
    remove_file(io, name);
    cio_evented_destroy(e);
    covered("NtReadFile@iocp_file_read", "short");
    covered("NtWriteFile@iocp_file_write", "short");
}

static void test_iocp_files_short(void **state)
{
    (void)state;
    run_counted(body_short, "short transfers");
}

/* The Threaded wait for a pending transfer (an overlapped pipe): a failed wait naps and goes on; an
 * APC during the nap (a cancel's kick, here a stray one) cancels the transfer, which is made again;
 * a CancelIoEx that fails leaves the transfer to end by itself. Each time the data written later
 * arrives. */
struct armed {
    const char *site;
    int code;
};

static void pending_case(const char *site, int code, const char *fault, const struct armed *before, size_t nbefore)
{
    cio_threaded *t = make_threaded();
    cio_io io = cio_threaded_io(t);
    struct pipe p;
    pipe_open(&p, io);
    for (size_t i = 0; i < nbefore; i++)
        assert_int_equal(cio__fault_errno(before[i].site, before[i].code, 0, 1), 1);
    assert_int_equal(cio__fault_errno(site, code, 0, 1), 1);
    cio_future f = pipe_read_pending(&p);
    Sleep(30);
    pipe_write(&p, "late");
    assert_ok(cio_await(io, &f));
    unsigned injected = cio__fault_injected(site);
    cio__fault_reset();
    assert_int_equal(injected, 1u);
    assert_int_equal(p.n, 4);
    assert_memory_equal(p.buf, "late", 4);
    pipe_close(&p);
    cio_threaded_destroy(t);
    covered(site, fault);
}

static void body_pending_faults(void)
{
    static const struct armed wait_fails[] = {{"WaitForSingleObjectEx@rw_pending", ERROR_INVALID_HANDLE}};
    static const struct armed nap_alerted[] = {{"WaitForSingleObjectEx@rw_pending", ERROR_INVALID_HANDLE},
                                               {"SleepEx@rw_nap", WAIT_IO_COMPLETION}};
    pending_case("WaitForSingleObjectEx@rw_pending", ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE", NULL, 0);
    pending_case("SleepEx@rw_nap", WAIT_IO_COMPLETION, "WAIT_IO_COMPLETION", wait_fails, 1);
    pending_case("CancelIoEx@rw_cancel", ERROR_INVALID_HANDLE, "ERROR_INVALID_HANDLE", nap_alerted, 2);
}

static void test_iocp_files_pending_faults(void **state)
{
    (void)state;
    run_counted(body_pending_faults, "pending faults");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iocp_files_round_trip),     cmocka_unit_test(test_iocp_files_eof),
        cmocka_unit_test(test_iocp_files_append),         cmocka_unit_test(test_iocp_files_many_fibers),
        cmocka_unit_test(test_iocp_files_cross),          cmocka_unit_test(test_iocp_files_pipe_cancel),
        cmocka_unit_test(test_iocp_files_faults),         cmocka_unit_test(test_iocp_files_short),
        cmocka_unit_test(test_iocp_files_pending_faults), cmocka_unit_test(test_iocp_files_stdio),
        cmocka_unit_test(test_iocp_files_stdio_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
