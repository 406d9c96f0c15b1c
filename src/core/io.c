/*
 * The public Io wrappers over the vtable slots (cio/io.h), and timeouts.
 * Futures: the first await/cancel consumes the backend future (any = NULL) and caches the result,
 * so both are idempotent; a future that ran inline never reaches the backend.
 */
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/io.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "overflow.h"

cio_timeout cio_timeout_ns(int64_t ns)
{
    return (cio_timeout){CIO_TIMEOUT_KIND_DURATION, CIO_CLOCK_AWAKE, ns < 0 ? 0 : ns};
}

cio_timeout cio_timeout_ms(int64_t ms)
{
    if (ms < 0)
        ms = 0;
    if (ms > INT64_MAX / 1000000)
        ms = INT64_MAX / 1000000;
    return cio_timeout_ns(ms * 1000000);
}

cio_timeout cio_timeout_duration(cio_clock clock, int64_t ns)
{
    return (cio_timeout){CIO_TIMEOUT_KIND_DURATION, clock, ns < 0 ? 0 : ns};
}

cio_timeout cio_timeout_deadline(cio_clock clock, cio_timestamp deadline)
{
    return (cio_timeout){CIO_TIMEOUT_KIND_DEADLINE, clock, deadline.ns};
}

cio_timeout cio__timeout_to_deadline(cio_io io, cio_timeout timeout)
{
    if (timeout.kind != CIO_TIMEOUT_KIND_DURATION)
        return timeout;
    cio_timestamp now = cio_now(io, timeout.clock);
    now.ns = cio__deadline_after(now.ns, timeout.ns);
    return cio_timeout_deadline(timeout.clock, now);
}

cio_err cio__run_inline(cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    _Alignas(CIO_CONTEXT_ALIGN) unsigned char local[256];
    if (ctx_size <= sizeof local) {
        if (ctx_size > 0)
            memcpy(local, ctx, ctx_size);
        return fn(local);
    }
    /* malloc + manual alignment: posix_memalign/aligned_alloc are not on every C library here. */
    unsigned char *raw = (unsigned char *)CIO__SYS(malloc, run_inline)(ctx_size + CIO_CONTEXT_ALIGN - 1);
    if (raw == NULL)
        return fn((void *)(uintptr_t)ctx);
    uintptr_t at = ((uintptr_t)raw + CIO_CONTEXT_ALIGN - 1) & ~(uintptr_t)(CIO_CONTEXT_ALIGN - 1);
    memcpy((void *)at, ctx, ctx_size);
    cio_err r = fn((void *)at);
    free(raw);
    return r;
}

/* Futures' generations: every backend's struct cio_any_future starts with an _Atomic(uint32_t), set
 * here when the future is made and cleared here before the backend's await/cancel frees the block.
 * A stale copy of a future (another copy was awaited) then finds 0, or a new task's generation once
 * the block is reused, instead of its own. (A block the backend gave back to malloc cannot be
 * checked without touching freed memory; blocks of small contexts are recycled, not freed.) */
static _Atomic(uint32_t) next_gen;

static _Atomic(uint32_t) *gen_of(struct cio_any_future *any)
{
    return (_Atomic(uint32_t) *)(void *)any;
}

static cio_future made(struct cio_any_future *any, cio_err result)
{
    uint32_t gen = 0;
    if (any != NULL) {
        do
            gen = atomic_fetch_add_explicit(&next_gen, 1, memory_order_relaxed) + 1;
        while (gen == 0);
        atomic_store_explicit(gen_of(any), gen, memory_order_relaxed);
    }
    return (cio_future){any, result, gen};
}

