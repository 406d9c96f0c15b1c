/*
 * cio_net_write_file's zero-copy path on Windows: TransmitFile (mswsock), whose pointer Winsock
 * hands out through WSAIoctl(SIO_GET_EXTENSION_FUNCTION_POINTER) — no link to mswsock.dll. The
 * Threaded backend's, and the Evented one's helper threads'. Where Winsock has no TransmitFile for the
 * socket, or refuses the file before a byte went, the slot says Unimplemented and the library
 * copies with positional reads and stream writes (src/core/net_pair.c).
 *
 * Invariants:
 * - Each TransmitFile is overlapped (the sockets are WSA_FLAG_OVERLAPPED and non-blocking,
 *   net_windows.c): the file's offset goes in the OVERLAPPED (the file position is never moved), and
 *   the call's completion is waited for on a manual-reset event, alertably, in the cancellation
 *   bracket, in slices of WAIT_SLICE_MS after each of which the socket is polled (WSAPoll, no
 *   wait: Wine completes a transfer the peer reset only then). A cancel's APC (cancel_windows.c) ends the wait: the
 * transfer is canceled with CancelIoEx and waited for (not alertably) before the OVERLAPPED, on this stack, goes away;
 * what it moved is counted. Chunks are at most 1 GiB (TransmitFile takes a DWORD).
 * - *nwritten counts every byte that went, also when an error or a cancel ends the call
 *   (WSAGetOverlappedResult reports the count of a failed transfer too), so a retried chunk
 *   (WSAEINTR) starts after what went. The event is closed on every path.
 * - The OVERLAPPED's event carries the low bit, so the completion queues no packet: an Evented
 *   instance's socket is attached to a loop's completion port (poll_iocp.c), and a packet there
 *   would carry the address of this stack's OVERLAPPED to a loop thread after the call returned.
 *   Waits use the event's plain value.
 * - The pointer is asked for per call (one WSAIoctl, cheap next to a file); when that fails the
 *   library copies.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <mswsock.h>
#include <windows.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_windows.h"
#include "os.h"

#define CHUNK_MAX ((uint64_t)1 << 30)
#define WAIT_SLICE_MS 100u

/* TransmitFile of s's provider, or NULL (asked per call: one WSAIoctl, no state to go stale). */
static LPFN_TRANSMITFILE transmit_file_of(SOCKET s)
{
    LPFN_TRANSMITFILE fn = NULL;
    GUID id = WSAID_TRANSMITFILE;
    DWORD got = 0;
    if (CIO__SYS(wsa_ioctl, transmit_file_fn)(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &id, sizeof id, &fn, sizeof fn,
                                              &got, NULL, NULL) == SOCKET_ERROR)
        return NULL;
    return fn;
}

/* Waits for the transfer of ov to end (alertably: a cancel's APC ends the wait, the transfer is
 * canceled and waited for). CIO_OK: it ended (its result in WSAGetOverlappedResult); CANCELED: a
 * cancel ended it (*moved what it had sent); an error of the wait. */
static cio_err wait_transfer(SOCKET s, OVERLAPPED *ov, HANDLE ev, DWORD *moved)
{
    cio_err err = cio__t_syscall_begin();
    while (err == CIO_OK) {
        DWORD r = CIO__SYS(WaitForSingleObjectEx, transmit_wait)(ev, WAIT_SLICE_MS, TRUE);
        if (r == WAIT_OBJECT_0) {
            cio__t_syscall_end();
            return CIO_OK;
        }
        if (r == WAIT_TIMEOUT) {
            /* A slice without news: look at the socket (Wine notices a peer's reset for a pending
             * transfer only when the socket is polled; on Windows this changes nothing). */
            WSAPOLLFD pf = {s, POLLWRNORM, 0};
            (void)CIO__SYS(WSAPoll, transmit_poll)(&pf, 1, 0);
            continue;
        }
        if (r == WAIT_IO_COMPLETION) {
            err = cio__t_syscall_interrupted();
            continue;
        }
        cio__t_syscall_end();
        err = CIO_E_UNEXPECTED; /* WAIT_FAILED: stop the transfer as a cancel would */
        break;
    }
    (void)CIO__SYS(CancelIoEx, transmit_cancel)((HANDLE)s, ov);
    DWORD flags = 0;
    /* waits: ov is ours again. A failure (the transfer ended canceled or in error) still says what
     * went (*moved, the OVERLAPPED's count; left 0 if the call did not get that far). */
    (void)CIO__SYS(WSAGetOverlappedResult, transmit_drain)(s, ov, moved, TRUE, &flags);
    return err;
}

cio_err cio__os_net_write_file(void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len,
                               uint64_t *nwritten)
{
    (void)ud;
    if (nwritten == NULL)
        return CIO_E_INVALID_ARGUMENT;
    *nwritten = 0;
    SOCKET s = (SOCKET)(uintptr_t)stream;
    LPFN_TRANSMITFILE fn = transmit_file_of(s);
    if (fn == NULL)
        return CIO_E_UNIMPLEMENTED;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    HANDLE ev = CIO__SYS(CreateEventW, transmit_event)(NULL, TRUE, FALSE, NULL);
    if (ev == NULL)
        return CIO_E_UNIMPLEMENTED; /* no event to wait on: the copy needs none */
    bool reinit = false;
    while (err == CIO_OK && *nwritten < len) {
        uint64_t left = len - *nwritten, at = offset + *nwritten;
        OVERLAPPED ov;
        memset(&ov, 0, sizeof ov);
        ov.Offset = (DWORD)at;
        ov.OffsetHigh = (DWORD)(at >> 32);
        ov.hEvent = (HANDLE)((uintptr_t)ev | 1u); /* no completion packet (see the invariants) */
        (void)ResetEvent(ev);
        DWORD chunk = (DWORD)(left < CHUNK_MAX ? left : CHUNK_MAX), moved = 0, flags = 0;
        if (!CIO__SYS(TransmitFile, write_file)(fn, s, file.handle, chunk, 0, &ov, NULL, 0)) {
            int code = WSAGetLastError();
            if (code != WSA_IO_PENDING) {
                if (*nwritten == 0 && (code == WSAEOPNOTSUPP || code == WSAEINVAL || code == ERROR_NOT_SUPPORTED)) {
                    err = CIO_E_UNIMPLEMENTED; /* not this file (a pipe, a console): the copy */
                    break;
                }
                bool again = false;
                err = cio__os_wsa_failure(cio__wsa_wsa_transmit_file(code), &again, &reinit);
                if (err == CIO_OK && !again)
                    err = CIO_E_UNEXPECTED;
                continue;
            }
            err = wait_transfer(s, &ov, ev, &moved);
            if (err != CIO_OK) {
                *nwritten += moved;
                break;
            }
        }
        if (!CIO__SYS(WSAGetOverlappedResult, transmit_result)(s, &ov, &moved, FALSE, &flags)) {
            *nwritten += moved; /* what went before the error: counted, and a retry goes on after it */
            bool again = false;
            err = cio__os_wsa_failure(cio__wsa_wsa_transmit_file(WSAGetLastError()), &again, &reinit);
            if (err == CIO_OK && !again)
                err = CIO_E_UNEXPECTED;
            continue;
        }
        *nwritten += moved;
        if (moved < chunk)
            break; /* the end of the file (an overlapped transfer is never short otherwise) */
    }
    (void)CIO__SYS(CloseHandle, transmit_event)(ev);
    if (err == CIO_E_UNIMPLEMENTED)
        return err; /* nothing went: the library copies */
    return CIO__IN_SET(net_write_file, err);
}
