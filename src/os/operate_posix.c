/*
 * The Threaded backend's timed operations on POSIX (the `operate` slot, cio/batch.h), run on the
 * caller's own thread: no task, no thread hop.
 * - A stream read on a worker is one blocking recvmsg that the task's alarm (src/threaded/alarm.c)
 *   interrupts at the deadline, as a cancel would: the cost of the untimed read, plus two short
 *   critical sections. Where no alarm can be armed (off a worker, under CIO_CANCEL_BLOCKED, less
 *   than 1 ms left, no alarm thread) or the descriptor does not block (a non-blocking socket: EAGAIN
 *   at once; not a socket), the read takes the path below.
 * - A stream read takes what is there with recvmsg(MSG_DONTWAIT); when nothing is (EAGAIN) it waits
 *   for readability with poll(2) against the deadline (in the cancellation bracket, net_posix.c's
 *   poll_one) and tries again. Which comes first adapts per descriptor (a hint of the calling
 *   thread): after a try that found nothing the next read of that descriptor polls first, so a
 *   request/response connection, whose every read waits (B15's echo), costs poll + recvmsg rather
 *   than recvmsg (EAGAIN) + poll + recvmsg; a read that fills its buffer (more may be queued), or
 *   one of the occasional reads that try first anyway and find data, puts the try first again, so a
 *   busy stream costs one recvmsg. The hint only orders the two calls: a stale one (a descriptor
 *   closed and reused, another thread's reads) costs a system call, never a byte or a deadline.
 * - A stream write sends what fits now with sendmsg(MSG_DONTWAIT | MSG_NOSIGNAL); when nothing fits
 *   (EAGAIN) it waits for POLLOUT against the deadline and tries again. It may be short, as a plain
 *   write may; it never blocks past the deadline, nor spins past it when poll reports room that
 *   sendmsg then does not find (another writer took it).
 * - An accept and a streaming file read (pipes, terminals) wait for readability, then make the plain
 *   call. Datagram receive already takes a timeout: its slot gets it.
 *
 * Invariants:
 * - An armed alarm is disarmed before the read returns, on every path (alarm_read).
 * - A timeout ends only a wait: nothing was read or written by the call that timed out, so nothing
 *   is lost, and the descriptor is untouched (its blocking mode is never changed: MSG_DONTWAIT is
 *   per call). A socket read never blocks past the deadline: if another thread took the data
 *   between poll and recvmsg (several readers of one descriptor), it polls again. Once poll reported
 *   readiness for an accept or a read of a non-socket the plain call runs to its end; if another
 *   thread took what was ready, it blocks like the plain one, past the deadline (still cancelable).
 * - A descriptor that is not a socket (ENOTSOCK on the non-blocking try: a pipe used as a stream)
 *   reads through the poll path; a write to one is CIO_E_UNIMPLEMENTED, as is every other kind: the
 *   library then runs the operation as a concurrent task, whose cancel ends the blocked call and
 *   keeps what it had written.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "cio/batch.h"
#include "cio/errmap.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_posix.h"
#include "os.h"

/* A message of the caller's buffers (at most CIO__OS_IOV_MAX of them: a partial transfer). */
static struct msghdr msg_of(const void *iov, size_t iovcnt)
{
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = (struct iovec *)(uintptr_t)iov; /* sendmsg does not write it */
    msg.msg_iovlen = (__typeof__(msg.msg_iovlen))(iovcnt > CIO__OS_IOV_MAX ? CIO__OS_IOV_MAX : iovcnt);
    return msg;
}

/* One non-blocking recvmsg / sendmsg in the cancellation bracket. *ready false: it would block (or
 * the descriptor is not a socket: *not_socket), nothing transferred; else *n and the call's own
 * error, mapped as the plain read's / write's. */
