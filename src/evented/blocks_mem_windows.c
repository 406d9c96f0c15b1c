/* A fiber block's memory off the regions (blocks.c), on Windows: _aligned_malloc and _aligned_free
 * (the CRT's free must not see an aligned block). */
#define WIN32_LEAN_AND_MEAN
#include <malloc.h>

#include "evented.h"
#include "internal/cio_oscalls.h"

void *cio__e_block_mem(size_t size)
{
    return CIO__SYS(_aligned_malloc, fiber_alloc)(size, CIO_CONTEXT_ALIGN);
}

void cio__e_block_mem_free(void *mem)
{
    _aligned_free(mem);
}
