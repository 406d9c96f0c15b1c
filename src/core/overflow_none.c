/* Stack overflow messages where there is no SIGSEGV handler to install (Windows, WASI): nothing is
 * installed, an overflow ends the process as the OS ends it (overflow.h). */
#include "overflow.h"

void cio__overflow_install(cio__overflow_resolver r)
{
    (void)r;
}

void cio__overflow_thread_begin(void)
{
}

void cio__overflow_thread_end(void)
{
}
