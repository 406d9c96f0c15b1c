/*
 * The suites' assertion on a cio error: assert_err(call, CIO_E_...) fails the test naming the call and
 * both errors by name; assert_ok(call) wants CIO_OK. Include after <cmocka.h> (fail_msg).
 */
#ifndef CIO_TESTS_ASSERTS_H
#define CIO_TESTS_ASSERTS_H

#include "cio.h"

#define assert_err(expr, want)                                                               \
    do {                                                                                     \
        cio_err got_ = (expr);                                                               \
        cio_err want_ = (want);                                                              \
        if (got_ != want_)                                                                   \
            fail_msg("%s: got %s, want %s", #expr, cio_err_name(got_), cio_err_name(want_)); \
    } while (0)
#define assert_ok(expr) assert_err((expr), CIO_OK)

#endif
