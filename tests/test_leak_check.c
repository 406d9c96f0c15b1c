/*
 * The per-test leak check of tests/backends.h on Windows (no ASan under mingw): what every other
 * test's teardown relies on must itself be seen to fail. A test here leaks on purpose between a mark
 * and a check of its own, wants the check to say so, gives the leak back and wants it to pass.
 * Elsewhere ASan and valgrind do this job, and the tests skip saying so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "backends.h"

#if defined(CIO_OS_WINDOWS)
#include <windows.h>

static void test_heap_leak_is_seen(void **state)
{
    cio_io io = cio_test_io(state);
    (void)io;
    void *kept[2 * CIO_TEST_HEAP_SLACK_BLOCKS];
    cio_test_leaks_mark();
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        kept[i] = malloc(64);
    print_message("      a leak of %u blocks, planted: the next line must report it\n",
                  (unsigned)(sizeof kept / sizeof kept[0]));
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), -1);
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        free(kept[i]);
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), 0);

    void *big = malloc(2 * CIO_TEST_HEAP_SLACK_BYTES); /* one block, above the bytes' slack */
    print_message("      one block of %u bytes, planted: the next line must report it\n",
                  (unsigned)(2 * CIO_TEST_HEAP_SLACK_BYTES));
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), -1);
    free(big);
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), 0);
}

static void test_handle_leak_is_seen(void **state)
{
    cio_io io = cio_test_io(state);
    (void)io;
    HANDLE kept[2 * CIO_TEST_HANDLE_SLACK];
    cio_test_leaks_mark();
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        assert_non_null(kept[i] = CreateEventW(NULL, TRUE, FALSE, NULL));
    print_message("      a leak of %u handles, planted: the next line must report it\n",
                  (unsigned)(sizeof kept / sizeof kept[0]));
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), -1);
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        CloseHandle(kept[i]);
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), 0);
}

/* winpthreads' cache of thread records grows with the most threads alive at once: not counted. */
static void test_thread_cache_is_not_a_leak(void **state)
{
    cio_io io = cio_test_io(state);
    (void)io;
    assert_true(cio_test_thread_record > 0);
    enum { N = 40 };
    pthread_t t[N];
    cio_test_leaks_mark();
    cio_test_threads_go = 0;
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, cio_test_gated_thread, NULL), 0);
    cio_test_threads_go = 1;
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(cio_test_leaks_check(cio_test_backend_threaded.name), 0);
}
#else
static void test_heap_leak_is_seen(void **state)
{
    (void)state;
    CIO_SKIP("a Windows check: here ASan (build.py test --sanitize address) and valgrind find leaks");
}

static void test_handle_leak_is_seen(void **state)
{
    (void)state;
    CIO_SKIP("a Windows check: here the suites count descriptors themselves");
}

static void test_thread_cache_is_not_a_leak(void **state)
{
    (void)state;
    CIO_SKIP("a Windows check: winpthreads' cache of thread records");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_heap_leak_is_seen),
        CIO_TESTS(test_handle_leak_is_seen),
        CIO_TESTS(test_thread_cache_is_not_a_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
