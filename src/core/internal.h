/*
 * Internal helpers shared by every source file (names cio__*). Not installed.
 */
#ifndef CIO_CORE_INTERNAL_H
#define CIO_CORE_INTERNAL_H

#include <assert.h>
#include <stdbool.h>

#include "cio/errors.h"

/* Debug builds check that a public function returns only errors of its declared set:
 *     return CIO__IN_SET(file_open, err);
 * Release builds (NDEBUG) reduce it to the value. */
#ifdef NDEBUG
#define CIO__IN_SET(set, err) (err)
#else
#define CIO__IN_SET(set, err) cio__in_set((err), cio_errset_##set##_contains((err)), #set, __func__)
static inline cio_err cio__in_set(cio_err err, bool member, const char *set, const char *func)
{
    (void)set;
    (void)func;
    assert((err == CIO_OK || member) && "returned an error outside the function's error set");
    return err;
}
#endif

/* A native error that means a programming error (EBADF, EFAULT): assert in debug builds, then
 * CIO_E_UNEXPECTED. */
#ifdef NDEBUG
#define CIO__BUG(what) ((cio_err)CIO_E_UNEXPECTED)
#else
#define CIO__BUG(what) (assert(!"cio: native error means a bug: " what), (cio_err)CIO_E_UNEXPECTED)
#endif

#endif /* CIO_CORE_INTERNAL_H */
