/* The generated error universe: names, descriptions, set membership and the union rules. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cio.h"

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(cio_err_name(CIO_OK), "Ok");
    assert_string_equal(cio_err_name(CIO_E_FILE_NOT_FOUND), "FileNotFound");
    assert_string_equal(cio_err_name(CIO_E_CANCELED), "Canceled");
    assert_string_equal(cio_err_name(CIO_E_NOT_OPEN_FOR_READING), "NotOpenForReading");
    assert_string_equal(cio_err_name(CIO_E_CONCURRENCY_UNAVAILABLE), "ConcurrencyUnavailable");
    assert_string_equal(cio_err_name((cio_err)CIO_E__COUNT), "Unknown");
    assert_string_equal(cio_err_name((cio_err)-1), "Unknown");
}

static void test_every_error_named_and_described(void **state)
{
    (void)state;
    for (int e = 1; e < (int)CIO_E__COUNT; e++) {
        const char *name = cio_err_name((cio_err)e);
        const char *desc = cio_err_description((cio_err)e);
        assert_non_null(name);
        assert_non_null(desc);
        assert_true(name[0] >= 'A' && name[0] <= 'Z');
        assert_true(strlen(desc) > 3);
        for (int f = 1; f < e; f++)
            assert_string_not_equal(name, cio_err_name((cio_err)f));
    }
    assert_string_equal(cio_err_description((cio_err)100000), "unknown error value");
}

static void test_sets(void **state)
{
    (void)state;
    assert_true(cio_errset_cancelable_contains(CIO_E_CANCELED));
    assert_false(cio_errset_cancelable_contains(CIO_E_UNEXPECTED));
    assert_false(cio_errset_cancelable_contains(CIO_OK));
    assert_true(cio_errset_file_open_contains(CIO_E_FILE_NOT_FOUND));
    assert_true(cio_errset_file_open_contains(CIO_E_CANCELED));
    assert_true(cio_errset_file_open_contains(CIO_E_UNEXPECTED));
    assert_false(cio_errset_file_open_contains(CIO_E_CONCURRENCY_UNAVAILABLE));
    assert_true(cio_errset_file_reader_contains(CIO_E_NOT_OPEN_FOR_READING));
    assert_false(cio_errset_file_reader_contains(CIO_E_UNSEEKABLE));
    assert_true(cio_errset_queue_contains(CIO_E_CLOSED));
    assert_true(cio_errset_queue_contains(CIO_E_CANCELED));
    assert_false(cio_errset_queue_contains(CIO_E_TIMEOUT));
    assert_true(cio_errset_concurrent_contains(CIO_E_CONCURRENCY_UNAVAILABLE));
    assert_true(cio_errset_net_unix_address_listen_contains(CIO_E_NETWORK_DOWN));
    assert_true(cio_errset_net_unix_address_connect_contains(CIO_E_NETWORK_DOWN));
}

/* File.ReadPositionalError = File.Reader.Error || {Unseekable}: the union holds exactly. */
static void test_union_is_exact(void **state)
{
    (void)state;
    for (int e = 1; e < (int)CIO_E__COUNT; e++) {
        bool expect = cio_errset_file_reader_contains((cio_err)e) || e == (int)CIO_E_UNSEEKABLE;
        assert_int_equal(cio_errset_file_read_positional_contains((cio_err)e), expect);
    }
}

/* Zig's AbiAndDynamicLinkerFromFileError, as the seed fixed it. */
static void test_abi_set(void **state)
{
    (void)state;
    assert_true(cio_errset_abi_and_dynamic_linker_from_file_contains(CIO_E_CANCELED));
    assert_true(cio_errset_abi_and_dynamic_linker_from_file_contains(CIO_E_ACCESS_DENIED));
    assert_true(cio_errset_abi_and_dynamic_linker_from_file_contains(CIO_E_UNEXPECTED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),   cmocka_unit_test(test_every_error_named_and_described),
        cmocka_unit_test(test_sets),    cmocka_unit_test(test_union_is_exact),
        cmocka_unit_test(test_abi_set),
    };
    return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
