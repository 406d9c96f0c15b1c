/*
 * The BSD smoke program: one run through the Threaded backend's moving parts, built by build.py for
 * FreeBSD, NetBSD and OpenBSD with no sysroot (the generated stand-in headers, the generated libc
 * stubs, tests/bsd/crt0_<os>.c). Here it is only linked and checked with readelf; on a real BSD
 * machine (`build.py test --target T --runner 'ssh host'`) it runs and must print "smoke: ok".
 *
 * Checks, in order: async + await (a result through a task), concurrent + cancel (a task blocked in a
 * cancelable futex wait ends with Canceled), futex wait/wake between two tasks, a mutex held across
 * a hundred increments by four concurrent tasks, a file written, read back and deleted, and the
 * executable's own path (FreeBSD/NetBSD: a non-empty absolute path; OpenBSD: OperationUnsupported).
 * Then, where CIO_HAVE_EVENTED is 1 (x86_64, aarch64), the same io through the Evented backend on its
 * kqueue flavour: async + await, a timed sleep in a fiber (a loop timer and kevent's timeout), and a
 * loopback TCP round trip (accept and read wait for readiness through kqueue; connect runs on the
 * helper pool). Linking it proves every symbol the Evented backend needs is in the libc stubs.
 * Only write(2) prints: the stubs export no stdio.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cio.h>

static int failures;

static void say(const char *s)
{
    (void)!write(1, s, strlen(s));
}

static void check(int ok, const char *what, cio_err err)
{
    say(ok ? "  ok    " : "  FAIL  ");
    say(what);
    if (!ok) {
        say(": ");
        say(cio_err_name(err));
        failures++;
    }
    say("\n");
}

typedef struct {
    cio_io io;
    int in;
    int *out;
} double_args;

static cio_err double_it(void *c)
{
    double_args *a = c;
    *a->out = a->in * 2;
    return CIO_OK;
}

typedef struct {
    cio_io io;
    _Atomic(uint32_t) *word;
} wait_args;

static cio_err wait_forever(void *c)
{
    wait_args *a = c;
    for (;;) {
        cio_err e = cio_futex_wait(a->io, a->word, 0, CIO_TIMEOUT_NONE);
        if (e != CIO_OK && e != CIO_E_TIMEOUT)
            return e; /* Canceled */
    }
}

static cio_err wait_for_one(void *c)
{
    wait_args *a = c;
    while (atomic_load(a->word) == 0) {
        cio_err e = cio_futex_wait(a->io, a->word, 0, cio_timeout_ms(5000));
        if (e == CIO_E_TIMEOUT)
            return e;
    }
    return CIO_OK;
}

typedef struct {
    cio_io io;
    cio_mutex *mu;
    int *counter;
} count_args;

static cio_err count_up(void *c)
{
    count_args *a = c;
    for (int i = 0; i < 100; i++) {
        cio_err e = cio_mutex_lock(a->io, a->mu);
        if (e != CIO_OK)
            return e;
        int v = *a->counter;
        *a->counter = v + 1;
        cio_mutex_unlock(a->io, a->mu);
    }
    return CIO_OK;
}

#if CIO_HAVE_EVENTED
typedef struct {
    cio_io io;
    int64_t slept_ns;
} nap_args;

static cio_err nap(void *c)
{
    nap_args *a = c;
    cio_timestamp t0 = cio_now(a->io, CIO_CLOCK_AWAKE);
    cio_err e = cio_sleep(a->io, cio_timeout_ms(20));
    a->slept_ns = cio_now(a->io, CIO_CLOCK_AWAKE).ns - t0.ns;
    return e;
}

typedef struct {
    cio_io io;
    const cio_server *server;
    char *buf;
    size_t got;
} serve_args;

static cio_err serve_one(void *c)
{
    serve_args *a = c;
    cio_stream s;
    cio_err e = cio_server_accept(a->io, a->server, &s);
    if (e != CIO_OK)
        return e;
    while (e == CIO_OK && a->got < 4) {
        size_t n = 0;
        e = cio_stream_read(a->io, &s, a->buf + a->got, 4 - a->got, &n);
        if (e == CIO_OK && n == 0)
            break;
        a->got += n;
    }
    cio_stream_close(a->io, &s);
    return e;
}

