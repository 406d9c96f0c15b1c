/*
 * How many CPUs this process may run on (Linux): the affinity mask, so a program started under
 * `taskset -c 0` gets one event loop and an async limit for one CPU, not the machine's count. Falls
 * back to the online count when the mask does not fit a cpu_set_t (more than CPU_SETSIZE CPUs) or
 * the call fails, and to 1 when that fails too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <unistd.h>

#include "internal/cio_oscalls.h"
#include "task.h"

size_t cio__t_cpu_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (CIO__SYS(sched_getaffinity, cpu_count)(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (size_t)n;
    }
    long n = CIO__SYS(sysconf, cpu_count)(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}
