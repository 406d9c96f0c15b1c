/*
 * Fiber contexts: the architecture-independent half (the switch itself is in fiber_<arch>.c).
 *
 * Without sanitizers this file only fills in contexts: cio__fiber_switch is the assembly routine.
 * Under ASan or TSan it wraps the raw switch (cio__fiber_swap) with the runtime's fiber protocol:
 * - ASan: __sanitizer_start_switch_fiber(save, bottom, size) right before a switch, naming the
 *   stack being entered and saving the leaving context's fake stack in `save` (NULL when the
 *   context is left for good, so that ASan frees it); __sanitizer_finish_switch_fiber(save, &lo,
 *   &size) right after, in the resumed context, with the fake stack it saved, which reports the
 *   stack just left. A thread's own stack has no bounds of ours (stack_lo NULL): the first
 *   finish_switch after the thread context switched away reports them, and they are kept in
 *   asan_stack_lo/asan_stack_size for the switches back to it. For that, every switch records
 *   `from` in to->switched_from before it goes.
 *   A stack handed to a new context may still carry poisoned redzones of frames that died on it
 *   (a fiber that ended, a recycled stack): ctx_init unpoisons it.
 * - TSan: each new context gets __tsan_create_fiber; a thread context is the thread's current
 *   TSan fiber. __tsan_switch_to_fiber(to, 0) immediately before every switch, in the switching
 *   function itself (see below; flag 0: the switch orders what ran before it before what runs
 *   after it, as it does). Release destroys contexts created here, never a thread's.
 * A new context under a sanitizer starts in fiber_boot, which completes the switch and calls the
 * real entry(arg) stored in the context.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fiber.h"

#ifdef CIO__FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef CIO__FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif
/* Valgrind tells a stack switch from a big frame by the size of the jump of the stack pointer, and
 * gets it wrong for stacks mapped close together: registered stacks it knows. The client requests
 * are a few no-op instructions when not running under Valgrind (and only in init/release). */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CIO__FIBER_VALGRIND 1
#endif
#endif

_Static_assert(offsetof(cio__fiber_ctx, sp) == 0, "the assembly switch stores the stack pointer at offset 0");

void cio__fiber_ctx_thread(cio__fiber_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
#ifdef CIO__FIBER_TSAN
    ctx->tsan_fiber = __tsan_get_current_fiber();
#endif
}

#ifdef CIO__FIBER_ASAN
/* Right before a switch from `from` (save NULL when `from` is left for good) to `to`. */
static void asan_begin(cio__fiber_ctx *from, cio__fiber_ctx *to, void **save)
{
    to->switched_from = from;
    const void *lo = to->stack_lo != NULL ? (const void *)to->stack_lo : to->asan_stack_lo;
    size_t size = to->stack_lo != NULL ? to->stack_size : to->asan_stack_size;
    __sanitizer_start_switch_fiber(save, lo, size);
}

/* Right after a switch, in the resumed context `self`. */
static void asan_done(cio__fiber_ctx *self)
{
    const void *left_lo = NULL;
    size_t left_size = 0;
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &left_lo, &left_size);
    cio__fiber_ctx *prev = self->switched_from;
    if (prev != NULL && prev->stack_lo == NULL) {
        prev->asan_stack_lo = left_lo;
        prev->asan_stack_size = left_size;
    }
}
#endif

/* TSan keeps a shadow call stack per fiber: an instrumented function pushes on entry and pops on
 * return onto whichever fiber is current at that moment. So __tsan_switch_to_fiber is called only
 * from the function that performs the switch itself, never from a helper: a helper would push on
 * the old fiber and pop on the new one (underflowing a fresh fiber's stack). */

#ifdef CIO__FIBER_WRAPPED
static void fiber_boot(void *p)
{
    cio__fiber_ctx *self = (cio__fiber_ctx *)p;
#ifdef CIO__FIBER_ASAN
    asan_done(self);
#endif
    self->entry(self->arg);
    abort(); /* entry returned: a bug in the caller of cio__fiber_ctx_init */
}

void cio__fiber_switch(cio__fiber_ctx *from, cio__fiber_ctx *to)
{
#ifdef CIO__FIBER_ASAN
    asan_begin(from, to, &from->asan_fake_stack);
#endif
#ifdef CIO__FIBER_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    cio__fiber_swap(from, to);
#ifdef CIO__FIBER_ASAN
    asan_done(from);
#endif
}
#endif /* CIO__FIBER_WRAPPED */

void cio__fiber_ctx_init(cio__fiber_ctx *ctx, void *stack_lo, size_t size, void (*entry)(void *), void *arg)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->stack_lo = stack_lo;
    ctx->stack_size = size;
    ctx->entry = entry;
    ctx->arg = arg;
#ifdef CIO__FIBER_ASAN
    __asan_unpoison_memory_region(stack_lo, size);
#endif
#ifdef CIO__FIBER_TSAN
    ctx->tsan_fiber = __tsan_create_fiber(0);
#endif
#ifdef CIO__FIBER_VALGRIND
    ctx->valgrind_stack_id = VALGRIND_STACK_REGISTER(stack_lo, (char *)stack_lo + size);
#endif
#ifdef CIO__FIBER_WRAPPED
    cio__fiber_arch_init(ctx, stack_lo, size, fiber_boot, ctx);
#else
    cio__fiber_arch_init(ctx, stack_lo, size, entry, arg);
#endif
}

_Noreturn void cio__fiber_exit(cio__fiber_ctx *from, cio__fiber_ctx *to)
{
#ifdef CIO__FIBER_WRAPPED
#ifdef CIO__FIBER_ASAN
    asan_begin(from, to, NULL);
#endif
#ifdef CIO__FIBER_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    cio__fiber_swap(from, to);
#else
    cio__fiber_switch(from, to);
#endif
    abort(); /* something resumed a context that had exited */
}

void cio__fiber_ctx_release(cio__fiber_ctx *ctx)
{
#ifdef CIO__FIBER_TSAN
    if (ctx->stack_lo != NULL && ctx->tsan_fiber != NULL) {
        /* A TSan fiber destroyed without ever having been current is reported to crash newer TSan
         * runtimes after a few thousand (lalinsky/zio#598; not reproduced with gcc 12 or clang 14
         * here). That is a context released without having run: a spawn that failed after init.
         * Making it current for an instant (nothing runs meanwhile, and both switches are in this
         * one function) avoids it. */
        void *self = __tsan_get_current_fiber();
        __tsan_switch_to_fiber(ctx->tsan_fiber, 0);
        __tsan_switch_to_fiber(self, 0);
        __tsan_destroy_fiber(ctx->tsan_fiber);
    }
#endif
#ifdef CIO__FIBER_VALGRIND
    if (ctx->stack_lo != NULL)
        VALGRIND_STACK_DEREGISTER(ctx->valgrind_stack_id);
#endif
    ctx->stack_lo = NULL;
    ctx->tsan_fiber = NULL;
    ctx->asan_fake_stack = NULL;
    ctx->sp = NULL;
}
