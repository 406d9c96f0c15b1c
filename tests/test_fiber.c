/*
 * The fiber primitive of the Evented backend (src/evented/fiber.h): context switches, the register
 * contract, live values across switches, and contexts released unstarted. Stacks, their alignment,
 * guard pages and their pool are in test_fiber_stacks.c.
 *
 * Fibers never call cmocka asserts (a failed assert longjmps, which must not cross stacks): they
 * record what they saw in shared state, and the thread context checks it after switching back.
 */
#define _DEFAULT_SOURCE 1
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/evented/fiber.h"
#include "fiber_helpers.h"

/* ==== ping-pong: thread → A → B → thread, N times ================================================== */

#define PING_ROUNDS 100000

struct ping {
    cio__fiber_ctx thread, a, b;
    uint64_t token; /* passed around: each participant checks it, then increments it */
    uint64_t bad;   /* wrong tokens seen by the fibers */
    int finished;
};

static void ping_a(void *arg)
{
    struct ping *p = (struct ping *)arg;
    for (uint64_t i = 0; i < PING_ROUNDS; i++) {
        if (p->token != 3 * i + 1)
            p->bad++;
        p->token++;
        cio__fiber_switch(&p->a, &p->b);
    }
    p->finished++;
    cio__fiber_exit(&p->a, &p->b);
}

static void ping_b(void *arg)
{
    struct ping *p = (struct ping *)arg;
    for (uint64_t i = 0; i < PING_ROUNDS; i++) {
        if (p->token != 3 * i + 2)
            p->bad++;
        p->token++;
        cio__fiber_switch(&p->b, &p->thread);
    }
    p->finished++;
    cio__fiber_exit(&p->b, &p->thread);
}

static void test_fiber_ping_pong(void **state)
{
    (void)state;
    static struct ping p;
    memset(&p, 0, sizeof p);
    cio__stack sa, sb;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &sa), CIO_OK);
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &sb), CIO_OK);
    cio__fiber_ctx_thread(&p.thread);
    cio__fiber_ctx_init(&p.a, sa.lo, sa.size, ping_a, &p);
    cio__fiber_ctx_init(&p.b, sb.lo, sb.size, ping_b, &p);
    for (uint64_t i = 0; i < PING_ROUNDS; i++) {
        assert_int_equal(p.token, 3 * i);
        p.token++;
        cio__fiber_switch(&p.thread, &p.a);
    }
    assert_int_equal(p.token, 3 * (uint64_t)PING_ROUNDS);
    assert_int_equal(p.finished, 0);
    cio__fiber_switch(&p.thread, &p.a); /* A leaves its loop and exits to B, which exits to us */
    assert_int_equal(p.finished, 2);
    assert_int_equal(p.bad, 0);
    cio__fiber_ctx_release(&p.a);
    cio__fiber_ctx_release(&p.b);
    cio__fiber_ctx_release(&p.thread);
    cio__stack_free(&sa);
    cio__stack_free(&sb);
}

/* ==== the register contract, checked register by register ========================================= */

/* cio_test_regs_switch(from, to, in, out): loads every callee-saved register and the FP control
 * state from in[], calls cio__fiber_switch(from, to), stores them to out[] once resumed, and
 * restores the caller's (it obeys the ABI itself). */
#if defined(CIO_ARCH_X86_64)
/* in[0..5] rbx rbp r12 r13 r14 r15, in[6] MXCSR, in[7] x87 control word */
#define REGS_N 8
#define REGS_FPCTL 6
__asm__(".pushsection .text\n"
        ".globl cio_test_regs_switch\n"
        ".type cio_test_regs_switch, @function\n"
        "cio_test_regs_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $24, %rsp\n" /* rsp is 16-aligned for the call below */
        "    movq %rcx, 0(%rsp)\n"
        "    stmxcsr 8(%rsp)\n"
        "    fnstcw 12(%rsp)\n"
        "    ldmxcsr 48(%rdx)\n"
        "    fldcw 56(%rdx)\n"
        "    movq 0(%rdx), %rbx\n"
        "    movq 8(%rdx), %rbp\n"
        "    movq 16(%rdx), %r12\n"
        "    movq 24(%rdx), %r13\n"
        "    movq 32(%rdx), %r14\n"
        "    movq 40(%rdx), %r15\n"
        "    call cio__fiber_switch@PLT\n"
        "    movq 0(%rsp), %rcx\n"
        "    movq %rbx, 0(%rcx)\n"
        "    movq %rbp, 8(%rcx)\n"
        "    movq %r12, 16(%rcx)\n"
        "    movq %r13, 24(%rcx)\n"
        "    movq %r14, 32(%rcx)\n"
        "    movq %r15, 40(%rcx)\n"
        "    stmxcsr 48(%rcx)\n"
        "    fnstcw 56(%rcx)\n"
        "    ldmxcsr 8(%rsp)\n"
        "    fldcw 12(%rsp)\n"
        "    addq $24, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size cio_test_regs_switch, .-cio_test_regs_switch\n"
        ".popsection\n");

