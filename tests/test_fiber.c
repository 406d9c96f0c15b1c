/*
 * The fiber primitive of the Evented backend (src/evented/fiber.h): context switches, the register
 * contract, stack alignment, stacks with guard pages and their pool.
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

#define FIBER_STACK (64u * 1024u)

#define FIBER_SKIP(reason)                           \
    do {                                             \
        print_message("      skip: %s\n", (reason)); \
        skip();                                      \
    } while (0)

static size_t page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* ==== stacks ===================================================================================== */

static void test_stack_alloc(void **state)
{
    (void)state;
    cio__stack s;
    assert_int_equal(cio__stack_alloc(1, &s), CIO_OK);
    assert_int_equal(s.size, page());
    assert_int_equal((uintptr_t)s.lo % page(), 0);
    assert_ptr_equal((char *)s.map + page(), s.lo);
    assert_int_equal(s.map_size, 2 * page());
    memset(s.lo, 0xa5, s.size); /* all of it is writable */
    cio__stack_free(&s);
    assert_null(s.map);

    assert_int_equal(cio__stack_alloc(FIBER_STACK + 1, &s), CIO_OK);
    assert_int_equal(s.size, FIBER_STACK + page());
    cio__stack_free(&s);

    assert_int_equal(cio__stack_alloc(0, &s), CIO_E_INVALID_ARGUMENT);
    assert_null(s.map);
    assert_int_equal(cio__stack_alloc(SIZE_MAX, &s), CIO_E_SYSTEM_RESOURCES);
    assert_int_equal(cio__stack_alloc(SIZE_MAX - page(), &s), CIO_E_SYSTEM_RESOURCES);
    assert_null(s.map);
    cio__stack_free(&s); /* freeing an empty stack is harmless */
}

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

/* ==== stack alignment inside a fiber ================================================================ */

struct align {
    cio__fiber_ctx thread, fiber;
    uintptr_t frame_entry, frame_nested, frame_resumed, local;
};

static __attribute__((noinline)) uintptr_t frame_of_callee(void)
{
    return (uintptr_t)__builtin_frame_address(0);
}

static void align_fiber(void *arg)
{
    struct align *a = (struct align *)arg;
    _Alignas(16) volatile unsigned char local[16];
    local[0] = 1;
    a->local = (uintptr_t)local;
    a->frame_entry = (uintptr_t)__builtin_frame_address(0);
    a->frame_nested = frame_of_callee();
    cio__fiber_switch(&a->fiber, &a->thread);
    a->frame_resumed = frame_of_callee();
    cio__fiber_exit(&a->fiber, &a->thread);
}

static void test_fiber_stack_alignment(void **state)
{
    (void)state;
    cio__stack s;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &s), CIO_OK);
    /* Stack tops at every 8-byte offset: the context must align its first frame itself. */
    for (size_t cut = 0; cut < 64; cut += 8) {
        static struct align a;
        memset(&a, 0, sizeof a);
        cio__fiber_ctx_thread(&a.thread);
        cio__fiber_ctx_init(&a.fiber, s.lo, s.size - cut, align_fiber, &a);
        cio__fiber_switch(&a.thread, &a.fiber);
        cio__fiber_switch(&a.thread, &a.fiber);
        uintptr_t lo = (uintptr_t)s.lo, hi = lo + s.size - cut;
        assert_true(a.frame_entry > lo && a.frame_entry <= hi); /* riscv: the frame address is the CFA */
        assert_int_equal(a.frame_entry % 16, 0);
        assert_int_equal(a.frame_nested % 16, 0);
        assert_int_equal(a.frame_resumed % 16, 0);
        assert_int_equal(a.local % 16, 0);
        cio__fiber_ctx_release(&a.fiber);
    }
    cio__stack_free(&s);
}

/* ==== 1,000 fibers from the pool, at most SLOTS alive at once, stacks recycled ==================== */

#define MANY 1000
#define SLOTS 8

struct many;
struct many_fiber {
    cio__fiber_ctx ctx;
    cio__stack stack;
    struct many *m;
    unsigned id;
    bool live, done;
};

