/*
 * The Evented backend's part of the stack-overflow message (src/core/overflow.h): which fiber's stack
 * a fault lies just below. Runs in the SIGSEGV handler on the faulting thread: it reads only that
 * thread's loop (cio__e_tls_loop) and the fiber that loop runs now, both stable while the fiber runs.
 * A thread's own fiber (an adopted thread's, whose stack is the thread's) has no stack of ours and is
 * never named.
 */
#include <stdint.h>

#include "evented.h"
#include "overflow.h"

bool cio__e_overflow(const void *addr, cio__overflow_info *out)
{
    struct cio__e_loop *l = cio__e_tls_loop;
    struct cio_any_future *f = l != NULL ? l->current : NULL;
    if (f == NULL || f->stack.lo == NULL)
        return false;
    uintptr_t a = (uintptr_t)addr, lo = (uintptr_t)f->stack.lo;
    if (a >= lo || lo - a > CIO__OVERFLOW_REACH)
        return false;
    out->stack_size = f->stack.size;
    out->kind = "an Evented fiber";
    out->option = "cio_evented_options.stack_size";
    out->site = f->site;
    out->fn = *(const void *const *)&f->fn;
    return true;
}
