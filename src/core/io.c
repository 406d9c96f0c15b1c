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

cio_future cio_async(cio_io io, cio_task_fn fn, const void *context, size_t context_size)
{
    cio_err inline_result = CIO_OK;
    struct cio_any_future *any = io.vtable->async(io.userdata, fn, context, context_size, &inline_result);
    return (cio_future){any, any != NULL ? CIO_OK : inline_result};
}

cio_err cio_concurrent(cio_io io, cio_task_fn fn, const void *context, size_t context_size, cio_future *out)
{
    struct cio_any_future *any = NULL;
    cio_err err = io.vtable->concurrent(io.userdata, fn, context, context_size, &any);
    *out = (cio_future){err == CIO_OK ? any : NULL, err};
    return CIO__IN_SET(concurrent, err);
}

cio_err cio_await(cio_io io, cio_future *future)
{
    if (future->any != NULL) {
        struct cio_any_future *any = future->any;
        future->any = NULL;
        future->result = io.vtable->await(io.userdata, any);
    }
    return future->result;
}

cio_err cio_cancel(cio_io io, cio_future *future)
{
    if (future->any != NULL) {
        struct cio_any_future *any = future->any;
        future->any = NULL;
        future->result = io.vtable->cancel(io.userdata, any);
    }
    return future->result;
}

cio_err cio_check_cancel(cio_io io)
{
    return io.vtable->check_cancel(io.userdata);
}

void cio_recancel(cio_io io)
{
    io.vtable->recancel(io.userdata);
}

cio_cancel_protection cio_swap_cancel_protection(cio_io io, cio_cancel_protection prot)
{
    return io.vtable->swap_cancel_protection(io.userdata, prot);
}

void cio_group_async(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size)
{
    io.vtable->group_async(io.userdata, group, fn, context, context_size);
}

cio_err cio_group_concurrent(cio_io io, cio_group *group, cio_task_fn fn, const void *context, size_t context_size)
{
    return io.vtable->group_concurrent(io.userdata, group, fn, context, context_size);
}

cio_err cio_group_await(cio_io io, cio_group *group)
{
    if (atomic_load_explicit(&group->token, memory_order_acquire) == 0)
        return CIO_OK;
    return io.vtable->group_await(io.userdata, group);
}

void cio_group_cancel(cio_io io, cio_group *group)
{
    if (atomic_load_explicit(&group->token, memory_order_acquire) == 0)
        return;
    io.vtable->group_cancel(io.userdata, group);
}

cio_err cio_futex_wait(cio_io io, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout)
{
    return io.vtable->futex_wait(io.userdata, ptr, expected, timeout);
}

void cio_futex_wait_uncancelable(cio_io io, const _Atomic(uint32_t) *ptr, uint32_t expected)
{
    io.vtable->futex_wait_uncancelable(io.userdata, ptr, expected);
}

void cio_futex_wake(cio_io io, const _Atomic(uint32_t) *ptr, uint32_t max_waiters)
{
    if (max_waiters != 0)
        io.vtable->futex_wake(io.userdata, ptr, max_waiters);
}

cio_timestamp cio_now(cio_io io, cio_clock clock)
{
    return io.vtable->now(io.userdata, clock);
}

cio_err cio_sleep(cio_io io, cio_timeout timeout)
{
    return io.vtable->sleep(io.userdata, timeout);
}

void cio_random(cio_io io, void *buf, size_t len)
{
    io.vtable->random(io.userdata, buf, len);
}

cio_err cio_random_secure(cio_io io, void *buf, size_t len)
{
    return io.vtable->random_secure(io.userdata, buf, len);
}
