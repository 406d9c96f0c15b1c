/*
 * The lookup with a callback instead of a queue (internal): cio_hostname_connect forwards each
 * result into its own select queue. emit returns CIO_OK, or an error that stops the lookup
 * (CIO_E_CANCELED is returned as is; any other stops it quietly with CIO_OK).
 */
#ifndef CIO_CORE_RESOLVE_H
#define CIO_CORE_RESOLVE_H

#include "cio/net.h"

typedef cio_err (*cio__lookup_emit_fn)(void *ctx, const cio_lookup_result *result);

cio_err cio__hostname_lookup_emit(cio_io io, const char *name, const cio_lookup_options *options,
                                  cio__lookup_emit_fn emit, void *ctx);

#endif