static cio_err try_now(int fd, const void *iov, size_t iovcnt, bool writing, size_t *n, bool *ready, bool *not_socket)
{
    struct msghdr msg = msg_of(iov, iovcnt);
    *ready = false;
    *not_socket = false;
    cio_err err = cio__t_syscall_begin();
    while (err == CIO_OK) {
        ssize_t r = writing ? CIO__SYS(sendmsg, net_write_nowait)(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : CIO__SYS(recvmsg, net_read_nowait)(fd, &msg, MSG_DONTWAIT);
        if (r >= 0) {
            cio__t_syscall_end();
            *n = (size_t)r;
            *ready = true;
            return CIO_OK;
        }
        int code = errno;
        if (code == ENOTSOCK) {
            cio__t_syscall_end();
            *not_socket = true;
            return CIO_OK;
        }
        cio__mapped m = writing ? cio__errno_net_write(code) : cio__errno_net_read(code);
        if (m.action == CIO__MAP_RETRY) {
            err = cio__t_syscall_interrupted();
            continue;
        }
        cio__t_syscall_end();
        if (m.action == CIO__MAP_ERROR && m.err == CIO_E_WOULD_BLOCK)
            return CIO_OK;
        *ready = true;
        if (m.action == CIO__MAP_BUG)
            return CIO__BUG(writing ? "sendmsg: an errno that means a bug" : "recvmsg: an errno that means a bug");
        return m.action == CIO__MAP_OK ? (cio_err)CIO_OK : m.err;
    }
    return err;
}

/* A stream write: what fits now; when nothing does, wait for room up to the deadline and again. */
static cio_err timed_write(cio_operation *op, cio_timeout deadline)
{
    for (bool polled = false;; polled = true) {
        bool ready, not_socket;
        cio_err err = try_now(op->u.net_write.stream, op->u.net_write.iov, op->u.net_write.iovcnt, true, &op->count,
                              &ready, &not_socket);
        if (not_socket)
            return CIO_E_UNIMPLEMENTED;
        if (err != CIO_OK || ready)
            return err;
        if (polled && deadline.kind == CIO_TIMEOUT_KIND_DEADLINE && cio__os_now(NULL, deadline.clock).ns >= deadline.ns)
            return CIO_E_TIMEOUT; /* room by poll, none by sendmsg, until the deadline: nothing written */
        err = cio__os_poll_ready(op->u.net_write.stream, POLLOUT, deadline);
        if (err != CIO_OK)
            return err;
    }
}

/* The calling thread's hint per descriptor (its number modulo HINT_FDS): set, a timed read of it
 * found nothing at first and waited, so the next one polls first. Only an order of two calls. */
#define HINT_FDS 1024
static _Thread_local uint64_t poll_first_hint[HINT_FDS / 64];
/* Every PROBE_EVERY-th hinted read tries first anyway: a stream whose data now waits for its reader
 * (but never fills the buffer) loses the hint, at one recvmsg (EAGAIN) in PROBE_EVERY reads of a
 * stream that really waits. */
#define PROBE_EVERY 16u
static _Thread_local unsigned hinted_reads;

static bool hint_get(int fd)
{
    unsigned i = (unsigned)fd % HINT_FDS;
    return (poll_first_hint[i / 64] >> (i % 64)) & 1u;
}

static void hint_set(int fd, bool poll_first)
{
    unsigned i = (unsigned)fd % HINT_FDS;
    uint64_t bit = (uint64_t)1 << (i % 64);
    if (poll_first)
        poll_first_hint[i / 64] |= bit;
    else
        poll_first_hint[i / 64] &= ~bit;
}

/* On a worker: one blocking recvmsg, which the task's alarm (src/threaded/alarm.c) interrupts at the
 * deadline. *done false: no alarm to be had, or the descriptor does not block (EAGAIN at once: a
 * non-blocking socket, or the program's own SO_RCVTIMEO ran out; *empty) or is no socket: nothing
 * read, the caller goes on with the poll path. */
static cio_err alarm_read(int fd, const cio_iovec *iov, size_t iovcnt, cio_timeout deadline, size_t *n, bool *done,
                          bool *empty)
{
    *done = *empty = false;
    if (!cio__t_alarm_arm(deadline))
        return CIO_OK;
    struct msghdr msg = msg_of(iov, iovcnt);
    cio_err err = cio__t_syscall_begin();
    while (err == CIO_OK) {
        if (cio__t_alarm_fired()) { /* the deadline passed before the call, or it was interrupted */
            cio__t_syscall_end();
            err = CIO_E_TIMEOUT;
            break;
        }
        ssize_t r = CIO__SYS(recvmsg, net_read_alarm)(fd, &msg, 0);
        if (r >= 0) {
            cio__t_syscall_end();
            *n = (size_t)r;
            break;
        }
        int code = errno;
        cio__mapped m = cio__errno_net_read(code);
        if (m.action == CIO__MAP_RETRY) { /* EINTR: a cancel (taken here), the alarm, or a stray signal */
            err = cio__t_syscall_interrupted();
            continue;
        }
        cio__t_syscall_end();
        if (code == ENOTSOCK || (m.action == CIO__MAP_ERROR && m.err == CIO_E_WOULD_BLOCK)) {
            cio__t_alarm_disarm();
            *empty = code != ENOTSOCK;
            return CIO_OK;
        }
        if (m.action == CIO__MAP_BUG)
            err = CIO__BUG("recvmsg: an errno that means a bug");
        else if (m.action == CIO__MAP_ERROR)
            err = m.err;
        break;
    }
    cio__t_alarm_disarm();
    *done = true;
    return err;
}

/* A stream read: on a worker, a blocking read against the alarm (alarm_read); elsewhere, what is
 * there now and, when nothing is, a wait for readability up to the deadline and again (poll first
 * when the hint says a read of fd waited). *not_socket: not a socket, nothing read, the caller's poll
 * path reads it (a stale hint may have polled once already). */
static cio_err timed_read(cio_operation *op, cio_timeout deadline, bool *not_socket)
{
    int fd = op->u.net_read.stream;
    const cio_iovec *iov = op->u.net_read.iov;
    size_t iovcnt = op->u.net_read.iovcnt;
    bool done, empty;
    cio_err alarmed = alarm_read(fd, iov, iovcnt, deadline, &op->count, &done, &empty);
    if (done)
        return alarmed;
    bool hinted = hint_get(fd);
    bool poll_first = empty || (hinted && ++hinted_reads % PROBE_EVERY != 0);
    bool tried_first = !poll_first;
    for (;;) {
        if (poll_first) {
            cio_err err = cio__os_poll_ready(fd, POLLIN, deadline);
            if (err != CIO_OK)
                return err;
        }
        bool ready;
        cio_err err = try_now(fd, iov, iovcnt, false, &op->count, &ready, not_socket);
        if (*not_socket) {
            hint_set(fd, false); /* a pipe: the caller's poll path, which tries nothing first */
            return CIO_OK;
        }
        if (err != CIO_OK)
            return err;
        if (ready) {
            size_t cap = 0;
            for (size_t i = 0; i < iovcnt && i < CIO__OS_IOV_MAX; i++)
                cap += iov[i].len;
            /* Found at once, or filled the buffer (more may be queued): try first next time. */
            if (hinted && (!poll_first || (op->count >= cap && cap > 0)))
                hint_set(fd, false);
            return CIO_OK;
        }
        if (tried_first && !hinted)
            hint_set(fd, true); /* found nothing: the next read of fd polls first */
        if (poll_first && deadline.kind == CIO_TIMEOUT_KIND_DEADLINE &&
            cio__os_now(NULL, deadline.clock).ns >= deadline.ns)
            return CIO_E_TIMEOUT; /* ready by poll, empty by recvmsg, until the deadline: nothing read */
        poll_first = true;
    }
}

cio_err cio__os_operate(void *ud, cio_operation *op, cio_timeout timeout)
{
    if (op == NULL)
        return CIO_E_INVALID_ARGUMENT;
    op->count = 0;
    int fd;
    switch (op->kind) {
    case CIO_OP_NET_RECEIVE:
        return cio__os_net_receive(ud, op->u.net_receive.socket, op->u.net_receive.msgs, op->u.net_receive.max, timeout,
                                   &op->count);
    case CIO_OP_NET_WRITE: {
        if (op->u.net_write.iov == NULL && op->u.net_write.iovcnt > 0)
            return CIO_E_INVALID_ARGUMENT;
        cio__os_deadline d = cio__os_deadline_from(timeout); /* one deadline for every wait */
        return timed_write(op, d.none ? timeout : cio_timeout_deadline(d.clock, (cio_timestamp){d.ns}));
    }
    case CIO_OP_NET_READ: {
        fd = op->u.net_read.stream;
        if (op->u.net_read.iov == NULL && op->u.net_read.iovcnt > 0)
            return CIO_E_INVALID_ARGUMENT;
        cio__os_deadline d = cio__os_deadline_from(timeout); /* one deadline for every wait */
        bool not_socket = false;
        cio_err err = timed_read(op, d.none ? timeout : cio_timeout_deadline(d.clock, (cio_timestamp){d.ns}),
                                 &not_socket);
        if (!not_socket)
            return err;
        break; /* a pipe used as a stream: wait, then the plain read */
    }
    case CIO_OP_NET_ACCEPT: fd = op->u.net_accept.listener; break;
    case CIO_OP_FILE_READ_STREAMING: fd = op->u.file_read_streaming.file.handle; break;
    default: return CIO_E_UNIMPLEMENTED;
    }
    cio_err err = cio__os_poll_ready(fd, POLLIN, timeout);
    if (err != CIO_OK)
        return err;
    switch (op->kind) {
    case CIO_OP_NET_READ: return cio__os_net_read(ud, fd, op->u.net_read.iov, op->u.net_read.iovcnt, &op->count);
    case CIO_OP_NET_ACCEPT: return cio__os_net_accept(ud, fd, &op->stream);
    default:
        return cio__os_file_read_streaming(ud, op->u.file_read_streaming.file, op->u.file_read_streaming.iov,
                                           op->u.file_read_streaming.iovcnt, &op->count);
    }
}
