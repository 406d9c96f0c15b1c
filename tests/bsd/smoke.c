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
 * Last, a task that runs off its stack, in a forked child per backend (a Threaded worker with a
 * 128 KiB stack, an Evented fiber with a 64 KiB one): the child must print src/core/overflow_posix.c's
 * "stack overflow in a cio task (stack N KiB; <kind> ..." on its stderr (a pipe here) and abort.
 * Only write(2) prints: the stubs export no stdio.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cio.h>

#include "../overflow_task.h"

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

/* ---- stack overflow in a task, in a forked child ------------------------------------------------ */

/* The child: an instance of its own with a known stack size, one task that overflows. Exits 2-4 if
 * it could not make one, could not spawn, or survived. */
static void overflow_child(int evented)
{
    cio_io io;
    if (!evented) {
        cio_threaded_options o;
        memset(&o, 0, sizeof o);
        o.stack_size = 128 * 1024;
        cio_threaded *t = NULL;
        if (cio_threaded_create(&o, &t) != CIO_OK)
            _exit(2);
        io = cio_threaded_io(t);
    } else {
#if CIO_HAVE_EVENTED
        cio_evented_options o;
        memset(&o, 0, sizeof o);
        o.threads = 1;
        o.stack_size = 64 * 1024;
        cio_evented *e = NULL;
        if (cio_evented_create(&o, &e) != CIO_OK)
            _exit(2);
        io = cio_evented_io(e);
#else
        _exit(2);
#endif
    }
    cio_future f;
    if (cio_concurrent(io, overflow_task, NULL, 0, &f) != CIO_OK)
        _exit(3);
    (void)cio_await(io, &f);
    _exit(4);
}

static int contains(const char *s, size_t n, const char *want)
{
    size_t w = strlen(want);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(s + i, want, w) == 0)
            return 1;
    return 0;
}

/* The parent: the child's stderr through a pipe, then its status (the BSDs' <sys/wait.h>: the
 * terminating signal is status & 0177, and 0177 there means stopped, not signalled). */
static void overflow_check(int evented, const char *want, const char *what)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        check(0, what, CIO_E_UNEXPECTED);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        (void)dup2(fds[1], 2);
        overflow_child(evented);
        _exit(5); /* (it does not return) */
    }
    close(fds[1]);
    char out[1024];
    size_t got = 0;
    ssize_t n = 0;
    while (pid > 0 && got < sizeof out && (n = read(fds[0], out + got, sizeof out - got)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int status = 0;
    int waited = pid > 0 && waitpid(pid, &status, 0) == pid;
    int ok = waited && (status & 0177) == SIGABRT && contains(out, got, want);
    check(ok, what, CIO_OK);
    if (!ok && got > 0) {
        say("        ");
        (void)!write(1, out, got);
        say("\n");
    }
}

/* Real paths (FreeBSD: F_KINFO, NetBSD: F_GETPATH, OpenBSD: OperationUnsupported) of cio-smoke.txt
 * in the current directory, and rename without replace (OperationUnsupported on every BSD: no
 * atomic form, and never a check-then-rename). */
#if !defined(__OpenBSD__)
static int ends_with(const char *s, size_t n, const char *tail)
{
    size_t t = strlen(tail);
    return n >= t && memcmp(s + n - t, tail, t) == 0;
}
#endif

static void real_paths(cio_io io)
{
    char path[1024], cwd[1024];
    size_t len = 0, cwd_len = 0;
    cio_file file;
    cio_err err = cio_dir_open_file(io, cio_dir_cwd(), "cio-smoke.txt", NULL, &file);
    if (err == CIO_OK) {
        err = cio_file_real_path(io, file, path, sizeof path, &len);
        cio_file_close(io, file);
    }
    cio_err by_name = cio_dir_real_path_file(io, cio_dir_cwd(), "cio-smoke.txt", cwd, sizeof cwd, &cwd_len);
#if defined(__OpenBSD__)
    check(err == CIO_E_OPERATION_UNSUPPORTED, "file real path (OpenBSD: OperationUnsupported)", err);
    check(by_name == CIO_E_OPERATION_UNSUPPORTED, "real path by name (OpenBSD: OperationUnsupported)", by_name);
#else
    check(err == CIO_OK && path[0] == '/' && ends_with(path, len, "/cio-smoke.txt"), "file real path", err);
    check(by_name == CIO_OK && cwd_len == len && memcmp(cwd, path, len) == 0, "real path by name", by_name);
    err = cio_dir_real_path(io, cio_dir_cwd(), cwd, sizeof cwd, &cwd_len);
    check(err == CIO_OK && cwd[0] == '/' && cwd_len > 0, "current directory's real path", err);
    err = cio_dir_real_path(io, cio_dir_cwd(), cwd, 1, &cwd_len);
    check(err == CIO_E_NAME_TOO_LONG && cwd[0] == '\0', "real path longer than the buffer", err);
#endif
    err = cio_dir_rename_preserve(io, cio_dir_cwd(), "cio-smoke.txt", cio_dir_cwd(), "cio-smoke-2.txt");
    check(err == CIO_E_OPERATION_UNSUPPORTED, "rename without replace (OperationUnsupported)", err);
}

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
    real_paths(io);
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
    overflow_check(0, "stack overflow in a cio task (stack 128 KiB; a Threaded worker spawned at ",
                   "Threaded worker stack overflow: the message, then SIGABRT");
#if CIO_HAVE_EVENTED
    overflow_check(1, "stack overflow in a cio task (stack 64 KiB; an Evented fiber spawned at ",
                   "Evented fiber stack overflow: the message, then SIGABRT");
#endif
    say(failures == 0 ? "smoke: ok\n" : "smoke: FAILED\n");
    return failures == 0 ? 0 : 1;
}
