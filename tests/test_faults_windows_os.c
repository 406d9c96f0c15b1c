/*
 * Fault injection through the OS call table, Windows: sockets (Winsock), clocks, entropy, the
 * futex, the cancel kick and the worker pool (tests/test_faults_windows.c has the files and the
 * method). Winsock faults are WSA errors behind SOCKET_ERROR / INVALID_SOCKET; WSAEINTR is retried
 * (and a cancel during an endless storm still cancels), WSANOTINITIALISED runs WSAStartup again.
 * Every case checks the exact cio error, the data that crossed, and that no handle (socket) or
 * thread is left behind (tests/faults.h counts them).
 */
#include "faults.h"
#include "faults_windows.h"
#include "faults_net.h"

#include "cio/ntstatus.h"

/* ---- sockets ---------------------------------------------------------------------------------------- */

typedef struct net_case {
    const char *name;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*done)(fx *f);
} net_case;

/* accept on a listener nobody connects to yet: the accept waits (WSAEventSelect, an alertable
 * wait), and a connection made 30 ms later by a concurrent task ends the wait. */
typedef struct later_ctx {
    cio_io io;
    cio_ip_address to;
    cio_stream s;
} later_ctx;

static cio_err connect_later(void *p)
{
    later_ctx *c = *(later_ctx **)p;
    pause_ms(30);
    return cio_net_connect(c->io, &c->to, NULL, &c->s);
}

static cio_err run_accept_waiting(fx *f)
{
    later_ctx c;
    memset(&c, 0, sizeof c);
    c.io = f->io;
    c.to = f->server.address;
    later_ctx *p = &c;
    cio_future fut;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(f->io, connect_later, &p, sizeof p, &fut));
    cio_stream s;
    cio_err err = cio_server_accept(f->io, &f->server, &s);
    if (err == CIO_OK)
        cio_stream_close(f->io, &s);
    cio_err cerr = cio_await(f->io, &fut);
    if (cerr == CIO_OK)
        cio_stream_close(f->io, &c.s);
    return err;
}

static const net_case net_cases[] = {
    {"listen", NULL, run_listen, NULL},
    {"accept", prep_pending, run_accept, done_pending},
    {"accept_waiting", prep_listener, run_accept_waiting, done_listener},
    {"connect", prep_listener, run_connect, done_listener},
    {"bind", NULL, run_bind, NULL},
    {"read", prep_pair, run_stream_read, done_pair},
    {"write", prep_pair, run_stream_write, done_pair},
    {"shutdown", prep_pair, run_shutdown, done_pair},
    {"send", prep_udp, run_send, done_udp},
    {"receive", prep_udp, run_receive_timeout, done_udp},
    {"sockopt_set", prep_pair, run_sockopt_set, done_pair},
    {"sockopt_get", prep_pair, run_sockopt_get, done_pair},
    {"multicast", prep_udp, run_multicast, done_udp},
    {"local_address", prep_pair, run_local_address, done_pair},
    {"peer_address", prep_pair, run_peer_address, done_pair},
    {"listen_sockopts", NULL, run_listen_sockopts, NULL},
};

static const net_case *net_case_of(const char *name)
{
    return (const net_case *)case_named(net_cases, sizeof net_cases / sizeof net_cases[0], sizeof net_cases[0], name);
}

/* The site a Threaded `what` case reaches on this case's backend, or NULL (after a note) where the
 * iocp flavour makes no such call: its stream reads, writes, accepts and connects and its datagram
 * sends and receives are overlapped operations whose errors come in completions (test_iocp_net.c
 * and test_iocp_udp.c inject at their sites), and it waits for no socket events. Everything else is the same call on
 * both. */
static const char *net_site(void **state, const char *site, const char *what)
{
    if (fx_backend_of(state) != FX_IOCP)
        return site;
    static const char *const overlapped[] = {"wsa_accept@accept_one",
                                             "ioctlsocket@accept_one",
                                             "wsa_connect@connect_wait",
                                             "wsa_getsockopt@connect_wait",
                                             "wsa_getpeername@connect_wait",
                                             "WSARecv@net_read",
                                             "WSASend@net_write",
                                             "WSACreateEvent@wait_events",
                                             "WSAEventSelect@wait_select",
                                             "WSAEventSelect@wait_detach",
                                             "WaitForSingleObjectEx@wait_events",
                                             "WSASendTo@net_send",
                                             "wsa_recvfrom@receive_one"};
    for (size_t i = 0; i < sizeof overlapped / sizeof overlapped[0]; i++)
        if (strcmp(site, overlapped[i]) == 0) {
            print_message("      not here: %s (%s: an overlapped operation on the completion port)\n", site, what);
            return NULL;
        }
    if (strcmp(site, "WSASocketW@new_socket") == 0 && strcmp(what, "connect") == 0)
        return "WSASocketW@iocp_socket"; /* ConnectEx's socket, made by the flavour */
    return site;
}

