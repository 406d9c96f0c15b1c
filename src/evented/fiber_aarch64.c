/*
 * The fiber switch for aarch64, AAPCS64 (Linux, the BSDs).
 *
 * Register contract. A call may clobber x0-x18 (x18 is the platform register: Linux treats it as a
 * temporary, and it is never ours to move between contexts), the upper halves of v8-v15, all of
 * v0-v7 and v16-v31, NZCV and the FPSR status flags; the switch saves none of them. It saves what
 * AAPCS64 makes callee-saved:
 *     x19-x28, x29 (frame pointer), x30 (link register: where to continue), sp,
 *     d8-d15 (the low 64 bits of v8-v15),
 * and FPCR (rounding mode, flush-to-zero, default-NaN, trap enables), which AAPCS64 lets a
 * function change only if documented to do so: per context, like a thread's, so that a fiber's
 * fesetround() neither leaks into other fibers nor lets a cio_sleep() return with another mode.
 * Writing FPCR can be slow (it may synchronise the FP pipeline), so the switch compares first and
 * writes only when the two contexts differ (almost never). The thread pointer tpidr_el0 is the
 * thread's, never switched.
 *
 * A switched-out context's stack, from its saved sp upwards (176 bytes, a multiple of 16 as sp
 * must always be):
 *     sp+0   x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30   (12 × 8)
 *     sp+96  d8 d9 d10 d11 d12 d13 d14 d15                     (8 × 8)
 *     sp+160 FPCR, 8 unused
 * The switch ends with `ret` (through x30), which BTI does not check.
 *
 * A new context: x19 = entry, x20 = arg, x29 = 0 (ends frame-record chains), x30 =
 * cio__fiber_start_aarch64, the creator's FPCR, everything else 0; its frame ends at the 16-byte
 * aligned stack top, so entry(arg) starts with sp 16-aligned. `hint #34` is `bti c` (a no-op
 * without BTI) for callers that reach the switch through a pointer.
 */
#include <stdint.h>

#include "fiber.h"

#ifndef CIO_ARCH_AARCH64
#error "fiber_aarch64.c is for aarch64 only: CMakeLists.txt picks one fiber_<arch>.c per target"
#endif

__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl cio__fiber_swap\n"
        ".type cio__fiber_swap, %function\n" CIO__SWITCH_ALIAS "cio__fiber_swap:\n"
        /* x0 = from, x1 = to */
        "    hint #34\n"
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
        "    mrs x9, fpcr\n"
        "    str x9, [sp, #160]\n"
        "    mov x10, sp\n"
        "    str x10, [x0]\n" /* from->sp */
        "    ldr x10, [x1]\n" /* to->sp */
        "    mov sp, x10\n"   /* now on the other stack */
        "    ldr x10, [sp, #160]\n"
        "    cmp x9, x10\n"
        "    b.ne 2f\n"
        "1:  ldp x21, x22, [sp, #16]\n"
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
        "2:  msr fpcr, x10\n"
        "    b 1b\n"
        ".size cio__fiber_swap, .-cio__fiber_swap\n" CIO__SWITCH_ALIAS_END "\n"
        ".p2align 4\n"
        ".globl cio__fiber_start_aarch64\n"
        ".hidden cio__fiber_start_aarch64\n"
        ".type cio__fiber_start_aarch64, %function\n"
        "cio__fiber_start_aarch64:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined x30\n" /* the outermost frame of the fiber */
        "    mov x0, x20\n"
        "    blr x19\n"
        "    brk #0x3e8\n" /* entry returned */
        "    .cfi_endproc\n"
        ".size cio__fiber_start_aarch64, .-cio__fiber_start_aarch64\n"
        ".popsection\n");

void cio__fiber_start_aarch64(void);

void cio__fiber_arch_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
    uint64_t *frame = (uint64_t *)(top - 22 * sizeof(uint64_t));
    for (int i = 0; i < 22; i++)
        frame[i] = 0;
    uint64_t fpcr = 0;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    frame[0] = (uint64_t)(uintptr_t)entry;                     /* x19 */
    frame[1] = (uint64_t)(uintptr_t)arg;                       /* x20 */
    frame[10] = 0;                                             /* x29 */
    frame[11] = (uint64_t)(uintptr_t)cio__fiber_start_aarch64; /* x30 */
    frame[20] = fpcr;
    ctx->sp = frame;
}
