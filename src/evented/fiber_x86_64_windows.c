/*
 * The fiber switch for x86_64, Windows x64 ABI (mingw-w64; run under Wine by the suites).
 *
 * Register contract. The Windows x64 ABI makes callee-saved (nonvolatile):
 *     rbx, rbp, rdi, rsi, r12-r15, rsp, xmm6-xmm15
 * and the control bits of MXCSR and the x87 control word ("x64 calling convention", Microsoft
 * docs: "The MXCSR register's bits 6-15 ... and the x87 FPU control word are nonvolatile"). The
 * switch saves all of them (MXCSR whole: its status flags then come back with the context, more
 * than fiber.h promises). rdi, rsi and xmm6-xmm15 are what the System V switch (fiber_x86_64.c)
 * does not save.
 *
 * The thread information block. Windows keeps the running stack's bounds in the TEB, and the OS
 * and the C runtime read them: the x64 unwinder (exception dispatch, RtlCaptureStackBackTrace,
 * RtlVirtualUnwind's callers) stops at a frame outside [StackLimit, StackBase];
 * GetCurrentThreadStackLimits reports [DeallocationStack, StackBase]; the kernel's stack overflow
 * handling compares faulting addresses with them. So a context carries its four TIB words and the
 * switch stores them into gs: with the registers:
 *     gs:0x00 ExceptionList (the x86 SEH chain: unused by Windows' x64 code, but Wine's x64
 *             dispatcher calls the handlers of its own frames linked there while they lie below the
 *             faulting rsp, so a fiber starts with the end marker ~0, never 0, and no context sees
 *             another's), gs:0x08 StackBase, gs:0x10 StackLimit,
 *     gs:0x1478 DeallocationStack (the base of the stack's reservation, its guard included).
 * A thread's own context saves and restores the thread's values, so the loop thread's stack is
 * described again when a fiber switches back to it. FiberData (gs:0x20) is not touched: cio's
 * fibers are not Windows fibers (see the choice below).
 *
 * A switched-out context's stack, from its saved sp upwards (sp is 16-byte aligned for movaps):
 *     sp+0    xmm6 ... xmm15                        (10 x 16 bytes)
 *     sp+160  MXCSR (4 bytes), x87 control word (2), 2 unused
 *     sp+168  ExceptionList, StackBase, StackLimit, DeallocationStack   (4 x 8)
 *     sp+200  r15, r14, r13, r12, rsi, rdi, rbx, rbp                     (8 x 8)
 *     sp+264  where to continue (the return address of the call to the switch)
 * The switch returns with `pop; jmp *reg`, as fiber_x86_64.c explains (return-stack prediction).
 *
 * A new context: the frame above with r12 = entry, r13 = arg, the other registers 0, xmm6-15 0, the
 * creator's MXCSR and x87 control word, the TIB words of its stack (StackBase = its top, StackLimit
 * = lo, DeallocationStack = lo minus the guard page that stack_windows.c puts below every stack,
 * CIO__STACK_GUARD), and "continue at" = cio__fiber_start_win64. Above the frame, 16 bytes: a zero where a
 * caller's return address would be, and a pad. The stub is a function with unwind data (.seh_proc)
 * that says it allocated 40 bytes below a return address: the switch's final `pop` did 8 of them,
 * its `sub $32` the rest (the home area entry(arg) may write), so rsp is 16-byte aligned at the call
 * and entry starts with rsp = 8 (mod 16), as after any call. An unwinder walking up from entry
 * reaches the stub, then the zero return address: the walk ends there, inside the stack's bounds.
 *
 * Why not CreateFiberEx/SwitchToFiber: the system fiber API keeps the TIB right by itself, but
 * bench/fiber_switch_windows.c (two contexts yielding to each other, 10^6 switches, best of 5
 * rounds, interleaved) measured under Wine 8 on this project's loaded 2-CPU machine (indicative
 * only: Wine's SwitchToFiber is not Windows'): 31.5-32.8 ns per switch for this one against
 * 47.7-52.1 ns for SwitchToFiber (1.5-1.6x), in two runs. Beyond speed, Windows fibers would make
 * every loop thread a fiber (ConvertThreadToFiber) and the stacks the system's (CreateFiberEx
 * commits and grows them its own way, no pool, no fault injection through the OS call table),
 * while this switch keeps fiber.h's contract and the scheduler exactly as on Linux and the BSDs.
 */
#include <stdint.h>

#include "fiber.h"

#ifndef CIO_ARCH_X86_64
#error "fiber_x86_64_windows.c is for x86_64 only: CMakeLists.txt picks one fiber_<arch>.c per target"
#endif

/* The frame of a switched-out context: 20 words of xmm, 1 of control words, 4 of TIB, 8 registers
 * and "continue at" (272 bytes, a multiple of 16); above a new context's frame, the pad and the zero
 * return address. */
