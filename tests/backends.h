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

/* Windows has no ASan under mingw: every test's instance gives back every handle and every heap
 * block. Setup notes the process's open handles and the C heap's blocks in use before it creates the
 * instance; teardown, once the instance is destroyed (its threads joined), wants both back within
 * their slack in at most 3 s. What Windows, Wine and the C runtime make once per process on first use
 * (Winsock's start-up, the test thread's cached I/O event, a console or crypto handle, stdio's
 * buffers, ~4 KiB at stderr's first line, the main thread's _Thread_local blocks) stays under the
 * slack, and a per-operation leak does not. The heap is the C runtime's (malloc, calloc, realloc,
 * _aligned_malloc: every allocation cio makes, and the tests' own), walked with _heapwalk;
 * CIO_TEST_HEAP_REPORT=1 prints every test's difference. test_leak_check.c plants leaks to show the
 * check fails. The suites' own checks (faults.h, iocp_helpers.h) count handles exactly around each
 * case. */
#if defined(CIO_OS_WINDOWS)
#include <malloc.h>
#include <pthread.h>
__declspec(dllimport) int __stdcall GetHandleInformation(void *handle, unsigned long *flags);
__declspec(dllimport) void __stdcall Sleep(unsigned long ms);
#define CIO_TEST_HANDLE_SLACK 4ul
#define CIO_TEST_HEAP_SLACK_BLOCKS 8u
#define CIO_TEST_HEAP_SLACK_BYTES 8192u
static unsigned long cio_test_handles_before;
static size_t cio_test_heap_blocks_before, cio_test_heap_bytes_before;
/* winpthreads keeps the record of every thread that ended for the next pthread_create, and never
 * frees it: the heap holds one record per thread that was alive at the process's peak. A test that
 * runs more threads at once than any before it grows that cache, which is no leak of cio's, so
 * blocks of the record's size (learnt once, below) are not counted. */
static size_t cio_test_thread_record;

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

/* The C heap's blocks in use and their bytes, without winpthreads' thread records. A walk that does
 * not reach the heap's end (a damaged heap) fails the test. */
static inline int cio_test_heap_used(size_t *blocks, size_t *bytes)
{
    _HEAPINFO h;
    h._pentry = NULL;
    size_t n = 0, b = 0;
    int r;
    while ((r = _heapwalk(&h)) == _HEAPOK) {
        if (h._useflag == _USEDENTRY && h._size != cio_test_thread_record) {
            n++;
            b += h._size;
        }
    }
    *blocks = n;
    *bytes = b;
    return r == _HEAPEND || r == _HEAPEMPTY ? 0 : r;
}

static volatile long cio_test_threads_go;

static inline void *cio_test_gated_thread(void *arg)
{
    while (!cio_test_threads_go)
        Sleep(1);
    return arg;
}

/* Learns the size of winpthreads' thread record: the size most of the blocks have which appear when
 * n threads are alive at once, more than ever before (n = 4, 8, ... 64 until at least 3 such blocks
 * appear; 0 if they do not, and then nothing is left uncounted). */
static inline void cio_test_learn_thread_record(void)
{
    enum { CAP = 4096 };
    static void *seen[CAP];
    for (int n = 4; n <= 64 && cio_test_thread_record == 0; n *= 2) {
        size_t nseen = 0, sizes[64];
        int nnew = 0, made = 0;
        pthread_t t[64];
        _HEAPINFO h;
        h._pentry = NULL;
        while (_heapwalk(&h) == _HEAPOK && nseen < CAP)
            if (h._useflag == _USEDENTRY)
                seen[nseen++] = h._pentry;
        cio_test_threads_go = 0;
        while (made < n && pthread_create(&t[made], NULL, cio_test_gated_thread, NULL) == 0)
            made++;
        cio_test_threads_go = 1;
        for (int i = 0; i < made; i++)
            pthread_join(t[i], NULL);
        h._pentry = NULL;
        while (_heapwalk(&h) == _HEAPOK && nnew < 64) {
            size_t i = 0;
            while (i < nseen && seen[i] != (void *)h._pentry)
                i++;
            if (h._useflag == _USEDENTRY && i == nseen)
                sizes[nnew++] = h._size;
        }
        int most = 2;
        for (int i = 0; i < nnew; i++) {
            int same = 0;
            for (int j = 0; j < nnew; j++)
                same += sizes[j] == sizes[i];
            if (same > most) {
                most = same;
                cio_test_thread_record = sizes[i];
            }
        }
    }
}

