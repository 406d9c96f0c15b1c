/**
 * @file cio.h
 * @brief cio — colorless I/O for C11. This header brings in the whole public API.
 *
 * @verbatim
 *
 *   cio/target.h    which OS and CPU this is (generated)
 *   cio/config.h    what this build has: CIO_HAVE_EVENTED, CIO_HAVE_THREADS
 *   cio/errors.h    cio_err, error names, descriptions and error sets (generated)
 *   cio/signals.h   cio_sig with this target's numbers (generated)
 *   cio/sig.h       raising, handling, masking signals
 *   cio/atomic.h    CIO_ATOMIC(T): _Atomic(T) in C, std::atomic<T> in C++ (same layout)
 *   cio/io.h        the Io interface: vtable, tasks, groups, cancellation, futex, time, random
 *   cio/spawn.h     the spawn calls with their call site (cio_async_at, ...; from cio/io.h)
 *   cio/sync.h      Mutex, Condition, Event, Semaphore, RwLock, Queue, Select (over the futex)
 *   cio/fs.h        files, directories, the program's own executable
 *   cio/fs_meta.h   links, permissions, owners, timestamps, real paths, locks (from cio/fs.h)
 *   cio/net.h       IP addresses, TCP/UDP and Unix-domain sockets
 *   cio/net_socket.h socket pairs, interfaces, files over streams, socket options (from cio/net.h)
 *   cio/batch.h     Operations, Batch, timeouts on stream calls
 *   cio/process.h   child processes, replacing the program, the working directory, the stderr lock
 *   cio/threaded.h  the Threaded backend
 *   cio/evented.h   the Evented backend (where CIO_HAVE_EVENTED is 1)
   @endverbatim
 */
#ifndef CIO_H
#define CIO_H

#include "cio/target.h"
#include "cio/config.h"
#include "cio/errors.h"
#include "cio/signals.h"
#include "cio/sig.h"
#include "cio/io.h"
#include "cio/sync.h"
#include "cio/fs.h"
#include "cio/mmap.h"
#include "cio/net.h"
#include "cio/batch.h"
#include "cio/process.h"
#include "cio/threaded.h"
#include "cio/evented.h"

#endif /* CIO_H */
