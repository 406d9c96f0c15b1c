/*
 * cio_select: Zig's Io.Select — a cio_group whose tasks post their results to a cio_queue; the
 * first result posted is the first one awaited.
 *
 * Layout of a task's context: one blob handed to cio_group_async/cio_group_concurrent (which copy it
 * to storage aligned to CIO_CONTEXT_ALIGN):
 *     [0, 64)             struct task_header: the user's fn, the select, the io
 *     [64, 64 + size)     a copy of the user's context, hence also CIO_CONTEXT_ALIGN-aligned
 * The blob is built on the submitter's stack when small, else in a malloc'd buffer freed as soon
 * as the group call returns (the backend has copied it by then).
 *
 * Who does what:
 *   - the task wrapper runs the user's fn with a result buffer (a local 64-aligned one when
 *     elem_size <= 256, else malloc'd), zero-filled first, then posts it with
 *     cio_queue_put_one_uncancelable: posting is never a cancellation point, and a result posted
 *     after the queue closed is dropped (CIO_E_CLOSED ignored). The fn's own cio_err goes to the
 *     group, which discards it (a group is a cancellation boundary).
 *   - a task with no memory for its result buffer cannot run its fn, and nothing it could post would
 *     tell the awaiter: it records CIO_E_OUT_OF_MEMORY in sel->failed (first failure wins) and
 *     closes the queue, which wakes every get. Results already queued still come out; then the
 *     get's CIO_E_CLOSED plus `failed` is the failure: await cancels the group (every task is
 *     canceled and awaited, their later posts dropped by the closed queue) and returns the error.
 *     The store to `failed` comes before the close, and the get sees the close under the queue's
 *     mutex, so it sees the store.
 *   - await/await_many are gets on the queue.
 *   - cancel: cancel the group (waits for every task, so every result that will ever be posted has
 *     been), close the queue, then hand out one remaining result per call. The queue must be big
 *     enough for all outstanding results, or a task blocks in its post and the group cancel never
 *     returns (documented, as in Zig). cancel_discard closes first, so late posts are dropped and
 *     the group cancel cannot block on them.
 * Nothing here is locked beyond what cio_queue and the group do themselves.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cio/sync.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define HEADER_SIZE ((size_t)CIO_CONTEXT_ALIGN)
#define RESULT_INLINE ((size_t)256)
#define BLOB_INLINE ((size_t)512)

struct task_header {
    cio_select_fn fn;
    cio_select *sel;
    cio_io io;
    void *external_context; /* non-NULL: run inline on the caller's context (out of memory) */
};

_Static_assert(sizeof(struct task_header) <= HEADER_SIZE, "the task header must fit in 64 bytes");

static cio_err select_task(void *context)
{
    struct task_header h;
    memcpy(&h, context, sizeof h);
    void *user = h.external_context != NULL ? h.external_context : (unsigned char *)context + HEADER_SIZE;
    size_t elem_size = h.sel->queue.elem_size;

    _Alignas(CIO_CONTEXT_ALIGN) unsigned char local[RESULT_INLINE];
    unsigned char *result = local;
    if (elem_size > RESULT_INLINE) {
        result = (unsigned char *)CIO__SYS(malloc, select_result)(elem_size);
        if (result == NULL) {
            /* no room for a result: fail the select (the awaiter would otherwise wait forever) */
            uint32_t none = 0;
            (void)atomic_compare_exchange_strong(&h.sel->failed, &none, (uint32_t)CIO_E_OUT_OF_MEMORY);
            cio_queue_close(h.io, &h.sel->queue);
            return CIO_E_OUT_OF_MEMORY;
        }
    }
    memset(result, 0, elem_size);
    cio_err err = h.fn(user, result);
    /* CIO_E_CLOSED: cancel_discard closed the queue first; the result is dropped. */
    (void)cio_queue_put_one_uncancelable(h.io, &h.sel->queue, result);
    if (result != local)
        free(result);
    return err;
}