static void net_fault(void **state, const char *site, const char *what, char mode, int code, int count, size_t max,
                      cio_err want, const char *fault)
{
    site = net_site(state, site, what);
    if (site == NULL)
        return;
    fx f;
    fx_open(state, &f);
    warm_up(f.io);
    int handles = fd_count(); /* before prep; compared after done: everything the case made is gone */
    const net_case *c = net_case_of(what);
    if (c->prep != NULL)
        c->prep(&f);
    unsigned injected = run_with_fault(&f, c->run, site, what, mode, code, count, max, want, fault);
    if (injected == 0)
        fail_msg("%s (%s): the fault was never injected", site, what);
    if (c->done != NULL)
        c->done(&f);
    case_done(&f, handles, site, what, fault);
}

typedef struct net_error {
    const char *site;
    const char *what;
    int code;
    const char *name;
    cio_err want;
} net_error;

#define N(site, what, code, want)     \
    {                                 \
        site, what, code, #code, want \
    }

static const net_error net_errors[] = {
    N("WSASocketW@new_socket", "listen", WSAEMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    N("WSASocketW@new_socket", "listen", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("WSASocketW@new_socket", "connect", WSAEMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    N("WSASocketW@new_socket", "bind", WSAEMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    N("ioctlsocket@new_socket", "listen", WSAENETDOWN, CIO_E_UNEXPECTED), /* the fresh socket is closed */
    N("wsa_setsockopt@set_int_option", "bind", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("wsa_getsockname@local_address", "listen", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("wsa_bind@listen_ip", "listen", WSAEADDRINUSE, CIO_E_ADDRESS_IN_USE),
    N("wsa_bind@listen_ip", "listen", WSAEACCES, CIO_E_ACCESS_DENIED),
    N("wsa_listen@listen_ip", "listen", WSAEADDRINUSE, CIO_E_ADDRESS_IN_USE),
    N("wsa_listen@listen_ip", "listen", WSAEMFILE, CIO_E_SYSTEM_RESOURCES),
    N("wsa_bind@bind_ip", "bind", WSAEADDRINUSE, CIO_E_ADDRESS_IN_USE),
    N("wsa_accept@accept_one", "accept", WSAEMFILE, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    N("wsa_accept@accept_one", "accept", WSAECONNRESET, CIO_E_CONNECTION_ABORTED),
    N("wsa_accept@accept_one", "accept", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("ioctlsocket@accept_one", "accept", WSAENETDOWN, CIO_OK), /* ignored: the socket is still usable */
    N("wsa_connect@connect_wait", "connect", WSAECONNREFUSED, CIO_E_CONNECTION_REFUSED),
    N("wsa_connect@connect_wait", "connect", WSAENETUNREACH, CIO_E_NETWORK_UNREACHABLE),
    N("wsa_connect@connect_wait", "connect", WSAETIMEDOUT, CIO_E_TIMEOUT),
    N("wsa_getsockopt@connect_wait", "connect", WSAENETDOWN, CIO_E_UNEXPECTED),
    N("wsa_getpeername@connect_wait", "connect", WSAENOTCONN, CIO_OK), /* not yet: wait again */
    N("WSARecv@net_read", "read", WSAECONNRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    N("WSARecv@net_read", "read", WSAENETDOWN, CIO_E_NETWORK_DOWN),
    N("WSASend@net_write", "write", WSAECONNABORTED, CIO_E_CONNECTION_RESET_BY_PEER),
    N("WSASend@net_write", "write", WSAESHUTDOWN, CIO_E_BROKEN_PIPE),
    N("wsa_shutdown@net_shutdown", "shutdown", WSAENOTCONN, CIO_E_SOCKET_UNCONNECTED),
    N("WSASendTo@net_send", "send", WSAEMSGSIZE, CIO_E_MESSAGE_OVERSIZE),
    N("WSASendTo@net_send", "send", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("wsa_recvfrom@receive_one", "receive", WSAENETRESET, CIO_E_CONNECTION_RESET_BY_PEER),
    N("WSACreateEvent@wait_events", "accept_waiting", WSA_NOT_ENOUGH_MEMORY, CIO_E_SYSTEM_RESOURCES),
    N("WSAEventSelect@wait_select", "accept_waiting", WSAENETDOWN, CIO_E_NETWORK_DOWN),
    N("WSAEventSelect@wait_detach", "accept_waiting", WSAENETDOWN, CIO_OK), /* ignored */
    N("WaitForSingleObjectEx@wait_events", "accept_waiting", ERROR_INVALID_HANDLE, CIO_E_UNEXPECTED),
    N("wsa_setsockopt@sockopt_set", "sockopt_set", WSAENOPROTOOPT, CIO_E_OPTION_UNSUPPORTED),
    N("wsa_setsockopt@sockopt_set", "sockopt_set", WSAEINVAL, CIO_E_INVALID_ARGUMENT),
    N("wsa_setsockopt@sockopt_set", "listen_sockopts", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("wsa_getsockopt@sockopt_get", "sockopt_get", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("wsa_setsockopt@multicast", "multicast", WSAEADDRNOTAVAIL, CIO_E_ADDRESS_UNAVAILABLE),
    N("wsa_setsockopt@multicast", "multicast", WSAENETDOWN, CIO_E_NETWORK_DOWN),
    N("wsa_getsockname@socket_address", "local_address", WSAENOBUFS, CIO_E_SYSTEM_RESOURCES),
    N("wsa_getpeername@socket_address", "peer_address", WSAENOTCONN, CIO_E_SOCKET_UNCONNECTED),
};

static void test_win_net_errors(void **state)
{
    CIO_REQUIRE_THREADS(cio_test_io(state));
    for (size_t i = 0; i < sizeof net_errors / sizeof net_errors[0]; i++) {
        const net_error *e = &net_errors[i];
        net_fault(state, e->site, e->what, 'e', e->code, 1, 0, e->want, e->name);
    }
    /* a datagram not there yet after all (WSAEWOULDBLOCK three times): the receive waits again */
    net_fault(state, "wsa_recvfrom@receive_one", "receive", 'e', WSAEWOULDBLOCK, 3, 0, CIO_OK, "WSAEWOULDBLOCK");
}

/* WSAEINTR: 50 in a row are retried at every site that retries, and the operation completes. */
static void test_win_net_eintr_storms(void **state)
{
    static const struct {
        const char *site, *what;
    } storms[] = {
        {"WSASocketW@new_socket", "listen"},
        {"wsa_setsockopt@set_int_option", "bind"},
        {"wsa_bind@listen_ip", "listen"},
        {"wsa_listen@listen_ip", "listen"},
        {"wsa_bind@bind_ip", "bind"},
        {"wsa_accept@accept_one", "accept"},
        {"wsa_connect@connect_wait", "connect"},
        {"WSARecv@net_read", "read"},
        {"WSASend@net_write", "write"},
        {"wsa_shutdown@net_shutdown", "shutdown"},
        {"WSASendTo@net_send", "send"},
        {"wsa_recvfrom@receive_one", "receive"},
    };
    for (size_t i = 0; i < sizeof storms / sizeof storms[0]; i++)
        net_fault(state, storms[i].site, storms[i].what, 'e', WSAEINTR, 50, 0, CIO_OK, "WSAEINTR");
}

/* Streams move what Winsock took: 7 bytes a call still delivers every byte in order. */
static void test_win_net_short_transfers(void **state)
{
    net_fault(state, "WSARecv@net_read", "read", 's', 0, -1, 7, CIO_OK, "short");
    net_fault(state, "WSASend@net_write", "write", 's', 0, -1, 7, CIO_OK, "short");
}

/* WSANOTINITIALISED (the program called WSACleanup): WSAStartup once more and the call again; if
 * that WSAStartup fails too, NetworkDown. */
static void test_win_net_reinit(void **state)
{
    net_fault(state, "WSASocketW@new_socket", "listen", 'e', WSANOTINITIALISED, 1, 0, CIO_OK, "WSANOTINITIALISED");
    fx f;
    fx_open(state, &f);
    int handles = fd_count();
    assert_int_equal(cio__fault_errno("WSASocketW@new_socket", WSANOTINITIALISED, 0, 1), 1);
    assert_int_equal(cio__fault_errno("WSAStartup@wsa_reinit", WSASYSNOTREADY, 0, 1), 1);
    assert_err(run_listen(&f), CIO_E_NETWORK_DOWN);
    cio__sys_reset();
    assert_handles(handles);
    covered("WSAStartup@wsa_reinit", "WSASYSNOTREADY");
    /* and the network works again afterwards */
    assert_ok(run_listen(&f));
    fx_close(&f);
}

/* closesocket reporting a failure after closing (after: true): nothing retries it, nothing leaks. */
static void test_win_net_close(void **state)
{
    fx f;
    fx_open(state, &f);
    warm_up(f.io);
    int handles = fd_count();
    prep_pair(&f);
    assert_int_equal(cio__fault_errno("closesocket@close_socket", WSAENETDOWN, 0, -1), 1);
    assert_err(cio_stream_close(f.io, &f.a), CIO_E_NETWORK_DOWN); /* reported, the socket gone all the same */
    assert_err(cio_stream_close(f.io, &f.b), CIO_E_NETWORK_DOWN);
    assert_err(cio_server_close(f.io, &f.server), CIO_E_NETWORK_DOWN);
    unsigned hits = cio__fault_hits("closesocket@close_socket");
    cio__sys_reset();
    assert_int_equal(hits, 3); /* one each, none retried */
    assert_handles(handles);
    covered("closesocket@close_socket", "WSAENETDOWN-after-close");
    fx_close(&f);
}

/* A cancel during an endless WSAEINTR storm at a read still cancels, and nothing leaks. */
typedef struct storm_ctx {
    fx *f;
} storm_ctx;

static cio_err storm_read(void *p)
{
    fx *f = ((storm_ctx *)p)->f;
    unsigned char b[16];
    size_t n = 0;
    return cio_stream_read(f->io, &f->b, b, sizeof b, &n);
}

static void test_win_net_storm_cancel(void **state)
{
    fx f;
    fx_open(state, &f);
    CIO_REQUIRE_THREADS(f.io);
    warm_up(f.io);
    if (net_site(state, "WSARecv@net_read", "read") == NULL) {
        fx_close(&f);
        CIO_SKIP("the iocp flavour's read is one overlapped WSARecv: no retry loop to storm "
                 "(test_iocp_net.c cancels a pending one)");
    }
    prep_pair(&f);
    int handles = fd_count();
    assert_int_equal(cio__fault_errno("WSARecv@net_read", WSAEINTR, 0, -1), 1);
    storm_ctx c = {&f};
    cio_future fut;
    cio_err err = cio_concurrent(f.io, storm_read, &c, sizeof c, &fut);
    if (err != CIO_OK)
        cio__sys_reset();
    CIO_REQUIRE_CONCURRENT(err);
    for (int waited = 0; cio__fault_injected("WSARecv@net_read") < 100 && waited < 10000; waited++)
        pause_ms(1);
    err = cio_cancel(f.io, &fut);
    unsigned n = cio__fault_injected("WSARecv@net_read");
    cio__sys_reset();
    assert_true(n >= 100);
    assert_err(err, CIO_E_CANCELED);
    assert_handles(handles);
    covered("WSARecv@net_read", "WSAEINTR-storm+cancel");
    done_pair(&f);
    fx_close(&f);
}

/* ---- clocks, sleep, entropy, futex ---------------------------------------------------------------- */

static void test_win_time_and_entropy(void **state)
{
    cio_io io = cio_test_io(state);
    cio__fault_reset();
    /* the CPU clocks read 0 when the OS refuses (cio_now has no error) */
    assert_int_equal(cio__fault_errno("GetProcessTimes@now_cpu_process", ERROR_ACCESS_DENIED, 0, 1), 1);
    assert_true(cio_now(io, CIO_CLOCK_CPU_PROCESS).ns == 0);
    covered("GetProcessTimes@now_cpu_process", "ERROR_ACCESS_DENIED");
    assert_int_equal(cio__fault_errno("GetThreadTimes@now_cpu_thread", ERROR_ACCESS_DENIED, 0, 1), 1);
    assert_true(cio_now(io, CIO_CLOCK_CPU_THREAD).ns == 0);
    covered("GetThreadTimes@now_cpu_thread", "ERROR_ACCESS_DENIED");
    cio__sys_reset();

    /* stray APCs end the alertable sleep 20 times: it still sleeps its whole time, no longer */
    int64_t t0, ms;
    if (fx_backend_of(state) != FX_THREADED) {
        print_message("      not here: SleepEx@sleep (Evented sleeps on a loop timer, no system call)\n");
    } else {
        assert_int_equal(cio__fault_errno("SleepEx@sleep", WAIT_IO_COMPLETION, 0, 20), 1);
        t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
        assert_ok(cio_sleep(io, cio_timeout_ms(20)));
        ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
        cio__sys_reset();
        assert_true(ms >= 20 && ms < 5000);
        covered("SleepEx@sleep", "WAIT_IO_COMPLETION");
    }

    /* no OS entropy: random_secure says so; cio_random's seed falls back (on a fresh worker) */
    unsigned char buf[64];
    assert_int_equal(cio__fault_errno("BCryptGenRandom@os_random", (int)CIO_NTSTATUS_NO_MEMORY, 0, 1), 1);
    assert_err(cio_random_secure(io, buf, sizeof buf), CIO_E_ENTROPY_UNAVAILABLE);
    cio__sys_reset();
    covered("BCryptGenRandom@os_random", "STATUS_NO_MEMORY");
    if (CIO_HAVE_THREADS) {
        random_in_task_despite(io, "BCryptGenRandom@os_random", (int)CIO_NTSTATUS_NO_MEMORY);
    }

    /* WaitOnAddress timing out early 20 times: a timed futex wait still ends at its deadline (an
     * Evented fiber waits in its loop's queue instead: the same deadline, no WaitOnAddress) */
    _Atomic(uint32_t) word = 0;
    bool threaded = fx_backend_of(state) == FX_THREADED;
    if (threaded)
        assert_int_equal(cio__fault_errno("WaitOnAddress@futex_wait", ERROR_TIMEOUT, 0, 20), 1);
    t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_futex_wait(io, &word, 0, cio_timeout_ms(30)), CIO_E_TIMEOUT);
    ms = (cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000;
    cio__sys_reset();
    assert_true(ms >= 29 && ms < 5000);
    if (threaded)
        covered("WaitOnAddress@futex_wait", "ERROR_TIMEOUT");
    else
        print_message("      not here: WaitOnAddress@futex_wait (a fiber waits in its loop's queue)\n");
}

/* ---- tasks: no memory, no thread -------------------------------------------------------------------- */

typedef struct degrade_run {
    cio_io io;
    const char *site;
    int code;
} degrade_run;

static void degrade_again(void *p)
{
    const degrade_run *r = (const degrade_run *)p;
    assert_true(cio__fault_errno(r->site, r->code, 0, -1) >= 1);
    tasks_run_inline(r->io);
    cio__sys_reset();
}

static void tasks_degrade(void **state, const char *site, int code, const char *fault)
{
    FX_THREADED_POOL_ONLY(state); /* Evented's fiber memory: test_iocp's faults */
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset(); /* no warm-up: the fresh pool has no idle worker to hand the task to */
    int handles = fd_count(), threads = thread_count();
    assert_true(cio__fault_errno(site, code, 0, -1) >= 1);
    tasks_run_inline(io);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (injected == 0)
        fail_msg("%s: never reached", site);
    degrade_run again = {io, site, code};
    assert_handles_or_once(handles, degrade_again, &again);
    if (!settled_at_most(thread_count, threads))
        fail_msg("threads: %d, %d before", thread_count(), threads);
    covered(site, fault);
}

static void test_win_task_allocation_fails(void **state)
{
    tasks_degrade(state, "_aligned_malloc@task_alloc", ENOMEM, "ENOMEM");
}

static void test_win_thread_creation_fails(void **state)
{
    tasks_degrade(state, "pthread_create@enqueue", EAGAIN, "EAGAIN");
    tasks_degrade(state, "pthread_attr_init@enqueue", ENOMEM, "ENOMEM");
}

static void test_win_group_record_fails(void **state)
{
    group_record_fails(state);
}

/* The pool's clocks fail (winpthreads' clock_gettime): workers retire at once / nobody yields;
 * every task still completes. */
static void test_win_pool_clocks_fail(void **state)
{
    FX_THREADED_POOL_ONLY(state);
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    static const char *const sites[] = {"clock_gettime@worker_idle", "clock_gettime@yield_clock"};
    for (size_t k = 0; k < 2; k++) {
        cio__fault_reset();
        assert_true(cio__fault_errno(sites[k], EINVAL, 0, -1) == 1);
        for (int i = 0; i < 10; i++)
            CIO_REQUIRE_CONCURRENT(concurrent_sum(io));
        for (int i = 0; i < 200 && cio__fault_injected(sites[k]) == 0; i++)
            pause_ms(5);
        cio__sys_reset();
        covered(sites[k], "EINVAL");
    }
}

/* The cancel kick fails a few times (no thread handle, no APC queued, CancelSynchronousIo refused,
 * CloseHandle reporting a failure after closing): the canceler kicks again with backoff, the task
 * ends Canceled, no handle leaks. */
static cio_err long_sleep_task(void *p)
{
    cio_io io = *(cio_io *)p;
    return cio_sleep(io, cio_timeout_ms(60000));
}

static void kick_fails(void **state, const char *site, int code, int count, const char *fault)
{
    FX_THREADED_POOL_ONLY(state); /* an Evented fiber's sleep is a loop timer, canceled by its loop */
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    warm_up(io);
    int handles = fd_count();
    cio_future f;
    assert_int_equal(cio__fault_watch("SleepEx@sleep"), 1);
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, long_sleep_task, &io, sizeof io, &f));
    for (int i = 0; i < 5000 && cio__fault_hits("SleepEx@sleep") == 0; i++)
        pause_ms(1); /* until the task is in (or entering) its SleepEx: a cancel must kick it */
    assert_int_equal(cio__fault_errno(site, code, 0, count), 1);
    int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    assert_true((cio_now(io, CIO_CLOCK_AWAKE).ns - t0) / 1000000 < 5000);
    unsigned injected = cio__fault_injected(site);
    cio__sys_reset();
    if (injected == 0)
        fail_msg("%s: the kick never reached it", site);
    assert_handles(handles);
    covered(site, fault);
}

static void test_win_cancel_kick_fails(void **state)
{
    kick_fails(state, "OpenThread@kick", ERROR_ACCESS_DENIED, 3, "ERROR_ACCESS_DENIED");
    kick_fails(state, "QueueUserAPC@kick", ERROR_NOT_ENOUGH_MEMORY, 3, "ERROR_NOT_ENOUGH_MEMORY");
    kick_fails(state, "CancelSynchronousIo@kick", ERROR_NOT_FOUND, -1, "ERROR_NOT_FOUND");
    kick_fails(state, "CloseHandle@kick", ERROR_INVALID_HANDLE, -1, "ERROR_INVALID_HANDLE-after-close");
}

/* The stack-overflow handler (src/core/overflow_windows.c). First in this program, so no instance
 * has added it yet: refused, the instance works all the same and the next create adds it. A worker
 * whose stack guarantee is refused runs tasks all the same (test_misuse has the message itself). */
static void overflow_round(void)
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    assert_ok(concurrent_sum(cio_threaded_io(t)));
    cio_threaded_destroy(t);
}

static void overflow_round_again(void *unused)
{
    (void)unused;
    overflow_round();
}

static void test_win_overflow_handler_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    assert_int_equal(cio__fault_errno("AddVectoredExceptionHandler@overflow_install", ERROR_NOT_ENOUGH_MEMORY, 0, 1),
                     1);
    assert_int_equal(cio__fault_errno("SetThreadStackGuarantee@overflow_guarantee", ERROR_INVALID_PARAMETER, 0, -1), 1);
    overflow_round();
    if (cio__fault_injected("AddVectoredExceptionHandler@overflow_install") != 1)
        fail_msg("AddVectoredExceptionHandler@overflow_install: not asked once (an instance made before this test?)");
    if (cio__fault_injected("SetThreadStackGuarantee@overflow_guarantee") == 0)
        fail_msg("SetThreadStackGuarantee@overflow_guarantee: no worker asked");
    covered("AddVectoredExceptionHandler@overflow_install", "ERROR_NOT_ENOUGH_MEMORY");
    covered("SetThreadStackGuarantee@overflow_guarantee", "ERROR_INVALID_PARAMETER");
    cio__fault_reset();
    int handles = fd_count(); /* (after the process's first instance, which starts what stays) */
    /* The next create adds it (really, this time), and the one after asks no more. */
    assert_int_equal(cio__fault_watch("AddVectoredExceptionHandler@overflow_install"), 1);
    overflow_round();
    overflow_round();
    assert_int_equal(cio__fault_hits("AddVectoredExceptionHandler@overflow_install"), 1);
    cio__fault_reset();
    assert_handles_or_once(handles, overflow_round_again, NULL);
}

/* cio_threaded_create on its own: no memory; no processor count (one worker assumed, the pool
 * works). */
static void test_win_threaded_create_faults(void **state)
{
    (void)state;
    cio__fault_reset();
    int handles = fd_count();
    threaded_create_without_memory();
    cio_threaded *t = NULL;
    cio__fault_reset();
    assert_true(cio__fault_errno("GetActiveProcessorCount@cpu_count", ERROR_INVALID_PARAMETER, 0, -1) == 1);
    assert_ok(cio_threaded_create(NULL, &t));
    cio__sys_reset();
    cio_io io = cio_threaded_io(t);
    assert_ok(concurrent_sum(io));
    cio_threaded_destroy(t);
    if (cio__fault_injected("GetActiveProcessorCount@cpu_count") == 0)
        fail_msg("GetActiveProcessorCount@cpu_count: never asked");
    covered("GetActiveProcessorCount@cpu_count", "ERROR_INVALID_PARAMETER");
    cio__fault_reset();
    assert_handles(handles);
}

/* AF_UNIX listeners (Windows 10 1803 and later): bind and listen failing are AddressInUse, the
 * socket is closed. Wine 8 has no AF_UNIX (socket() says WSAEAFNOSUPPORT): there these two sites
 * cannot be reached, and the test says so. */
static void test_win_unix_listen_faults(void **state)
{
    fx f;
    fx_open(state, &f);
    char p[256];
    snprintf(p, sizeof p, "%s\\sock", f.path);
    cio_unix_address a;
    assert_ok(cio_unix_address_from_path(p, &a));
    cio_server s;
    /* measured, not assumed: the socket call is made and refuses the family, bind is never reached */
    assert_int_equal(cio__fault_watch("WSASocketW@new_socket"), 1);
    assert_int_equal(cio__fault_watch("wsa_bind@listen_unix"), 1);
    cio_err err = cio_unix_listen(f.io, &a, NULL, &s);
    unsigned sockets = cio__fault_hits("WSASocketW@new_socket"), binds = cio__fault_hits("wsa_bind@listen_unix");
    cio__fault_reset();
    if (err == CIO_E_ADDRESS_FAMILY_UNSUPPORTED) {
        fx_close(&f);
        assert_int_equal(sockets, 1);
        assert_int_equal(binds, 0);
        CIO_SKIP("no AF_UNIX here (Wine 8: WSASocketW(AF_UNIX) fails with WSAEAFNOSUPPORT, measured): "
                 "wsa_bind@listen_unix and wsa_listen@listen_unix come after it and are unreachable");
    }
    assert_ok(err);
    cio_server_close(f.io, &s);
    (void)DeleteFileA(p);
    static const char *const sites[] = {"wsa_bind@listen_unix", "wsa_listen@listen_unix"};
    for (size_t i = 0; i < 2; i++) {
        int handles = fd_count();
        assert_int_equal(cio__fault_errno(sites[i], WSAEADDRINUSE, 0, 1), 1);
        assert_err(cio_unix_listen(f.io, &a, NULL, &s), CIO_E_ADDRESS_IN_USE);
        cio__sys_reset();
        (void)DeleteFileA(p);
        assert_handles(handles);
        covered(sites[i], "WSAEADDRINUSE");
    }
    fx_close(&f);
}

/* WSAStartup@wsa_start runs before a process's first socket call until it succeeds, so its failure is
 * tested in a child process (this program with "wsa-start-child"): its first socket call fails
 * with NetworkDown, and the next one starts Winsock and works (a failure is not remembered). */
static int wsa_start_child(void)
{
    cio__fault_reset();
    if (cio__fault_errno("WSAStartup@wsa_start", WSASYSNOTREADY, 0, 1) != 1)
        return 2;
    cio_threaded *t = NULL;
    if (cio_threaded_create(NULL, &t) != CIO_OK)
        return 3;
    cio_io io = cio_threaded_io(t);
    cio_ip_address lo = cio_ip4_loopback(0);
    cio_server s;
    cio_err err = cio_net_listen(io, &lo, NULL, &s);
    unsigned injected = cio__fault_injected("WSAStartup@wsa_start");
    if (err != CIO_E_NETWORK_DOWN) {
        fprintf(stderr, "child: listen with WSAStartup failing: %s\n", cio_err_name(err));
        cio_threaded_destroy(t);
        return 4;
    }
    err = cio_net_listen(io, &lo, NULL, &s);
    if (err != CIO_OK) {
        fprintf(stderr, "child: listen after WSAStartup failed once: %s\n", cio_err_name(err));
        cio_threaded_destroy(t);
        return 6;
    }
    cio_server_close(io, &s);
    cio_threaded_destroy(t);
    return injected == 1 ? 0 : 5;
}

static void test_win_wsa_start_fails(void **state)
{
    (void)state;
    char exe[MAX_PATH], cmd[MAX_PATH + 40];
    DWORD n = GetModuleFileNameA(NULL, exe, MAX_PATH);
    assert_true(n > 0 && n < MAX_PATH);
    snprintf(cmd, sizeof cmd, "\"%s\" wsa-start-child", exe);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    assert_true(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi));
    assert_int_equal(WaitForSingleObject(pi.hProcess, 60000), WAIT_OBJECT_0);
    DWORD code = 99;
    assert_true(GetExitCodeProcess(pi.hProcess, &code));
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    if (code != 0)
        fail_msg("the child (WSAStartup failing) exited with %lu", (unsigned long)code);
    print_message("fault-covered: WSAStartup@wsa_start WSASYSNOTREADY\n");
}

/* ---- cio_signal_wait (src/os/sig_wait_windows.c) ------------------------------------------------------ */

struct sig_waiter {
    cio_io io;
    cio_sigset set;
    _Atomic(int) *got;
};
static cio_err sig_wait_task(void *p)
{
    struct sig_waiter *w = (struct sig_waiter *)p;
    cio_sig sig;
    cio_err err = cio_signal_wait(w->io, &w->set, &sig);
    if (err == CIO_OK)
        atomic_store(w->got, (int)sig);
    return err;
}

static void test_win_signal_wait_faults(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    cio__fault_reset();
    if (fx_backend_of(state) == FX_THREADED) /* the first run: cio's handler is not in place yet */
        (void)signal(SIGINT, SIG_IGN);       /* a raise before it is lost, not fatal */
    warm_up(io);                             /* Evented's waits are its helper pool's */
    int handles = fd_count();
    cio_sigset s;
    cio_sigset_empty(&s);
    assert_ok(cio_sigset_add(&s, CIO_SIG_INT));
    cio_sig sig;
    /* the console handler cannot be registered (the first wait of the process, the Threaded run's;
     * once it is in place no later wait registers it again): Unexpected */
    if (fx_backend_of(state) == FX_THREADED) {
        assert_int_equal(cio__fault_errno("SetConsoleCtrlHandler@sigwait_install", ERROR_INVALID_PARAMETER, 0, 1), 1);
        assert_err(cio_signal_wait(io, &s, &sig), CIO_E_UNEXPECTED);
        covered("SetConsoleCtrlHandler@sigwait_install", "ERROR_INVALID_PARAMETER");
        cio__sys_reset();
    }
    /* no event for the waiter: SystemResources */
    assert_int_equal(cio__fault_errno("CreateEventW@sigwait_event", ERROR_NOT_ENOUGH_MEMORY, 0, 1), 1);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_SYSTEM_RESOURCES);
    covered("CreateEventW@sigwait_event", "ERROR_NOT_ENOUGH_MEMORY");
    cio__sys_reset();
    /* the wait itself fails: Unexpected, the event closed */
    assert_int_equal(cio__fault_errno("WaitForSingleObjectEx@sigwait", ERROR_INVALID_HANDLE, 0, 1), 1);
    assert_err(cio_signal_wait(io, &s, &sig), CIO_E_UNEXPECTED);
    covered("WaitForSingleObjectEx@sigwait", "ERROR_INVALID_HANDLE");
    cio__sys_reset();
    assert_handles(handles);
    /* the handler's SetEvent fails: the waiter sleeps on (canceled here), the delivery stays pending
     * and the next wait returns it at once; that wait's event close fails, harmlessly */
    _Atomic(int) got = 0;
    struct sig_waiter w = {io, s, &got};
    cio_future f = {NULL, CIO_OK, 0};
    assert_ok(cio_concurrent(io, sig_wait_task, &w, sizeof w, &f));
    assert_ok(cio_sleep(io, cio_timeout_ms(100)));
    assert_int_equal(cio__fault_errno("SetEvent@sigwait_wake", ERROR_INVALID_HANDLE, 0, -1), 1);
    assert_ok(cio_sig_raise(CIO_SIG_INT));
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    assert_int_equal(atomic_load(&got), 0);
    assert_err(cio_cancel(io, &f), CIO_E_CANCELED);
    covered("SetEvent@sigwait_wake", "ERROR_INVALID_HANDLE");
    cio__sys_reset();
    handles = fd_count(); /* the pool's new worker thread is the pool's: counted from here */
    assert_int_equal(cio__fault_errno("CloseHandle@sigwait_event", ERROR_INVALID_HANDLE, 0, 1), 1);
    assert_ok(cio_signal_wait(io, &s, &sig));
    assert_int_equal(sig, CIO_SIG_INT);
    covered("CloseHandle@sigwait_event", "ERROR_INVALID_HANDLE");
    cio__sys_reset();
    assert_handles(handles);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "wsa-start-child") == 0)
        return wsa_start_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_win_overflow_handler_faults), /* first: before any instance adds the handler */
        cmocka_unit_test(test_win_wsa_start_fails),
        CIO_TESTS(test_win_net_errors),
        CIO_TESTS(test_win_net_eintr_storms),
        CIO_TESTS(test_win_net_short_transfers),
        CIO_TESTS(test_win_net_reinit),
        CIO_TESTS(test_win_unix_listen_faults),
        CIO_TESTS(test_win_net_close),
        CIO_TESTS(test_win_net_storm_cancel),
        CIO_TESTS(test_win_time_and_entropy),
        CIO_TESTS(test_win_task_allocation_fails),
        CIO_TESTS(test_win_thread_creation_fails),
        CIO_TESTS(test_win_group_record_fails),
        CIO_TESTS(test_win_pool_clocks_fail),
        CIO_TESTS(test_win_cancel_kick_fails),
        cmocka_unit_test(test_win_threaded_create_faults),
        CIO_TESTS(test_win_signal_wait_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