struct many {
    cio__fiber_ctx thread;
    struct many_fiber slot[SLOTS];
    uint64_t sum; /* what the fibers computed */
    unsigned ran; /* fibers that ran to completion */
};

static void many_entry(void *arg)
{
    struct many_fiber *f = (struct many_fiber *)arg;
    /* Touch a few KiB of the stack, and yield id % 4 times before finishing. */
    volatile unsigned char scratch[2048];
    memset((void *)scratch, (int)(f->id & 0xff), sizeof scratch);
    uint64_t v = f->id;
    for (unsigned y = 0; y < f->id % 4; y++) {
        cio__fiber_switch(&f->ctx, &f->m->thread);
        v += scratch[y * 100];
    }
    f->m->sum += v;
    f->m->ran++;
    f->done = true;
    cio__fiber_exit(&f->ctx, &f->m->thread);
}

static void test_fiber_many_from_pool(void **state)
{
    (void)state;
    static struct many m;
    memset(&m, 0, sizeof m);
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, SLOTS);
    cio__fiber_ctx_thread(&m.thread);
    unsigned started = 0, live = 0;
    uint64_t want = 0;
    void *seen_first = NULL;
    bool first_reused = false;
    while (started < MANY || live > 0) {
        for (int i = 0; i < SLOTS && started < MANY; i++) {
            struct many_fiber *f = &m.slot[i];
            if (f->live)
                continue;
            assert_int_equal(cio__stack_pool_get(&pool, &f->stack), CIO_OK);
            if (started == 0)
                seen_first = f->stack.lo;
            else if (f->stack.lo == seen_first)
                first_reused = true;
            f->m = &m;
            f->id = started++;
            f->live = true;
            f->done = false;
            want += f->id + (uint64_t)(f->id & 0xff) * (f->id % 4);
            cio__fiber_ctx_init(&f->ctx, f->stack.lo, f->stack.size, many_entry, f);
            live++;
        }
        for (int i = 0; i < SLOTS; i++) {
            struct many_fiber *f = &m.slot[i];
            if (!f->live)
                continue;
            cio__fiber_switch(&m.thread, &f->ctx);
            if (f->done) {
                cio__fiber_ctx_release(&f->ctx);
                cio__stack_pool_put(&pool, &f->stack);
                assert_null(f->stack.map);
                f->live = false;
                live--;
            }
        }
    }
    assert_int_equal(m.ran, MANY);
    assert_int_equal(m.sum, want);
    /* Never more than SLOTS stacks existed; every other fiber ran on a recycled one. */
    assert_true(pool.created <= SLOTS);
    assert_int_equal(pool.created + pool.reused, MANY);
    assert_true(first_reused);
    assert_true(pool.cached <= SLOTS);
    cio__stack_pool_destroy(&pool);
}

/* Whether the page at p is mapped: a range of /proc/self/maps holds it (read, not probed with a system
 * call on the address, which memcheck would report as unaddressable). */
static bool mapped(void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    uintptr_t a = (uintptr_t)p;
    bool found = false;
    unsigned long lo, hi;
    char line[512];
    while (!found && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
            found = true;
    fclose(f);
    return found;
}

/* The cap: past twice max_cached, a put trims the list to max_cached and the trimmed stacks are
 * unmapped; the rest are handed out again. */
static void test_stack_pool_cap(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 2);
    cio__stack s[6];
    void *at[6];
    for (int i = 0; i < 6; i++) {
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
        at[i] = s[i].lo;
    }
    assert_int_equal(pool.created, 6);
    for (int i = 0; i < 4; i++)
        cio__stack_pool_put(&pool, &s[i]);
    assert_int_equal(pool.cached, 4); /* up to 2 * max_cached: kept */
    assert_int_equal(pool.trimmed, 0);
    cio__stack_pool_put(&pool, &s[4]);
    assert_int_equal(pool.cached, 2); /* crossed: trimmed to max_cached */
    assert_int_equal(pool.trimmed, 3);
    int gone = 0;
    for (int i = 0; i < 5; i++)
        gone += !mapped(at[i]);
    assert_int_equal(gone, 3);
    assert_true(mapped(at[5]));
    cio__stack_pool_put(&pool, &s[5]);
    for (int i = 0; i < 4; i++)
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
    assert_int_equal(pool.reused, 3);
    assert_int_equal(pool.created, 7);
    for (int i = 0; i < 4; i++)
        cio__stack_pool_put(&pool, &s[i]);
    cio__stack_pool_destroy(&pool);
}

