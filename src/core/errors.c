/* Names and descriptions of cio_err, from the generated CIO_ERR_MAP list. */
#include <stddef.h>

#include "cio/errors.h"

static const char *const err_names[] = {"Ok",
#define CIO__NAME(suffix, name, desc) name,
                                        CIO_ERR_MAP(CIO__NAME)
#undef CIO__NAME
};

static const char *const err_descriptions[] = {"success",
#define CIO__DESC(suffix, name, desc) desc,
                                               CIO_ERR_MAP(CIO__DESC)
#undef CIO__DESC
};

_Static_assert(sizeof err_names / sizeof err_names[0] == (size_t)CIO_E__COUNT, "CIO_ERR_MAP and cio_err differ");

const char *cio_err_name(cio_err err)
{
    if ((unsigned)err >= (unsigned)CIO_E__COUNT)
        return "Unknown";
    return err_names[err];
}

const char *cio_err_description(cio_err err)
{
    if ((unsigned)err >= (unsigned)CIO_E__COUNT)
        return "unknown error value";
    return err_descriptions[err];
}
