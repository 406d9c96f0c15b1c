/*
 * The public structs whose layout C and C++ must agree on (those with CIO_ATOMIC members, and the
 * ones that embed them), listed once for tests/cxx/layout.c (C) and tests/test_cxx.cpp (C++).
 */
#ifndef CIO_TESTS_CXX_LAYOUT_H
#define CIO_TESTS_CXX_LAYOUT_H

#include <stddef.h>

#include "cio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CIO_TEST_LAYOUT_TYPES(X) \
    X(cio_group)                 \
    X(cio_future)                \
    X(cio_io)                    \
    X(struct cio_vtable)         \
    X(cio_mutex)                 \
    X(cio_condition)             \
    X(cio_event)                 \
    X(cio_semaphore)             \
    X(cio_rwlock)                \
    X(cio_queue)                 \
    X(cio_select)                \
    X(cio_ip_address)            \
    X(cio_stream)                \
    X(cio_message)

typedef struct cio_test_layout {
    const char *name;
    size_t size, align;
} cio_test_layout;

/* The C compiler's rows, ending with a NULL name. */
const cio_test_layout *cio_test_c_layout(void);

#ifdef __cplusplus
}
#endif

#endif
