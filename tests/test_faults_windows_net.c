/*
 * Fault injection through the OS call table, Windows: socket pairs, interface names, the AF_UNIX
 * listen's bind and listen, and cio_net_write_file's TransmitFile path (src/os/net_pair_windows.c,
 * src/os/net_sendfile_windows.c; tests/test_faults_windows.c has the method, tests/test_faults_windows_os.c the other
 * sockets).
 *
 * The TransmitFile cases send a file larger than loopback's socket buffers to a peer that starts
 * reading late (or never, until a cancel): the transfer is pending, so the library waits for it in
 * 100 ms slices with a poll of the socket between them, and a cancel or a failed wait cancels it
 * and waits for it to end (CancelIoEx, then WSAGetOverlappedResult). Every case checks the error the
 * user sees, that the count of bytes sent is what the peer received (each byte once, in order),
 * and that no handle is left behind; the suite's time limit catches a hang.
 */
#include "faults.h"
#include "faults_windows.h"
#include "faults_net.h"

/* ---- socket pairs ---------------------------------------------------------------------------------- */

/* getsockname of the connecting end fails: without its own address the pair cannot tell its
 * connection from a stranger's, so it gives up (SystemResources) instead of accepting on; nothing
 * leaks, and the next pair works. */
static void test_win_pair_faults(void **state)
{
    fx f;
    fx_open(state, &f);
    warm_up(f.io);
    cio_stream p[2];
    assert_ok(cio_net_socket_pair(f.io, p)); /* the pool's worker and Winsock warmed */
    cio_stream_close(f.io, &p[0]);
    cio_stream_close(f.io, &p[1]);
    int handles = fd_count();
    assert_int_equal(cio__fault_errno("wsa_getsockname@socket_pair", WSAENOBUFS, 0, 1), 1);
    assert_err(cio_net_socket_pair(f.io, p), CIO_E_SYSTEM_RESOURCES);
    cio__sys_reset();
    assert_handles(handles);
    covered("wsa_getsockname@socket_pair", "WSAENOBUFS");
    assert_ok(cio_net_socket_pair(f.io, p));
    assert_ok(cio_stream_write_all(f.io, &p[0], "ok", 2));
    char b[2];
    size_t n = 0;
    assert_ok(cio_stream_read_all_timeout(f.io, &p[1], b, 2, &n, CIO_TIMEOUT_NONE));
    assert_memory_equal(b, "ok", 2);
    cio_stream_close(f.io, &p[0]);
    cio_stream_close(f.io, &p[1]);
    fx_close(&f);
}

/* ---- interface names --------------------------------------------------------------------------------- */

/* An interface of this machine (Wine lists the host's): its index and name. */
static bool an_interface(cio_io io, uint32_t *index, char *name, size_t len)
{
    for (uint32_t i = 1; i < 4096; i++)
        if (cio_net_interface_name(io, i, name, len, NULL) == CIO_OK) {
            *index = i;
            return true;
        }
    return false;
}

/* if_nametoindex answers 0 for a failure and sets no error (`fail: none`: it cannot be armed), so a
 * hook stands in for it. */
static _Atomic(unsigned) nametoindex_calls;

static ULONG nametoindex_fails(const char *name)
{
    (void)name;
    atomic_fetch_add(&nametoindex_calls, 1);
    return 0;
}

/* if_nametoindex / if_indextoname failing: InterfaceNotFound, nothing written; the real calls
 * answer again afterwards. */
static void test_win_interface_faults(void **state)
{
    cio_io io = cio_test_io(state);
    uint32_t idx = 0;
    char name[CIO_INTERFACE_NAME_MAX + 1];
    if (!an_interface(io, &idx, name, sizeof name))
        CIO_SKIP("no interface has a name here: the interface sites cannot be told from a real miss");
    uint32_t back = 0;
    assert_ok(cio_net_interface_name_resolve(io, name, &back));
    assert_int_equal(back, idx);

    cio__fault_reset();
    atomic_store(&nametoindex_calls, 0);
    cio__sys_set(win_if_nametoindex__interface_resolve, nametoindex_fails);
    back = 77;
    cio_err err = cio_net_interface_name_resolve(io, name, &back);
    cio__sys_reset();
    assert_err(err, CIO_E_INTERFACE_NOT_FOUND);
    assert_int_equal(atomic_load(&nametoindex_calls), 1);
    assert_int_equal(back, 77);
    print_message("fault-covered: win_if_nametoindex@interface_resolve zero\n");

    char out[CIO_INTERFACE_NAME_MAX + 1];
    memset(out, 'x', sizeof out);
    size_t n = 99;
    assert_int_equal(cio__fault_errno("win_if_indextoname@interface_name", ERROR_INVALID_PARAMETER, 0, 1), 1);
    assert_err(cio_net_interface_name(io, idx, out, sizeof out, &n), CIO_E_INTERFACE_NOT_FOUND);
    covered("win_if_indextoname@interface_name", "ERROR_INVALID_PARAMETER");
    cio__sys_reset();

    assert_ok(cio_net_interface_name_resolve(io, name, &back));
    assert_int_equal(back, idx);
    assert_ok(cio_net_interface_name(io, idx, out, sizeof out, &n));
    assert_string_equal(out, name);
}