#define WIN_FRAME_BYTES 272u
#define WIN_TOP_PAD 16u

__asm__(".text\n"
        ".p2align 4\n"
        ".globl cio__fiber_swap\n"
        ".def cio__fiber_swap; .scl 2; .type 32; .endef\n"
        ".globl cio__fiber_switch\n"
        ".def cio__fiber_switch; .scl 2; .type 32; .endef\n"
        "cio__fiber_swap:\n"
        "cio__fiber_switch:\n"
        /* rcx = from, rdx = to */
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    pushq %gs:0x1478\n" /* DeallocationStack */
        "    pushq %gs:0x10\n"   /* StackLimit */
        "    pushq %gs:0x08\n"   /* StackBase */
        "    pushq %gs:0x00\n"   /* ExceptionList */
        "    subq $168, %rsp\n"
        "    stmxcsr 160(%rsp)\n"
        "    fnstcw 164(%rsp)\n"
        "    movaps %xmm6, 0(%rsp)\n"
        "    movaps %xmm7, 16(%rsp)\n"
        "    movaps %xmm8, 32(%rsp)\n"
        "    movaps %xmm9, 48(%rsp)\n"
        "    movaps %xmm10, 64(%rsp)\n"
        "    movaps %xmm11, 80(%rsp)\n"
        "    movaps %xmm12, 96(%rsp)\n"
        "    movaps %xmm13, 112(%rsp)\n"
        "    movaps %xmm14, 128(%rsp)\n"
        "    movaps %xmm15, 144(%rsp)\n"
        "    movq %rsp, (%rcx)\n" /* from->sp */
        "    movq (%rdx), %rsp\n" /* to->sp: now on the other stack */
        "    movaps 0(%rsp), %xmm6\n"
        "    movaps 16(%rsp), %xmm7\n"
        "    movaps 32(%rsp), %xmm8\n"
        "    movaps 48(%rsp), %xmm9\n"
        "    movaps 64(%rsp), %xmm10\n"
        "    movaps 80(%rsp), %xmm11\n"
        "    movaps 96(%rsp), %xmm12\n"
        "    movaps 112(%rsp), %xmm13\n"
        "    movaps 128(%rsp), %xmm14\n"
        "    movaps 144(%rsp), %xmm15\n"
        "    ldmxcsr 160(%rsp)\n"
        "    fldcw 164(%rsp)\n"
        "    addq $168, %rsp\n"
        "    popq %gs:0x00\n"
        "    popq %gs:0x08\n"
        "    popq %gs:0x10\n"
        "    popq %gs:0x1478\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    popq %r8\n"
        "    jmpq *%r8\n"
        "\n"
        ".p2align 4\n"
        ".globl cio__fiber_start_win64\n"
        ".def cio__fiber_start_win64; .scl 2; .type 32; .endef\n"
        ".seh_proc cio__fiber_start_win64\n"
        "cio__fiber_start_win64:\n"
        "    subq $32, %rsp\n"
        "    .seh_stackalloc 40\n" /* with the 8 bytes the switch popped: see above */
        "    .seh_endprologue\n"
        "    movq %r13, %rcx\n"
        "    callq *%r12\n"
        "    ud2\n" /* entry returned */
        ".seh_endproc\n");

void cio__fiber_start_win64(void);

void cio__fiber_arch_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
    uint64_t *frame = (uint64_t *)(top - WIN_TOP_PAD - WIN_FRAME_BYTES); /* 16-byte aligned */
    uint32_t mxcsr = 0;
    uint16_t x87cw = 0;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(x87cw));
    for (unsigned i = 0; i < 20; i++)
        frame[i] = 0; /* xmm6-15 */
    frame[20] = (uint64_t)mxcsr | (uint64_t)x87cw << 32;
    frame[21] = ~(uint64_t)0;                  /* ExceptionList: the end of the chain (0 would be a frame to Wine) */
    frame[22] = (uint64_t)top;                 /* StackBase */
    frame[23] = (uint64_t)(uintptr_t)stack_lo; /* StackLimit */
    frame[24] = (uint64_t)((uintptr_t)stack_lo - CIO__STACK_GUARD); /* DeallocationStack */
    frame[25] = 0;                                                  /* r15 */
    frame[26] = 0;                                                  /* r14 */
    frame[27] = (uint64_t)(uintptr_t)arg;                           /* r13 */
    frame[28] = (uint64_t)(uintptr_t)entry;                         /* r12 */
    frame[29] = frame[30] = frame[31] = frame[32] = 0;              /* rsi, rdi, rbx, rbp */
    frame[33] = (uint64_t)(uintptr_t)cio__fiber_start_win64;        /* continue at */
    frame[34] = frame[35] = 0; /* the pad, and the zero return address that ends unwinding */
    ctx->sp = frame;
}
