/* The worker pool's OS pieces on POSIX (pool.c): aligned task blocks, the CPU count, stack sizes. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "task.h"

void *cio__t_block_alloc(size_t size)
{
    void *mem = NULL;
    return posix_memalign(&mem, CIO_CONTEXT_ALIGN, size) == 0 ? mem : NULL;
}

void cio__t_block_free(void *block)
{
    free(block);
}

size_t cio__t_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

size_t cio__t_stack_size(size_t requested)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (requested < (size_t)PTHREAD_STACK_MIN)
        requested = (size_t)PTHREAD_STACK_MIN;
    return (requested + page - 1) / page * page;
}

uint32_t cio__t_os_thread_id(void)
{
    return 0; /* the kick is pthread_kill on task->thread */
}
