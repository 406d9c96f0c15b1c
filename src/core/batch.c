/*
 * Operations and Batch (cio/batch.h): library code over the vtable slots, the same on every backend.
 *
 * Invariants:
 * - One task owns a batch (adds, awaits, takes results, cancels); the operations run on tasks of
 *   their own (cio_async / cio_concurrent), each on exactly one slot. A running task writes only its
 *   slot's `op` results, then its slot's `state` (DONE, release), then bumps the batch's `done_gen`
 *   and wakes it. It reads `slot->batch` before publishing DONE: the owner may reuse the slot right
 *   after reaping it, but cannot reap it (cio_await) before the task has returned, so the batch
 *   itself outlives every task.
 * - Slot states: UNUSED → (add) SUBMITTED → (await: task started) RUNNING → (task) DONE →
 *   (owner reaps: cio_await) COMPLETE → (next) UNUSED. Only the owner moves a slot, except
 *   RUNNING → DONE, which only the task does. `in_flight` counts RUNNING + DONE slots, `completed`
 *   COMPLETE ones; both are the owner's.
 * - "At least one completed" is read after a reap and before a futex wait on the `done_gen` value
 *   loaded before the reap: a task finishing in between changes `done_gen`, so the wait returns.
 * - cancel requests and awaits every started task (cio_cancel), so when it returns no task refers
 *   to the batch or to its slots any more.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cio/batch.h"
#include "internal.h"

enum { S_UNUSED = 0, S_SUBMITTED, S_RUNNING, S_DONE, S_COMPLETE };

/* ---- running one operation ------------------------------------------------------------------------ */

static void run_op(cio_io io, cio_operation *op)
{
    void *ud = io.userdata;
    const struct cio_vtable *vt = io.vtable;
    op->count = 0;
    switch (op->kind) {
    case CIO_OP_FILE_READ_STREAMING:
        op->err = vt->file_read_streaming(ud, op->u.file_read_streaming.file, op->u.file_read_streaming.iov,
                                          op->u.file_read_streaming.iovcnt, &op->count);
        break;
    case CIO_OP_FILE_WRITE_STREAMING:
        op->err = vt->file_write_streaming(ud, op->u.file_write_streaming.file, op->u.file_write_streaming.iov,
                                           op->u.file_write_streaming.iovcnt, &op->count);
        break;
    case CIO_OP_DEVICE_IO_CONTROL: op->err = vt->device_io_control(ud, op); break;
    case CIO_OP_NET_RECEIVE:
        op->err = vt->net_receive(ud, op->u.net_receive.socket, op->u.net_receive.msgs, op->u.net_receive.max,
                                  CIO_TIMEOUT_NONE, &op->count);
        break;
    case CIO_OP_NET_SEND:
        op->err = vt->net_send(ud, op->u.net_send.socket, op->u.net_send.dest, op->u.net_send.iov,
                               op->u.net_send.iovcnt, &op->count);
        break;
    case CIO_OP_NET_READ:
        op->err = vt->net_read(ud, op->u.net_read.stream, op->u.net_read.iov, op->u.net_read.iovcnt, &op->count);
        break;
    case CIO_OP_NET_WRITE:
        op->err = vt->net_write(ud, op->u.net_write.stream, op->u.net_write.iov, op->u.net_write.iovcnt, &op->count);
        break;
    case CIO_OP_NET_ACCEPT: op->err = vt->net_accept(ud, op->u.net_accept.listener, &op->stream); break;
    case CIO_OP_NET_CONNECT:
        op->err = vt->net_connect_ip(ud, op->u.net_connect.address, op->u.net_connect.options, &op->stream);
        break;
    default: op->err = CIO_E_INVALID_ARGUMENT; break;
    }
}

static bool kind_ok(const cio_operation *op)
{
    return op->kind > CIO_OP_NONE && op->kind <= CIO_OP_NET_CONNECT;
}

cio_err cio_operate(cio_io io, cio_operation *op)
{
    CIO__REQUIRE(op);
    if (io.vtable == NULL || !kind_ok(op))
        return CIO_E_INVALID_ARGUMENT;
    run_op(io, op);
    return op->err == CIO_E_CANCELED ? CIO_E_CANCELED : CIO_OK;
}

/* ---- the batch ------------------------------------------------------------------------------------ */

struct op_ctx {
    cio_io io;
    cio_batch_slot *slot;
};

