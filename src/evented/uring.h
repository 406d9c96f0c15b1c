/*
 * The io_uring flavour's ring operations (Linux only): the interface poll_uring.c gives the slot
 * files that run natively on the ring (fs_uring.c, net_uring.c). Include after evented.h.
 *
 * A ring operation is one SQE the caller fills (opcode and operands; user_data and the link flag
 * are set here), submitted by the current fiber on its home loop's ring, optionally with an absolute
 * CLOCK_MONOTONIC deadline (a timer of the loop, which cancels the operation only when it fires);
 * the fiber waits for the operation's completion. The wait record is on the fiber's stack and is the SQE's user_data;
 * the fiber resumes only once that completion is reaped, so everything the SQE points to (paths, buffers, struct statx,
 * sockaddrs, msghdrs) may live on its stack too.
 */
#ifndef CIO_EVENTED_URING_H
#define CIO_EVENTED_URING_H

#include <linux/io_uring.h>
#include <stdbool.h>
#include <stdint.h>

#include "cio/errmap.h"

/* Whether the kernel has `opcode` (IORING_REGISTER_PROBE at create; all false when the environment
 * variable CIO_EVENTED_URING_NATIVE=0 asks for the fallback paths, which tests use). */
bool cio__e_uring_has(const struct cio_evented *e, unsigned opcode);

/* How a ring operation ended, besides its result. */
enum cio__e_uring_end { CIO__E_U_DONE = 0, CIO__E_U_CANCELED, CIO__E_U_TIMED_OUT };

/* Runs *sqe as the current fiber (a fiber of e) with a deadline at deadline_ns (CLOCK_MONOTONIC ns;
 * < 0: none; a loop timer that cancels the operation when it fires). Returns the completion's result (>= 0 or -errno).
 * *end: CANCELED when a cancel request (cancelable) ended it before it completed — acknowledged, the result is then
 * -ECANCELED; TIMED_OUT when the deadline did (the result is then -ECANCELED). A result >= 0 always wins: an operation
 * that completed although a cancel was requested returns its result and leaves the request pending for the next
 * cancellation point, as a Threaded syscall that returned before its signal does. */
int32_t cio__e_uring_op(struct cio_evented *e, const struct io_uring_sqe *sqe, int64_t deadline_ns, bool cancelable,
                        enum cio__e_uring_end *end);

/* cio__e_uring_op with the Threaded backend's handling of the result (CIO__OS_SYSCALL's): errno
 * values through `map` (RETRY resubmits, after the cancellation point; BUG is CIO__BUG), a cancel
 * is CIO_E_CANCELED, the deadline CIO_E_TIMEOUT. *res: the result when CIO_OK (>= 0, or the
 * -errno the map calls OK). */
cio_err cio__e_uring_call(struct cio_evented *e, const struct io_uring_sqe *sqe, int64_t deadline_ns, bool cancelable,
                          cio__mapped (*map)(int), int32_t *res);

/* Submissions of `opcode` made for fibers on e's rings so far: ring operations and readiness waits
 * (IORING_OP_POLL_ADD); cancels sent to the kernel (IORING_OP_ASYNC_CANCEL) and, under IORING_OP_NOP, requests
 * withdrawn before they were submitted. Tests check with it what ran natively. */
uint64_t cio__e_uring_count(const struct cio_evented *e, unsigned opcode);

/* io_uring_enter calls on e's rings so far that submitted SQEs (a fiber's request is queued, and
 * the loop submits everything queued in its next enter): tests check with it that a batch of
 * operations reaches the kernel in one submission, not one per fiber. */
uint64_t cio__e_uring_enters(const struct cio_evented *e);

/* ThreadSanitizer models descriptors: close(2) resets what it knows of the number, and a number
 * created twice with nothing between is a race to it. It cannot see IORING_OP_CLOSE, so another
 * thread's pipe2 or socket reusing a number the ring closed looked like one (run_jobs --evented,
 * about 1 run in 80 under load). Ring closes tell it first, as its syscall hook for close. */
#if defined(__SANITIZE_THREAD__)
#define CIO__E_URING_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CIO__E_URING_TSAN 1
#endif
#endif
#ifdef CIO__E_URING_TSAN
void __sanitizer_syscall_pre_impl_close(long fd);
#define CIO__E_URING_CLOSE_HOOK(fd) __sanitizer_syscall_pre_impl_close((long)(fd))
#else
#define CIO__E_URING_CLOSE_HOOK(fd) ((void)(fd))
#endif

#endif /* CIO_EVENTED_URING_H */