/* Whether the page holding p is resident (committed). */
static bool resident(const void *p)
{
    uintptr_t pg = (uintptr_t)p & ~(uintptr_t)(page() - 1);
    unsigned char vec[1] = {0};
    assert_int_equal(mincore((void *)pg, page(), (void *)vec), 0);
    return (vec[0] & 1) != 0;
}

/* The pool commits no page of a stack ahead of its fiber, in the slabs it maps itself and in those its
 * keeper prepares: the first page fault of a stack is taken by the thread that runs on it (for a
 * burst of fibers, spread over the loops that run them; see stack.c). Every stack is still guarded. */
#define COMMIT_STACKS 400 /* past the slabs of 4 .. 64 the pool maps itself (124 stacks): the keeper starts */
static void test_stack_pool_commits_nothing(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 2 * COMMIT_STACKS);
    cio__stack *s = (cio__stack *)calloc(2 * COMMIT_STACKS, sizeof *s);
    assert_non_null(s);
    for (size_t i = 0; i < COMMIT_STACKS; i++)
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
    for (int i = 0; i < 500; i++) { /* the keeper's slabs */
        pthread_mutex_lock(&pool.lock);
        size_t prepared = pool.prepared;
        pthread_mutex_unlock(&pool.lock);
        if (prepared > 0)
            break;
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    for (size_t i = COMMIT_STACKS; i < 2 * COMMIT_STACKS; i++)
        assert_int_equal(cio__stack_pool_get(&pool, &s[i]), CIO_OK);
    pthread_mutex_lock(&pool.lock);
    size_t prepared = pool.prepared;
    pthread_mutex_unlock(&pool.lock);
    size_t committed = 0;
    for (size_t i = 0; i < 2 * COMMIT_STACKS; i++)
        committed += resident((char *)s[i].lo + s[i].size - 1);
    for (size_t i = 0; i < 2 * COMMIT_STACKS; i++) { /* still usable, and used: resident now */
        ((volatile char *)s[i].lo)[s[i].size - 1] = 1;
        assert_true(resident((char *)s[i].lo + s[i].size - 1));
    }
    for (size_t i = 0; i < 2 * COMMIT_STACKS; i++)
        cio__stack_pool_put(&pool, &s[i]);
    free(s);
    cio__stack_pool_destroy(&pool);
    if (committed != 0)
        fail_msg("%zu of %d fresh stacks had their top page committed ahead", committed, 2 * COMMIT_STACKS);
    if (prepared == 0)
        fail_msg("the keeper prepared no slab");
}

