/*
 * The generated native-error maps: every map, fed every errno value (and every NTSTATUS and WSA
 * value) of this target, returns only errors of its declared set, RETRY only for EINTR-like codes,
 * and Unexpected for anything it does not know.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cio/errmap.h"
#include "diag.h" /* cio__diag_quiet: every code goes through the maps here */

static int bad;

static void check_result(const char *op, long long code, cio__mapped r, bool (*contains)(cio_err))
{
    switch (r.action) {
    case CIO__MAP_ERROR:
    case CIO__MAP_BACKOFF:
        if (!contains(r.err)) {
            print_error("%s(%lld) -> %s, outside its set\n", op, code, cio_err_name(r.err));
            bad++;
        }
        break;
    case CIO__MAP_BUG:
        if (r.err != CIO_E_UNEXPECTED) {
            print_error("%s(%lld): bug must carry Unexpected\n", op, code);
            bad++;
        }
        break;
    case CIO__MAP_RETRY:
    case CIO__MAP_OK:
    case CIO__MAP_REINIT:
        if (r.err != CIO_OK) {
            print_error("%s(%lld): action %d must carry CIO_OK\n", op, code, (int)r.action);
            bad++;
        }
        break;
    default: print_error("%s(%lld): unknown action %d\n", op, code, (int)r.action); bad++;
    }
}

#if !defined(CIO_OS_WINDOWS)
static const int errno_values[] = {
#define VALUE(name, value) value,
    CIO__ERRNO_LIST(VALUE)
#undef VALUE
};

static void test_errno_maps_stay_in_their_sets(void **state)
{
    (void)state;
    bad = 0;
    int maps = 0;
#define CHECK(op, set)                                                                                         \
    do {                                                                                                       \
        maps++;                                                                                                \
        for (size_t i = 0; i < sizeof errno_values / sizeof errno_values[0]; i++)                              \
            check_result(#op, errno_values[i], cio__errno_##op(errno_values[i]), cio_errset_##set##_contains); \
        cio__mapped r = cio__errno_##op(0x7fffffff);                                                           \
        if (r.action != CIO__MAP_ERROR || r.err != CIO_E_UNEXPECTED)                                           \
            bad++;                                                                                             \
    } while (0);
    CIO__ERRNO_MAP_LIST(CHECK)
#undef CHECK
    print_message("%d errno maps checked against %zu values\n", maps, sizeof errno_values / sizeof errno_values[0]);
    assert_true(maps > 20);
    assert_int_equal(bad, 0);
}

static void test_errno_map_examples(void **state)
{
    (void)state;
    cio__mapped r = cio__errno_read(EINTR);
    assert_int_equal(r.action, CIO__MAP_RETRY);
    r = cio__errno_read(EBADF);
    assert_int_equal(r.action, CIO__MAP_ERROR);
    assert_int_equal(r.err, CIO_E_NOT_OPEN_FOR_READING);
    r = cio__errno_write(EBADF);
    assert_int_equal(r.err, CIO_E_NOT_OPEN_FOR_WRITING);
    r = cio__errno_read(EFAULT);
    assert_int_equal(r.action, CIO__MAP_BUG);
    r = cio__errno_openat(ENOENT);
    assert_int_equal(r.err, CIO_E_FILE_NOT_FOUND);
    r = cio__errno_openat(EEXIST);
    assert_int_equal(r.err, CIO_E_PATH_ALREADY_EXISTS);
    r = cio__errno_openat(EWOULDBLOCK);
    assert_int_equal(r.action, CIO__MAP_ERROR);
    r = cio__errno_openat(ENOTDIR);
    assert_int_equal(r.err, CIO_E_NOT_DIR);
}
#else
static void test_errno_maps_stay_in_their_sets(void **state)
{
    (void)state;
    skip(); /* Windows reports NTSTATUS and WSA codes, checked below. */
}

static void test_errno_map_examples(void **state)
{
    (void)state;
    skip();
}
#endif

static const long long ntstatus_values[] = {
#define VALUE(name, value) (long long)(cio_ntstatus)value,
    CIO__NTSTATUS_LIST(VALUE)
#undef VALUE
};

static const int wsa_values[] = {
#define VALUE(name, value) value,
    CIO__WSA_LIST(VALUE)
#undef VALUE
};

static void test_ntstatus_and_wsa_maps_stay_in_their_sets(void **state)
{
    (void)state;
    bad = 0;
#define CHECK(op, set)                                                                              \
    for (size_t i = 0; i < sizeof ntstatus_values / sizeof ntstatus_values[0]; i++)                 \
        check_result(#op, ntstatus_values[i], cio__ntstatus_##op((cio_ntstatus)ntstatus_values[i]), \
                     cio_errset_##set##_contains);
    CIO__NTSTATUS_MAP_LIST(CHECK)
#undef CHECK
#define CHECK(op, set)                                                    \
    for (size_t i = 0; i < sizeof wsa_values / sizeof wsa_values[0]; i++) \
        check_result(#op, wsa_values[i], cio__wsa_##op(wsa_values[i]), cio_errset_##set##_contains);
    CIO__WSA_MAP_LIST(CHECK)
#undef CHECK
    assert_int_equal(bad, 0);
}

static void test_nt_create_file_sharing_violation_backs_off(void **state)
{
    (void)state;
    cio__mapped r = cio__ntstatus_nt_create_file(CIO_NTSTATUS_SHARING_VIOLATION);
    assert_int_equal(r.action, CIO__MAP_BACKOFF);
    assert_int_equal(r.err, CIO_E_SHARING_VIOLATION);
    r = cio__ntstatus_nt_create_file(CIO_NTSTATUS_DELETE_PENDING);
    assert_int_equal(r.action, CIO__MAP_BACKOFF);
    r = cio__ntstatus_nt_create_file(CIO_NTSTATUS_ACCESS_DENIED);
    assert_int_equal(r.action, CIO__MAP_ERROR);
    assert_int_equal(r.err, CIO_E_ACCESS_DENIED);
    r = cio__ntstatus_nt_create_file(CIO_NTSTATUS_OBJECT_NAME_INVALID);
    assert_int_equal(r.err, CIO_E_BAD_PATH_NAME);
}

int main(void)
{
    cio__diag_quiet = 1; /* no debug line per Unexpected: this drives every code through every map */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errno_maps_stay_in_their_sets),
        cmocka_unit_test(test_errno_map_examples),
        cmocka_unit_test(test_ntstatus_and_wsa_maps_stay_in_their_sets),
        cmocka_unit_test(test_nt_create_file_sharing_violation_backs_off),
    };
    return cmocka_run_group_tests_name("errmap", tests, NULL, NULL);
}