/* ---- TransmitFile (cio_net_write_file) ------------------------------------------------------------ */

#define BIG_LEN ((uint64_t)8 << 20) /* far more than loopback's buffers: the transfer pends */
#define BIG_NAME "g"                /* fx_close removes it */

static uint8_t pattern_at(uint64_t i)
{
    return (uint8_t)((i * 2654435761u) >> 11);
}

static void make_big(fx *f)
{
    static uint8_t buf[65536];
    cio_file h;
    assert_ok(cio_dir_create_file(f->io, f->dir, BIG_NAME, NULL, &h));
    for (uint64_t off = 0; off < BIG_LEN; off += sizeof buf) {
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = pattern_at(off + i);
        assert_ok(cio_file_write_all(f->io, h, buf, sizeof buf));
    }
    cio_file_close(f->io, h);
}

/* A transfer: the sender sends the whole file over f->a; the reader, after its delay, reads f->b to
 * its end, checking that every byte is the file's, in order. */
typedef struct xfer {
    fx *f;
    cio_file file;
    uint64_t sent;
    long read_delay_ms;
    uint64_t got;
} xfer;

static cio_err send_task(void *p)
{
    xfer *x = *(xfer **)p;
    return cio_net_write_file(x->f->io, &x->f->a, x->file, 0, BIG_LEN, &x->sent);
}

static cio_err read_task(void *p)
{
    xfer *x = *(xfer **)p;
    pause_ms(x->read_delay_ms);
    static uint8_t buf[65536];
    for (;;) {
        size_t n = 0;
        cio_err err = cio_stream_read(x->f->io, &x->f->b, buf, sizeof buf, &n);
        if (err != CIO_OK)
            return err;
        if (n == 0)
            return CIO_OK;
        for (size_t i = 0; i < n; i++)
            if (buf[i] != pattern_at(x->got + i))
                return CIO_E_UNEXPECTED; /* a byte out of place: sent twice, or lost */
        x->got += n;
    }
}

typedef struct xfer_run {
    fx f;
    xfer x;
    xfer *xp;
    cio_future sender, reader;
    int handles;
} xfer_run;

/* The fixture, the big file open for reading, a connected pair (the faults are armed after this). */
static void xfer_prepare(void **state, xfer_run *r, long read_delay_ms)
{
    fx_open(state, &r->f);
    CIO_REQUIRE_THREADS(r->f.io);
    warm_up(r->f.io);
    make_big(&r->f);
    r->handles = fd_count(); /* before the pair and the file: compared after both are closed */
    prep_pair(&r->f);
    memset(&r->x, 0, sizeof r->x);
    r->x.f = &r->f;
    r->x.read_delay_ms = read_delay_ms;
    assert_ok(cio_dir_open_file(r->f.io, r->f.dir, BIG_NAME, NULL, &r->x.file));
    r->xp = &r->x;
}

/* The sender and the reader started. */
static void xfer_go(xfer_run *r)
{
    CIO_REQUIRE_CONCURRENT(cio_concurrent(r->f.io, send_task, &r->xp, sizeof r->xp, &r->sender));
    assert_ok(cio_concurrent(r->f.io, read_task, &r->xp, sizeof r->xp, &r->reader));
}

/* Until the sender has waited in `slices` slices (its transfer is pending). */
static void wait_for_slices(unsigned slices)
{
    for (int i = 0; i < 20000 && cio__fault_hits("WaitForSingleObjectEx@transmit_wait") < slices; i++)
        pause_ms(1);
    if (cio__fault_hits("WaitForSingleObjectEx@transmit_wait") < slices)
        fail_msg("the transfer never waited (did TransmitFile complete at once?)");
}

/* The end of a transfer whose sender returned send_err: the sending side shut down (the reader sees
 * the end of the stream); the result must be `want`, the reader must have got exactly the bytes the
 * sender counted (all of the file if `all`); everything closed, no handle left. */
