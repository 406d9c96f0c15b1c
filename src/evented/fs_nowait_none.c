/*
 * The readiness flavour's non-blocking file attempt where the OS has no "do not wait for the disk"
 * read or write (the BSDs: no RWF_NOWAIT, and kqueue reports a regular file readable whether or
 * not its data is cached): every attempt says EOPNOTSUPP, so fs.c runs file reads and writes on
 * the helper pool, where they may block. A descriptor's blocking mode is the user's, so pipes and
 * terminals opened as files go there too (sockets go through net.c's readiness core instead).
 */
#include <errno.h>

#include "evented.h"

long cio__e_file_try_rw(int fd, const void *iov, int iovcnt, int64_t off, bool writing)
{
    (void)fd;
    (void)iov;
    (void)iovcnt;
    (void)off;
    (void)writing;
    errno = EOPNOTSUPP;
    return -1;
}