/* Whether MADV_POPULATE_WRITE commits pages here. */
static bool populate_commits(void)
{
    void *m = mmap(NULL, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    bool yes = madvise(m, page(), 23 /* MADV_POPULATE_WRITE */) == 0 && resident(m);
    munmap(m, page());
    if (!yes)
        print_message(
            "MADV_POPULATE_WRITE commits nothing here (qemu-user ignores it; before Linux 5.14 it is refused)\n");
    return yes;
}

/* Regions for fiber blocks: the first is mapped by the caller (nothing committed, no keeper started);
 * once the caller says demand goes on, the keeper prepares the next ones with every page committed
 * (so the fibers' spawner takes no fault on them), zeroed and writable; they may outlive the pool. */
static void test_stack_pool_regions(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 4);
    unsigned char *first = (unsigned char *)cio__stack_pool_region(&pool, false);
    assert_non_null(first);
    assert_false(resident(first));
    assert_int_equal(pool.keeper_state, 0);
    unsigned char *second = (unsigned char *)cio__stack_pool_region(&pool, true);
    assert_non_null(second);
    size_t prepared = 0;
    for (int i = 0; i < 500 && prepared == 0; i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
        pthread_mutex_lock(&pool.lock);
        prepared = pool.regions_prepared;
        pthread_mutex_unlock(&pool.lock);
    }
    if (prepared == 0)
        fail_msg("the keeper prepared no region");
    unsigned char *third = (unsigned char *)cio__stack_pool_region(&pool, true);
    assert_non_null(third);
    size_t committed = 0;
    for (size_t off = 0; off < CIO__STACK_REGION; off += page())
        committed += resident(third + off);
    for (size_t off = 0; off < CIO__STACK_REGION; off += 512) {
        assert_int_equal(third[off], 0);
        third[off] = 1;
    }
    cio__stack_pool_destroy(&pool);
    third[0] = 2; /* still mapped: regions are the caller's until given back */
    cio__stack_pool_region_free(first);
    cio__stack_pool_region_free(second);
    cio__stack_pool_region_free(third);
    if (committed != CIO__STACK_REGION / page()) {
        if (!populate_commits())
            skip(); /* qemu-user takes MADV_POPULATE_WRITE and ignores it; a kernel before 5.14 refuses it */
        fail_msg("%zu of %zu pages of a prepared region committed", committed, (size_t)(CIO__STACK_REGION / page()));
    }
}

/* ==== the pool from two threads, and a fiber resumed on another thread ============================ */

#define POOL_THREAD_ROUNDS 2000

struct pool_thread {
    cio__stack_pool *pool;
    unsigned bad;
};

static void *pool_thread_main(void *arg)
{
    struct pool_thread *t = (struct pool_thread *)arg;
    for (int i = 0; i < POOL_THREAD_ROUNDS; i++) {
        cio__stack s;
        if (cio__stack_pool_get(t->pool, &s) != CIO_OK) {
            t->bad++;
            continue;
        }
        unsigned char *top = (unsigned char *)s.lo + s.size - 64;
        top[0] = (unsigned char)i;
        *(unsigned char *)s.lo = (unsigned char)i;
        if (top[0] != (unsigned char)i)
            t->bad++;
        cio__stack_pool_put(t->pool, &s);
    }
    return NULL;
}