static void xfer_finish(xfer_run *r, cio_err send_err, cio_err want, bool all, const char *what)
{
    (void)cio_stream_shutdown(r->f.io, &r->f.a, CIO_SHUTDOWN_SEND);
    cio_err rerr = cio_await(r->f.io, &r->reader);
    cio__sys_reset();
    if (send_err != want)
        fail_msg("%s: write_file returned %s, want %s", what, cio_err_name(send_err), cio_err_name(want));
    if (rerr != CIO_OK)
        fail_msg("%s: the reader: %s (after %llu bytes)", what, cio_err_name(rerr), (unsigned long long)r->x.got);
    if (r->x.got != r->x.sent)
        fail_msg("%s: %llu bytes sent by the count, %llu received", what, (unsigned long long)r->x.sent,
                 (unsigned long long)r->x.got);
    if (all && r->x.sent != BIG_LEN)
        fail_msg("%s: %llu bytes sent, want all %llu", what, (unsigned long long)r->x.sent,
                 (unsigned long long)BIG_LEN);
    print_message("      %s: %llu bytes sent\n", what, (unsigned long long)r->x.sent);
    cio_file_close(r->f.io, r->x.file);
    done_pair(&r->f);
    assert_handles(r->handles);
}

/* A slow peer: the transfer waits in many slices, each followed by a poll of the socket; the poll
 * failing every time changes nothing (it only nudges Wine), every byte arrives. */
static void test_win_transmit_poll_fails(void **state)
{
    xfer_run r;
    xfer_prepare(state, &r, 400);
    assert_int_equal(cio__fault_errno("WSAPoll@transmit_poll", WSAENETDOWN, 0, -1), 1);
    xfer_go(&r);
    cio_err err = cio_await(r.f.io, &r.sender);
    unsigned polls = cio__fault_injected("WSAPoll@transmit_poll");
    xfer_finish(&r, err, CIO_OK, true, "WSAPoll failing");
    if (polls < 2)
        fail_msg("%u polls: the transfer did not wait for the slow peer", polls);
    covered("WSAPoll@transmit_poll", "WSAENETDOWN");
    fx_close(&r.f);
}

/* The wait for the pending transfer fails (WAIT_FAILED): the transfer is canceled and waited for,
 * the call says Unexpected and counts what went. */
static void test_win_transmit_wait_fails(void **state)
{
    xfer_run r;
    xfer_prepare(state, &r, 200);
    assert_int_equal(cio__fault_errno("WaitForSingleObjectEx@transmit_wait", ERROR_INVALID_HANDLE, 0, 1), 1);
    assert_int_equal(cio__fault_watch("CancelIoEx@transmit_cancel"), 1);
    xfer_go(&r);
    cio_err err = cio_await(r.f.io, &r.sender);
    unsigned cancels = cio__fault_hits("CancelIoEx@transmit_cancel");
    xfer_finish(&r, err, CIO_E_UNEXPECTED, false, "WAIT_FAILED");
    assert_int_equal(cancels, 1);
    covered("WaitForSingleObjectEx@transmit_wait", "ERROR_INVALID_HANDLE");
    fx_close(&r.f);
}

/* A cancel of a pending transfer whose CancelIoEx fails (ERROR_NOT_FOUND: as if it had just
 * completed): the call still waits for the transfer to end before its OVERLAPPED goes away (here:
 * until the late reader took everything), says Canceled and counts every byte. */
static void test_win_transmit_cancel_fails(void **state)
{
    xfer_run r;
    xfer_prepare(state, &r, 500);
    assert_int_equal(cio__fault_errno("CancelIoEx@transmit_cancel", ERROR_NOT_FOUND, 0, -1), 1);
    assert_int_equal(cio__fault_watch("WaitForSingleObjectEx@transmit_wait"), 1);
    xfer_go(&r);
    wait_for_slices(2);
    cio_err err = cio_cancel(r.f.io, &r.sender);
    xfer_finish(&r, err, CIO_E_CANCELED, true, "CancelIoEx failing");
    covered("CancelIoEx@transmit_cancel", "ERROR_NOT_FOUND");
    fx_close(&r.f);
}

/* A cancel of a pending transfer, plain and with the drain's WSAGetOverlappedResult reporting a
 * failure (after waiting: the transfer ended with an error): Canceled, and what went is counted. */
static void test_win_transmit_cancel_drain(void **state)
{
    for (int k = 0; k < 2; k++) {
        xfer_run r;
        xfer_prepare(state, &r, 300);
        if (k == 1)
            assert_int_equal(cio__fault_errno("WSAGetOverlappedResult@transmit_drain", WSAENETDOWN, 0, 1), 1);
        assert_int_equal(cio__fault_watch("WaitForSingleObjectEx@transmit_wait"), 1);
        xfer_go(&r);
        wait_for_slices(2);
        cio_err err = cio_cancel(r.f.io, &r.sender);
        xfer_finish(&r, err, CIO_E_CANCELED, false, k == 0 ? "cancel" : "cancel, drain failing");
        if (k == 1)
            covered("WSAGetOverlappedResult@transmit_drain", "WSAENETDOWN");
        fx_close(&r.f);
    }
}