static uint64_t regs_mask(size_t i)
{
    if (i == 6)
        return 0xffc0; /* MXCSR control bits (the status flags are not preserved) */
    if (i == 7)
        return 0xffff; /* the x87 control word */
    return UINT64_MAX;
}

static void regs_pattern(uint64_t *in, uint64_t salt)
{
    for (size_t i = 0; i < 6; i++)
        in[i] = (0x0101010101010101u * (i + 1)) ^ salt;
    /* All exceptions masked; round down (salt even) or toward zero (odd). Only the rounding
     * mode differs: Valgrind emulates no other control bit (FTZ/DAZ, x87 precision). */
    in[6] = (salt & 1) ? 0x1f80u | 0x6000u : 0x1f80u | 0x2000u;
    /* x87: all masked, extended precision; round up (even) or toward zero (odd) */
    in[7] = (salt & 1) ? 0x037fu | 0x0c00u : 0x037fu | 0x0800u;
}
#elif defined(CIO_ARCH_AARCH64)
/* in[0..9] x19-x28, in[10] x29, in[11..18] d8-d15, in[19] FPCR */
#define REGS_N 20
#define REGS_FPCTL 19
__asm__(".pushsection .text\n"
        ".globl cio_test_regs_switch\n"
        ".type cio_test_regs_switch, %function\n"
        "cio_test_regs_switch:\n"
        "    stp x29, x30, [sp, #-176]!\n"
        "    stp x19, x20, [sp, #16]\n"
        "    stp x21, x22, [sp, #32]\n"
        "    stp x23, x24, [sp, #48]\n"
        "    stp x25, x26, [sp, #64]\n"
        "    stp x27, x28, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mrs x9, fpcr\n"
        "    stp x9, x3, [sp, #160]\n"
        "    ldp x19, x20, [x2, #0]\n"
        "    ldp x21, x22, [x2, #16]\n"
        "    ldp x23, x24, [x2, #32]\n"
        "    ldp x25, x26, [x2, #48]\n"
        "    ldp x27, x28, [x2, #64]\n"
        "    ldr x29, [x2, #80]\n"
        "    ldp d8, d9, [x2, #88]\n"
        "    ldp d10, d11, [x2, #104]\n"
        "    ldp d12, d13, [x2, #120]\n"
        "    ldp d14, d15, [x2, #136]\n"
        "    ldr x9, [x2, #152]\n"
        "    msr fpcr, x9\n"
        "    bl cio__fiber_switch\n"
        "    ldr x3, [sp, #168]\n"
        "    stp x19, x20, [x3, #0]\n"
        "    stp x21, x22, [x3, #16]\n"
        "    stp x23, x24, [x3, #32]\n"
        "    stp x25, x26, [x3, #48]\n"
        "    stp x27, x28, [x3, #64]\n"
        "    str x29, [x3, #80]\n"
        "    stp d8, d9, [x3, #88]\n"
        "    stp d10, d11, [x3, #104]\n"
        "    stp d12, d13, [x3, #120]\n"
        "    stp d14, d15, [x3, #136]\n"
        "    mrs x9, fpcr\n"
        "    str x9, [x3, #152]\n"
        "    ldr x9, [sp, #160]\n"
        "    msr fpcr, x9\n"
        "    ldp x19, x20, [sp, #16]\n"
        "    ldp x21, x22, [sp, #32]\n"
        "    ldp x23, x24, [sp, #48]\n"
        "    ldp x25, x26, [sp, #64]\n"
        "    ldp x27, x28, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    ldp x29, x30, [sp], #176\n"
        "    ret\n"
        ".size cio_test_regs_switch, .-cio_test_regs_switch\n"
        ".popsection\n");

