/*
 * cio_io_destroy: destroys whichever backend instance a cio_io belongs to, so that switching
 * backends is one line (the create). Backends register themselves when they hand out a cio_io
 * (cio_threaded_io, cio_evented_io): a test "is this io mine?" (a comparison of the vtable pointer,
 * no dereference) and their destroy. Registration is lock-free and idempotent; there are at most
 * MAX_KINDS backends.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "cio/io.h"
#include "internal.h"

#define MAX_KINDS 4

static _Atomic(cio__owns_fn) owns[MAX_KINDS];
static _Atomic(cio__destroy_fn) destroys[MAX_KINDS];

void cio__register_backend(cio__owns_fn own, cio__destroy_fn destroy)
{
    for (size_t i = 0; i < MAX_KINDS; i++) {
        cio__owns_fn cur = atomic_load_explicit(&owns[i], memory_order_acquire);
        if (cur == own)
            return;
        if (cur != NULL)
            continue;
        /* the destroy is in place before the owner test that leads to it is visible */
        cio__destroy_fn none = NULL;
        atomic_compare_exchange_strong_explicit(&destroys[i], &none, destroy, memory_order_acq_rel,
                                                memory_order_acquire);
        cio__owns_fn expected = NULL;
        if (atomic_compare_exchange_strong_explicit(&owns[i], &expected, own, memory_order_acq_rel,
                                                    memory_order_acquire) ||
            expected == own)
            return;
    }
}

void cio_io_destroy(cio_io io)
{
    if (io.vtable == NULL)
        return; /* a zeroed cio_io: no instance */
    for (size_t i = 0; i < MAX_KINDS; i++) {
        cio__owns_fn own = atomic_load_explicit(&owns[i], memory_order_acquire);
        if (own != NULL && own(io)) {
            atomic_load_explicit(&destroys[i], memory_order_acquire)(io.userdata);
            return;
        }
    }
    /* cio_failing_io() or a vtable of the program's own: nothing of cio's to destroy */
}
