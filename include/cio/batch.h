/*
 * cio/batch.h — Operations, Batch, and timeouts on stream calls (Zig's Io.Operation, Io.Batch,
 * Io.operate and Io.operateTimeout).
 *
 * An operation is one I/O call described as data (a cio_operation: kind, arguments, result), so that
 * it can be run now (cio_operate), run with a timeout (cio_operate_timeout), or put with others into
 * a caller-allocated cio_batch whose members run overlapped and complete in any order.
 *
 * Errors have two levels. The operation's own error (what the same call made directly would
 * return: ConnectionResetByPeer, EndOfStream, ...) is stored in its result, `op->err`. The function
 * that runs it returns only what concerns the running itself: CIO_E_CANCELED (the caller was
 * canceled), CIO_E_TIMEOUT (the timeout passed), CIO_E_CONCURRENCY_UNAVAILABLE (the backend could
 * not overlap the operation with the caller's wait, where that was required) and
 * CIO_E_INVALID_ARGUMENT (NULL, unknown kind).
 *
 * How operations run. Library code over the vtable slots, the same on every backend: a batch runs
 * each member as a task of its own (cio_async for await_async, cio_concurrent for
 * await_concurrent and timeouts). On Evented each task is a fiber: their submissions reach the
 * kernel together (io_uring: one io_uring_enter for all the SQEs queued before the loop waits;
 * epoll/kqueue: one wait for the readiness of all of them). On Threaded each is a pool thread for
 * await_concurrent; await_async uses cio_async, so once the async limit is reached (and always where
 * the backend has no threads: WASI) the members run inline, one after the other, in submission order.
 *
 * What a timeout leaves behind. A timed-out operation is canceled and waited for before the call
 * returns, so nothing of it is in flight afterwards and the handle stays usable. Nothing is lost:
 * an operation that had already transferred data when the timeout came completes with it (the
 * call then succeeds with those bytes); a read that timed out consumed nothing; a timed-out write
 * reports the bytes it did write (write_all: everything written before the timeout).
 */
#ifndef CIO_BATCH_H
#define CIO_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kinds of operation. */
typedef enum cio_op_kind {
    CIO_OP_NONE = 0,             /**< no operation (an invalid argument) */
    CIO_OP_FILE_READ_STREAMING,  /**< cio_file_read_streaming_v; count: bytes, 0 at the end */
    CIO_OP_FILE_WRITE_STREAMING, /**< cio_file_write_streaming_v; count: bytes */
    CIO_OP_DEVICE_IO_CONTROL,    /**< ioctl / DeviceIoControl; count: ioctl's result (POSIX) or the bytes
                                      written to `out` (Windows); err in File.DeviceIoControlError;
                                      OperationUnsupported where the OS has none (WASI) */
    CIO_OP_NET_RECEIVE,          /**< cio_socket_receive_batch without timeout; count: datagrams */
    CIO_OP_NET_SEND,             /**< cio_socket_send_to_v (one datagram); count: bytes */
    CIO_OP_NET_READ,             /**< cio_stream_read_v; count: bytes, 0 when the peer closed */
    CIO_OP_NET_WRITE,            /**< cio_stream_write_v; count: bytes (may be short) */
    CIO_OP_NET_ACCEPT,           /**< cio_server_accept; stream: the connection */
    CIO_OP_NET_CONNECT           /**< cio_net_connect; stream: the connection */
} cio_op_kind;

/**
 * One operation: set `kind` and the member of `u` it names; the running call fills `err` and the
 * result fields. The buffers and arguments pointed to must stay valid until the operation has
 * completed (or been canceled).
 */