/* The transfer's result is a failure (after it ended): ConnectionResetByPeer with what went counted;
 * WSAEINTR is retried from where the transfer stopped (no byte twice). */
static void test_win_transmit_result_fails(void **state)
{
    static const struct {
        int code;
        const char *name;
        cio_err want;
    } cases[] = {
        {WSAECONNRESET, "WSAECONNRESET", CIO_E_CONNECTION_RESET_BY_PEER},
        {WSAENOBUFS, "WSAENOBUFS", CIO_E_SYSTEM_RESOURCES},
        {WSAEINTR, "WSAEINTR", CIO_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xfer_run r;
        xfer_prepare(state, &r, 0);
        assert_int_equal(cio__fault_errno("WSAGetOverlappedResult@transmit_result", cases[i].code, 0, 1), 1);
        xfer_go(&r);
        cio_err err = cio_await(r.f.io, &r.sender);
        xfer_finish(&r, err, cases[i].want, cases[i].want == CIO_OK, cases[i].name);
        covered("WSAGetOverlappedResult@transmit_result", cases[i].name);
        fx_close(&r.f);
    }
}

/* ---- AF_UNIX listen ----------------------------------------------------------------------------------- */

/* Wine has no AF_UNIX (the socket call says WSAEAFNOSUPPORT), so to reach the bind and listen of
 * cio_unix_listen the socket call is overridden: it makes a TCP socket in the AF_UNIX one's place (a
 * real socket, closed by the library on the failure path). The fault then lands on the bind (and,
 * with the bind overridden to succeed, on the listen) and must come back as the map's error with
 * no handle left behind. On Windows 10 1803+, which has AF_UNIX, the same overrides apply. */
static SOCKET WSAAPI tcp_for_unix(int af, int type, int protocol, WSAPROTOCOL_INFOW *info, GROUP g, DWORD flags)
{
    if (af == AF_UNIX) {
        af = AF_INET;
        protocol = 0;
    }
    return (cio__sys_default.WSASocketW)(af, type, protocol, info, g, flags);
}

static int WSAAPI bind_succeeds(SOCKET s, const struct sockaddr *addr, int len)
{
    (void)s;
    (void)addr;
    (void)len;
    return 0;
}

static void unix_listen_fault(cio_io io, const char *site, int code, const char *name, cio_err want)
{
    cio_unix_address a;
    assert_ok(cio_unix_address_from_path("cio-fault.sock", &a));
    int handles = fd_count();
    cio__fault_reset(); /* the counters too */
    cio__sys_set(WSASocketW__new_socket, tcp_for_unix);
    if (strcmp(site, "wsa_listen@listen_unix") == 0)
        cio__sys_set(wsa_bind__listen_unix, bind_succeeds);
    assert_int_equal(cio__fault_errno(site, code, 0, 1), 1);
    cio_server srv;
    cio_err err = cio_unix_listen(io, &a, NULL, &srv);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (err == CIO_OK)
        (void)cio_server_close(io, &srv);
    if (err != want)
        fail_msg("%s with %s: %s, want %s", site, name, cio_err_name(err), cio_err_name(want));
    assert_int_equal(injected, 1);
    assert_handles(handles);
    covered(site, name);
}

static void test_win_unix_listen_faults(void **state)
{
    fx f;
    fx_open(state, &f);
    warm_up(f.io);
    unix_listen_fault(f.io, "wsa_bind@listen_unix", WSAEADDRINUSE, "WSAEADDRINUSE", CIO_E_ADDRESS_IN_USE);
    unix_listen_fault(f.io, "wsa_bind@listen_unix", WSAEACCES, "WSAEACCES", CIO_E_ACCESS_DENIED);
    unix_listen_fault(f.io, "wsa_listen@listen_unix", WSAEMFILE, "WSAEMFILE", CIO_E_SYSTEM_RESOURCES);
    unix_listen_fault(f.io, "wsa_listen@listen_unix", WSAEADDRINUSE, "WSAEADDRINUSE", CIO_E_ADDRESS_IN_USE);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_win_pair_faults),           CIO_TESTS(test_win_interface_faults),
        CIO_TESTS(test_win_transmit_poll_fails),   CIO_TESTS(test_win_transmit_wait_fails),
        CIO_TESTS(test_win_transmit_cancel_fails), CIO_TESTS(test_win_transmit_cancel_drain),
        CIO_TESTS(test_win_transmit_result_fails), CIO_TESTS(test_win_unix_listen_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
