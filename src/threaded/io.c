/* The Threaded backend's vtable: every slot, in the order of struct cio_vtable (cio/io.h). */
#include <stdatomic.h>

#include "threaded.h"

static _Atomic(cio__t_close_hook_fn) close_hook;

void cio__t_set_close_hook(cio__t_close_hook_fn fn)
{
    atomic_store_explicit(&close_hook, fn, memory_order_release);
}

void cio__t_before_close(int fd)
{
    cio__t_close_hook_fn fn = atomic_load_explicit(&close_hook, memory_order_acquire);
    if (fn != NULL)
        fn(fd);
}

static const struct cio_vtable threaded_vtable = {
    .async = cio__t_async,
    .concurrent = cio__t_concurrent,
    .await = cio__t_await,
    .cancel = cio__t_cancel,
    .group_async = cio__t_group_async,
    .group_concurrent = cio__t_group_concurrent,
    .group_await = cio__t_group_await,
    .group_cancel = cio__t_group_cancel,
    .check_cancel = cio__t_check_cancel,
    .recancel = cio__t_recancel,
    .swap_cancel_protection = cio__t_swap_cancel_protection,
    .futex_wait = cio__t_futex_wait,
    .futex_wait_uncancelable = cio__t_futex_wait_uncancelable,
    .futex_wake = cio__t_futex_wake,
    .now = cio__t_now,
    .sleep = cio__t_sleep,
    .random = cio__t_random,
    .random_secure = cio__t_random_secure,
    .dir_open_file = cio__t_dir_open_file,
    .dir_create_file = cio__t_dir_create_file,
    .dir_open_dir = cio__t_dir_open_dir,
    .dir_create_dir = cio__t_dir_create_dir,
    .dir_create_dir_path = cio__t_dir_create_dir_path,
    .dir_create_dir_path_open = cio__t_dir_create_dir_path_open,
    .dir_rename = cio__t_dir_rename,
    .dir_delete_file = cio__t_dir_delete_file,
    .dir_delete_dir = cio__t_dir_delete_dir,
    .dir_stat_file = cio__t_dir_stat_file,
    .dir_access = cio__t_dir_access,
    .dir_read = cio__t_dir_read,
    .dir_close = cio__t_dir_close,
    .file_read_streaming = cio__t_file_read_streaming,
    .file_write_streaming = cio__t_file_write_streaming,
    .file_read_positional = cio__t_file_read_positional,
    .file_write_positional = cio__t_file_write_positional,
    .file_seek = cio__t_file_seek,
    .file_stat = cio__t_file_stat,
    .file_set_length = cio__t_file_set_length,
    .file_sync = cio__t_file_sync,
    .file_set_timestamps = cio__t_file_set_timestamps,
    .file_close = cio__t_file_close,
    .process_executable_open = cio__t_process_executable_open,
    .process_executable_path = cio__t_process_executable_path,
    .net_listen_ip = cio__t_net_listen_ip,
    .net_accept = cio__t_net_accept,
    .net_connect_ip = cio__t_net_connect_ip,
    .net_bind_ip = cio__t_net_bind_ip,
    .net_listen_unix = cio__t_net_listen_unix,
    .net_connect_unix = cio__t_net_connect_unix,
    .net_read = cio__t_net_read,
    .net_write = cio__t_net_write,
    .net_send = cio__t_net_send,
    .net_receive = cio__t_net_receive,
    .net_shutdown = cio__t_net_shutdown,
    .net_close = cio__t_net_close,
};

cio_io cio_threaded_io(cio_threaded *threaded)
{
    return (cio_io){threaded, &threaded_vtable};
}