typedef struct cio_operation {
    cio_op_kind kind; /**< which operation (and which member of u) */
    /** The arguments, by kind. */
    union {
        struct {
            cio_file file;
            const cio_iovec *iov;
            size_t iovcnt;
        } file_read_streaming;
        struct {
            cio_file file;
            const cio_const_iovec *iov;
            size_t iovcnt;
        } file_write_streaming;
        struct {
            cio_file file;      /* the file, device, pipe or socket */
            unsigned long code; /* POSIX: the ioctl request (FIONREAD, TIOCGWINSZ, ...); Windows: the
                                   control code (IOCTL_..., FSCTL_...) */
            void *arg;          /* POSIX: ioctl's third argument (Windows: unused) */
            const void *in;     /* Windows: the input buffer, or NULL (POSIX: unused) */
            size_t in_len;      /* Windows: its length */
            void *out;          /* Windows: the output buffer, or NULL (POSIX: unused) */
            size_t out_len;     /* Windows: its length */
        } device_io_control;
        struct {
            cio_handle socket;
            cio_message *msgs;
            size_t max;
        } net_receive;
        struct {
            cio_handle socket;
            const cio_ip_address *dest; /* NULL: the connected peer */
            const cio_const_iovec *iov;
            size_t iovcnt;
        } net_send;
        struct {
            cio_handle stream;
            const cio_iovec *iov;
            size_t iovcnt;
        } net_read;
        struct {
            cio_handle stream;
            const cio_const_iovec *iov;
            size_t iovcnt;
        } net_write;
        struct {
            cio_handle listener;
        } net_accept;
        struct {
            const cio_ip_address *address;
            const cio_connect_options *options; /* NULL: none */
        } net_connect;
    } u;
    /* results */
    cio_err err;       /**< the operation's own error (its call's set); CIO_E_CANCELED if canceled */
    size_t count;      /**< bytes or datagrams transferred (also on error: what was done before) */
    cio_stream stream; /**< accept and connect: the new connection */
} cio_operation;

/**
 * Runs one operation now, on the calling task (no task is created).
 * @param io  the Io
 * @param op  the operation; its result fields are written
 * @return CIO_OK (the operation ran; see op->err), CIO_E_CANCELED (op->err is CIO_E_CANCELED too),
 *         CIO_E_INVALID_ARGUMENT (NULL op, unknown kind). Set: Cancelable. A cancellation point.
 * @cancellation yes
 */
cio_err cio_operate(cio_io io, cio_operation *op);

/**
 * Runs one operation, giving up after `timeout`. CIO_TIMEOUT_NONE is cio_operate. Otherwise the
 * operation runs as a concurrent task while the caller waits; when the timeout passes first it is
 * canceled and waited for, and if it completed anyway (data had arrived) its result stands and the
 * call returns CIO_OK: a timeout never loses data. On the task path a timeout that has already
 * passed (or passes before the operation's task got to start) may end it before it tried:
 * CIO_E_TIMEOUT, nothing done, even if data was waiting — it is a deadline, not a poll. A native
 * timed form always tries once first, so there an expired timeout (a zero duration) is a poll: what
 * is there now is taken. Where the backend has a native timed
 * form, no task is made and the caller itself waits: Threaded on POSIX for stream reads (in a
 * task on Linux and the BSDs: the plain blocking read, which the pool's alarm thread interrupts at
 * the deadline with the cancel's signal; elsewhere, and with under 1 ms left or cancellation
 * blocked: a non-blocking try, then poll against the deadline), stream writes (what fits now, else poll for
 * room: a timed write may be short, as a plain one may), accepts, streaming file reads and
 * datagram receives; Evented for reads, writes, accepts and receives (readiness, or the io_uring
 * operation itself with a timer of the loop that cancels it only if it fires). Otherwise it costs one pool thread (a
 * recycled worker) per call on Threaded, one fiber on Evented.
 * @param io       the Io
 * @param op       the operation; its result fields are written
 * @param timeout  how long to wait (duration or deadline)
 * @return CIO_OK (see op->err), CIO_E_TIMEOUT (nothing done; the handle is usable), CIO_E_CANCELED,
 *         CIO_E_CONCURRENCY_UNAVAILABLE (no task could be had: where the backend has no threads,
 *         or its concurrent limit is reached), CIO_E_INVALID_ARGUMENT.
 *         Set: Operate.TimeoutError = {Canceled, Timeout, ConcurrencyUnavailable}. A cancellation point.
 * @cancellation yes
 */
cio_err cio_operate_timeout(cio_io io, cio_operation *op, cio_timeout timeout);

/* ---- Batch ------------------------------------------------------------------------------------- */

struct cio_batch;

/** A slot of a batch: the caller provides the array, cio_batch_init owns it afterwards. */
typedef struct cio_batch_slot {
    cio_operation op;           /**< the operation (its results once completed) */
    cio_future future;          /**< internal: its task */
    struct cio_batch *batch;    /**< internal: the batch it belongs to */
    CIO_ATOMIC(uint32_t) state; /**< internal */
    uint32_t index;             /**< internal: its place in the batch */
} cio_batch_slot;

