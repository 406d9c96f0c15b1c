/*
 * How many CPUs there are (the BSDs): the online count, or 1 when the system does not say.
 */
#include <unistd.h>

#include "internal/cio_oscalls.h"
#include "task.h"

size_t cio__t_cpu_count(void)
{
    long n = CIO__SYS(sysconf, cpu_count)(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}
