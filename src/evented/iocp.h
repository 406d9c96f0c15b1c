/*
 * Overlapped operations on the loops' completion ports (Windows; poll_iocp.c runs them, net_iocp.c
 * and net_udp_iocp.c start them). Only files built for Windows include this header.
 *
 * An operation lives on its fiber's stack: its OVERLAPPED first (what a completion packet carries),
 * the handle it runs on (CancelIoEx's target), its home loop (where the fiber waits) and the wait
 * record. It ends only when its completion packet is dequeued, so nothing the kernel writes goes
 * away before it is done: a cancel or a deadline only asks CancelIoEx to stop that exact OVERLAPPED,
 * and the packet (STATUS_CANCELLED, or the result if it finished first) still follows.
 */
#ifndef CIO_EVENTED_IOCP_H
#define CIO_EVENTED_IOCP_H

#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>

#include "evented.h"

#define CIO__E_IOCP_MAGIC 0x70636f69u /* "iocp": an OVERLAPPED of cio's, not a foreign one */

struct cio__e_iocp_op {
    OVERLAPPED ov; /* first */
    uint32_t magic;
    HANDLE handle;
    struct cio__e_loop *home;
    struct cio__e_wait w;
    bool draining; /* cio__e_iocp_drain: waiting for its probe's packet */
};

/* Starts the operation on op->handle with &op->ov; 0 when a completion packet will follow (pending,
 * or done at once: the port is told of both), else the WSA error code (no packet). Done at once
 * includes a warning status: STATUS_BUFFER_OVERFLOW (WSAEMSGSIZE, ERROR_MORE_DATA) says a failure
 * but is not an NT error, and its packet follows (net_udp_iocp.c): such a start returns 0. */
typedef int (*cio__e_iocp_start)(struct cio__e_iocp_op *op, void *arg);

/* Runs one overlapped operation on `handle` as the current fiber of e: attaches the handle to the
 * fiber's home loop's port (once), starts it, waits for its packet (deadline_ns >= 0: canceled then,
 * reason TIMEOUT; cancelable: a cancel request cancels it, reason CANCEL). Returns CIO_OK with op's
 * OVERLAPPED holding the result (read it with WSAGetOverlappedResult; also when it was canceled after
 * moving bytes, which are its result), CIO_E_CANCELED (acknowledged) or CIO_E_TIMEOUT when the
 * operation ended canceled for that reason having moved none, SystemResources when the
 * handle cannot be attached, or *code != 0: the start's WSA code (no packet), or CIO__E_IOCP_FOREIGN:
 * the handle is attached to a port that is not one of e's (another instance's, alive or destroyed,
 * or the user's), nothing was started, and the caller runs the call as Threaded does, on the helper
 * pool (poll_iocp.c says how it knows). */
#define CIO__E_IOCP_FOREIGN (-1)
cio_err cio__e_iocp_run(struct cio_evented *e, struct cio__e_iocp_op *op, HANDLE handle, cio__e_iocp_start start,
                        void *arg, int64_t deadline_ns, bool cancelable, int *code);

/* After a start that failed at once (*code != 0) on a handle whose failed starts may still queue a
 * packet for op (Wine's file transfers do for some failures; NT never does): waits until none can
 * be left. `probe` starts a transfer on op->handle that fails only as the failed start did before
 * any packet (a zero-length one), with CIO__E_IOCP_PROBE(op) as its packet's OVERLAPPED pointer;
 * its packet, queued after any stray one, ends the wait, and op's own packets meanwhile are dropped.
 * Not cancelable (the probe ends at once). */
void cio__e_iocp_drain(struct cio__e_iocp_op *op, cio__e_iocp_start probe, void *arg);
#define CIO__E_IOCP_PROBE(op) ((void *)((char *)&(op)->ov + 1)) /* the low bit: a probe's packet */

/* How many completion packets the loops dropped as not cio's (an OVERLAPPED without cio's magic or
 * key), process-wide; for cio's tests. */
unsigned long cio__e_iocp_foreign_packets(void);

/* The handle close hook (os.h) of the iocp flavour: forgets whose port `handle` was attached to. */
void cio__e_iocp_forget(void *handle);

#endif /* CIO_EVENTED_IOCP_H */