static cio_err submit(cio_io io, cio_select *sel, cio_select_fn fn, const void *context, size_t context_size,
                      bool concurrent)
{
    _Alignas(CIO_CONTEXT_ALIGN) unsigned char small[BLOB_INLINE];
    struct task_header h = {fn, sel, io, NULL};
    unsigned char *blob = small;
    size_t size = HEADER_SIZE + context_size;
    if (context_size > BLOB_INLINE - HEADER_SIZE) {
        blob = context_size <= SIZE_MAX - HEADER_SIZE ? (unsigned char *)CIO__SYS(malloc, select_blob)(size) : NULL;
        if (blob == NULL) {
            if (concurrent)
                return CIO_E_CONCURRENCY_UNAVAILABLE; /* as a backend out of memory for the task */
            /* async must run the task: inline, on the caller's context (no copy possible). */
            h.external_context = (void *)(uintptr_t)context;
            memset(small, 0, HEADER_SIZE);
            memcpy(small, &h, sizeof h);
            (void)select_task(small);
            return CIO_OK;
        }
    }
    memset(blob, 0, HEADER_SIZE);
    memcpy(blob, &h, sizeof h);
    if (context_size > 0)
        memcpy(blob + HEADER_SIZE, context, context_size);
    cio_err err = CIO_OK;
    if (concurrent)
        err = cio_group_concurrent(io, &sel->group, select_task, blob, size);
    else
        cio_group_async(io, &sel->group, select_task, blob, size);
    if (blob != small)
        free(blob);
    return err;
}

void cio_select_init(cio_select *sel, void *buffer, size_t elem_size, size_t capacity)
{
    atomic_init(&sel->group.token, 0);
    sel->group.state = 0;
    cio_queue_init(&sel->queue, buffer, elem_size, capacity);
    atomic_init(&sel->failed, 0);
}

void cio_select_async(cio_io io, cio_select *sel, cio_select_fn fn, const void *context, size_t context_size)
{
    /* Concurrent first: select members race, so one may block until another finishes (a read
     * raced against a sleep); run inline on the awaiter, as async does at its limit, such a member
     * never returns. Only where there is no concurrency at all does the member run as async. */
    if (submit(io, sel, fn, context, context_size, true) == CIO_E_CONCURRENCY_UNAVAILABLE)
        (void)submit(io, sel, fn, context, context_size, false);
}

cio_err cio_select_concurrent(cio_io io, cio_select *sel, cio_select_fn fn, const void *context, size_t context_size)
{
    cio_err err = submit(io, sel, fn, context, context_size, true);
    return CIO__IN_SET(concurrent, err);
}

/* A get's CIO_E_CLOSED before cancel means a task failed: cancel and await every task, report it. */
static cio_err failed(cio_io io, cio_select *sel, cio_err err)
{
    uint32_t f = atomic_load(&sel->failed);
    if (err != CIO_E_CLOSED || f == 0)
        return err;
    cio_group_cancel(io, &sel->group);
    return (cio_err)f;
}

cio_err cio_select_await(cio_io io, cio_select *sel, void *result)
{
    cio_err err = failed(io, sel, cio_queue_get_one(io, &sel->queue, result));
    return err == CIO_E_INVALID_ARGUMENT || err == CIO_E_OUT_OF_MEMORY ? err : CIO__IN_SET(queue, err);
}

cio_err cio_select_await_many(cio_io io, cio_select *sel, void *results, size_t n, size_t min, size_t *got)
{
    cio_err err = failed(io, sel, cio_queue_get(io, &sel->queue, results, n, min, got));
    return err == CIO_E_INVALID_ARGUMENT || err == CIO_E_OUT_OF_MEMORY ? err : CIO__IN_SET(queue, err);
}

bool cio_select_cancel(cio_io io, cio_select *sel, void *result)
{
    cio_group_cancel(io, &sel->group);
    cio_queue_close(io, &sel->queue);
    /* A closed queue never blocks a get: CIO_E_CLOSED once it is empty. */
    return cio_queue_get_one_uncancelable(io, &sel->queue, result) == CIO_OK;
}

void cio_select_cancel_discard(cio_io io, cio_select *sel)
{
    cio_queue_close(io, &sel->queue);
    cio_group_cancel(io, &sel->group);
}