/* The backend future of *future, consumed (any = NULL), or NULL when it was consumed already. */
static struct cio_any_future *consume(cio_future *future, const char *func)
{
    if (future == NULL)
        cio__misuse_abort(func, "the future is NULL");
    struct cio_any_future *any = future->any;
    if (any == NULL)
        return NULL;
    if (future->gen == 0 || atomic_load_explicit(gen_of(any), memory_order_relaxed) != future->gen)
        cio__misuse_abort(func, "future awaited through a stale copy (another copy of this cio_future "
                                "was awaited or canceled already; await each future once, through one copy)");
    atomic_store_explicit(gen_of(any), 0, memory_order_relaxed);
    future->any = NULL;
    return any;
}

/* ---- spawning: the site of the call (cio/io.h's macros), kept for the slot (overflow.h) ---- */

static _Thread_local const char *spawn_site;

const char *cio__spawn_site(void)
{
    return spawn_site;
}

/* Runs the spawn `call` with spawn_site set to `site` for it (and only for it: a task it runs
 * inline spawns with sites of its own). */
#define WITH_SITE(site, call)            \
    do {                                 \
        const char *outer_ = spawn_site; \
        spawn_site = (site);             \
        call;                            \
        spawn_site = outer_;             \
    } while (0)

/* CIO__NULL_ARG naming the public function rather than the helper below it. */
#ifdef NDEBUG
#define NULL_ARG_OF(func, what) ((cio_err)CIO_E_INVALID_ARGUMENT)
#else
#define NULL_ARG_OF(func, what) cio__invalid_arg(func, "NULL " what)
#endif

/* The checks of a task to spawn (for the public function `func`): fn, and context unless
 * context_size is 0. */
static cio_err check_task(const char *func, cio_task_fn fn, const void *context, size_t context_size)
{
    (void)func; /* release builds name nothing */
    if (fn == NULL)
        return NULL_ARG_OF(func, "fn");
    if (context == NULL && context_size != 0)
        return NULL_ARG_OF(func, "context (with context_size > 0)");
    return CIO_OK;
}

static cio_future async_here(cio_io io, cio_task_fn fn, const void *context, size_t context_size)
{
    cio_err err = check_task("cio_async", fn, context, context_size);
    if (err != CIO_OK)
        return made(NULL, err);
    cio_err inline_result = CIO_OK;
    struct cio_any_future *any = CIO__VT(io)->async(io.userdata, fn, context, context_size, &inline_result);
    return made(any, any != NULL ? CIO_OK : inline_result);
}

cio_future(cio_async)(cio_io io, cio_task_fn fn, const void *context, size_t context_size)
{
    return cio_async_at(NULL, io, fn, context, context_size);
}

cio_future cio_async_at(const char *site, cio_io io, cio_task_fn fn, const void *context, size_t context_size)
{
    cio_future f;
    WITH_SITE(site, f = async_here(io, fn, context, context_size));
    return f;
}

static cio_err concurrent_here(cio_io io, cio_task_fn fn, const void *context, size_t context_size, cio_future *out)
{
    if (out == NULL)
        return NULL_ARG_OF("cio_concurrent", "out");
    *out = made(NULL, CIO_E_INVALID_ARGUMENT);
    CIO__TRY(check_task("cio_concurrent", fn, context, context_size));
    struct cio_any_future *any = NULL;
    cio_err err = CIO__VT(io)->concurrent(io.userdata, fn, context, context_size, &any);
    *out = made(err == CIO_OK ? any : NULL, err);
    return CIO__IN_SET(concurrent, err);
}

cio_err(cio_concurrent)(cio_io io, cio_task_fn fn, const void *context, size_t context_size, cio_future *out)
{
    return cio_concurrent_at(NULL, io, fn, context, context_size, out);
}

cio_err cio_concurrent_at(const char *site, cio_io io, cio_task_fn fn, const void *context, size_t context_size,
                          cio_future *out)
{
    cio_err err;
    WITH_SITE(site, err = concurrent_here(io, fn, context, context_size, out));
    return err;
}

cio_err cio_await(cio_io io, cio_future *future)
{
    struct cio_any_future *any = consume(future, "cio_await");
    if (any != NULL)
        future->result = CIO__VT(io)->await(io.userdata, any);
    return future->result;
}