static inline void cio_test_leaks_mark(void)
{
    static int learnt;
    if (!learnt) {
        learnt = 1;
        cio_test_learn_thread_record();
#if CIO_HAVE_EVENTED
        /* what the process's first Evented instance makes once (and later ones reuse), made before
         * any mark, for the tests that make an instance of their own on any backend */
        cio_evented *w = NULL;
        if (cio_evented_create(NULL, &w) == CIO_OK) {
            (void)cio_sleep(cio_evented_io(w), cio_timeout_ms(0));
            cio_evented_destroy(w);
        }
#endif
    }
    cio_test_handles_before = cio_test_process_handles();
    if (cio_test_heap_used(&cio_test_heap_blocks_before, &cio_test_heap_bytes_before) != 0)
        cio_test_heap_blocks_before = cio_test_heap_bytes_before = (size_t)-1 / 2;
}

static inline int cio_test_heap_back(size_t *blocks, size_t *bytes, int *walk)
{
    *walk = cio_test_heap_used(blocks, bytes);
    return *walk == 0 && *blocks <= cio_test_heap_blocks_before + CIO_TEST_HEAP_SLACK_BLOCKS &&
           *bytes <= cio_test_heap_bytes_before + CIO_TEST_HEAP_SLACK_BYTES;
}

/* Handles and heap back within their slack (after up to 3 s of settling), or the test fails. */
static inline int cio_test_leaks_check(const char *backend)
{
    int handles_ok = 0, heap_ok = 0, walk = 0;
    size_t blocks = 0, bytes = 0;
    for (int i = 0; i < 300 && !(handles_ok && heap_ok); i++) {
        if (i > 0)
            Sleep(10);
        handles_ok = handles_ok || cio_test_process_handles() <= cio_test_handles_before + CIO_TEST_HANDLE_SLACK;
        heap_ok = heap_ok || cio_test_heap_back(&blocks, &bytes, &walk);
    }
    const char *report = getenv("CIO_TEST_HEAP_REPORT");
    if (report != NULL && report[0] == '1')
        print_message("      heap on %s: %+lld blocks, %+lld bytes (thread record: %llu bytes)\n", backend,
                      (long long)blocks - (long long)cio_test_heap_blocks_before,
                      (long long)bytes - (long long)cio_test_heap_bytes_before,
                      (unsigned long long)cio_test_thread_record);
    if (!handles_ok)
        print_error("handles: %lu open after the test on %s, %lu before its instance was made (a leak)\n",
                    cio_test_process_handles(), backend, cio_test_handles_before);
    if (!heap_ok && walk != 0)
        print_error("heap: _heapwalk stopped with %d after the test on %s (a damaged heap)\n", walk, backend);
    else if (!heap_ok)
        print_error("heap: %llu blocks (%llu bytes) in use after the test on %s, %llu (%llu bytes) before its "
                    "instance was made (a leak)\n",
                    (unsigned long long)blocks, (unsigned long long)bytes, backend,
                    (unsigned long long)cio_test_heap_blocks_before, (unsigned long long)cio_test_heap_bytes_before);
    return handles_ok && heap_ok ? 0 : -1;
}
#else
static inline void cio_test_leaks_mark(void)
{
}

static inline int cio_test_leaks_check(const char *backend)
{
    (void)backend;
    return 0;
}
#endif

static inline int cio_test_setup_threaded(void **state)
{
    cio_test_backend *b = (cio_test_backend *)*state;
    cio_test_leaks_mark();
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
    return cio_test_leaks_check(b->name);
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
    cio_test_leaks_mark(); /* Windows: its first call also makes and destroys an Evented instance */
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
    return cio_test_leaks_check(b->name);
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
