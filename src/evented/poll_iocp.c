/*
 * The Evented backend's poller on Windows: an I/O completion port per loop (the "iocp" flavour).
 *
 * Invariants: everything here runs on the loop thread that owns the port, except wake() (any thread:
 * it posts a packet). The port is the loop's l->ring (a HANDLE); l->epfd and l->wakefd stay -1.
 * - One port per loop, not one per instance: every wait of a fiber is registered with its home loop
 *   (evented.h), so a completion must be dequeued by that loop's thread; a shared port would hand it
 *   to whichever loop thread asked first. A port costs one handle.
 * - wait() blocks in GetQueuedCompletionStatusEx up to the loop's next timer (milliseconds, rounded
 *   up: a timer never fires early; the timers themselves are the loop's heap, timers.c).
 * - wake(): one packet with key WAKE_KEY and no OVERLAPPED, posted only by the waker that set
 *   `woken` (cio__e_wake_loop), so at most one is queued per sleep; there is no descriptor to drain,
 *   and a packet dequeued after the loop woke for another reason only ends one later wait early.
 *   PostQueuedCompletionStatus fails only without system resources: it is retried (POST_TRIES, a
 *   millisecond apart) and, if it never succeeds, `woken` is cleared so that the next waker posts
 *   again rather than every later one skipping its post (a lost wake-up).
 * - No readiness waits (arm_fd): a completion port reports finished operations, not readiness, and
 *   nothing on Windows asks for one (fdwait.c's waits are the POSIX slot files').
 * - Overlapped operations (iocp.h, cio__e_iocp_run): a handle is attached to the port of the loop
 *   whose fiber first runs an operation on it (a handle can belong to one port only, for life: a
 *   later attach says ERROR_INVALID_PARAMETER and changes nothing), with key OP_KEY; when that is an
 *   adopted thread's loop, to a loop thread's port instead (picked by the handle's value), since an
 *   adopted loop's port is closed when its thread exits and a handle attached to it would have
 *   every later packet lost. Every operation tries the attach again (claim), under `owners_mu`, and
 *   a process-wide table (`owners`: handle value -> the instance's id, never reused) says whose port
 *   an attached handle went to: a handle attached to another instance's port (one alive, or one
 *   destroyed, whose packets nobody reads any more) or to one of the user's is not ours, and its
 *   call runs as Threaded does, on the helper pool (cio__e_iocp_run says CIO__E_IOCP_FOREIGN): no
 *   packet of such a call reaches any port. The Windows close slots drop a handle's entry
 *   (cio__e_iocp_forget, the OS code's handle close hook), so a value that comes back for a new handle
 *   starts afresh; a handle closed behind cio's back keeps its entry until its value is attached
 *   again, and is misjudged only if that value comes back already attached to a foreign port. A
 *   destroyed instance's entries go with it (iocp_deinit), and the table is freed when empty. A
 *   table that cannot grow (no memory) leaves the handle unrecorded: its calls take the helper pool,
 *   which is slower, never wrong. Every operation
 *   is reported by a packet, even one done at once (no FILE_SKIP_COMPLETION_PORT_ON_SUCCESS: one
 *   path). A packet for an operation whose fiber's home is another loop (a socket attached by a
 *   fiber of loop A, used by one of loop B) is forwarded to that loop's port as it is (the status
 *   and count stay in the OVERLAPPED), so only the home loop touches the wait. A packet whose
 *   OVERLAPPED is not one of cio's (a foreign overlapped call on an attached socket without the
 *   low bit on its event) is dropped.
 * - A drain (cio__e_iocp_drain, after a start that failed at once): Wine queues a packet for some
 *   failed file transfers, NT for none, so the fiber starts a zero-length probe whose packet carries
 *   the OVERLAPPED's address plus one; the port is FIFO and a forwarded packet keeps its order, so a
 *   stray packet of the failed start comes first, and is dropped (`draining`), and the probe's ends
 *   the wait.
 * - cancel(): CancelIoEx on the operation's handle and exact OVERLAPPED, once; the packet follows
 *   (STATUS_CANCELLED, or the result if the operation won the race); ERROR_NOT_FOUND means it is
 *   already on its way.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "iocp.h"
#include "os.h"

#define BATCH 64
#define WAKE_KEY ((ULONG_PTR)1)
#define OP_KEY ((ULONG_PTR)2)
#define POST_TRIES 100

/* ---- whose port a handle is attached to (process-wide, under owners_mu) -------------------------------------- */