/**
 * A batch of operations over caller-allocated slots. Not thread-safe: one task adds, awaits, takes
 * results and cancels. The operations themselves run on other tasks.
 * Life of a slot: unused → (add) submitted → (await) in flight → completed → (next) unused.
 */
typedef struct cio_batch {
    cio_batch_slot *slots;         /**< internal: the caller's slots */
    uint32_t capacity;             /**< internal: how many */
    uint32_t in_flight;            /**< internal: tasks not yet reaped */
    uint32_t completed;            /**< internal: reaped, waiting for next */
    uint32_t next_scan;            /**< internal */
    CIO_ATOMIC(uint32_t) done_gen; /**< internal: futex word, bumped by each finishing task */
} cio_batch;

/**
 * Makes an empty batch over `slots` (capacity entries, up to UINT32_MAX - 1).
 * @return CIO_OK or CIO_E_INVALID_ARGUMENT (NULL, capacity 0).
 * @cancellation no
 */
cio_err cio_batch_init(cio_batch *batch, cio_batch_slot *slots, size_t capacity);

/**
 * Submits a copy of `op` in the first unused slot.
 * @param index  gets the slot's index (may be NULL)
 * @return CIO_OK, CIO_E_SYSTEM_RESOURCES (every slot is in use), CIO_E_INVALID_ARGUMENT.
 *         Not a cancellation point.
 * @cancellation no
 */
cio_err cio_batch_add(cio_batch *batch, const cio_operation *op, uint32_t *index);

/**
 * Submits a copy of `op` in slot `index`, which must be unused.
 * @return CIO_OK, CIO_E_INVALID_ARGUMENT (out of range, slot in use). Not a cancellation point.
 * @cancellation no
 */
cio_err cio_batch_add_at(cio_batch *batch, uint32_t index, const cio_operation *op);

/**
 * Takes one completed operation (no particular order among those completed), freeing its slot.
 * @param index  gets the slot index it was added at (may be NULL)
 * @param out    gets the operation with its result (may be NULL)
 * @return true when one was taken, false when none has completed (await first).
 * @cancellation no
 */
bool cio_batch_next(cio_batch *batch, uint32_t *index, cio_operation *out);

/**
 * Starts every submitted operation with cio_async and waits until at least one has completed
 * (returns at once when one already has, or when nothing is submitted or in flight). Where async
 * runs inline (Threaded over its async limit, WASI) the operations run one after the other, in
 * order, on the caller: an operation that waits for another member of the batch then never
 * completes — use cio_batch_await_concurrent for such batches.
 * @return CIO_OK, CIO_E_CANCELED (the waiting caller was canceled: the operations stay in flight,
 *         cancel the batch; or an operation running inline was canceled: it completes with
 *         CIO_E_CANCELED in its result and the ones after it stay submitted), CIO_E_INVALID_ARGUMENT.
 *         Set: Cancelable. A cancellation point.
 * @cancellation yes
 */
cio_err cio_batch_await_async(cio_io io, cio_batch *batch);

/**
 * Starts every submitted operation with cio_concurrent (overlapped, never inline) and waits until
 * at least one has completed or `timeout` passed.
 * @return CIO_OK; CIO_E_TIMEOUT (the unfinished operations stay in flight: await again, or cancel);
 *         CIO_E_CONCURRENCY_UNAVAILABLE (a task could not be had: those already started stay in
 *         flight, the rest stay submitted); CIO_E_CANCELED; CIO_E_INVALID_ARGUMENT.
 *         Set: Batch.AwaitConcurrentError = {Canceled, Timeout, ConcurrencyUnavailable}.
 *         A cancellation point.
 * @cancellation yes
 */
cio_err cio_batch_await_concurrent(cio_io io, cio_batch *batch, cio_timeout timeout);

/**
 * Cancels every operation in flight, waits for all of them and drops the submitted ones that never
 * started. When it returns nothing is in flight and no resource is held; operations that completed
 * anyway (before noticing the request) can still be taken with cio_batch_next, the canceled ones
 * are gone. Never fails; not a cancellation point (it runs to the end for a canceled caller too).
 * @cancellation no
 */
void cio_batch_cancel(cio_io io, cio_batch *batch);

/* ---- timeouts on stream calls ------------------------------------------------------------------ */