static void test_stack_pool_threads(void **state)
{
    (void)state;
    cio__stack_pool pool;
    cio__stack_pool_init(&pool, FIBER_STACK, 4);
    struct pool_thread t[2] = {{&pool, 0}, {&pool, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, pool_thread_main, &t[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(t[0].bad + t[1].bad, 0);
    assert_int_equal(pool.created + pool.reused, 2 * POOL_THREAD_ROUNDS);
    assert_true(pool.created <= 2 * POOL_THREAD_ROUNDS);
    assert_true(pool.cached <= 4);
    cio__stack_pool_destroy(&pool);
}

/* A fiber started on one thread and resumed on another (how work stealing moves fibers). */
struct migrate {
    cio__fiber_ctx fiber;
    cio__fiber_ctx *sched; /* the context of the thread running the fiber now */
    uint64_t value;
    int steps;
};

static void migrate_fiber(void *arg)
{
    struct migrate *g = (struct migrate *)arg;
    for (int i = 0; i < 4; i++) {
        g->value = g->value * 3 + 1;
        g->steps++;
        cio__fiber_switch(&g->fiber, g->sched);
    }
    g->steps++;
    cio__fiber_exit(&g->fiber, g->sched);
}

static void *migrate_thread(void *arg)
{
    struct migrate *g = (struct migrate *)arg;
    cio__fiber_ctx me;
    cio__fiber_ctx_thread(&me);
    g->sched = &me;
    cio__fiber_switch(&me, &g->fiber);
    cio__fiber_ctx_release(&me);
    return NULL;
}

static void test_fiber_migrates_between_threads(void **state)
{
    (void)state;
    static struct migrate g;
    memset(&g, 0, sizeof g);
    cio__stack s;
    assert_int_equal(cio__stack_alloc(FIBER_STACK, &s), CIO_OK);
    cio__fiber_ctx_init(&g.fiber, s.lo, s.size, migrate_fiber, &g);
    /* Five threads in turn each run the fiber up to its next switch (joining orders them). */
    for (int i = 0; i < 5; i++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, migrate_thread, &g), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(g.steps, i + 1);
    }
    assert_int_equal(g.value, 40); /* 0 → 1 → 4 → 13 → 40 */
    cio__fiber_ctx_release(&g.fiber);
    cio__stack_free(&s);
}

/* ==== stack overflow hits the guard page ============================================================ */

/* Shared with the child process. */
struct overflow_report {
    uintptr_t stack_lo;
    uintptr_t lowest;     /* the lowest frame the recursion reached */
    uintptr_t fault_addr; /* si_addr of the SIGSEGV */
    int faulted;
};

static struct overflow_report *overflow_shared;
static volatile int overflow_limit = 1 << 30;

static __attribute__((noinline)) int overflow_recurse(int depth)
{
    volatile unsigned char pad[200];
    pad[0] = (unsigned char)depth;
    overflow_shared->lowest = (uintptr_t)pad;
    if (depth >= overflow_limit)
        return pad[0];
    return overflow_recurse(depth + 1) + pad[0];
}

static void overflow_fiber(void *arg)
{
    (void)arg;
    overflow_recurse(0);
    _exit(3); /* the recursion ended: the guard page did not stop it */
}

static void overflow_segv(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    overflow_shared->fault_addr = (uintptr_t)info->si_addr;
    overflow_shared->faulted = 1;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL); /* returning re-runs the access, which now kills the process */
}

static void test_fiber_stack_overflow_hits_guard(void **state)
{
    (void)state;
    overflow_shared = (struct overflow_report *)mmap(NULL, sizeof *overflow_shared, PROT_READ | PROT_WRITE,
                                                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(overflow_shared != MAP_FAILED);
    memset(overflow_shared, 0, sizeof *overflow_shared);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(overflow_shared, sizeof *overflow_shared);
        FIBER_SKIP("fork failed: cannot run the overflow in a child process");
    }
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        static unsigned char altstack[64 * 1024];
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = altstack;
        ss.ss_size = sizeof altstack;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = overflow_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGSEGV, &sa, NULL) != 0)
            _exit(4);
        cio__stack s;
        if (cio__stack_alloc(FIBER_STACK, &s) != CIO_OK)
            _exit(5);
        overflow_shared->stack_lo = (uintptr_t)s.lo;
        cio__fiber_ctx thread, fiber;
        cio__fiber_ctx_thread(&thread);
        cio__fiber_ctx_init(&fiber, s.lo, s.size, overflow_fiber, NULL);
        cio__fiber_switch(&thread, &fiber);
        _exit(6);
    }
    int status = 0;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    assert_int_equal(w, pid);
    struct overflow_report r = *overflow_shared;
    munmap(overflow_shared, sizeof *overflow_shared);
    if (WIFEXITED(status))
        fail_msg("the child exited with %d instead of dying of SIGSEGV", WEXITSTATUS(status));
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
    /* It ran all the way down, and the fault was in the guard page right below the stack. */
    assert_true(r.faulted);
    assert_true(r.lowest >= r.stack_lo && r.lowest < r.stack_lo + 4096);
    assert_true(r.fault_addr < r.stack_lo && r.fault_addr >= r.stack_lo - page());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_alloc),
        cmocka_unit_test(test_fiber_ping_pong),
        cmocka_unit_test(test_fiber_callee_saved_registers),
        cmocka_unit_test(test_fiber_live_values),
        cmocka_unit_test(test_fiber_stack_alignment),
        cmocka_unit_test(test_fiber_release_unstarted),
        cmocka_unit_test(test_fiber_many_from_pool),
        cmocka_unit_test(test_stack_pool_cap),
        cmocka_unit_test(test_stack_pool_commits_nothing),
        cmocka_unit_test(test_stack_pool_regions),
        cmocka_unit_test(test_stack_pool_threads),
        cmocka_unit_test(test_fiber_migrates_between_threads),
        cmocka_unit_test(test_fiber_stack_overflow_hits_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
