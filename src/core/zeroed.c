/*
 * The vtable behind a zeroed cio_io (CIO__VT in internal.h): a cio_io that was never given a backend
 * (`cio_io io = {0};`, a struct member left zero) reaches these instead of a NULL function pointer,
 * and each one stops the program with a line naming the operation and the mistake, not a SIGSEGV.
 * Expanded from CIO_VTABLE_SLOTS like the backends' tables.
 */
#include "cio/io.h"
#include "internal.h"

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif

#define ZEROED_FN(ret, name, params)                                                                 \
    static ret z_##name params                                                                       \
    {                                                                                                \
        cio__misuse_abort("cio_" #name, "called through a zeroed cio_io (no backend: make one with " \
                                        "cio_threaded_io or cio_evented_io)");                       \
    }
CIO_VTABLE_SLOTS(ZEROED_FN)

#define ZEROED_ENTRY(ret, name, params) z_##name,
const struct cio_vtable cio__zeroed_vtable = {CIO_VTABLE_SLOTS(ZEROED_ENTRY)};