struct owner {
    uintptr_t handle; /* 0: a free slot */
    uint32_t id;      /* the instance's id; 0: a removed entry (the slot is taken, the handle is not) */
};

static SRWLOCK owners_mu = SRWLOCK_INIT;
static struct owner *owners; /* open addressing, a power of two long, at most half taken; freed when empty */
static size_t owners_cap, owners_taken, owners_live;

/* Packets dropped as not cio's, process-wide (for cio's tests: cio's own calls that run on a helper
 * thread on an attached handle must queue none, see net_sendfile_windows.c). */
static _Atomic(unsigned long) foreign_packets;

unsigned long cio__e_iocp_foreign_packets(void)
{
    return atomic_load_explicit(&foreign_packets, memory_order_relaxed);
}

static size_t owner_slot(uintptr_t h, size_t cap)
{
    return (size_t)(((uint64_t)(h >> 2) * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

/* The entry of h, or NULL. */
static struct owner *owner_find(uintptr_t h)
{
    if (owners_cap == 0)
        return NULL;
    for (size_t i = owner_slot(h, owners_cap);; i = (i + 1) & (owners_cap - 1)) {
        if (owners[i].handle == 0)
            return NULL;
        if (owners[i].handle == h && owners[i].id != 0)
            return &owners[i];
    }
}

/* Records h as attached to instance `id`'s port; false when the table cannot grow. */
static bool owner_set(uintptr_t h, uint32_t id)
{
    struct owner *o = owner_find(h);
    if (o != NULL) {
        o->id = id;
        return true;
    }
    if (2 * (owners_taken + 1) > owners_cap) { /* grow (or only sweep the removed entries) */
        size_t live = 0;
        for (size_t i = 0; i < owners_cap; i++)
            live += owners[i].handle != 0 && owners[i].id != 0;
        size_t cap = owners_cap == 0 ? 64 : owners_cap;
        while (4 * (live + 1) > cap)
            cap *= 2;
        struct owner *t = (struct owner *)CIO__SYS(calloc, iocp_owners)(cap, sizeof *t);
        if (t == NULL)
            return false;
        for (size_t i = 0; i < owners_cap; i++) {
            if (owners[i].handle == 0 || owners[i].id == 0)
                continue;
            size_t j = owner_slot(owners[i].handle, cap);
            while (t[j].handle != 0)
                j = (j + 1) & (cap - 1);
            t[j] = owners[i];
        }
        free(owners);
        owners = t;
        owners_cap = cap;
        owners_taken = live;
    }
    size_t i = owner_slot(h, owners_cap);
    while (owners[i].handle != 0)
        i = (i + 1) & (owners_cap - 1);
    owners[i].handle = h;
    owners[i].id = id;
    owners_taken++;
    owners_live++;
    return true;
}

/* Removes o's entry; the table goes when nothing is left in it. */
static void owner_drop(struct owner *o)
{
    o->id = 0;
    if (--owners_live == 0) {
        free(owners);
        owners = NULL;
        owners_cap = owners_taken = 0;
    }
}

/* Removes every entry of instance id (it is being destroyed: no call of its can come any more, and
 * a handle without an entry is as foreign as one with another instance's). */
static void owners_purge(uint32_t id)
{
    AcquireSRWLockExclusive(&owners_mu);
    for (size_t i = 0; i < owners_cap && owners != NULL; i++)
        if (owners[i].handle != 0 && owners[i].id == id)
            owner_drop(&owners[i]);
    ReleaseSRWLockExclusive(&owners_mu);
}

void cio__e_iocp_forget(void *handle)
{
    AcquireSRWLockExclusive(&owners_mu);
    struct owner *o = owner_find((uintptr_t)handle);
    if (o != NULL)
        owner_drop(o);
    ReleaseSRWLockExclusive(&owners_mu);
}

static HANDLE port_of(struct cio__e_loop *l)
{
    return (HANDLE)l->ring;
}

static cio_err iocp_init(struct cio__e_loop *l)
{
    cio__os_set_handle_close_hook(cio__e_iocp_forget); /* closes through either backend drop an entry */
    HANDLE port = CIO__SYS(CreateIoCompletionPort, iocp_init)(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (port == NULL) /* ERROR_NOT_ENOUGH_MEMORY, ERROR_NO_SYSTEM_RESOURCES: no kernel memory for it */
        return CIO_E_SYSTEM_RESOURCES;
    l->ring = (void *)port;
    return CIO_OK;
}

static void iocp_deinit(struct cio__e_loop *l)
{
    if (l->ev != NULL && !l->adopted) /* the instance is being destroyed (an adopted loop goes alone) */
        owners_purge(l->ev->id);      /* once per loop: the later ones find nothing */
    if (l->ring != NULL)
        (void)CIO__SYS(CloseHandle, iocp_deinit)(port_of(l)); /* fails only for a handle that is not ours */
    l->ring = NULL;
}

/* A timeout in ns (< 0: none) as GetQueuedCompletionStatusEx's milliseconds, rounded up. */
static DWORD wait_ms(int64_t timeout_ns)
{
    if (timeout_ns < 0)
        return INFINITE;
    int64_t ms = timeout_ns / 1000000 + (timeout_ns % 1000000 != 0);
    return ms >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)ms;
}

/* A packet for another loop's fiber: to that loop's port, as it is. Posting fails only without
 * system resources: retried, since the fiber waits for nothing else. */
static void forward(struct cio__e_loop *home, OVERLAPPED *ov)
{
    while (!CIO__SYS(PostQueuedCompletionStatus, iocp_forward)(port_of(home), 0, OP_KEY, ov))
        Sleep(1);
}

static void iocp_wait(struct cio__e_loop *l, int64_t timeout_ns)
{
    OVERLAPPED_ENTRY entries[BATCH];
    ULONG n = 0;
    if (!CIO__SYS(GetQueuedCompletionStatusEx, iocp_wait)(port_of(l), entries, BATCH, &n, wait_ms(timeout_ns), FALSE))
        return; /* WAIT_TIMEOUT; anything else (no memory) is a round with nothing: the scheduler comes
                 * back with its timers and queues, and waits again */
    for (ULONG i = 0; i < n; i++) {
        OVERLAPPED *ov = entries[i].lpOverlapped;
        if (ov == NULL) {
            if (entries[i].lpCompletionKey == WAKE_KEY)
                cio__e_wake_drained(l);
            continue;
        }
        bool probe = ((uintptr_t)ov & 1u) != 0;
        struct cio__e_iocp_op *op = (struct cio__e_iocp_op *)(void *)((uintptr_t)ov & ~(uintptr_t)1u);
        if (entries[i].lpCompletionKey != OP_KEY || op->magic != CIO__E_IOCP_MAGIC) {
            atomic_fetch_add_explicit(&foreign_packets, 1, memory_order_relaxed);
            continue; /* not cio's */
        }
        if (op->home != l) {
            forward(op->home, ov);
            continue;
        }
        if (probe != op->draining)
            continue; /* a failed start's packet, before its drain's probe's */
        cio__e_poller_complete(&op->w, 0);
    }
}

static void iocp_wake(struct cio__e_loop *l)
{
    for (int tries = 0; tries < POST_TRIES; tries++) {
        if (CIO__SYS(PostQueuedCompletionStatus, iocp_wake)(port_of(l), 0, WAKE_KEY, NULL))
            return;
        Sleep(1); /* ERROR_NO_SYSTEM_RESOURCES: let the kernel find some */
    }
    atomic_store_explicit(&l->woken, 0, memory_order_seq_cst); /* the next waker posts again */
}

static cio_err iocp_arm(struct cio__e_loop *l, struct cio__e_wait *w)
{
    (void)l;
    (void)w;
    return CIO_E_OPERATION_UNSUPPORTED;
}

static void iocp_cancel(struct cio__e_loop *l, struct cio__e_wait *w)
{
    (void)l;
    struct cio__e_iocp_op *op = (struct cio__e_iocp_op *)w->htask;
    /* ERROR_NOT_FOUND: done, its packet queued; any other failure leaves the operation to end by
     * itself (a socket closed under it ends it too) */
    (void)CIO__SYS(CancelIoEx, iocp_cancel)(op->handle, &op->ov);
}

/* ---- running an operation (iocp.h) ---------------------------------------------------------------------- */

static void op_timeout(struct cio__e_loop *l, struct cio__e_timer *t)
{
    struct cio__e_wait *w = (struct cio__e_wait *)(void *)((char *)t - offsetof(struct cio__e_wait, timer));
    if (w->in_flight && !w->cancel_sent) {
        w->reason = CIO__E_R_TIMEOUT;
        w->cancel_sent = true;
        iocp_cancel(l, w);
    }
}

enum claim { OURS, FOREIGN, NO_PORT };

/* Attaches handle to `port` unless it is attached already: OURS when its packets come to one of e's
 * ports, FOREIGN when they go to another instance's or the user's, NO_PORT when it cannot be
 * attached (no system resources). */
static enum claim claim(struct cio_evented *e, HANDLE port, HANDLE handle)
{
    enum claim c = OURS;
    AcquireSRWLockExclusive(&owners_mu);
    if (CIO__SYS(CreateIoCompletionPort, iocp_attach)(handle, port, OP_KEY, 0) != NULL) {
        (void)owner_set((uintptr_t)handle, e->id);          /* unrecorded: later calls take the helper pool */
    } else if (GetLastError() != ERROR_INVALID_PARAMETER) { /* that one: attached already */
        c = NO_PORT;
    } else {
        struct owner *o = owner_find((uintptr_t)handle);
        c = o != NULL && o->id == e->id ? OURS : FOREIGN;
    }
    ReleaseSRWLockExclusive(&owners_mu);
    return c;
}

cio_err cio__e_iocp_run(struct cio_evented *e, struct cio__e_iocp_op *op, HANDLE handle, cio__e_iocp_start start,
                        void *arg, int64_t deadline_ns, bool cancelable, int *code)
{
    *code = 0;
    struct cio_any_future *f = cio__e_self(e);
    struct cio__e_loop *l = f->home;
    if (cancelable) {
        cio_err c = cio__e_cancel_point(e);
        if (c != CIO_OK)
            return c;
    }
    struct cio__e_loop *owner = l; /* an adopted loop's port goes with its thread: a loop thread's instead */
    if (l->adopted && e->nloops > 0)
        owner = &e->loops[((uintptr_t)handle >> 2) % e->nloops];
    enum claim c = claim(e, port_of(owner), handle);
    if (c == NO_PORT)
        return CIO_E_SYSTEM_RESOURCES;
    if (c == FOREIGN) {
        *code = CIO__E_IOCP_FOREIGN;
        return CIO_OK;
    }
    memset(op, 0, sizeof *op);
    op->magic = CIO__E_IOCP_MAGIC;
    op->handle = handle;
    op->home = l;
    cio__e_wait_init(&op->w, f, CIO__E_W_POLLER, cancelable, cio__e_poller_interrupt);
    op->w.htask = op;
    *code = start(op, arg);
    if (*code != 0)
        return CIO_OK;
    op->w.in_flight = true;
    l->armed++;
    cio__e_park(l, f, &op->w, deadline_ns, op_timeout, NULL, NULL);
    /* Not STATUS_CANCELLED: its result stands. Nor does a canceled one that moved bytes first (a send
     * that put part of its data on the wire): those bytes are its result, and a cancel request stays
     * pending for the fiber's next cancellation point. */
    if ((NTSTATUS)op->ov.Internal != (NTSTATUS)0xC0000120L || op->ov.InternalHigh > 0)
        return CIO_OK;
    if (op->w.reason == CIO__E_R_CANCEL) {
        cio__e_ack_cancel(f);
        return CIO_E_CANCELED;
    }
    if (op->w.reason == CIO__E_R_TIMEOUT)
        return CIO_E_TIMEOUT;
    return CIO_OK; /* canceled by someone else (CancelIoEx of the user's): its result says so */
}

void cio__e_iocp_drain(struct cio__e_iocp_op *op, cio__e_iocp_start probe, void *arg)
{
    struct cio_any_future *f = op->w.fiber;
    struct cio__e_loop *l = op->home;
    op->draining = true;
    if (probe(op, arg) == 0) {
        cio__e_wait_init(&op->w, f, CIO__E_W_POLLER, false, NULL);
        op->w.htask = op;
        op->w.in_flight = true;
        l->armed++;
        cio__e_park(l, f, &op->w, -1, NULL, NULL, NULL);
    }
    op->draining = false;
}

const struct cio__e_poller_ops cio__e_iocp_ops = {CIO__E_POLLER_OPS(iocp, "iocp")};