static uint64_t regs_mask(size_t i)
{
    return i == REGS_FPCTL ? 0x07c00000u : UINT64_MAX; /* FPCR: AHP DN FZ RMode */
}

static void regs_pattern(uint64_t *in, uint64_t salt)
{
    for (size_t i = 0; i < REGS_FPCTL; i++)
        in[i] = (0x0101010101010101u * (i + 1)) ^ salt;
    /* round toward +inf (salt even) or toward zero with flush-to-zero and default NaN (odd) */
    in[REGS_FPCTL] = (salt & 1) ? 0x03c00000u : 0x00400000u;
}
#elif defined(CIO_ARCH_RISCV64)
/* in[0..11] s0-s11, in[12..23] fs0-fs11, in[24] frm */
#define REGS_N 25
#define REGS_FPCTL 24
__asm__(".pushsection .text\n"
        ".globl cio_test_regs_switch\n"
        ".type cio_test_regs_switch, @function\n"
        "cio_test_regs_switch:\n"
        "    addi sp, sp, -224\n"
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
        "    sd a3, 208(sp)\n"
        "    ld s0, 0(a2)\n"
        "    ld s1, 8(a2)\n"
        "    ld s2, 16(a2)\n"
        "    ld s3, 24(a2)\n"
        "    ld s4, 32(a2)\n"
        "    ld s5, 40(a2)\n"
        "    ld s6, 48(a2)\n"
        "    ld s7, 56(a2)\n"
        "    ld s8, 64(a2)\n"
        "    ld s9, 72(a2)\n"
        "    ld s10, 80(a2)\n"
        "    ld s11, 88(a2)\n"
        "    fld fs0, 96(a2)\n"
        "    fld fs1, 104(a2)\n"
        "    fld fs2, 112(a2)\n"
        "    fld fs3, 120(a2)\n"
        "    fld fs4, 128(a2)\n"
        "    fld fs5, 136(a2)\n"
        "    fld fs6, 144(a2)\n"
        "    fld fs7, 152(a2)\n"
        "    fld fs8, 160(a2)\n"
        "    fld fs9, 168(a2)\n"
        "    fld fs10, 176(a2)\n"
        "    fld fs11, 184(a2)\n"
        "    ld t0, 192(a2)\n"
        "    fsrm t0\n"
        "    call cio__fiber_switch\n"
        "    ld a3, 208(sp)\n"
        "    sd s0, 0(a3)\n"
        "    sd s1, 8(a3)\n"
        "    sd s2, 16(a3)\n"
        "    sd s3, 24(a3)\n"
        "    sd s4, 32(a3)\n"
        "    sd s5, 40(a3)\n"
        "    sd s6, 48(a3)\n"
        "    sd s7, 56(a3)\n"
        "    sd s8, 64(a3)\n"
        "    sd s9, 72(a3)\n"
        "    sd s10, 80(a3)\n"
        "    sd s11, 88(a3)\n"
        "    fsd fs0, 96(a3)\n"
        "    fsd fs1, 104(a3)\n"
        "    fsd fs2, 112(a3)\n"
        "    fsd fs3, 120(a3)\n"
        "    fsd fs4, 128(a3)\n"
        "    fsd fs5, 136(a3)\n"
        "    fsd fs6, 144(a3)\n"
        "    fsd fs7, 152(a3)\n"
        "    fsd fs8, 160(a3)\n"
        "    fsd fs9, 168(a3)\n"
        "    fsd fs10, 176(a3)\n"
        "    fsd fs11, 184(a3)\n"
        "    frrm t0\n"
        "    sd t0, 192(a3)\n"
        "    ld t0, 200(sp)\n"
        "    fsrm t0\n"
        "    ld ra, 0(sp)\n"
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
        "    addi sp, sp, 224\n"
        "    ret\n"
        ".size cio_test_regs_switch, .-cio_test_regs_switch\n"
        ".popsection\n");

static uint64_t regs_mask(size_t i)
{
    return i == REGS_FPCTL ? 0x7u : UINT64_MAX;
}

