/*
 * A cio task that runs off its stack, for the stack-overflow death tests: tests/test_misuse.c (the
 * suites) and tests/bsd/smoke.c (the BSD smoke program, run on a real machine). recurse() uses 1 KiB
 * frames that the compiler cannot fold away, so the task reaches its guard page and faults there.
 */
#ifndef CIO_TESTS_OVERFLOW_TASK_H
#define CIO_TESTS_OVERFLOW_TASK_H

#include <cio.h>

static unsigned recurse(volatile unsigned n)
{
    volatile char frame[1024];
    frame[0] = (char)n;
    frame[sizeof frame - 1] = 0;
    if (n == 0)
        return (unsigned)frame[0];
    return recurse(n - 1) + (unsigned)frame[sizeof frame - 1] + (unsigned)frame[0];
}

static cio_err overflow_task(void *p)
{
    (void)p;
    return recurse(1u << 20) == 7u ? CIO_E_UNEXPECTED : CIO_OK; /* 1 GiB of frames: never returns */
}

#endif
