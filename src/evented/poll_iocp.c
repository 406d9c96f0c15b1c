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
 *   nothing on Windows asks for one (fdwait.c's waits are the POSIX slot files'). Overlapped
 *   operations and their cancel (CancelIoEx on the exact OVERLAPPED, then the wait for its
 *   completion) come with the socket slots (issue 24, step 2); until then no wait of this poller is
 *   ever in flight, so cancel() has nothing it could be asked to stop.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include <stdint.h>

#include "evented.h"
#include "internal.h"
#include "internal/cio_oscalls.h"

#define BATCH 64
#define WAKE_KEY ((ULONG_PTR)1)
#define POST_TRIES 100

static HANDLE port_of(struct cio__e_loop *l)
{
    return (HANDLE)l->ring;
}

static cio_err iocp_init(struct cio__e_loop *l)
{
    HANDLE port = CIO__SYS(CreateIoCompletionPort, iocp_init)(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (port == NULL) /* ERROR_NOT_ENOUGH_MEMORY, ERROR_NO_SYSTEM_RESOURCES: no kernel memory for it */
        return CIO_E_SYSTEM_RESOURCES;
    l->ring = (void *)port;
    return CIO_OK;
}

static void iocp_deinit(struct cio__e_loop *l)
{
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

static void iocp_wait(struct cio__e_loop *l, int64_t timeout_ns)
{
    OVERLAPPED_ENTRY entries[BATCH];
    ULONG n = 0;
    if (!CIO__SYS(GetQueuedCompletionStatusEx, iocp_wait)(port_of(l), entries, BATCH, &n, wait_ms(timeout_ns), FALSE))
        return; /* WAIT_TIMEOUT; anything else (no memory) is a round with nothing: the scheduler comes
                 * back with its timers and queues, and waits again */
    for (ULONG i = 0; i < n; i++) {
        if (entries[i].lpCompletionKey == WAKE_KEY && entries[i].lpOverlapped == NULL)
            cio__e_wake_drained(l);
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
    (void)w;
    (void)CIO__BUG("completion port: a cancel with no overlapped operation in flight");
}

const struct cio__e_poller_ops cio__e_iocp_ops = {CIO__E_POLLER_OPS(iocp, "iocp")};
