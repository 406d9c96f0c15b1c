/*
 * B2 on Windows (issue 24): the time of one fiber switch, cio's hand-written Windows x64 switch
 * (src/evented/fiber_x86_64_windows.c: nonvolatile registers, xmm6-15, MXCSR/x87 control word and
 * four TIB words) against the system's fibers (CreateFiberEx/SwitchToFiber), two contexts yielding
 * to each other n times each, reported per switch; best of `rounds` rounds, interleaved. Built on
 * Windows targets as cio_bench_fiber_windows.exe (CMakeLists.txt), run by hand (under Wine the
 * numbers are indicative only: Wine's SwitchToFiber is its own code, not Windows').
 *     wine build/windows-x86_64/cio_bench_fiber_windows.exe [n] [rounds]
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>

#include "fiber.h"

static long n_switches = 1000000;
static cio__fiber_ctx c_main, c1, c2;
static void *f_main, *f1, *f2;

static void cio_one(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_switches; i++)
        cio__fiber_switch(&c1, &c2);
    cio__fiber_exit(&c1, &c_main);
}

static void cio_two(void *arg)
{
    (void)arg;
    for (;;)
        cio__fiber_switch(&c2, &c1);
}

static void WINAPI win_one(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_switches; i++)
        SwitchToFiber(f2);
    SwitchToFiber(f_main);
}

static void WINAPI win_two(void *arg)
{
    (void)arg;
    for (;;)
        SwitchToFiber(f1);
}

static double now_ns(void)
{
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart * 1e9 / (double)f.QuadPart;
}

static double run_cio(void)
{
    cio__stack s1, s2;
    if (cio__stack_alloc(64 * 1024, &s1) != CIO_OK || cio__stack_alloc(64 * 1024, &s2) != CIO_OK)
        exit(2);
    cio__fiber_ctx_thread(&c_main);
    cio__fiber_ctx_init(&c1, s1.lo, s1.size, cio_one, NULL);
    cio__fiber_ctx_init(&c2, s2.lo, s2.size, cio_two, NULL);
    double t0 = now_ns();
    cio__fiber_switch(&c_main, &c1);
    double t = now_ns() - t0;
    cio__stack_free(&s1);
    cio__stack_free(&s2);
    return t / (double)(2 * n_switches + 2);
}

static double run_win(void)
{
    f1 = CreateFiberEx(64 * 1024, 64 * 1024, 0, win_one, NULL);
    f2 = CreateFiberEx(64 * 1024, 64 * 1024, 0, win_two, NULL);
    if (f1 == NULL || f2 == NULL)
        exit(2);
    double t0 = now_ns();
    SwitchToFiber(f1);
    double t = now_ns() - t0;
    DeleteFiber(f1);
    DeleteFiber(f2);
    return t / (double)(2 * n_switches + 2);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n_switches = atol(argv[1]);
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    f_main = ConvertThreadToFiber(NULL);
    if (f_main == NULL)
        return 2;
    double best_cio = 1e30, best_win = 1e30;
    for (int r = 0; r < rounds; r++) {
        double a = run_cio(), b = run_win();
        printf("round %d: cio %.1f ns, SwitchToFiber %.1f ns\n", r, a, b);
        best_cio = a < best_cio ? a : best_cio;
        best_win = b < best_win ? b : best_win;
    }
    printf("best per switch: cio %.1f ns, SwitchToFiber %.1f ns (ratio %.2f)\n", best_cio, best_win,
           best_win / best_cio);
    return 0;
}
