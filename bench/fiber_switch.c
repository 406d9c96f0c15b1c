/*
 * B2 (issue 8): the time of one fiber switch — two cio fibers yielding to each other — against
 * two baselines measured in the same run:
 *   raw          a minimal register swap written here: the callee-saved registers and the stack
 *                pointer, nothing else (no floating-point control state, no sanitizer hooks);
 *   swapcontext  glibc's ucontext switch (it also saves the signal mask: a system call).
 * The three run interleaved (cio, raw, swapcontext, cio, raw, ...) for ROUNDS rounds so that load
 * from other processes spreads over all of them; each prints its median and min-max in ns per
 * switch, then the ratios of the medians. One switch is one transfer of control (a yield and the
 * resume that follows are two).
 *
 * Not a test: nothing is asserted. Build (no libcio needed, only the fiber sources):
 *   cc -std=c11 -O2 -Iinclude -Iplatform bench/fiber_switch.c src/evented/fiber.c \
 *      src/evented/stack.c src/evented/fiber_$(uname -m).c -o fiber_switch
 *   taskset -c 1 ./fiber_switch [scale]      (scale multiplies the switch counts; default 1)
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "../src/evented/fiber.h"

#define ROUNDS 7
#define STACK_SIZE (64u * 1024u)

/* ---- the raw baseline: same frame layout as cio's (so that cio__fiber_arch_init can start it),
 * minus the floating-point control word handling. ---- */
#if defined(CIO_ARCH_X86_64)
/* cio's frame has an 8-byte FP-control slot below the six registers: a raw context starts 8 bytes
 * higher, where its frame (r15 ... rbp, then where to continue) begins. */
#define RAW_START_OFFSET 8
__asm__(
    ".pushsection .text\n"
    ".p2align 4\n"
    ".globl bench_raw_swap\n"
    ".type bench_raw_swap, @function\n"
    "bench_raw_swap:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    movq %rsp, (%rdi)\n"
    "    movq (%rsi), %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    popq %rcx\n"
    "    jmpq *%rcx\n"
    ".size bench_raw_swap, .-bench_raw_swap\n"
    ".popsection\n");
#elif defined(CIO_ARCH_AARCH64)
#define RAW_START_OFFSET 0
__asm__(
    ".pushsection .text\n"
    ".p2align 4\n"
    ".globl bench_raw_swap\n"
    ".type bench_raw_swap, %function\n"
    "bench_raw_swap:\n"
    "    stp x19, x20, [sp, #-176]!\n"
    "    stp x21, x22, [sp, #16]\n"
    "    stp x23, x24, [sp, #32]\n"
    "    stp x25, x26, [sp, #48]\n"
    "    stp x27, x28, [sp, #64]\n"
    "    stp x29, x30, [sp, #80]\n"
    "    stp d8, d9, [sp, #96]\n"
    "    stp d10, d11, [sp, #112]\n"
    "    stp d12, d13, [sp, #128]\n"
    "    stp d14, d15, [sp, #144]\n"
    "    mov x10, sp\n"
    "    str x10, [x0]\n"
    "    ldr x10, [x1]\n"
    "    mov sp, x10\n"
    "    ldp x21, x22, [sp, #16]\n"
    "    ldp x23, x24, [sp, #32]\n"
    "    ldp x25, x26, [sp, #48]\n"
    "    ldp x27, x28, [sp, #64]\n"
    "    ldp x29, x30, [sp, #80]\n"
    "    ldp d8, d9, [sp, #96]\n"
    "    ldp d10, d11, [sp, #112]\n"
    "    ldp d12, d13, [sp, #128]\n"
    "    ldp d14, d15, [sp, #144]\n"
    "    ldp x19, x20, [sp], #176\n"
    "    ret\n"
    ".size bench_raw_swap, .-bench_raw_swap\n"
    ".popsection\n");
#elif defined(CIO_ARCH_RISCV64)
#define RAW_START_OFFSET 0
#define RAW_REGS(op, fop)                                                                   \
    "    " op " ra, 0(sp)\n    " op " s0, 8(sp)\n    " op " s1, 16(sp)\n    " op " s2, 24(sp)\n" \
    "    " op " s3, 32(sp)\n    " op " s4, 40(sp)\n    " op " s5, 48(sp)\n    " op " s6, 56(sp)\n" \
    "    " op " s7, 64(sp)\n    " op " s8, 72(sp)\n    " op " s9, 80(sp)\n    " op " s10, 88(sp)\n" \
    "    " op " s11, 96(sp)\n"                                                              \
    "    " fop " fs0, 104(sp)\n    " fop " fs1, 112(sp)\n    " fop " fs2, 120(sp)\n"       \
    "    " fop " fs3, 128(sp)\n    " fop " fs4, 136(sp)\n    " fop " fs5, 144(sp)\n"       \
    "    " fop " fs6, 152(sp)\n    " fop " fs7, 160(sp)\n    " fop " fs8, 168(sp)\n"       \
    "    " fop " fs9, 176(sp)\n    " fop " fs10, 184(sp)\n    " fop " fs11, 192(sp)\n"
__asm__(
    ".pushsection .text\n"
    ".p2align 2\n"
    ".globl bench_raw_swap\n"
    ".type bench_raw_swap, @function\n"
    "bench_raw_swap:\n"
    "    addi sp, sp, -208\n"
    RAW_REGS("sd", "fsd")
    "    sd sp, 0(a0)\n"
    "    ld sp, 0(a1)\n"
    RAW_REGS("ld", "fld")
    "    addi sp, sp, 208\n"
    "    ret\n"
    ".size bench_raw_swap, .-bench_raw_swap\n"
    ".popsection\n");
