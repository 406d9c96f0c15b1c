/* The Evented backend's vtable: every slot, in the order of struct cio_vtable (cio/io.h). An instance
 * uses a copy in which its poller may have replaced slots it runs natively (poller->override). */
#include "evented.h"
#include "slots.h"
#include "threaded.h"

const struct cio_vtable cio__e_vtable = {
    .async = cio__e_async,
    .concurrent = cio__e_concurrent,
    .await = cio__e_await,
    .cancel = cio__e_cancel,
    .group_async = cio__e_group_async,
    .group_concurrent = cio__e_group_concurrent,
    .group_await = cio__e_group_await,
    .group_cancel = cio__e_group_cancel,
    .check_cancel = cio__e_check_cancel,
    .recancel = cio__e_recancel,
    .swap_cancel_protection = cio__e_swap_cancel_protection,
    .futex_wait = cio__e_futex_wait,
    .futex_wait_uncancelable = cio__e_futex_wait_uncancelable,
    .futex_wake = cio__e_futex_wake,
    .now = cio__t_now,
    .sleep = cio__e_sleep,
    .random = cio__t_random,
    .random_secure = cio__t_random_secure,
    .dir_open_file = cio__e_dir_open_file,
    .dir_create_file = cio__e_dir_create_file,
    .dir_open_dir = cio__e_dir_open_dir,
    .dir_create_dir = cio__e_dir_create_dir,
    .dir_create_dir_path = cio__e_dir_create_dir_path,
    .dir_create_dir_path_open = cio__e_dir_create_dir_path_open,
    .dir_rename = cio__e_dir_rename,
    .dir_delete_file = cio__e_dir_delete_file,
    .dir_delete_dir = cio__e_dir_delete_dir,
    .dir_stat_file = cio__e_dir_stat_file,
    .dir_access = cio__e_dir_access,
    .dir_read = cio__e_dir_read,
    .dir_close = cio__e_dir_close,
    .file_read_streaming = cio__e_file_read_streaming,
    .file_write_streaming = cio__e_file_write_streaming,
    .file_read_positional = cio__e_file_read_positional,
    .file_write_positional = cio__e_file_write_positional,
    .file_seek = cio__e_file_seek,
    .file_stat = cio__e_file_stat,
    .file_set_length = cio__e_file_set_length,
    .file_sync = cio__e_file_sync,
    .file_set_timestamps = cio__e_file_set_timestamps,
    .file_close = cio__e_file_close,
    .process_executable_open = cio__e_process_executable_open,
    .process_executable_path = cio__e_process_executable_path,
    .net_listen_ip = cio__e_net_listen_ip,
    .net_accept = cio__e_net_accept,
    .net_connect_ip = cio__e_net_connect_ip,
    .net_bind_ip = cio__e_net_bind_ip,
    .net_listen_unix = cio__e_net_listen_unix,
    .net_connect_unix = cio__e_net_connect_unix,
    .net_read = cio__e_net_read,
    .net_write = cio__e_net_write,
    .net_send = cio__e_net_send,
    .net_receive = cio__e_net_receive,
    .net_shutdown = cio__e_net_shutdown,
    .net_close = cio__e_net_close,
};

cio_io cio_evented_io(cio_evented *evented)
{
    return (cio_io){evented, &evented->vtable};
}
