/*
 * Every behavioural suite runs once per backend: each test is registered per backend with that
 * backend as its prestate, and a fresh instance is created in setup and destroyed in teardown.
 *
 *     static void test_x(void **state) { cio_io io = cio_test_io(state); ... }
 *     const struct CMUnitTest tests[] = { CIO_TESTS(test_x) };   // one entry per backend
 *
 * A backend or target that lacks a capability makes the test call skip(), never pass silently.
 */
#ifndef CIO_TESTS_BACKENDS_H
#define CIO_TESTS_BACKENDS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cio.h"

typedef struct cio_test_backend {
    const char *name;
    cio_io io;
    void *instance;
} cio_test_backend;

/* Windows has no ASan under mingw: every test's instance gives back every handle. Setup notes the
 * process's open handles before it creates the instance; teardown, once the instance is destroyed (its
 * threads joined), wants the count back within CIO_TEST_HANDLE_SLACK in at most 3 s: what Windows and
 * Wine make once per process on first use (Winsock's start-up, the test thread's cached I/O event, a
 * console or crypto handle) stays under it, and a per-operation leak does not. The suites' own
 * checks (faults.h, iocp_helpers.h) are exact around each case. */
#if defined(CIO_OS_WINDOWS)
__declspec(dllimport) int __stdcall GetHandleInformation(void *handle, unsigned long *flags);
__declspec(dllimport) void __stdcall Sleep(unsigned long ms);
#define CIO_TEST_HANDLE_SLACK 4ul
static unsigned long cio_test_handles_before;

/* The process's open handles of any kind. GetProcessHandleCount says 0 under Wine 8, so the values
 * are probed as os_helpers.h's cio_test_count_all_handles does (NT hands out the lowest free value:
 * the probe stops 256 free values after the last open one). */
static inline unsigned long cio_test_process_handles(void)
{
    unsigned long n = 0;
    int gap = 0;
    for (uintptr_t v = 4; gap < 256 && v < 4u * 65536u; v += 4) {
        unsigned long flags;
        if (GetHandleInformation((void *)v, &flags)) {
            n++;
            gap = 0;
        } else {
            gap++;
        }
    }
    return n;
}

static inline void cio_test_handles_mark(void)
{
    cio_test_handles_before = cio_test_process_handles();
}

static inline int cio_test_handles_check(const char *backend)
{
    for (int i = 0; i < 300; i++) {
        if (cio_test_process_handles() <= cio_test_handles_before + CIO_TEST_HANDLE_SLACK)
            return 0;
        Sleep(10);
    }
    print_error("handles: %lu open after the test on %s, %lu before its instance was made (a leak)\n",
                cio_test_process_handles(), backend, cio_test_handles_before);
    return -1;
}
#else
static inline void cio_test_handles_mark(void)
{
}

static inline int cio_test_handles_check(const char *backend)
{
    (void)backend;
    return 0;
}
#endif

static inline int cio_test_setup_threaded(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    cio_test_handles_mark();
    cio_threaded *t = NULL;
    if (cio_threaded_create(NULL, &t) != CIO_OK)
        return -1;
    b->instance = t;
    b->io = cio_threaded_io(t);
    return 0;
}

static inline int cio_test_teardown_threaded(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    cio_threaded_destroy((cio_threaded *)b->instance);
    b->instance = NULL;
    return cio_test_handles_check(b->name);
}

static cio_test_backend cio_test_backend_threaded = {"threaded", {NULL, NULL}, NULL};

/* Skips the running test, saying why (a capability this target or backend lacks). */
#define CIO_SKIP(reason)                             \
    do {                                             \
        print_message("      skip: %s\n", (reason)); \
        skip();                                      \
    } while (0)

/* A test that needs a tool of the machine (a server it starts, such as dnsmasq), not a capability
 * of the target: skips without it, except where build.py promised to install every package the
 * suites need (as root on Debian, from spec/targets.yaml): there it sets CIO_TEST_TOOLS_REQUIRED=1
 * and a missing tool fails the test, so a package dropped from the spec cannot hide as a skip. */
