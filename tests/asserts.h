/*
 * The suites' assertion on a cio error: assert_err(call, CIO_E_...) fails the test naming the call and
 * both errors by name (and, for Unexpected, the OS code cio_last_os_error recorded on this thread);
 * assert_ok(call) wants CIO_OK. Include after <cmocka.h> (fail_msg).
 */
#ifndef CIO_TESTS_ASSERTS_H
#define CIO_TESTS_ASSERTS_H

#include "cio.h"

#define assert_err(expr, want)                                                                                       \
    do {                                                                                                             \
        cio_err got_ = (expr);                                                                                       \
        cio_err want_ = (want);                                                                                      \
        if (got_ != want_) {                                                                                         \
            cio_os_error os_ = cio_last_os_error();                                                                  \
            if (got_ == CIO_E_UNEXPECTED && os_.kind != CIO_OS_ERROR_NONE)                                           \
                fail_msg("%s: got %s (OS code %lld in %s), want %s", #expr, cio_err_name(got_), (long long)os_.code, \
                         os_.operation, cio_err_name(want_));                                                        \
            else                                                                                                     \
                fail_msg("%s: got %s, want %s", #expr, cio_err_name(got_), cio_err_name(want_));                     \
        }                                                                                                            \
    } while (0)
#define assert_ok(expr) assert_err((expr), CIO_OK)

#endif
