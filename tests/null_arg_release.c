/*
 * The release (NDEBUG) forms of the checking macros of src/core/internal.h, compiled here in a
 * translation unit of their own so that a debug test program can call them: a NULL argument is
 * CIO_E_INVALID_ARGUMENT and a native error that means a bug is CIO_E_UNEXPECTED, with no assertion.
 * (The library under test is a debug build: its entry points return the same and print a line.)
 */
#ifndef NDEBUG
#define NDEBUG 1
#endif
#include "internal.h"

cio_err cio_test_release_null_arg(void);
cio_err cio_test_release_bug(void);

cio_err cio_test_release_null_arg(void)
{
    return CIO__NULL_ARG("out");
}

cio_err cio_test_release_bug(void)
{
    return CIO__BUG("EBADF");
}
