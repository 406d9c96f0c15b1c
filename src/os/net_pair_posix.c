/*
 * Socket pairs and interface names for the Threaded backend on the POSIX kernels (Linux and the
 * BSDs); the Evented backend uses the same functions (its socket pair is then made non-blocking).
 *
 * Invariants:
 * - socketpair is made close-on-exec (SOCK_CLOEXEC) and blocking, like every socket this backend
 *   returns; it cannot block, its EINTR is retried in the cancellation bracket.
 * - if_nametoindex / if_indextoname do not block (a netlink or ioctl query): no bracket, one
 *   cancellation point before. if_nametoindex fails with 0 and errno; a 0 with errno 0 (some libcs
 *   say nothing for an unknown name) is InterfaceNotFound too.
 * - A name is copied into the caller's buffer only through a local IF_NAMESIZE buffer, so a short
 *   buffer gets NameTooLong and its NUL-terminated prefix, never an overrun.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>

#include "cio/errmap.h"
#include "cio/net.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "net_common.h"
#include "os.h"

cio_err cio__os_net_socket_pair(void *ud, cio_stream *out)
{
    (void)ud;
    if (out == NULL)
        return CIO_E_INVALID_ARGUMENT;
    int fds[2] = {-1, -1};
    cio_err err;
    CIO__OS_CALL(err, socketpair, CIO__SYS(socketpair, socket_pair)(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds));
    if (err != CIO_OK)
        return CIO__IN_SET(net_socket_create_pair, err);
    memset(out, 0, 2 * sizeof *out);
    out[0].handle = fds[0];
    out[1].handle = fds[1];
    return CIO_OK;
}

cio_err cio__os_net_interface_name_resolve(void *ud, const char *name, uint32_t *index)
{
    (void)ud;
    if (name == NULL || index == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    size_t n = strlen(name);
    if (n == 0 || n >= IF_NAMESIZE)
        return CIO_E_INTERFACE_NOT_FOUND; /* no interface has such a name */
    errno = 0;
    unsigned int i = CIO__SYS(if_nametoindex, interface_resolve)(name);
    if (i != 0) {
        *index = (uint32_t)i;
        return CIO_OK;
    }
    if (errno == 0)
        return CIO_E_INTERFACE_NOT_FOUND;
    cio__mapped m = cio__errno_if_nametoindex(errno);
    return CIO__IN_SET(net_interface_resolve, m.action == CIO__MAP_BUG ? CIO__BUG("if_nametoindex") : m.err);
}

cio_err cio__os_net_interface_name(void *ud, uint32_t index, char *buf, size_t len, size_t *out_len)
{
    (void)ud;
    if (buf == NULL && len > 0)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    if (index == 0)
        return CIO_E_INTERFACE_NOT_FOUND;
    char name[IF_NAMESIZE + 1];
    memset(name, 0, sizeof name);
    if (CIO__SYS(if_indextoname, interface_name)((unsigned int)index, name) == NULL) {
        cio__mapped m = cio__errno_if_indextoname(errno);
        return CIO__IN_SET(net_interface_name, m.action == CIO__MAP_BUG ? CIO__BUG("if_indextoname") : m.err);
    }
    return cio__os_name_out(name, buf, len, out_len);
}