#define CIO_NEED_TOOL(present, reason)                                                      \
    do {                                                                                    \
        if (!(present)) {                                                                   \
            const char *cio__req = getenv("CIO_TEST_TOOLS_REQUIRED");                       \
            if (cio__req && cio__req[0] == '1')                                             \
                fail_msg("%s, though build.py installed the packages of spec/targets.yaml " \
                         "(CIO_TEST_TOOLS_REQUIRED=1): is it listed there?",                \
                         (reason));                                                         \
            CIO_SKIP(reason);                                                               \
        }                                                                                   \
    } while (0)

/* Under valgrind (3.19) io_uring_enter is not a blocking call: a loop thread waiting in it keeps
 * valgrind's one running-thread lock and the whole process stops (liburing issue #657). build.py
 * sets CIO_TEST_VALGRIND=1 for its valgrind run; <valgrind/valgrind.h> tells it directly. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
static inline int cio_test_under_valgrind(void)
{
#ifdef RUNNING_ON_VALGRIND
    if (RUNNING_ON_VALGRIND)
        return 1;
#endif
    const char *v = getenv("CIO_TEST_VALGRIND");
    return v != NULL && v[0] == '1';
}

#if CIO_HAVE_EVENTED
/* The Evented flavours. A flavour this machine cannot run (io_uring under qemu-user, or disabled by
 * the kernel) leaves `io` empty, and every test of it skips with the reason create gave. */
/* The readiness flavour is epoll on Linux and kqueue on the BSDs (where io_uring skips). Windows has
 * one flavour, the completion port, registered alone in that place. */
#if defined(CIO_OS_LINUX)
#define CIO_TEST_READINESS "evented/epoll"
#define CIO_TEST_READINESS_FLAVOUR CIO_EVENTED_EPOLL
#elif defined(CIO_OS_WINDOWS)
#define CIO_TEST_READINESS "evented/iocp"
#define CIO_TEST_READINESS_FLAVOUR CIO_EVENTED_IOCP
#else
#define CIO_TEST_READINESS "evented/kqueue"
#define CIO_TEST_READINESS_FLAVOUR CIO_EVENTED_KQUEUE
#endif
static cio_test_backend cio_test_backend_uring = {"evented/io_uring", {NULL, NULL}, NULL};
static cio_test_backend cio_test_backend_epoll = {CIO_TEST_READINESS, {NULL, NULL}, NULL};
static cio_err cio_test_evented_err;
static const char *cio_test_evented_why; /* why a flavour is not run here (NULL: create failed) */


/* An Evented instance of its own for a test (or a death child): `threads` loops of `flavour`, fibers
 * of `stack_size` (0: the default). NULL when it cannot be made here. */
static inline cio_evented *cio_test_evented_new(cio_evented_flavour flavour, unsigned threads, size_t stack_size)
{
    cio_evented_options o = {0};
    o.flavour = flavour;
    o.threads = threads;
    o.stack_size = stack_size;
    cio_evented *e = NULL;
    return cio_evented_create(&o, &e) == CIO_OK ? e : NULL;
}

static inline int cio_test_setup_evented(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
#if defined(CIO_OS_WINDOWS)
    static int warmed;
    if (!warmed) { /* what the process's first instance makes once (and later ones reuse): before the mark */
        warmed = 1;
        cio_evented *w = cio_test_evented_new(CIO_TEST_READINESS_FLAVOUR, 0, 0);
        if (w != NULL) {
            (void)cio_sleep(cio_evented_io(w), cio_timeout_ms(0));
            cio_evented_destroy(w);
        }
    }
#endif
    cio_test_handles_mark();
    cio_evented_options o = {0};
    o.flavour = b == &cio_test_backend_uring ? CIO_EVENTED_IO_URING : CIO_TEST_READINESS_FLAVOUR;
    cio_evented *e = NULL;
    cio_test_evented_why = NULL;
    if (o.flavour == CIO_EVENTED_IO_URING && cio_test_under_valgrind()) {
        cio_test_evented_why = "under valgrind, whose io_uring_enter does not block like a system call "
                               "(a waiting loop holds valgrind's thread lock: the process stops)";
        b->instance = NULL;
        b->io = (cio_io){NULL, NULL};
        return 0;
    }
    cio_test_evented_err = cio_evented_create(&o, &e);
    b->instance = e;
    b->io = e != NULL ? cio_evented_io(e) : (cio_io){NULL, NULL};
    /* The test's thread becomes a fiber of the instance on its first wait, with a loop (poller
     * descriptors) of its own until the instance is destroyed: do that now, so tests that count
     * descriptors start from a thread that already is one. */
    if (e != NULL)
        (void)cio_sleep(b->io, cio_timeout_ms(0));
    return 0;
}

