/* The worker pool's OS pieces on Windows (pool.c): aligned task blocks (_aligned_malloc), the CPU
 * count of every processor group, stack sizes in whole pages, a thread's stack bounds, thread ids. Threads themselves
 * are winpthreads. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <malloc.h>
#include <stdint.h>

#include "internal/cio_oscalls.h"
#include "task.h"

#define MIN_STACK (64u * 1024u)

void *cio__t_block_alloc(size_t size)
{
    return CIO__SYS(_aligned_malloc, task_alloc)(size, CIO_CONTEXT_ALIGN);
}

void cio__t_block_free(void *block)
{
    _aligned_free(block);
}

size_t cio__t_cpu_count(void)
{
    DWORD n = CIO__SYS(GetActiveProcessorCount, cpu_count)(ALL_PROCESSOR_GROUPS);
    return n > 0 ? (size_t)n : 1;
}

void cio__t_thread_stack(uintptr_t near_top, size_t asked, uintptr_t *lo, size_t *size)
{
    (void)near_top;
    (void)asked;
    ULONG_PTR low = 0, high = 0;
    GetCurrentThreadStackLimits(&low, &high);
    *lo = (uintptr_t)low;
    *size = (size_t)(high - low);
}

size_t cio__t_stack_size(size_t requested)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    size_t page = si.dwPageSize != 0 ? (size_t)si.dwPageSize : 4096u;
    if (requested < MIN_STACK)
        requested = MIN_STACK;
    return (requested + page - 1) / page * page;
}
