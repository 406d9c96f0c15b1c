/*
 * B2 (issue 8): the time of one fiber switch, two contexts on their own stacks yielding to each
 * other, for three contenders run as separate processes by the driver (interleaved, see README.md):
 *   fiber        cio's switch, cio__fiber_switch (src/evented/fiber_<arch>.c, linked from libcio.a;
 *                the header is internal: bench/CMakeLists.txt adds src/evented to the include path)
 *   raw-swap     a minimal register swap written here: the callee-saved registers and the stack
 *                pointer, nothing else (no floating-point control state, no sanitizer hooks); the
 *                floor for a stackful switch
 *   swapcontext  glibc's ucontext switch (it also saves the signal mask: a system call)
 * Each run: the main thread switches to context 1; 1 and 2 switch to each other n times each, then
 * 1 switches back to main: 2n + 2 switches, reported per switch (one transfer of control; a yield
 * and the resume that follows are two). All three use the same guarded stacks (cio__stack_alloc).
 * Nothing here runs on an Evented instance: this is the switch alone, as a scheduler does it.
 * Only where the library has fibers (CIO_HAVE_EVENTED); elsewhere every contender is NA.
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "bench.h"

#if CIO_HAVE_EVENTED
#include "fiber.h"

#define STACK_SIZE (64u * 1024u)

/* ---- the raw baseline: the same frame layout as cio's (so that cio__fiber_arch_init can start it),
 * minus the floating-point control words. ---- */
#if defined(CIO_ARCH_X86_64)
/* cio's frame has an 8-byte FP-control slot below the six registers: a raw context starts 8 bytes
 * higher, where its frame (r15 ... rbp, then where to continue) begins. */
#define RAW_START_OFFSET 8
__asm__(".pushsection .text\n"
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
__asm__(".pushsection .text\n"
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
#define RAW_REGS(op, fop)                                                                           \
    "    " op " ra, 0(sp)\n    " op " s0, 8(sp)\n    " op " s1, 16(sp)\n    " op " s2, 24(sp)\n"    \
    "    " op " s3, 32(sp)\n    " op " s4, 40(sp)\n    " op " s5, 48(sp)\n    " op " s6, 56(sp)\n"  \
    "    " op " s7, 64(sp)\n    " op " s8, 72(sp)\n    " op " s9, 80(sp)\n    " op " s10, 88(sp)\n" \
    "    " op " s11, 96(sp)\n"                                                                      \
    "    " fop " fs0, 104(sp)\n    " fop " fs1, 112(sp)\n    " fop " fs2, 120(sp)\n"                \
    "    " fop " fs3, 128(sp)\n    " fop " fs4, 136(sp)\n    " fop " fs5, 144(sp)\n"                \
    "    " fop " fs6, 152(sp)\n    " fop " fs7, 160(sp)\n    " fop " fs8, 168(sp)\n"                \
    "    " fop " fs9, 176(sp)\n    " fop " fs10, 184(sp)\n    " fop " fs11, 192(sp)\n"
__asm__(".pushsection .text\n"
        ".p2align 2\n"
        ".globl bench_raw_swap\n"
        ".type bench_raw_swap, @function\n"
        "bench_raw_swap:\n"
        "    addi sp, sp, -208\n" RAW_REGS("sd", "fsd") "    sd sp, 0(a0)\n"
                                                        "    ld sp, 0(a1)\n" RAW_REGS(
                                                            "ld", "fld") "    addi sp, sp, 208\n"
                                                                         "    ret\n"
                                                                         ".size bench_raw_swap, .-bench_raw_swap\n"
                                                                         ".popsection\n");
#else
#error \
    "bench/fiber_switch.c: no raw swap for this architecture (CMakeLists.txt builds fibers for x86_64, aarch64, riscv64)"
#endif

void bench_raw_swap(cio__fiber_ctx *from, cio__fiber_ctx *to);

/* ---- the three ping-pongs ---- */

static struct pair {
    cio__fiber_ctx main, f1, f2;
    ucontext_t umain, u1, u2;
    uint64_t n;
} P;

static cio__stack s1, s2;

static void cio_f1(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < P.n; i++)
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
    for (uint64_t i = 0; i < P.n; i++)
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
    for (uint64_t i = 0; i < P.n; i++)
        swapcontext(&P.u1, &P.u2);
    swapcontext(&P.u1, &P.umain);
    abort();
}

static void uc_f2(void)
{
    for (;;)
        swapcontext(&P.u2, &P.u1);
}

/* bench_measure bodies: one unit of n is two switches (plus the two into and out of the pair). */
static void fiber_body(void *arg, uint64_t n)
{
    (void)arg;
    P.n = n;
    cio__fiber_ctx_thread(&P.main);
    cio__fiber_ctx_init(&P.f1, s1.lo, s1.size, cio_f1, NULL);
    cio__fiber_ctx_init(&P.f2, s2.lo, s2.size, cio_f2, NULL);
    cio__fiber_switch(&P.main, &P.f1);
    cio__fiber_ctx_release(&P.f1);
    cio__fiber_ctx_release(&P.f2);
}

static void raw_body(void *arg, uint64_t n)
{
    (void)arg;
    P.n = n;
    cio__fiber_arch_init(&P.f1, s1.lo, s1.size, raw_f1, NULL);
    cio__fiber_arch_init(&P.f2, s2.lo, s2.size, raw_f2, NULL);
    P.f1.sp = (char *)P.f1.sp + RAW_START_OFFSET;
    P.f2.sp = (char *)P.f2.sp + RAW_START_OFFSET;
    bench_raw_swap(&P.main, &P.f1);
}

static void uc_make(ucontext_t *u, const cio__stack *s, void (*fn)(void))
{
    if (getcontext(u) != 0)
        bench_die("getcontext");
    u->uc_stack.ss_sp = s->lo;
    u->uc_stack.ss_size = s->size;
    u->uc_link = NULL;
    makecontext(u, fn, 0);
}

static void uc_body(void *arg, uint64_t n)
{
    (void)arg;
    P.n = n;
    uc_make(&P.u1, &s1, uc_f1);
    uc_make(&P.u2, &s2, uc_f2);
    if (swapcontext(&P.umain, &P.u1) != 0)
        bench_die("swapcontext");
}

static int b2(const bench_opts *o, const char *contender)
{
    bench_body body = strcmp(contender, "fiber") == 0      ? fiber_body
                      : strcmp(contender, "raw-swap") == 0 ? raw_body
                                                           : uc_body;
    if (cio__stack_alloc(STACK_SIZE, &s1) != CIO_OK || cio__stack_alloc(STACK_SIZE, &s2) != CIO_OK)
        bench_die("cio__stack_alloc");
    bench_result("main", bench_measure(body, NULL, o->seconds) / 2.0, "ns/switch");
    cio__stack_free(&s1);
    cio__stack_free(&s2);
    return 0;
}
#else
static int b2(const bench_opts *o, const char *contender)
{
    (void)o;
    (void)contender;
    return bench_na("no fibers on this target (CIO_HAVE_EVENTED is 0)");
}
#endif

const bench_entry bench_fiber_entries[] = {
    {"B2", "fiber", b2},
    {"B2", "raw-swap", b2},
    {"B2", "swapcontext", b2},
    {NULL, NULL, NULL},
};