static cio_err op_task(void *context)
{
    struct op_ctx c;
    memcpy(&c, context, sizeof c);
    cio_batch *b = c.slot->batch;
    run_op(c.io, &c.slot->op);
    cio_err err = c.slot->op.err;
    atomic_store_explicit(&c.slot->state, S_DONE, memory_order_release);
    atomic_fetch_add_explicit(&b->done_gen, 1, memory_order_release);
    cio_futex_wake(c.io, &b->done_gen, UINT32_MAX);
    return err;
}

cio_err cio_batch_init(cio_batch *batch, cio_batch_slot *slots, size_t capacity)
{
    CIO__REQUIRE(batch, slots);
    if (capacity == 0 || capacity >= UINT32_MAX)
        return CIO_E_INVALID_ARGUMENT;
    batch->slots = slots;
    batch->capacity = (uint32_t)capacity;
    batch->in_flight = 0;
    batch->completed = 0;
    batch->next_scan = 0;
    atomic_init(&batch->done_gen, 0);
    for (uint32_t i = 0; i < batch->capacity; i++) {
        memset(&slots[i].op, 0, sizeof slots[i].op);
        slots[i].future = (cio_future){NULL, CIO_OK, 0};
        slots[i].batch = batch;
        atomic_init(&slots[i].state, S_UNUSED);
        slots[i].index = i;
    }
    return CIO_OK;
}

cio_err cio_batch_add_at(cio_batch *batch, uint32_t index, const cio_operation *op)
{
    CIO__REQUIRE(batch, op);
    if (index >= batch->capacity || !kind_ok(op) ||
        atomic_load_explicit(&batch->slots[index].state, memory_order_relaxed) != S_UNUSED)
        return CIO_E_INVALID_ARGUMENT;
    cio_batch_slot *s = &batch->slots[index];
    s->op = *op;
    s->op.err = CIO_OK;
    s->op.count = 0;
    s->future = (cio_future){NULL, CIO_OK, 0};
    atomic_store_explicit(&s->state, S_SUBMITTED, memory_order_relaxed);
    return CIO_OK;
}

cio_err cio_batch_add(cio_batch *batch, const cio_operation *op, uint32_t *index)
{
    CIO__REQUIRE(batch, op);
    if (!kind_ok(op))
        return CIO_E_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < batch->capacity; i++) {
        if (atomic_load_explicit(&batch->slots[i].state, memory_order_relaxed) == S_UNUSED) {
            cio_err err = cio_batch_add_at(batch, i, op);
            if (err == CIO_OK && index != NULL)
                *index = i;
            return err;
        }
    }
    return CIO_E_SYSTEM_RESOURCES;
}

bool cio_batch_next(cio_batch *batch, uint32_t *index, cio_operation *out)
{
    if (batch == NULL || batch->completed == 0)
        return false;
    for (uint32_t k = 0; k < batch->capacity; k++) {
        uint32_t i = (batch->next_scan + k) % batch->capacity;
        cio_batch_slot *s = &batch->slots[i];
        if (atomic_load_explicit(&s->state, memory_order_relaxed) != S_COMPLETE)
            continue;
        if (index != NULL)
            *index = i;
        if (out != NULL)
            *out = s->op;
        atomic_store_explicit(&s->state, S_UNUSED, memory_order_relaxed);
        batch->completed--;
        batch->next_scan = (i + 1) % batch->capacity;
        return true;
    }
    return false;
}

/* Awaits the tasks that have finished: DONE → COMPLETE. */
static void reap(cio_io io, cio_batch *b)
{
    for (uint32_t i = 0; i < b->capacity && b->in_flight > 0; i++) {
        cio_batch_slot *s = &b->slots[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != S_DONE)
            continue;
        (void)cio_await(io, &s->future); /* finished: returns at once (the task's own result) */
        atomic_store_explicit(&s->state, S_COMPLETE, memory_order_relaxed);
        b->in_flight--;
        b->completed++;
    }
}

/* Starts every submitted slot; stops at the first ConcurrencyUnavailable. */
static cio_err start(cio_io io, cio_batch *b, bool concurrent)
{
    for (uint32_t i = 0; i < b->capacity; i++) {
        cio_batch_slot *s = &b->slots[i];
        if (atomic_load_explicit(&s->state, memory_order_relaxed) != S_SUBMITTED)
            continue;
        struct op_ctx c = {io, s};
        atomic_store_explicit(&s->state, S_RUNNING, memory_order_relaxed);
        b->in_flight++;
        if (concurrent) {
            cio_err err = cio_concurrent(io, op_task, &c, sizeof c, &s->future);
            if (err != CIO_OK) {
                atomic_store_explicit(&s->state, S_SUBMITTED, memory_order_relaxed);
                b->in_flight--;
                return err;
            }
        } else {
            s->future = cio_async(io, op_task, &c, sizeof c);
            if (s->future.any == NULL && s->op.err == CIO_E_CANCELED)
                return CIO_E_CANCELED; /* ran inline and the caller was canceled: start no more */
        }
    }
    return CIO_OK;
}

