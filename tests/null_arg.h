/*
 * A NULL where the API forbids one returns CIO_E_INVALID_ARGUMENT in every build type (the rule of
 * cio/diag.h; a debug build also prints a line naming the function and the argument), so
 *
 *     assert_null_arg(cio_dir_open_file(io, dir, NULL, NULL, &f));
 *
 * checks the error, on every target and backend.
 */
#ifndef CIO_TESTS_NULL_ARG_H
#define CIO_TESTS_NULL_ARG_H

#include "cio.h"

#define assert_null_arg(call) assert_int_equal((call), CIO_E_INVALID_ARGUMENT)

#endif
