/*
 * Fibers of the Evented backend: execution contexts with their own stacks, switched in user space.
 *
 * The contract of a switch (the per-architecture files fiber_<arch>.c state the details):
 * - cio__fiber_switch(from, to) is an ordinary function call for the code around it: it preserves
 *   exactly what the C ABI says a call preserves (the callee-saved registers, the stack pointer)
 *   plus the floating-point control state (rounding mode, …), which is per context like a
 *   thread's. Everything else is clobbered, as by any call. Floating-point status flags (sticky
 *   exceptions) are not per context: after a switch they are unspecified, as the ABIs allow.
 * - Nothing thread-specific is saved: the thread pointer (fs on x86_64, tpidr_el0 on aarch64, tp on
 *   riscv64) stays the running thread's. A context switched out on one thread may be resumed on
 *   another (the scheduler must order the two with a lock or an atomic), but then code must not
 *   keep the address of a thread-local variable across the switch (compilers may cache it in a
 *   register: reload thread-locals through a non-inlined function after any switch).
 * - A context is resumed at most once per switch away from it, by one thread. Switching to the
 *   running context, or to one whose stack was freed, is undefined.
 * - A new context starts in entry(arg) with the stack pointer aligned as the ABI requires at a
 *   function's entry (16 bytes on all three) and the caller's floating-point control state as of
 *   cio__fiber_ctx_init. entry never returns: it ends with cio__fiber_exit (or a switch away after
 *   which nobody resumes it); if it does return, the process traps (ud2/brk/unimp, or abort()
 *   under a sanitizer), it never runs into garbage.
 *
 * Stacks come from mmap with a PROT_NONE guard page below them (stack.c); running off the bottom of
 * one faults (SIGSEGV) as long as no single frame skips more than the guard page (frames are far
 * smaller than 4 KiB in cio; code with huge frames needs -fstack-clash-protection, which probes).
 * On Windows (fiber_x86_64_windows.c, stack_windows.c) they come from VirtualAlloc with a reserved,
 * never committed guard page below them (an access violation), and the switch also swaps the TIB's
 * stack bounds, so that the OS's unwinder and stack probes see the running fiber's stack.
 *
 * Sanitizers: under ASan and TSan every switch tells the runtime (fiber.c); the arch files then
 * export the raw switch as cio__fiber_swap and fiber.c wraps it. Without a sanitizer the raw switch
 * is cio__fiber_switch itself (no wrapper, no extra call).
 */
#ifndef CIO_EVENTED_FIBER_H
#define CIO_EVENTED_FIBER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "cio/errors.h"
#include "cio/target.h"
#include "../core/os_mutex.h" /* by path: some bench programs see only src/evented */

/* Which sanitizer runtime must be told about switches (both gcc's and clang's spellings). */
#if defined(__SANITIZE_ADDRESS__)
#define CIO__FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define CIO__FIBER_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(CIO__FIBER_ASAN)
#define CIO__FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(CIO__FIBER_TSAN)
#define CIO__FIBER_TSAN 1
#endif
#endif
#if defined(CIO__FIBER_ASAN) || defined(CIO__FIBER_TSAN)
#define CIO__FIBER_WRAPPED 1
#endif

/* For the fiber_<arch>.c assembly: unwrapped, cio__fiber_switch is a second label on
 * cio__fiber_swap; wrapped, fiber.c defines it around the sanitizer calls. "%function" is the
 * spelling every ELF assembler takes (on ARM '@' starts a comment). */
#ifdef CIO__FIBER_WRAPPED
#define CIO__SWITCH_ALIAS ""
#define CIO__SWITCH_ALIAS_END ""
#else
#define CIO__SWITCH_ALIAS                  \
    ".globl cio__fiber_switch\n"           \
    ".type cio__fiber_switch, %function\n" \
    "cio__fiber_switch:\n"
#define CIO__SWITCH_ALIAS_END ".size cio__fiber_switch, .-cio__fiber_switch\n"
#endif

typedef struct cio__fiber_ctx {
    void *sp; /* saved stack pointer while switched out (must stay the first field) */
    /* sanitizer bookkeeping (unused fields cost nothing): */
    void *stack_lo;
    size_t stack_size; /* this context's stack (NULL/0 for a thread's own stack) */
    void *asan_fake_stack;
    void *tsan_fiber;
    /* ASan: the bounds of a thread's own stack, learnt when it first switches away (stack_lo stays
     * NULL); the context that switched to this one (written by the switcher before it switches). */
    const void *asan_stack_lo;
    size_t asan_stack_size;
    struct cio__fiber_ctx *switched_from;
    /* Under a sanitizer a new context starts in fiber.c, which then calls entry(arg). */
    void (*entry)(void *);
    void *arg;
    unsigned valgrind_stack_id; /* when built with <valgrind/valgrind.h> */
} cio__fiber_ctx;

/* Makes `ctx` describe the calling thread's own stack (the scheduler context of a loop thread). */
void cio__fiber_ctx_thread(cio__fiber_ctx *ctx);
/* Prepares `ctx` so that the first switch to it runs entry(arg) on [stack_lo, stack_lo+size). entry
 * must never return (it ends by switching away for good). */