#else
#error "bench/fiber_switch.c: no raw swap for this architecture"
#endif

void bench_raw_swap(cio__fiber_ctx *from, cio__fiber_ctx *to);

/* ---- the three ping-pongs: main starts f1; f1 and f2 switch to each other n times each; f1
 * returns to main. 2n + 2 switches. ---- */

struct pair {
    cio__fiber_ctx main, f1, f2;
    ucontext_t umain, u1, u2;
    long n;
};

static struct pair P;

static void cio_f1(void *arg)
{
    (void)arg;
    for (long i = 0; i < P.n; i++)
        cio__fiber_switch(&P.f1, &P.f2);
    cio__fiber_switch(&P.f1, &P.main);
    abort();
}

static void cio_f2(void *arg)
{
    (void)arg;
    for (;;)
        cio__fiber_switch(&P.f2, &P.f1);
}

static void raw_f1(void *arg)
{
    (void)arg;
    for (long i = 0; i < P.n; i++)
        bench_raw_swap(&P.f1, &P.f2);
    bench_raw_swap(&P.f1, &P.main);
    abort();
}

static void raw_f2(void *arg)
{
    (void)arg;
    for (;;)
        bench_raw_swap(&P.f2, &P.f1);
}

static void uc_f1(void)
{
    for (long i = 0; i < P.n; i++)
        swapcontext(&P.u1, &P.u2);
    swapcontext(&P.u1, &P.umain);
    abort();
}

static void uc_f2(void)
{
    for (;;)
        swapcontext(&P.u2, &P.u1);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static cio__stack s1, s2;

static double run_cio(long n)
{
    P.n = n;
    cio__fiber_ctx_thread(&P.main);
    cio__fiber_ctx_init(&P.f1, s1.lo, s1.size, cio_f1, NULL);
    cio__fiber_ctx_init(&P.f2, s2.lo, s2.size, cio_f2, NULL);
    double t0 = now_ns();
    cio__fiber_switch(&P.main, &P.f1);
    double t1 = now_ns();
    cio__fiber_ctx_release(&P.f1);
    cio__fiber_ctx_release(&P.f2);
    return (t1 - t0) / (double)(2 * n + 2);
}

static double run_raw(long n)
{
    P.n = n;
    cio__fiber_arch_init(&P.f1, s1.lo, s1.size, raw_f1, NULL);
    cio__fiber_arch_init(&P.f2, s2.lo, s2.size, raw_f2, NULL);
    P.f1.sp = (char *)P.f1.sp + RAW_START_OFFSET;
    P.f2.sp = (char *)P.f2.sp + RAW_START_OFFSET;
    double t0 = now_ns();
    bench_raw_swap(&P.main, &P.f1);
    double t1 = now_ns();
    return (t1 - t0) / (double)(2 * n + 2);
}

static double run_ucontext(long n)
{
    P.n = n;
    getcontext(&P.u1);
    P.u1.uc_stack.ss_sp = s1.lo;
    P.u1.uc_stack.ss_size = s1.size;
    P.u1.uc_link = NULL;
    makecontext(&P.u1, uc_f1, 0);
    getcontext(&P.u2);
    P.u2.uc_stack.ss_sp = s2.lo;
    P.u2.uc_stack.ss_size = s2.size;
    P.u2.uc_link = NULL;
    makecontext(&P.u2, uc_f2, 0);
    double t0 = now_ns();
    swapcontext(&P.umain, &P.u1);
    double t1 = now_ns();
    return (t1 - t0) / (double)(2 * n + 2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(scale > 0))
        scale = 1.0;
    long n_fast = (long)(10000000 * scale), n_uc = (long)(500000 * scale);
    if (n_fast < 1)
        n_fast = 1;
    if (n_uc < 1)
        n_uc = 1;
    if (cio__stack_alloc(STACK_SIZE, &s1) != CIO_OK || cio__stack_alloc(STACK_SIZE, &s2) != CIO_OK) {
        fprintf(stderr, "fiber_switch: cannot map stacks\n");
        return 1;
    }
    /* Warm up all three (page faults, caches, predictors). */
    run_cio(n_fast / 10 + 1);
    run_raw(n_fast / 10 + 1);
    run_ucontext(n_uc / 10 + 1);

    double cio[ROUNDS], raw[ROUNDS], uc[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        cio[r] = run_cio(n_fast);
        raw[r] = run_raw(n_fast);
        uc[r] = run_ucontext(n_uc);
    }
    printf("B2 fiber switch, %s, %d interleaved rounds (%ld switches per cio/raw run, %ld per swapcontext run)\n",
           CIO_ARCH_NAME, ROUNDS, 2 * n_fast + 2, 2 * n_uc + 2);
    /* median() sorts its array: afterwards [0] is the minimum and [ROUNDS - 1] the maximum. */
    double mc = median(cio, ROUNDS), mr = median(raw, ROUNDS), mu = median(uc, ROUNDS);
    printf("  %-12s median %8.2f ns/switch   min-max %8.2f - %8.2f\n", "cio", mc, cio[0], cio[ROUNDS - 1]);
    printf("  %-12s median %8.2f ns/switch   min-max %8.2f - %8.2f\n", "raw", mr, raw[0], raw[ROUNDS - 1]);
    printf("  %-12s median %8.2f ns/switch   min-max %8.2f - %8.2f\n", "swapcontext", mu, uc[0], uc[ROUNDS - 1]);
    printf("  cio/raw %.2fx (target <= 2x)   swapcontext/cio %.1fx (target >= 20x)\n", mc / mr, mu / mc);
    cio__stack_free(&s1);
    cio__stack_free(&s2);
    return 0;
}
