/**
 * @file cio/config.h
 * @brief What this build of cio has: CIO_HAVE_EVENTED, CIO_HAVE_THREADS.
 *
 * cio/config.h — what this build of cio has, as macros user code can test with `#if`.
 *
 * - CIO_HAVE_EVENTED: 1 when the Evented backend exists for this target: where its fiber switch
 *   is written (`src/evented/fiber_<arch>.c`) and the OS has a poller for it —
 *   Linux (io_uring, epoll) on x86_64, aarch64 and riscv64, and FreeBSD, NetBSD
 *   and OpenBSD (kqueue) on x86_64 and aarch64. 0 everywhere else. Zig's
 *   std.Io.Evented is `void` where unimplemented, for the same kind of check:
 *   @code
 *   #if CIO_HAVE_EVENTED
 *       ... use the Evented backend ...
 *   #endif
 *   @endcode
 * - CIO_HAVE_THREADS: 1 when the Threaded backend runs tasks on threads of their own, so that
 *   cio_concurrent can succeed; 0 on WASI, where it is single-threaded (async
 *   runs inline, concurrent fails with CIO_E_CONCURRENCY_UNAVAILABLE).
 */
#ifndef CIO_CONFIG_H
#define CIO_CONFIG_H

#include "cio/target.h"

#if defined(CIO_OS_LINUX) && (defined(CIO_ARCH_X86_64) || defined(CIO_ARCH_AARCH64) || defined(CIO_ARCH_RISCV64))
#define CIO_HAVE_EVENTED 1 /**< 1 when the Evented backend (cio/evented.h) exists for this target, else 0. */
#elif (defined(CIO_OS_FREEBSD) || defined(CIO_OS_NETBSD) || defined(CIO_OS_OPENBSD)) && \
    (defined(CIO_ARCH_X86_64) || defined(CIO_ARCH_AARCH64))
#define CIO_HAVE_EVENTED 1 /**< 1 when the Evented backend (cio/evented.h) exists for this target, else 0. */
#elif defined(CIO_OS_WINDOWS) && defined(CIO_ARCH_X86_64)
#define CIO_HAVE_EVENTED 1 /**< 1 when the Evented backend (cio/evented.h) exists for this target, else 0. */
#else
#define CIO_HAVE_EVENTED 0 /**< 1 when the Evented backend (cio/evented.h) exists for this target, else 0. */
#endif

#if defined(CIO_OS_WASI)
#define CIO_HAVE_THREADS 0 /**< 1 when Threaded runs tasks on threads of their own (0 on WASI). */
#else
#define CIO_HAVE_THREADS 1 /**< 1 when Threaded runs tasks on threads of their own (0 on WASI). */
#endif

#endif /* CIO_CONFIG_H */
