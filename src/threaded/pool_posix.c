/* The worker pool's OS pieces on POSIX (pool.c): aligned task blocks, stack sizes (the CPU count: cpus_*.c). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal/cio_oscalls.h"
#include "task.h"

#ifndef PTHREAD_STACK_MIN /* not every C library defines it */
#define PTHREAD_STACK_MIN 16384
#endif

void *cio__t_block_alloc(size_t size)
{
    void *mem = NULL;
    return CIO__SYS(posix_memalign, task_alloc)(&mem, CIO_CONTEXT_ALIGN, size) == 0 ? mem : NULL;
}

void cio__t_block_free(void *block)
{
    free(block);
}

void cio__t_thread_stack(uintptr_t near_top, size_t asked, uintptr_t *lo, size_t *size)
{
    *lo = near_top >= asked ? near_top - asked : 0;
    *size = near_top >= asked ? asked : 0;
}

size_t cio__t_stack_size(size_t requested)
{
    long page_size = CIO__SYS(sysconf, page_size)(_SC_PAGESIZE);
    size_t page = page_size > 0 ? (size_t)page_size : 4096u; /* -1: no answer; any power of two will do */
    if (requested < (size_t)PTHREAD_STACK_MIN)
        requested = (size_t)PTHREAD_STACK_MIN;
    return (requested + page - 1) / page * page;
}