cio_err cio_cancel(cio_io io, cio_future *future)
{
    struct cio_any_future *any = consume(future, "cio_cancel");
    if (any != NULL)
        future->result = CIO__VT(io)->cancel(io.userdata, any);
    return future->result;
}

cio_err cio_check_cancel(cio_io io)
{
    return CIO__VT(io)->check_cancel(io.userdata);
}

void cio_recancel(cio_io io)
{
    CIO__VT(io)->recancel(io.userdata);
}

cio_cancel_protection cio_swap_cancel_protection(cio_io io, cio_cancel_protection prot)
{
    return CIO__VT(io)->swap_cancel_protection(io.userdata, prot);
}

static void group_async_here(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size)
{
    if (group == NULL || fn == NULL || (context == NULL && context_size != 0)) {
        (void)NULL_ARG_OF("cio_group_async", "group, fn or context (the task is not added)");
        return;
    }
    CIO__VT(io)->group_async(io.userdata, group, fn, context, context_size);
}

void(cio_group_async)(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size)
{
    cio_group_async_at(NULL, io, group, fn, context, context_size);
}

void cio_group_async_at(const char *site, cio_io io, cio_group *group, cio_task_fn fn, const void *context,
                        size_t context_size)
{
    WITH_SITE(site, group_async_here(io, group, fn, context, context_size));
}

static cio_err group_concurrent_here(cio_io io, cio_group *group, cio_task_fn fn, const void *context,
                                     size_t context_size)
{
    if (group == NULL)
        return NULL_ARG_OF("cio_group_concurrent", "group");
    CIO__TRY(check_task("cio_group_concurrent", fn, context, context_size));
    return CIO__VT(io)->group_concurrent(io.userdata, group, fn, context, context_size);
}

cio_err(cio_group_concurrent)(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size)
{
    return cio_group_concurrent_at(NULL, io, group, fn, context, context_size);
}

cio_err cio_group_concurrent_at(const char *site, cio_io io, cio_group *group, cio_task_fn fn, const void *context,
                                size_t context_size)
{
    cio_err err;
    WITH_SITE(site, err = group_concurrent_here(io, group, fn, context, context_size));
    return err;
}

cio_err cio_group_await(cio_io io, cio_group *group)
{
    CIO__REQUIRE(group);
    if (atomic_load_explicit(&group->token, memory_order_acquire) == 0)
        return CIO_OK;
    return CIO__VT(io)->group_await(io.userdata, group);
}

void cio_group_cancel(cio_io io, cio_group *group)
{
    if (group == NULL)
        CIO__MISUSE("the group is NULL");
    if (atomic_load_explicit(&group->token, memory_order_acquire) == 0)
        return;
    CIO__VT(io)->group_cancel(io.userdata, group);
}

cio_err cio_futex_wait(cio_io io, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout)
{
    return CIO__VT(io)->futex_wait(io.userdata, ptr, expected, timeout);
}

void cio_futex_wait_uncancelable(cio_io io, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    CIO__VT(io)->futex_wait_uncancelable(io.userdata, ptr, expected);
}

void cio_futex_wake(cio_io io, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters != 0)
        CIO__VT(io)->futex_wake(io.userdata, ptr, max_waiters);
}

cio_timestamp cio_now(cio_io io, cio_clock clock)
{
    return CIO__VT(io)->now(io.userdata, clock);
}

cio_err cio_sleep(cio_io io, cio_timeout timeout)
{
    return CIO__VT(io)->sleep(io.userdata, timeout);
}

void cio_random(cio_io io, void *buf, size_t len)
{
    CIO__VT(io)->random(io.userdata, buf, len);
}

cio_err cio_random_secure(cio_io io, void *buf, size_t len)
{
    return CIO__VT(io)->random_secure(io.userdata, buf, len);
}
