/*
 * Which poller the Evented backend uses on Linux: io_uring, or epoll (the readiness flavour).
 *
 * The auto flavour tries io_uring and falls back to epoll when the kernel refuses it (too old,
 * seccomp, kernel.io_uring_disabled, qemu-user). CIO_EVENTED_BACKEND=io_uring|epoll in the
 * environment replaces the auto flavour only (a forced io_uring from there still falls back, so the
 * variable never makes a create fail); any other value is ignored. Under valgrind the auto flavour
 * (and the variable) is epoll. kqueue and the completion port do not exist here.
 */
#include <stdlib.h>
#include <string.h>

#include "evented.h"

/* Under valgrind io_uring_enter is not treated as a blocking call: a loop thread waiting in it keeps
 * valgrind's one running-thread lock and the whole process stops (liburing issue #657). The client
 * request is a few no-op instructions outside valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
static bool under_valgrind(void)
{
#ifdef RUNNING_ON_VALGRIND
    return RUNNING_ON_VALGRIND != 0;
#else
    return false;
#endif
}

static cio_evented_flavour from_env(void)
{
    const char *v = getenv("CIO_EVENTED_BACKEND");
    if (v != NULL && strcmp(v, "io_uring") == 0)
        return CIO_EVENTED_IO_URING;
    if (v != NULL && strcmp(v, "epoll") == 0)
        return CIO_EVENTED_EPOLL;
    return CIO_EVENTED_AUTO;
}

cio_err cio__e_choose_poller(struct cio_evented *e, cio_evented_flavour requested)
{
    if (requested == CIO_EVENTED_KQUEUE || requested == CIO_EVENTED_IOCP)
        return CIO_E_OPERATION_UNSUPPORTED;
    cio_evented_flavour fl = requested == CIO_EVENTED_AUTO ? from_env() : requested;
    if (requested == CIO_EVENTED_AUTO && under_valgrind())
        fl = CIO_EVENTED_EPOLL; /* the auto flavour only: a forced io_uring is what was asked for */
    cio_err err;
    if (fl == CIO_EVENTED_EPOLL) {
        err = cio__e_init_pollers(e, &cio__e_epoll_ops);
    } else {
        fl = CIO_EVENTED_IO_URING;
        err = cio__e_init_pollers(e, &cio__e_uring_ops);
        if (err != CIO_OK && requested == CIO_EVENTED_AUTO) {
            fl = CIO_EVENTED_EPOLL;
            err = cio__e_init_pollers(e, &cio__e_epoll_ops);
        }
    }
    if (err == CIO_OK)
        e->flavour = fl;
    return err;
}