static void regs_pattern(uint64_t *in, uint64_t salt)
{
    for (size_t i = 0; i < REGS_FPCTL; i++)
        in[i] = (0x0101010101010101u * (i + 1)) ^ salt;
    in[REGS_FPCTL] = (salt & 1) ? 1u /* RTZ */ : 3u /* RUP */;
}
#endif

#ifdef REGS_N
void cio_test_regs_switch(cio__fiber_ctx *from, cio__fiber_ctx *to, const uint64_t *in, uint64_t *out);

#define REGS_ROUNDS 50

struct regs {
    cio__fiber_ctx thread, fiber;
    uint64_t in[REGS_N], out[REGS_N];
    size_t bad;       /* registers the fiber found changed */
    size_t bad_index; /* the first of them */
    int rounds;
};

static void regs_fiber(void *arg)
{
    struct regs *r = (struct regs *)arg;
    regs_pattern(r->in, 0x5a5a5a5a5a5a5a5bu);
    for (; r->rounds < REGS_ROUNDS; r->rounds++) {
        memset(r->out, 0, sizeof r->out);
        cio_test_regs_switch(&r->fiber, &r->thread, r->in, r->out);
        for (size_t i = 0; i < REGS_N; i++) {
            if ((r->out[i] & regs_mask(i)) != (r->in[i] & regs_mask(i)) && r->bad++ == 0)
                r->bad_index = i;
        }
    }
    cio__fiber_exit(&r->fiber, &r->thread);
}
#endif

static void test_fiber_callee_saved_registers(void **state)
{
    (void)state;
#ifndef REGS_N
    FIBER_SKIP("no register-level check for this architecture");
#else
    static struct regs r;
    memset(&r, 0, sizeof r);
    cio__stack s;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &s), CIO_OK);
    cio__fiber_ctx_thread(&r.thread);
    cio__fiber_ctx_init(&r.fiber, s.lo, s.size, regs_fiber, &r);
    uint64_t in[REGS_N], out[REGS_N];
    regs_pattern(in, 0xc3c3c3c3c3c3c3c2u);
    for (int round = 0; round < REGS_ROUNDS; round++) {
        memset(out, 0, sizeof out);
        /* The fiber runs its own values through all registers before it switches back. */
        cio_test_regs_switch(&r.thread, &r.fiber, in, out);
        for (size_t i = 0; i < REGS_N; i++) {
            if ((out[i] & regs_mask(i)) != (in[i] & regs_mask(i)))
                fail_msg("round %d: register %zu is %#llx, was %#llx", round, i, (unsigned long long)out[i],
                         (unsigned long long)in[i]);
        }
    }
    cio__fiber_switch(&r.thread, &r.fiber); /* the fiber checks its last round and exits */
    assert_int_equal(r.rounds, REGS_ROUNDS);
    if (r.bad != 0)
        fail_msg("the fiber saw %zu registers changed, first %zu", r.bad, r.bad_index);
    cio__fiber_ctx_release(&r.fiber);
    cio__stack_free(&s);
#endif
}

/* ==== many live values (integers and doubles) across switches, as the compiler keeps them ========= */

#define LIVE_STEPS 40

struct live {
    cio__fiber_ctx thread, x, y;
    uint64_t result_x, result_y;
    int done;
};

typedef void (*switch_fn)(cio__fiber_ctx *, cio__fiber_ctx *);

static void no_switch(cio__fiber_ctx *from, cio__fiber_ctx *to)
{
    (void)from;
    (void)to;
}

static volatile uint64_t live_seed_x = 0x9e3779b97f4a7c15u, live_seed_y = 0xd1b54a32d192ed03u;

