/*
 * The C side of test_cxx: the sizes and alignments of the public structs as the C compiler lays them
 * out (with _Atomic), for tests/test_cxx.cpp to compare with what C++ sees (std::atomic).
 */
#include <stdalign.h>
#include <stddef.h>

#include "cxx/layout.h"

#define CIO__LAYOUT_ROW(type) {#type, sizeof(type), alignof(type)},

static const cio_test_layout rows[] = {CIO_TEST_LAYOUT_TYPES(CIO__LAYOUT_ROW){NULL, 0, 0}};

const cio_test_layout *cio_test_c_layout(void)
{
    return rows;
}
