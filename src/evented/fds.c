/*
 * The Evented backend's descriptor table (cio__e_fd_*; any thread, lock-free; split from net.c):
 * per descriptor number below FDSTATE_MAX a word (generation << 1) | owned. `renew` gives the number
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
    *gen = w >> 1;
    return (w & 1u) != 0;
}

void cio__e_fd_renew(int fd, bool owned)
{
    if (fd < 0 || fd >= FDSTATE_MAX)
        return;
    uint32_t old = atomic_load_explicit(&fdstate[fd], memory_order_relaxed), next;
    do {
        next = (((old >> 1) + 1u) << 1) | (owned ? 1u : 0u);
    } while (
        !atomic_compare_exchange_weak_explicit(&fdstate[fd], &old, next, memory_order_acq_rel, memory_order_relaxed));
}

void cio__e_fd_forget(int fd)
{
    cio__e_fd_renew(fd, false);
}