/**
 * @name Timeouts on stream calls
 * The plain call (cio_stream_read, cio_stream_write_all, cio_server_accept, ...) with a timeout,
 * each run through cio_operate_timeout. What every one of them guarantees:
 * - `timeout` is a duration (cio_timeout_ms(10000): "idle for 10 s") or a deadline
 *   (cio_timeout_deadline), per call; #CIO_TIMEOUT_NONE makes it exactly the plain call. An idle
 *   timeout is a fresh duration on every read: a client that keeps talking is never cut off.
 * - #CIO_E_TIMEOUT comes within a few milliseconds after the timeout (the tests hold every backend
 *   to 10 ms), and leaves the handle **usable and unchanged**: nothing is lost and nothing half
 *   done is left in flight (the call waited for its operation to end before returning). Read it
 *   again, write to it, or close it: all are fine.
 * - A read that timed out **consumed nothing** (*nread is 0): the bytes that come later are read by
 *   the next call. A write that timed out reports in *nwritten the bytes it did write (0 on the
 *   readiness paths, where a timeout ends only the wait); those bytes are in the stream.
 * - read_all / write_all have **one deadline for the whole call** (computed on entry); on
 *   CIO_E_TIMEOUT (or any error) *nread / *nwritten hold every byte transferred before it, which
 *   stay in `buf` (read_all) or in the stream (write_all).
 * - The error set is the plain call's set plus #CIO_E_TIMEOUT and #CIO_E_CONCURRENCY_UNAVAILABLE
 *   (returned only where the backend has no native timed form and could get no task to run the
 *   operation while the caller waits: a backend without threads (WASI), or the Threaded backend's
 *   concurrent limit reached). Native, so never ConcurrencyUnavailable: on Threaded (POSIX) stream
 *   reads and writes on sockets, accepts, datagram receives and streaming file reads; on Evented
 *   everything (what is not native there runs as a fiber).
 * - Each is a cancellation point: a cancel request ends the wait with #CIO_E_CANCELED, with the
 *   same guarantees as a timeout.
 * - Cost: on Evented a timed read is the plain read plus a timer of the loop (io_uring: the same one
 *   RECVMSG, no extra submission); on Threaded (POSIX) in a task the plain read and two short
 *   critical sections (the pool's alarm list), outside a task a wait for readability (poll) and the
 *   plain read. An idle-timeout server runs at about the speed of the same server without timeouts.
 * @{
 */

/**
 * cio_stream_read with a timeout: reads what has arrived (at least one byte), waiting at most
 * `timeout` for it.
 * @param io       the Io
 * @param stream   the connected stream
 * @param buf      where the bytes go
 * @param len      its length
 * @param[out] nread how many were read: 0 when the peer closed its side (CIO_OK), and 0 on every
 *                 error (CIO_E_TIMEOUT: nothing was consumed, read again later)
 * @param timeout  how long to wait for the first byte (a duration or a deadline; #CIO_TIMEOUT_NONE:
 *                 no limit)
 * @return #CIO_OK, or an error of net.ReadTimeoutError \errset_net_read_timeout (net.ReadError ∪
 *         {ConcurrencyUnavailable}; #CIO_E_TIMEOUT: the stream is usable)
 * @cancellation yes
 */
cio_err cio_stream_read_timeout(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread,
                                cio_timeout timeout);
/**
 * Reads until `len` bytes, the peer's end (fewer bytes, CIO_OK) or the timeout, which covers the
 * whole call.
 * @param io       the Io
 * @param stream   the connected stream
 * @param buf      where the bytes go
 * @param len      how many to read
 * @param[out] nread the bytes read, also on an error: on #CIO_E_TIMEOUT they are in buf[0..*nread)
 *                 and the rest is still in the stream (the stream is usable)
 * @param timeout  the limit for the whole call (a duration or a deadline; #CIO_TIMEOUT_NONE: none)
 * @return #CIO_OK, or an error of net.ReadTimeoutError \errset_net_read_timeout
 * @cancellation yes
 */
cio_err cio_stream_read_all_timeout(cio_io io, const cio_stream *stream, void *buf, size_t len, size_t *nread,
                                    cio_timeout timeout);
/**
 * cio_stream_write with a timeout: writes what fits (may be short, as cio_stream_write may),
 * waiting at most `timeout` for room.
 * @param io       the Io
 * @param stream   the connected stream
 * @param buf      the bytes
 * @param len      how many
 * @param[out] nwritten how many were written, also on an error (those bytes are in the stream)
 * @param timeout  how long to wait for room (a duration or a deadline; #CIO_TIMEOUT_NONE: no limit)
 * @return #CIO_OK, or an error of net.WriteTimeoutError \errset_net_write_timeout (net.WriteError ∪
 *         {ConcurrencyUnavailable}; #CIO_E_TIMEOUT: the stream is usable)
 * @cancellation yes
 */