/* Twelve integers and twelve doubles, all live across every call of sw. */
static __attribute__((noinline)) uint64_t live_compute(uint64_t seed, switch_fn sw, cio__fiber_ctx *self,
                                                       cio__fiber_ctx *other)
{
    uint64_t a = seed, b = seed ^ 0x1234, c = seed * 3, d = seed + 7, e = seed >> 3, f = ~seed;
    uint64_t g = seed * 5 + 1, h = seed ^ (seed >> 11), i = seed + 99, j = seed * 17, k = seed - 5, l = seed | 1;
    double da = (double)(seed & 0xffff) + 0.5, db = 1.25, dc = -3.5, dd = 7.0, de = 0.125, df = 1e3;
    double dg = 2.5, dh = -0.75, di = 11.0, dj = 0.3, dk = 5.5, dl = (double)(seed >> 48);
    for (int step = 0; step < LIVE_STEPS; step++) {
        a += b ^ l;
        b = b * 31 + c;
        c ^= d << 1;
        d += e;
        e = e * 7 + f;
        f ^= g >> 2;
        g += h;
        h = h * 13 + i;
        i ^= j;
        j += k * 3;
        k = k * 11 + l;
        l ^= a >> 5;
        da = da * 1.0001 + db;
        db = db * 0.999 - dc;
        dc += dd * 0.5;
        dd = dd * 1.01 - de;
        de += df * 1e-3;
        df = df * 0.99 + dg;
        dg += dh;
        dh = dh * 0.9 + di * 0.01;
        di += dj;
        dj = dj * 1.5 - dk * 0.1;
        dk += dl * 1e-6;
        dl = dl * 0.5 + da * 1e-3;
        sw(self, other);
    }
    double dsum = da + db + dc + dd + de + df + dg + dh + di + dj + dk + dl;
    uint64_t bits;
    memcpy(&bits, &dsum, sizeof bits);
    return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ bits;
}

static void live_x(void *arg)
{
    struct live *s = (struct live *)arg;
    s->result_x = live_compute(live_seed_x, cio__fiber_switch, &s->x, &s->y);
    s->done++;
    cio__fiber_exit(&s->x, &s->y);
}

static void live_y(void *arg)
{
    struct live *s = (struct live *)arg;
    s->result_y = live_compute(live_seed_y, cio__fiber_switch, &s->y, &s->x);
    s->done++;
    cio__fiber_exit(&s->y, &s->thread);
}

static void test_fiber_live_values(void **state)
{
    (void)state;
    static struct live s;
    memset(&s, 0, sizeof s);
    uint64_t want_x = live_compute(live_seed_x, no_switch, NULL, NULL);
    uint64_t want_y = live_compute(live_seed_y, no_switch, NULL, NULL);
    cio__stack sx, sy;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &sx), CIO_OK);
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &sy), CIO_OK);
    cio__fiber_ctx_thread(&s.thread);
    cio__fiber_ctx_init(&s.x, sx.lo, sx.size, live_x, &s);
    cio__fiber_ctx_init(&s.y, sy.lo, sy.size, live_y, &s);
    /* x and y alternate LIVE_STEPS times; x exits to y, y exits to the thread. */
    cio__fiber_switch(&s.thread, &s.x);
    assert_int_equal(s.done, 2);
    assert_int_equal(s.result_x, want_x);
    assert_int_equal(s.result_y, want_y);
    cio__fiber_ctx_release(&s.x);
    cio__fiber_ctx_release(&s.y);
    cio__stack_free(&sx);
    cio__stack_free(&sy);
}

/* ==== contexts released without ever running (a spawn that failed after init) ==================== */

static void never_runs(void *arg)
{
    (void)arg;
    abort();
}

static void test_fiber_release_unstarted(void **state)
{
    (void)state;
    cio__stack s;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &s), CIO_OK);
    for (int i = 0; i < 5000; i++) {
        cio__fiber_ctx ctx;
        cio__fiber_ctx_init(&ctx, s.lo, s.size, never_runs, NULL);
        cio__fiber_ctx_release(&ctx);
    }
    /* The stack still runs a fiber afterwards. */
    static struct ping p;
    memset(&p, 0, sizeof p);
    cio__fiber_ctx_thread(&p.thread);
    cio__fiber_ctx_init(&p.b, s.lo, s.size, ping_b, &p);
    p.token = 2;
    for (uint64_t i = 1; i <= PING_ROUNDS; i++) {
        cio__fiber_switch(&p.thread, &p.b);
        assert_int_equal(p.token, 3 * i);
        p.token += 2;
    }
    cio__fiber_switch(&p.thread, &p.b);
    assert_int_equal(p.finished, 1);
    assert_int_equal(p.bad, 0);
    cio__fiber_ctx_release(&p.b);
    cio__stack_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fiber_ping_pong),
        cmocka_unit_test(test_fiber_callee_saved_registers),
        cmocka_unit_test(test_fiber_live_values),
        cmocka_unit_test(test_fiber_release_unstarted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