static void evented_smoke(void)
{
    cio_evented *ev;
    cio_err err = cio_evented_create(NULL, &ev);
    check(err == CIO_OK, "evented_create", err);
    if (err != CIO_OK)
        return;
    check(cio_evented_flavour_of(ev) == CIO_EVENTED_KQUEUE, "evented flavour is kqueue", CIO_OK);
    cio_io io = cio_evented_io(ev);

    int doubled = 0;
    double_args da = {io, 4, &doubled};
    cio_future f = cio_async(io, double_it, &da, sizeof da);
    err = cio_await(io, &f);
    check(err == CIO_OK && doubled == 8, "evented async + await", err);

    nap_args na = {io, 0};
    f = cio_async(io, nap, &na, sizeof na);
    err = cio_await(io, &f);
    check(err == CIO_OK && na.slept_ns >= 20000000, "evented timed sleep in a fiber", err);

    cio_ip_address lo;
    cio_server server;
    char buf[4] = {0};
    err = cio_ip_parse("127.0.0.1", 0, &lo);
    if (err == CIO_OK)
        err = cio_net_listen(io, &lo, NULL, &server);
    if (err == CIO_OK) {
        serve_args sa = {io, &server, buf, 0};
        f = cio_async(io, serve_one, &sa, sizeof sa);
        cio_stream c;
        cio_err ce = cio_net_connect(io, &server.address, NULL, &c);
        if (ce == CIO_OK) {
            ce = cio_stream_write_all(io, &c, "ping", 4);
            cio_stream_close(io, &c);
        }
        err = ce != CIO_OK ? cio_cancel(io, &f) : cio_await(io, &f);
        if (ce != CIO_OK)
            err = ce;
        else if (err == CIO_OK && (sa.got != 4 || memcmp(buf, "ping", 4) != 0))
            err = CIO_E_UNEXPECTED;
        cio_server_close(io, &server);
    }
    check(err == CIO_OK, "evented TCP round trip over loopback", err);

    cio_evented_destroy(ev);
}
#endif

int main(void)
{
    cio_threaded *t;
    cio_err err = cio_threaded_create(NULL, &t);
    check(err == CIO_OK, "threaded_create", err);
    if (err != CIO_OK)
        return 1;
    cio_io io = cio_threaded_io(t);

    int doubled = 0;
    double_args da = {io, 21, &doubled};
    cio_future f = cio_async(io, double_it, &da, sizeof da);
    err = cio_await(io, &f);
    check(err == CIO_OK && doubled == 42, "async + await", err);

    _Atomic(uint32_t) never = 0;
    wait_args wa = {io, &never};
    err = cio_concurrent(io, wait_forever, &wa, sizeof wa, &f);
    if (err == CIO_OK) {
        (void)cio_sleep(io, cio_timeout_ms(50)); /* let it block in the kernel */
        err = cio_cancel(io, &f);
        check(err == CIO_E_CANCELED, "concurrent + cancel a futex wait", err);
    } else {
        check(0, "concurrent", err);
    }

    _Atomic(uint32_t) flag = 0;
    wait_args wb = {io, &flag};
    err = cio_concurrent(io, wait_for_one, &wb, sizeof wb, &f);
    if (err == CIO_OK) {
        (void)cio_sleep(io, cio_timeout_ms(20));
        atomic_store(&flag, 1);
        cio_futex_wake(io, &flag, 1);
        err = cio_await(io, &f);
    }
    check(err == CIO_OK, "futex wait + wake", err);

    cio_mutex mu = CIO_MUTEX_INIT;
    int counter = 0;
    count_args ca = {io, &mu, &counter};
    cio_future fs[4];
    int started = 0;
    for (int i = 0; i < 4; i++)
        if (cio_concurrent(io, count_up, &ca, sizeof ca, &fs[i]) == CIO_OK)
            started++;
        else
            break;
    err = CIO_OK;
    for (int i = 0; i < started; i++) {
        cio_err e = cio_await(io, &fs[i]);
        if (e != CIO_OK)
            err = e;
    }
    check(err == CIO_OK && started == 4 && counter == 400, "mutex across 4 tasks", err);

    static const char text[] = "written by cio on a BSD\n";
    char back[64] = {0};
    size_t got = 0;
    cio_file file;
    err = cio_dir_create_file(io, cio_dir_cwd(), "cio-smoke.txt", NULL, &file);
    if (err == CIO_OK) {
        err = cio_file_write_all(io, file, text, sizeof text - 1);
        cio_file_close(io, file);
    }
    if (err == CIO_OK)
        err = cio_dir_open_file(io, cio_dir_cwd(), "cio-smoke.txt", NULL, &file);
    if (err == CIO_OK) {
        err = cio_file_read_all(io, file, back, sizeof back, &got);
        cio_file_close(io, file);
    }
    check(err == CIO_OK && got == sizeof text - 1 && memcmp(back, text, got) == 0, "file write + read back", err);
    err = cio_dir_delete_file(io, cio_dir_cwd(), "cio-smoke.txt");
    check(err == CIO_OK, "file delete", err);

    char path[1024];
    size_t len = 0;
    err = cio_process_executable_path(io, path, sizeof path, &len);
#if defined(__OpenBSD__)
    check(err == CIO_E_OPERATION_UNSUPPORTED, "executable path (OpenBSD: OperationUnsupported)", err);
#else
    check(err == CIO_OK && len > 1 && path[0] == '/' && path[len] == '\0', "executable path", err);
    if (err == CIO_OK) {
        say("        ");
        say(path);
        say("\n");
    }
#endif

    cio_threaded_destroy(t);
#if CIO_HAVE_EVENTED
    evented_smoke();
#endif
    say(failures == 0 ? "smoke: ok\n" : "smoke: FAILED\n");
    return failures == 0 ? 0 : 1;
}