cio_err cio_stream_write_timeout(cio_io io, const cio_stream *stream, const void *buf, size_t len, size_t *nwritten,
                                 cio_timeout timeout);
/**
 * cio_stream_write_all with one deadline for the whole call.
 * @param io       the Io
 * @param stream   the connected stream
 * @param buf      the bytes
 * @param len      how many
 * @param[out] nwritten (may be NULL) the bytes written: all of them on CIO_OK; on #CIO_E_TIMEOUT
 *                 (or any error) exactly those that went into the stream (the peer reads them;
 *                 send the rest, buf + *nwritten, later if you like: the stream is usable)
 * @param timeout  the limit for the whole call (a duration or a deadline; #CIO_TIMEOUT_NONE: none)
 * @return #CIO_OK, or an error of net.WriteTimeoutError \errset_net_write_timeout
 * @cancellation yes
 */
cio_err cio_stream_write_all_timeout(cio_io io, const cio_stream *stream, const void *buf, size_t len, size_t *nwritten,
                                     cio_timeout timeout);
/**
 * cio_server_accept with a timeout.
 * @param io       the Io
 * @param server   the listening socket
 * @param[out] out the new connection (written only on CIO_OK)
 * @param timeout  how long to wait for a connection (a duration or a deadline)
 * @return #CIO_OK, or an error of net.AcceptTimeoutError \errset_net_accept_timeout (net.AcceptError
 *         ∪ {Timeout, ConcurrencyUnavailable}; #CIO_E_TIMEOUT: nothing accepted, the listener is
 *         usable and a connection that comes later waits for the next accept)
 * @cancellation yes
 */
cio_err cio_server_accept_timeout(cio_io io, const cio_server *server, cio_stream *out, cio_timeout timeout);
/**
 * cio_socket_send_to with a timeout (one datagram, all of it or nothing).
 * @param io       the Io
 * @param socket   the datagram socket
 * @param dest     where to (NULL: the connected peer)
 * @param buf      the datagram
 * @param len      its length
 * @param[out] nsent (may be NULL) the bytes sent (len on CIO_OK, 0 on an error)
 * @param timeout  how long to wait for room to send
 * @return #CIO_OK, or an error of net.SendTimeoutError \errset_net_send_timeout (net.SendError ∪
 *         {Timeout, ConcurrencyUnavailable})
 * @cancellation yes
 */
cio_err cio_socket_send_to_timeout(cio_io io, const cio_socket *socket, const cio_ip_address *dest, const void *buf,
                                   size_t len, size_t *nsent, cio_timeout timeout);
/**
 * cio_file_read_streaming with a timeout (pipes, terminals, sockets; a regular file never waits).
 * @param io       the Io
 * @param file     the file
 * @param buf      where the bytes go
 * @param len      its length
 * @param[out] nread how many were read (0 at the end, and on every error: a timeout consumed nothing)
 * @param timeout  how long to wait for the first byte
 * @return #CIO_OK, or an error of File.ReadStreamingTimeoutError \errset_file_read_streaming_timeout
 *         (File.Reader.Error ∪ {ConcurrencyUnavailable})
 * @cancellation yes
 */
cio_err cio_file_read_streaming_timeout(cio_io io, cio_file file, void *buf, size_t len, size_t *nread,
                                        cio_timeout timeout);
/**
 * cio_file_write_streaming with a timeout (may be short).
 * @param io       the Io
 * @param file     the file
 * @param buf      the bytes
 * @param len      how many
 * @param[out] nwritten how many were written, also on an error
 * @param timeout  how long to wait for room
 * @return #CIO_OK, or an error of File.WriteStreamingTimeoutError
 *         \errset_file_write_streaming_timeout (File.WriteStreamingError ∪ {Timeout,
 *         ConcurrencyUnavailable})
 * @cancellation yes
 */
cio_err cio_file_write_streaming_timeout(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten,
                                         cio_timeout timeout);
/** @} */
/* (Datagram receive already takes a timeout: cio_socket_receive_timeout in cio/net.h.) */

#ifdef __cplusplus
}
#endif

#endif /* CIO_BATCH_H */