static inline int cio_test_teardown_evented(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    if (b->instance != NULL)
        cio_evented_destroy((cio_evented *)b->instance);
    b->instance = NULL;
    return cio_test_handles_check(b->name);
}

#if defined(CIO_OS_WINDOWS)
#define CIO_TESTS_EVENTED(f)                                                                                      \
    ,                                                                                                             \
    {                                                                                                             \
        CIO_TEST_READINESS ": " #f, f, cio_test_setup_evented, cio_test_teardown_evented, &cio_test_backend_epoll \
    }
#else
#define CIO_TESTS_EVENTED(f)                                                                                      \
    , {"evented/io_uring: " #f, f, cio_test_setup_evented, cio_test_teardown_evented, &cio_test_backend_uring},   \
    {                                                                                                             \
        CIO_TEST_READINESS ": " #f, f, cio_test_setup_evented, cio_test_teardown_evented, &cio_test_backend_epoll \
    }
#endif
#else
#define CIO_TESTS_EVENTED(f)
#endif

/* The test's io; skips when its backend could not be created on this machine. */
static inline cio_io cio_test_io(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    if (b->io.vtable == NULL) {
#if CIO_HAVE_EVENTED
        if (cio_test_evented_why != NULL)
            print_message("      skip: %s not run %s\n", b->name, cio_test_evented_why);
        else
            print_message("      skip: %s unavailable here: cio_evented_create: %s\n", b->name,
                          cio_err_name(cio_test_evented_err));
#endif
        skip();
    }
    return b->io;
}

static inline cio_threaded *cio_test_threaded(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    return b == &cio_test_backend_threaded ? (cio_threaded *)b->instance : NULL;
}

/* The test's Evented instance, or NULL on the Threaded backend (and where Evented is not built). */
static inline void *cio_test_evented(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    return b == &cio_test_backend_threaded ? NULL : b->instance;
}

#define CIO_TESTS(f)                                                          \
    {"threaded: " #f, f, cio_test_setup_threaded, cio_test_teardown_threaded, \
     &cio_test_backend_threaded} CIO_TESTS_EVENTED(f)

/* Evaluates `call` once; skips when concurrency is unavailable (a backend without it). */
#define CIO_REQUIRE_CONCURRENT(call)                                             \
    do {                                                                         \
        cio_err cio_require_err_ = (call);                                       \
        if (cio_require_err_ == CIO_E_CONCURRENCY_UNAVAILABLE)                   \
            CIO_SKIP("concurrency unavailable (CIO_E_CONCURRENCY_UNAVAILABLE)"); \
        assert_int_equal(cio_require_err_, CIO_OK);                              \
    } while (0)

static inline cio_err cio_test_nop_task(void *context)
{
    (void)context;
    return CIO_OK;
}

/* For tests of the worker pool itself: where the Threaded backend has no threads (CIO_HAVE_THREADS
 * is 0: WASI), checks that concurrent says so, then skips; elsewhere does nothing. */
#define CIO_REQUIRE_THREADS(io)                                                                 \
    do {                                                                                        \
        if (!CIO_HAVE_THREADS) {                                                                \
            cio_future cio_require_f_;                                                          \
            assert_int_equal(cio_concurrent((io), cio_test_nop_task, NULL, 0, &cio_require_f_), \
                             CIO_E_CONCURRENCY_UNAVAILABLE);                                    \
            CIO_SKIP("the Threaded backend is single-threaded on this target");                 \
        }                                                                                       \
    } while (0)

#endif
