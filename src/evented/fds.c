/*
 * The Evented backend's descriptor table (cio__e_fd_*; any thread, lock-free; split from net.c):
 * per descriptor number below FDSTATE_MAX a word (generation << 2) | seekable << 1 | owned. `renew` gives the number
 * a new generation whenever cio makes a socket with it (accept, connect, listen, bind: owned, and
 * non-blocking from birth or made so once) or closes one (net and file close, right before close(2):
 * not owned; through the Threaded backend's close slots as well, by the hook cio_evented_create
 * installs: cio__e_fd_forget). So for an owned number an operation needs no fcntl (the socket is
 * known to be non-blocking), and a poller that keeps a registration per number (poll_epoll.c) can
 * trust it while the generation it saw is current. Descriptors the user made (and the numbers after
 * any close behind cio's back) are not owned: they are checked with fcntl on every operation, as the
 * poller checks their registrations. A socket cio made but the user closed with close(2), whose
 * number then comes back from outside cio, still reads as owned: the poller verifies such
 * registrations after a while (poll_epoll.c), and a read of that number takes it as non-blocking;
 * so close through cio what cio made.
 * `seekable` is set once fstat found the descriptor a regular file or a block device (positional
 * ring transfers, fs.c) and cleared with its generation: by every close through cio. A number closed
 * behind cio's back and reused for a pipe keeps it (its positional transfers then ignore the offset,
 * as the ring does for a stream); close through cio what positional calls have used.
 *
 * Invariants: the table is process-wide (descriptor numbers are), touched only through these three
 * functions, and calls nothing else of the backend.
 */
#include "evented.h"

#define FDSTATE_MAX 65536
static _Atomic(uint32_t) fdstate[FDSTATE_MAX];

bool cio__e_fd_owned(int fd, uint32_t *gen)
{
    if (fd < 0 || fd >= FDSTATE_MAX)
        return false;
    uint32_t w = atomic_load_explicit(&fdstate[fd], memory_order_acquire);
    *gen = w >> 2;
    return (w & 1u) != 0;
}

bool cio__e_fd_seekable(int fd, uint32_t *gen)
{
    if (fd < 0 || fd >= FDSTATE_MAX) {
        *gen = 0;
        return false;
    }
    uint32_t w = atomic_load_explicit(&fdstate[fd], memory_order_acquire);
    *gen = w >> 2;
    return (w & 2u) != 0;
}

void cio__e_fd_set_seekable(int fd, uint32_t gen)
{
    if (fd < 0 || fd >= FDSTATE_MAX)
        return;
    uint32_t old = atomic_load_explicit(&fdstate[fd], memory_order_relaxed);
    while ((old >> 2) == gen && (old & 2u) == 0 && /* a close since the fstat: its answer is stale */
           !atomic_compare_exchange_weak_explicit(&fdstate[fd], &old, old | 2u, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
    }
}

void cio__e_fd_renew(int fd, bool owned)
{
    if (fd < 0 || fd >= FDSTATE_MAX)
        return;
    uint32_t old = atomic_load_explicit(&fdstate[fd], memory_order_relaxed), next;
    do {
        next = (((old >> 2) + 1u) << 2) | (owned ? 1u : 0u); /* a new generation: not known seekable */
    } while (
        !atomic_compare_exchange_weak_explicit(&fdstate[fd], &old, next, memory_order_acq_rel, memory_order_relaxed));
}

void cio__e_fd_forget(int fd)
{
    cio__e_fd_renew(fd, false);
}
