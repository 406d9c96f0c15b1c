/*
 * The fiber switch for riscv64, LP64D psABI (Linux, the BSDs).
 *
 * Register contract. A call may clobber ra (saved here only as "where to continue"), t0-t6,
 * a0-a7, ft0-ft11, fa0-fa7 and the accrued exception flags (fflags); the switch saves none of them
 * beyond ra. It saves what the psABI makes callee-saved:
 *     s0-s11 (s0 is the frame pointer), sp, fs0-fs11 (64-bit with the D extension),
 * and the dynamic rounding mode frm, which the psABI gives thread storage duration: a fiber is a
 * thread of the program, so each has its own, and a fiber's fesetround() neither leaks into other
 * fibers nor lets a cio_sleep() return with another mode. Writing frm may serialise the FP unit,
 * so the switch compares first and writes only when the two contexts differ (almost never).
 * gp (global pointer) and tp (thread pointer) are the thread's and never switched.
 *
 * A switched-out context's stack, from its saved sp upwards (208 bytes, a multiple of 16, which
 * the psABI requires of sp):
 *     sp+0   ra s0 s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11          (13 × 8)
 *     sp+104 fs0 fs1 fs2 fs3 fs4 fs5 fs6 fs7 fs8 fs9 fs10 fs11 (12 × 8)
 *     sp+200 frm
 *
 * A new context: ra = cio__fiber_start_riscv64, s0 = 0 (ends frame-pointer chains), s1 = entry,
 * s2 = arg, the creator's frm, everything else 0; its frame ends at the 16-byte-aligned stack top,
 * so entry(arg) starts with sp 16-aligned.
 */
#include <stdint.h>

#include "fiber.h"

#ifndef CIO_ARCH_RISCV64
#error "fiber_riscv64.c is for riscv64 only: CMakeLists.txt picks one fiber_<arch>.c per target"
#endif
#ifndef __riscv_float_abi_double
#error "fiber_riscv64.c supports the LP64D ABI (64-bit floating-point registers) only"
#endif

__asm__(".pushsection .text\n"
        ".p2align 2\n"
        ".globl cio__fiber_swap\n"
        ".type cio__fiber_swap, @function\n" CIO__SWITCH_ALIAS "cio__fiber_swap:\n"
        /* a0 = from, a1 = to */
        "    addi sp, sp, -208\n"
        "    sd ra, 0(sp)\n"
        "    sd s0, 8(sp)\n"
        "    sd s1, 16(sp)\n"
        "    sd s2, 24(sp)\n"
        "    sd s3, 32(sp)\n"
        "    sd s4, 40(sp)\n"
        "    sd s5, 48(sp)\n"
        "    sd s6, 56(sp)\n"
        "    sd s7, 64(sp)\n"
        "    sd s8, 72(sp)\n"
        "    sd s9, 80(sp)\n"
        "    sd s10, 88(sp)\n"
        "    sd s11, 96(sp)\n"
        "    fsd fs0, 104(sp)\n"
        "    fsd fs1, 112(sp)\n"
        "    fsd fs2, 120(sp)\n"
        "    fsd fs3, 128(sp)\n"
        "    fsd fs4, 136(sp)\n"
        "    fsd fs5, 144(sp)\n"
        "    fsd fs6, 152(sp)\n"
        "    fsd fs7, 160(sp)\n"
        "    fsd fs8, 168(sp)\n"
        "    fsd fs9, 176(sp)\n"
        "    fsd fs10, 184(sp)\n"
        "    fsd fs11, 192(sp)\n"
        "    frrm t0\n"
        "    sd t0, 200(sp)\n"
        "    sd sp, 0(a0)\n" /* from->sp */
        "    ld sp, 0(a1)\n" /* to->sp: now on the other stack */
        "    ld t1, 200(sp)\n"
        "    bne t0, t1, 2f\n"
        "1:  ld ra, 0(sp)\n"
        "    ld s0, 8(sp)\n"
        "    ld s1, 16(sp)\n"
        "    ld s2, 24(sp)\n"
        "    ld s3, 32(sp)\n"
        "    ld s4, 40(sp)\n"
        "    ld s5, 48(sp)\n"
        "    ld s6, 56(sp)\n"
        "    ld s7, 64(sp)\n"
        "    ld s8, 72(sp)\n"
        "    ld s9, 80(sp)\n"
        "    ld s10, 88(sp)\n"
        "    ld s11, 96(sp)\n"
        "    fld fs0, 104(sp)\n"
        "    fld fs1, 112(sp)\n"
        "    fld fs2, 120(sp)\n"
        "    fld fs3, 128(sp)\n"
        "    fld fs4, 136(sp)\n"
        "    fld fs5, 144(sp)\n"
        "    fld fs6, 152(sp)\n"
        "    fld fs7, 160(sp)\n"
        "    fld fs8, 168(sp)\n"
        "    fld fs9, 176(sp)\n"
        "    fld fs10, 184(sp)\n"
        "    fld fs11, 192(sp)\n"
        "    addi sp, sp, 208\n"
        "    ret\n"
        "2:  fsrm t1\n"
        "    j 1b\n"
        ".size cio__fiber_swap, .-cio__fiber_swap\n" CIO__SWITCH_ALIAS_END "\n"
        ".p2align 2\n"
        ".globl cio__fiber_start_riscv64\n"
        ".hidden cio__fiber_start_riscv64\n"
        ".type cio__fiber_start_riscv64, @function\n"
        "cio__fiber_start_riscv64:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined ra\n" /* the outermost frame of the fiber */
        "    mv a0, s2\n"
        "    jalr s1\n"
        "    unimp\n" /* entry returned */
        "    .cfi_endproc\n"
        ".size cio__fiber_start_riscv64, .-cio__fiber_start_riscv64\n"
        ".popsection\n");

void cio__fiber_start_riscv64(void);

void cio__fiber_arch_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
    uint64_t *frame = (uint64_t *)(top - 26 * sizeof(uint64_t));
    for (int i = 0; i < 26; i++)
        frame[i] = 0;
    uint64_t frm = 0;
    __asm__ volatile("frrm %0" : "=r"(frm));
    frame[0] = (uint64_t)(uintptr_t)cio__fiber_start_riscv64; /* ra */
    frame[1] = 0;                                             /* s0 */
    frame[2] = (uint64_t)(uintptr_t)entry;                    /* s1 */
    frame[3] = (uint64_t)(uintptr_t)arg;                      /* s2 */
    frame[25] = frm;
    ctx->sp = frame;
}
