/* A fiber block's memory off the regions (blocks.c), on POSIX: posix_memalign and free. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "evented.h"
#include "internal/cio_oscalls.h"

void *cio__e_block_mem(size_t size)
{
    void *mem = NULL;
    return CIO__SYS(posix_memalign, fiber_alloc)(&mem, CIO_CONTEXT_ALIGN, size) == 0 ? mem : NULL;
}

void cio__e_block_mem_free(void *mem)
{
    free(mem);
}