/* Waits until something is COMPLETE or nothing is in flight, up to the (deadline) timeout. */
static cio_err wait_one(cio_io io, cio_batch *b, cio_timeout deadline)
{
    for (;;) {
        uint32_t gen = atomic_load_explicit(&b->done_gen, memory_order_acquire);
        reap(io, b);
        if (b->completed > 0 || b->in_flight == 0)
            return CIO_OK;
        cio_err err = cio_futex_wait(io, &b->done_gen, gen, deadline);
        if (err == CIO_E_CANCELED)
            return err;
        if (err == CIO_E_TIMEOUT) {
            reap(io, b);
            return b->completed > 0 ? (cio_err)CIO_OK : (cio_err)CIO_E_TIMEOUT;
        }
        /* woken, spurious (or an unexpected futex error): look again */
    }
}

cio_err cio_batch_await_async(cio_io io, cio_batch *batch)
{
    CIO__REQUIRE(batch);
    if (io.vtable == NULL)
        return CIO_E_INVALID_ARGUMENT;
    if (start(io, batch, false) == CIO_E_CANCELED) {
        reap(io, batch); /* the canceled operation is COMPLETE, its result CIO_E_CANCELED */
        return CIO_E_CANCELED;
    }
    return CIO__IN_SET(cancelable, wait_one(io, batch, CIO_TIMEOUT_NONE));
}

cio_err cio_batch_await_concurrent(cio_io io, cio_batch *batch, cio_timeout timeout)
{
    CIO__REQUIRE(batch);
    if (io.vtable == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_timeout deadline = cio__timeout_to_deadline(io, timeout);
    cio_err err = start(io, batch, true);
    if (err != CIO_OK)
        return CIO__IN_SET(batch_await_concurrent, err);
    return CIO__IN_SET(batch_await_concurrent, wait_one(io, batch, deadline));
}

void cio_batch_cancel(cio_io io, cio_batch *batch)
{
    if (batch == NULL || io.vtable == NULL)
        return;
    for (uint32_t i = 0; i < batch->capacity; i++) {
        cio_batch_slot *s = &batch->slots[i];
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == S_SUBMITTED) {
            atomic_store_explicit(&s->state, S_UNUSED, memory_order_relaxed);
            continue;
        }
        if (st != S_RUNNING && st != S_DONE)
            continue;
        (void)cio_cancel(io, &s->future); /* returns once the task has finished */
        batch->in_flight--;
        if (s->op.err == CIO_E_CANCELED) {
            atomic_store_explicit(&s->state, S_UNUSED, memory_order_relaxed);
        } else {
            atomic_store_explicit(&s->state, S_COMPLETE, memory_order_relaxed);
            batch->completed++;
        }
    }
}

/* ---- one operation with a timeout ----------------------------------------------------------------- */

cio_err cio_operate_timeout(cio_io io, cio_operation *op, cio_timeout timeout)
{
    CIO__REQUIRE(op);
    if (io.vtable == NULL || !kind_ok(op))
        return CIO_E_INVALID_ARGUMENT;
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
        return cio_operate(io, op);
    /* The backend's own timed form (a readiness wait, a linked timeout) where it has one. */
    cio_err native = CIO__VT(io)->operate(io.userdata, op, timeout);
    if (native != CIO_E_UNIMPLEMENTED) {
        op->err = native;
        if (native == CIO_E_TIMEOUT || native == CIO_E_CANCELED)
            return native;
        return CIO_OK;
    }
    cio_batch b;
    cio_batch_slot slot;
    (void)cio_batch_init(&b, &slot, 1);
    (void)cio_batch_add_at(&b, 0, op);
    cio_err err = cio_batch_await_concurrent(io, &b, timeout);
    if (err != CIO_OK)
        cio_batch_cancel(io, &b);
    if (cio_batch_next(&b, NULL, op)) /* completed, in time or anyway: its result stands */
        return op->err == CIO_E_CANCELED ? CIO_E_CANCELED : CIO_OK;
    /* canceled before it did anything (or never started) */
    op->count = slot.op.count;
    op->err = err;
    return CIO__IN_SET(operate_timeout, err);
}
