/*
 * The Evented backend's files on Windows (issue 24), failing: every new call site of
 * src/evented/fs_rw_iocp.c, src/os/fs_windows_io.c's waits for a pending transfer on an
 * asynchronous handle and src/os/process_spawn_windows.c's synchronous reopening of a child's stdio,
 * failing with the error its map gives and leaving nothing open (test_iocp_files.c shows them
 * working).
 *
 * - faults: each site of an overlapped read or write failing once (a failed start is drained, a
 *   STATUS_CANCELLED start is made again), the position unmoved on a failure.
 * - short: every overlapped transfer moving at most 5 bytes: read_all and write_all still move all.
 * - pending_faults: the Threaded wait on an overlapped pipe: a failed wait naps, an APC in the nap
 *   cancels the transfer (made again), a failed CancelIoEx leaves it to end by itself.
 * - stdio_faults: the reopening steps failing: the spawn fails with their error.
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

/* The steps that give a child a synchronous handle failing: the spawn fails with the step's error
 * and leaves nothing open; a mode that cannot be asked gives the handle as it is. */
static void body_stdio_faults(void)
{
    static const struct {
        const char *site;
        cio_err want;
    } cases[] = {
        {"NtQueryInformationFile@handle_mode", CIO_OK}, /* the mode unknown: passed on as it is */
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


/* ---- faults --------------------------------------------------------------------------------------------------- */

enum op { OP_READ, OP_WRITE, OP_READ_STREAM, OP_WRITE_STREAM };

struct fault_case {
    const char *site;
    int code;
    const char *fault;
    enum op op;
    cio_err want;
    size_t want_n; /* on success */
    bool threaded; /* run through a Threaded io (the os layer's own call), else the Evented one */
};

static const struct fault_case cases[] = {
    {"NtReadFile@iocp_file_read", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ, CIO_E_ACCESS_DENIED, 0, false},
    {"NtReadFile@iocp_file_read", ST(CANCELLED), "STATUS_CANCELLED", OP_READ, CIO_OK, 8, false}, /* made again */
    {"NtReadFile@iocp_file_read", ST(END_OF_FILE), "STATUS_END_OF_FILE", OP_READ, CIO_OK, 0, false},
    {"NtWriteFile@iocp_file_write", ST(DISK_FULL), "STATUS_DISK_FULL", OP_WRITE, CIO_E_NO_SPACE_LEFT, 0, false},
    {"NtWriteFile@iocp_file_write", ST(FILE_LOCK_CONFLICT), "STATUS_FILE_LOCK_CONFLICT", OP_WRITE_STREAM,
     CIO_E_LOCK_VIOLATION, 0, false},
    {"NtReadFile@iocp_file_probe", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ, CIO_E_ACCESS_DENIED, 0, false},
    {"NtWriteFile@iocp_file_probe", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_WRITE, CIO_E_NO_SPACE_LEFT, 0, false},
    {"NtQueryInformationFile@iocp_file_position", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM,
     CIO_E_ACCESS_DENIED, 0, false},
    {"NtSetInformationFile@iocp_file_advance", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM,
     CIO_E_ACCESS_DENIED, 0, false},
    /* the mode unknown: the helper pool, whose Threaded call reads the asynchronous handle too */
    {"NtQueryInformationFile@handle_mode", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM, CIO_OK, 8, false},
    {"CreateIoCompletionPort@iocp_attach", ERROR_NOT_ENOUGH_MEMORY, "ERROR_NOT_ENOUGH_MEMORY", OP_READ,
     CIO_E_SYSTEM_RESOURCES, 0, false},
    /* the Threaded side: an asynchronous handle's streaming call whose mode cannot be asked */
    {"NtQueryInformationFile@handle_mode", ST(ACCESS_DENIED), "STATUS_ACCESS_DENIED", OP_READ_STREAM, CIO_E_UNEXPECTED,
     0, true},
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
    if (c->threaded) {
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
    for (int i = 0; i < 1000 && cio__fault_injected(site) == 0; i++)
        Sleep(10); /* the read is pending and the fault in: only then the data */
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
        cmocka_unit_test(test_iocp_files_faults),
        cmocka_unit_test(test_iocp_files_short),
        cmocka_unit_test(test_iocp_files_pending_faults),
        cmocka_unit_test(test_iocp_files_stdio_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
