/*
 * The OS-independent half of the Threaded sockets (see net_common.h for what it holds and why
 * one copy serves POSIX and Winsock). No OS calls, no state.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "net_common.h"
#include "os.h"

_Static_assert(sizeof(((struct sockaddr_un *)0)->sun_path) == CIO_UNIX_PATH_MAX, "CIO_UNIX_PATH_MAX");
_Static_assert(sizeof(cio__os_sockaddr_any) == sizeof(struct sockaddr_storage),
               "cio__os_sockaddr_any is a sockaddr_storage");

const cio_listen_options cio__os_listen_defaults = {.backlog = 128, .reuse_address = true};
const cio_bind_options cio__os_bind_defaults = {.reuse_address = false};

static void put_be16(void *dst, uint16_t v)
{
    unsigned char *p = (unsigned char *)dst;
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)(v & 0xffu);
}

static uint16_t get_be16(const void *src)
{
    const unsigned char *p = (const unsigned char *)src;
    return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

static void put_be32(void *dst, uint32_t v)
{
    unsigned char *p = (unsigned char *)dst;
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const void *src)
{
    const unsigned char *p = (const unsigned char *)src;
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

bool cio__os_sockaddr_from_ip(const cio_ip_address *a, struct sockaddr_storage *storage, socklen_t *len)
{
    cio__os_sockaddr_any *sa = (cio__os_sockaddr_any *)(void *)storage;
    memset(sa, 0, sizeof *sa);
    if (a->family == CIO_IP4) {
        sa->in4.sin_family = AF_INET;
        put_be16(&sa->in4.sin_port, a->port);
        memcpy(&sa->in4.sin_addr, a->bytes, 4);
        *len = (socklen_t)sizeof sa->in4;
        return true;
    }
    if (a->family == CIO_IP6) {
        sa->in6.sin6_family = AF_INET6;
        put_be16(&sa->in6.sin6_port, a->port);
        put_be32(&sa->in6.sin6_flowinfo, a->flowinfo);
        memcpy(&sa->in6.sin6_addr, a->bytes, 16);
        sa->in6.sin6_scope_id = a->scope_id;
        *len = (socklen_t)sizeof sa->in6;
        return true;
    }
    return false;
}

void cio__os_sockaddr_to_ip(const struct sockaddr_storage *storage, socklen_t len, cio_ip_address *out)
{
    const cio__os_sockaddr_any *sa = (const cio__os_sockaddr_any *)(const void *)storage;
    memset(out, 0, sizeof *out);
    /* the length first: a receive on a stream (the resolver's TCP exchange) or from an unnamed
     * sender reports 0 bytes of address and leaves the storage as it was */
    if (len >= (socklen_t)sizeof sa->in4 && sa->sa.sa_family == AF_INET) {
        out->family = CIO_IP4;
        out->port = get_be16(&sa->in4.sin_port);
        memcpy(out->bytes, &sa->in4.sin_addr, 4);
    } else if (len >= (socklen_t)sizeof sa->in6 && sa->sa.sa_family == AF_INET6) {
        out->family = CIO_IP6;
        out->port = get_be16(&sa->in6.sin6_port);
        out->flowinfo = get_be32(&sa->in6.sin6_flowinfo);
        memcpy(out->bytes, &sa->in6.sin6_addr, 16);
        out->scope_id = sa->in6.sin6_scope_id;
    }
}

socklen_t cio__os_sockaddr_from_unix(const cio_unix_address *a, struct sockaddr_storage *storage)
{
    cio__os_sockaddr_any *sa = (cio__os_sockaddr_any *)(void *)storage;
    memset(sa, 0, sizeof *sa);
    sa->un.sun_family = AF_UNIX;
    memcpy(sa->un.sun_path, a->path, a->len);
    size_t len = offsetof(struct sockaddr_un, sun_path) + a->len;
    /* A file system path counts its NUL when it fits (the conventional length); an abstract name
     * is exactly its bytes. */
    if (a->path[0] != '\0' && a->len < sizeof sa->un.sun_path)
        len++;
    return (socklen_t)len;
}

cio__os_deadline cio__os_deadline_from(cio_timeout t)
{
    cio__os_deadline d = {true, CIO_CLOCK_AWAKE, 0};
    if (t.kind == CIO_TIMEOUT_KIND_NONE)
        return d;
    d.none = false;
    d.clock = t.clock;
    d.ns = t.kind == CIO_TIMEOUT_KIND_DEADLINE ? t.ns : cio__deadline_after(cio__os_now(NULL, t.clock).ns, t.ns);
    return d;
}

int cio__os_shutdown_how(int how)
{
    switch (how) {
    case CIO_SHUTDOWN_RECEIVE: return CIO__OS_SHUT_RD;
    case CIO_SHUTDOWN_SEND: return CIO__OS_SHUT_WR;
    case CIO_SHUTDOWN_BOTH: return CIO__OS_SHUT_RDWR;
    default: return -1;
    }
}

int cio__os_backlog(const cio_listen_options *options, int max)
{
    uint32_t b = options->backlog == 0 ? 128u : options->backlog;
    return b > (uint32_t)max ? max : (int)b;
}

cio_err cio__os_name_out(const char *name, char *buf, size_t len, size_t *out_len)
{
    size_t n = strlen(name);
    if (out_len != NULL)
        *out_len = n;
    if (len == 0)
        return CIO_E_NAME_TOO_LONG;
    size_t k = n < len ? n : len - 1;
    memcpy(buf, name, k);
    buf[k] = '\0';
    return n < len ? CIO_OK : CIO_E_NAME_TOO_LONG;
}

cio_err cio__os_sockopt_undescribed(int option)
{
    return option >= CIO_SOCKOPT_NODELAY && option <= CIO_SOCKOPT_MULTICAST_LOOP6 ? CIO_E_OPTION_UNSUPPORTED
                                                                                  : CIO_E_INVALID_ARGUMENT;
}

int64_t cio__os_sockopt_read_back(int option, int64_t value)
{
    switch (option) {
    CIO__SOCKOPT_FLAG_CASES:
        return value != 0;
    default: return value;
    }
}