void cio__fiber_ctx_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg);
/* Saves the current context into `from` and resumes `to`; returns when something switches back to `from`. */
void cio__fiber_switch(cio__fiber_ctx *from, cio__fiber_ctx *to);
/* Switches away for good: like cio__fiber_switch, but `from` will never be resumed (ASan frees its
 * fake stack). A fiber's entry ends with this. Then the scheduler releases `from`. */
_Noreturn void cio__fiber_exit(cio__fiber_ctx *from, cio__fiber_ctx *to);
/* Call once when a context will never be switched to again (frees sanitizer state). */
void cio__fiber_ctx_release(cio__fiber_ctx *ctx);

/* ---- the per-architecture layer (fiber_<arch>.c), used by fiber.c only ---- */

/* The raw switch: saves the callee-saved state on the current stack, stores the stack pointer in
 * from->sp, loads to->sp and restores what is saved there. */
void cio__fiber_swap(cio__fiber_ctx *from, cio__fiber_ctx *to);
/* Writes the first frame at the top of [stack_lo, stack_lo+size) so that cio__fiber_swap to ctx
 * calls entry(arg); sets ctx->sp. */
void cio__fiber_arch_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg);

/* ---- stacks (stack.c) ---- */

/* Windows: the guard below every stack (stack_windows.c), which the switch's DeallocationStack
 * includes (fiber_x86_64_windows.c): one page of x64 Windows. */
#define CIO__STACK_GUARD 4096u

typedef struct cio__stack {
    void *lo;
    size_t size;
    void *map;
    size_t map_size;
} cio__stack;
/* mmap(size rounded up to pages + one PROT_NONE guard page below); errors: CIO_E_SYSTEM_RESOURCES
 * (and CIO_E_INVALID_ARGUMENT for size 0). [lo, lo+size) is usable; lo is page-aligned. */
cio_err cio__stack_alloc(size_t size, cio__stack *out);
void cio__stack_free(cio__stack *s);

/* A thread-safe free list of stacks of one size, capped at `max_cached`. Cached stacks are linked
 * through a node at their top (the part of a stack every fiber touches, so caching commits no
 * page that running did not). Once demand fills whole slabs, a thread of the pool's own (the keeper,
 * stack.c) prepares slabs ahead and unmaps trimmed stacks; destroy joins it. The counters are for
 * tests and statistics; read them under `lock` or while no thread uses the pool. */
#define CIO__STACK_REGION (64u * 1024u)
#define CIO__STACK_REGIONS_MAX 2u
typedef struct cio__stack_pool {
    cio__mutex lock;
    struct cio__stack_node *head; /* cached stacks */
    size_t cached;                /* how many are on the list */
    size_t stack_size;            /* requested usable size of every stack */
    size_t max_cached;
    size_t created;    /* stacks mmapped by get */
    size_t reused;     /* gets served from the list */
    size_t trimmed;    /* stacks unmapped by trims */
    void *carve;       /* the next stack of the current slab */
    size_t carve_left; /* stacks left in it */
    size_t slab_next;  /* stacks in the next slab */
    bool carve_ready;  /* the current slab came prepared (guards installed) */
    /* the keeper thread (stack.c; started once demand fills whole slabs): */
    cio__cond wake; /* the keeper waits on it, under lock */
    pthread_t keeper;
    unsigned char keeper_state; /* 0 not started, 1 running, 2 could not start */
    bool keeper_stop, want;     /* stop: destroy; want: prepare a slab */
    void *ready[2];             /* prepared slabs of stack.c's SLAB_MAX stacks, nready of them */
    unsigned nready;
    size_t prepared;               /* stacks prepared by the keeper */
    struct cio__stack_node *unmap; /* trimmed stacks the keeper is to unmap, unmap_n of them */
    size_t unmap_n;
    /* regions for fiber blocks (cio__stack_pool_region), committed by the keeper ahead: */
    void *regions[CIO__STACK_REGIONS_MAX];
    unsigned nregions;
    bool want_region;        /* the keeper is to prepare regions */
    size_t regions_prepared; /* regions the keeper prepared */
} cio__stack_pool;
void cio__stack_pool_init(cio__stack_pool *p, size_t stack_size, size_t max_cached);
/* A region of CIO__STACK_REGION bytes (page-aligned, zeroed, read-write) to carve fiber blocks from:
 * one the keeper mapped and committed ahead when it has one, else mapped now (its pages then faulted
 * in by whoever writes them); NULL without memory. again: the caller used up a region before, so
 * demand goes on: the keeper (started if need be) prepares the next ones off the caller's thread.
 * Given back with cio__stack_pool_region_free (not tied to the pool: may outlive it). */
void *cio__stack_pool_region(cio__stack_pool *p, bool again);
void cio__stack_pool_region_free(void *region);
cio_err cio__stack_pool_get(cio__stack_pool *p, cio__stack *out);
/* Gives `s` back (cached; past 2 * max_cached cached, the list is trimmed to max_cached); *s is zeroed. */
void cio__stack_pool_put(cio__stack_pool *p, cio__stack *s);
/* Frees every cached stack. Stacks still out must be given to cio__stack_free, not to the pool. */
void cio__stack_pool_destroy(cio__stack_pool *p);

#endif /* CIO_EVENTED_FIBER_H */
