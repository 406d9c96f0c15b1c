/*
 * The fiber switch for x86_64, System V ABI (Linux, the BSDs).
 *
 * Register contract. A call may clobber rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-15, the x87 stack
 * and the status flags of MXCSR and of the x87 status word, so the switch saves none of them. It
 * saves what the ABI makes callee-saved:
 *     rbx, rbp, r12-r15, rsp   and the control bits of MXCSR and the x87 control word
 * (psABI §3.2.1: "the control bits of the MXCSR register are callee-saved ..., the x87 control word
 * is callee-saved"). The control words hold the rounding mode, the exception masks, DAZ/FTZ and
 * the x87 precision: without them, a fiber that calls fesetround() would change the rounding of
 * every fiber that later runs on the thread, and a call to cio_sleep() would return with another
 * control word than it was called with — which the ABI forbids. Measured with bench/fiber_switch.c
 * on this project's machine (AMD Zen 4, shared and loaded): saving and loading both costs about
 * 1 ns per switch (6.1-6.4 ns against 5.3-5.5 ns for the same switch without them); a version that
 * compared first and loaded only on a difference was slower (7.1-7.5 ns), so the switch loads
 * unconditionally. (aarch64 and riscv64 compare first: writing FPCR or frm may synchronise the
 * pipeline there.) The saved MXCSR includes its status flags, which thus come back with the
 * context, more than fiber.h promises.
 *
 * A switched-out context's stack, from its saved sp upwards:
 *     sp+0   MXCSR (4 bytes), x87 control word (2), 2 unused
 *     sp+8   r15, r14, r13, r12, rbx, rbp        (6 × 8 bytes)
 *     sp+56  where to continue (the return address of the call to the switch)
 * The switch returns with `pop; jmp *reg`, not `ret`: `ret` lands in another context than the one
 * that made the call, so the return-stack predictor misses whenever the two contexts switch from
 * different call sites (the scheduler loop and a fiber: always); the indirect jump is predicted
 * from branch history instead. perf-anchors measured 8.2 ns with ret against 2.8 ns with pop+jmp;
 * bench/fiber_switch.c here: 11-13 ns with ret against 7-7.5 ns (the compare-first version).
 *
 * A new context: its frame holds r12 = entry, r13 = arg, rbx = rbp = r14 = r15 = 0, the creator's
 * MXCSR and x87 control word, and "continue at" = cio__fiber_start_x86_64, which calls entry(arg).
 * The frame ends at the 16-byte-aligned top of the stack, so at that call rsp is 16-aligned and
 * entry starts with rsp ≡ 8 (mod 16), exactly as after any call. rbp = 0 and the CFI below end
 * frame-pointer walks and debugger backtraces at the start of the fiber.
 *
 * CET: the switch does not maintain shadow stacks, so processes that enable them (glibc tunable
 * glibc.cpu.x86_shstk, off by default) cannot use fibers; the entry stub has an endbr64 for IBT.
 */
#include <stdint.h>

#include "fiber.h"

#ifndef CIO_ARCH_X86_64
#error "fiber_x86_64.c is for x86_64 only: CMakeLists.txt picks one fiber_<arch>.c per target"
#endif

#if defined(__CET__)
#define CIO__ENDBR "endbr64\n"
#else
#define CIO__ENDBR ""
#endif

__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl cio__fiber_swap\n"
        ".type cio__fiber_swap, @function\n" CIO__SWITCH_ALIAS "cio__fiber_swap:\n" CIO__ENDBR
        /* rdi = from, rsi = to */
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n" /* from->sp */
        "    movq (%rsi), %rsp\n" /* to->sp: now on the other stack */
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    popq %rcx\n"
        "    jmpq *%rcx\n"
        ".size cio__fiber_swap, .-cio__fiber_swap\n" CIO__SWITCH_ALIAS_END "\n"
        ".p2align 4\n"
        ".globl cio__fiber_start_x86_64\n"
        ".hidden cio__fiber_start_x86_64\n"
        ".type cio__fiber_start_x86_64, @function\n"
        "cio__fiber_start_x86_64:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined rip\n" /* the outermost frame of the fiber */
        CIO__ENDBR "    movq %r13, %rdi\n"
        "    callq *%r12\n"
        "    ud2\n" /* entry returned */
        "    .cfi_endproc\n"
        ".size cio__fiber_start_x86_64, .-cio__fiber_start_x86_64\n"
        ".popsection\n");

void cio__fiber_start_x86_64(void);

void cio__fiber_arch_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
    uint64_t *frame = (uint64_t *)(top - 8 * sizeof(uint64_t));
    uint32_t mxcsr = 0;
    uint16_t x87cw = 0;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(x87cw));
    frame[0] = (uint64_t)mxcsr | (uint64_t)x87cw << 32;
    frame[1] = 0;                          /* r15 */
    frame[2] = 0;                          /* r14 */
    frame[3] = (uint64_t)(uintptr_t)arg;   /* r13 */
    frame[4] = (uint64_t)(uintptr_t)entry; /* r12 */
    frame[5] = 0;                          /* rbx */
    frame[6] = 0;                          /* rbp: ends frame-pointer chains */
    frame[7] = (uint64_t)(uintptr_t)cio__fiber_start_x86_64;
    ctx->sp = frame;
}
