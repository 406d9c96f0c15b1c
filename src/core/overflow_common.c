/*
 * The part of the stack-overflow message every OS's handler shares (overflow.h): the resolvers the
 * backends add, and the one line printed before the abort.
 *
 * Invariants: `resolvers` only grows (a slot is written once, with a CAS, before a handler can need
 * it); the handler reads the slots with acquire loads and calls nothing of the library but cio__fmt
 * and cio__misuse_abort, which format into a buffer on the stack, write it and abort.
 */
#include <stdatomic.h>
#include <string.h>

#include "diag.h"
#include "overflow.h"

#define RESOLVERS_MAX 4

static _Atomic(cio__overflow_resolver) resolvers[RESOLVERS_MAX];

void cio__overflow_add(cio__overflow_resolver r)
{
    for (unsigned i = 0; i < RESOLVERS_MAX; i++) {
        cio__overflow_resolver none = NULL;
        if (atomic_load_explicit(&resolvers[i], memory_order_acquire) == r ||
            atomic_compare_exchange_strong_explicit(&resolvers[i], &none, r, memory_order_acq_rel,
                                                    memory_order_acquire))
            return;
    }
}

void cio__overflow_check(const void *addr, const char *fault)
{
    for (unsigned i = 0; i < RESOLVERS_MAX; i++) {
        cio__overflow_resolver r = atomic_load_explicit(&resolvers[i], memory_order_acquire);
        cio__overflow_info info;
        memset(&info, 0, sizeof info);
        if (r == NULL || !r(addr, &info))
            continue;
        char what[400];
        cio__fmt(what, sizeof what,
                 "stack overflow in a cio task (stack %u KiB; %s spawned at %s, task function %p; fault at "
                 "%p): give it a bigger stack (%s) or move big buffers off the stack",
                 (unsigned)(info.stack_size / 1024), info.kind,
                 info.site != NULL ? info.site
                                   : "an unknown place (spawned without the cio_async/"
                                     "cio_concurrent macros)",
                 info.fn, addr, info.option);
        cio__misuse_abort(fault, what);
    }
}
