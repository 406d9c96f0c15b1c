/*
 * The options structs (cio_sockopts in the listen, connect and bind options) on a fresh socket:
 * one cio__os_net_set_option per option asked for, the OS file's (sockopt_posix.c or
 * sockopt_windows.c), so one copy serves POSIX and Winsock. No state; no OS call of its own.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "net_common.h"
#include "os.h"

cio_err cio__os_sockopts_apply(cio_handle socket, cio_ip_family family, bool tcp, const cio_sockopts *o)
{
    if (o == NULL)
        return CIO_OK;
    struct {
        bool on;
        int option;
        int64_t value;
    } list[] = {
        {o->nodelay, CIO_SOCKOPT_NODELAY, 1},
        {o->keepalive, CIO_SOCKOPT_KEEPALIVE, 1},
        {o->keepalive_idle != 0, CIO_SOCKOPT_KEEPALIVE_IDLE, o->keepalive_idle},
        {o->keepalive_interval != 0, CIO_SOCKOPT_KEEPALIVE_INTERVAL, o->keepalive_interval},
        {o->keepalive_count != 0, CIO_SOCKOPT_KEEPALIVE_COUNT, o->keepalive_count},
        {o->send_buffer != 0, CIO_SOCKOPT_SEND_BUFFER, o->send_buffer},
        {o->receive_buffer != 0, CIO_SOCKOPT_RECEIVE_BUFFER, o->receive_buffer},
        {o->linger, CIO_SOCKOPT_LINGER, o->linger_seconds},
        {o->ttl != 0, family == CIO_IP6 ? CIO_SOCKOPT_HOP_LIMIT : CIO_SOCKOPT_TTL, o->ttl},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
        if (!list[i].on)
            continue;
        bool tcp_only = list[i].option <= CIO_SOCKOPT_KEEPALIVE_COUNT || list[i].option == CIO_SOCKOPT_LINGER;
        if (tcp_only && !tcp)
            return CIO_E_OPTION_UNSUPPORTED;
        cio_err err = cio__os_net_set_option(NULL, socket, list[i].option, list[i].value);
        if (err != CIO_OK)
            return err;
    }
    return CIO_OK;
}
