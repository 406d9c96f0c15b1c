/*
 * cio_failing_io(): a backend of a system with no I/O at all (Zig's Io.failing), for tests of code
 * paths that must cope with failure. async runs inline; concurrent is unavailable; futex waits
 * return at once (a spurious wake-up); create → NoSpaceLeft; open → FileNotFound; other file and
 * directory operations → Unexpected (or AccessDenied where the set has no better member); stdio
 * writes "succeed" like writes into a closed pipe would not block; random fills zeros;
 * random_secure → EntropyUnavailable; now → 0; sleep returns at once; every networking operation →
 * NetworkDown (as on a system without networking), closing a socket does nothing; spawn and replace
 * → OperationUnsupported (a system without processes), wait → OperationUnsupported, kill does
 * nothing, the working directory → Unexpected / AccessDenied; the stderr lock is always had (there
 * is no stderr to share); a signal wait → OperationUnsupported (no signal ever comes).
 * There is no state: every slot is thread-safe.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/mmap.h"
#include "cio/net.h"
#include "cio/process.h"
#include "internal.h"

/* The stubs ignore most of their parameters. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif

static struct cio_any_future *f_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *res)
{
    *res = cio__run_inline(fn, ctx, ctx_size);
    return NULL;
}

static cio_err f_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out)
{
    return CIO_E_CONCURRENCY_UNAVAILABLE;
}

static cio_err f_await(void *ud, struct cio_any_future *f)
{
    assert(0 && "cio_failing_io never hands out futures");
    return CIO_E_UNEXPECTED;
}

static void f_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    cio_err ignored;
    (void)f_async(ud, fn, ctx, ctx_size, &ignored);
}

static cio_err f_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size)
{
    return CIO_E_CONCURRENCY_UNAVAILABLE;
}

static cio_err f_group_await(void *ud, cio_group *g)
{
    return CIO_OK;
}

static void f_group_cancel(void *ud, cio_group *g)
{
}

static cio_err f_check_cancel(void *ud)
{
    return CIO_OK;
}

static void f_recancel(void *ud)
{
}

static cio_cancel_protection f_swap_cancel_protection(void *ud, cio_cancel_protection p)
{
    return CIO_CANCEL_UNBLOCKED;
}

static cio_err f_futex_wait(void *ud, const _Atomic(uint32_t) *p, uint32_t expected, cio_timeout t)
{
    return CIO_OK;
}

static void f_futex_wait_uncancelable(void *ud, const _Atomic(uint32_t) *p, uint32_t expected)
{
}

static void f_futex_wake(void *ud, const _Atomic(uint32_t) *p, uint32_t n)
{
}

static cio_timestamp f_now(void *ud, cio_clock c)
{
    return (cio_timestamp){0};
}

static cio_err f_sleep(void *ud, cio_timeout t)
{
    return CIO_OK;
}

static void f_random(void *ud, void *buf, size_t len)
{
    memset(buf, 0, len);
}

static cio_err f_random_secure(void *ud, void *buf, size_t len)
{
    return CIO_E_ENTROPY_UNAVAILABLE;
}

static cio_err f_dir_open_file(void *ud, cio_dir d, const char *p, const cio_open_file_options *o, cio_file *out)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_create_file(void *ud, cio_dir d, const char *p, const cio_create_file_options *o, cio_file *out)
{
    return CIO_E_NO_SPACE_LEFT;
}

static cio_err f_dir_open_dir(void *ud, cio_dir d, const char *p, const cio_open_dir_options *o, cio_dir *out)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_create_dir(void *ud, cio_dir d, const char *p, uint32_t perm)
{
    return CIO_E_NO_SPACE_LEFT;
}

static cio_err f_dir_create_dir_path(void *ud, cio_dir d, const char *p, uint32_t perm, bool *created)
{
    return CIO_E_NO_SPACE_LEFT;
}

static cio_err f_dir_create_dir_path_open(void *ud, cio_dir d, const char *p, const cio_open_dir_options *o,
                                          cio_dir *out)
{
    return CIO_E_NO_SPACE_LEFT;
}

static cio_err f_dir_rename(void *ud, cio_dir a, const char *pa, cio_dir b, const char *pb)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_delete_file(void *ud, cio_dir d, const char *p)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_stat_file(void *ud, cio_dir d, const char *p, unsigned flags, cio_stat *out)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_access(void *ud, cio_dir d, const char *p, unsigned mode)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_read(void *ud, cio_dir_reader *r, cio_dir_entry *e, size_t max, size_t *count)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_dir_close(void *ud, cio_dir d)
{
    return CIO_OK; /* nothing was opened: nothing to close */
}

static cio_err f_file_read_streaming(void *ud, cio_file f, const cio_iovec *iov, size_t n, size_t *nread)
{
    return CIO_E_NOT_OPEN_FOR_READING;
}

static cio_err f_file_write_streaming(void *ud, cio_file f, const cio_const_iovec *iov, size_t n, size_t *nwritten)
{
    return CIO_E_NOT_OPEN_FOR_WRITING;
}

static cio_err f_file_read_positional(void *ud, cio_file f, const cio_iovec *iov, size_t n, uint64_t off, size_t *nread)
{
    return CIO_E_NOT_OPEN_FOR_READING;
}

static cio_err f_file_write_positional(void *ud, cio_file f, const cio_const_iovec *iov, size_t n, uint64_t off,
                                       size_t *nw)
{
    return CIO_E_NOT_OPEN_FOR_WRITING;
}

static cio_err f_file_seek(void *ud, cio_file f, int whence, int64_t off, uint64_t *pos)
{
    return CIO_E_UNSEEKABLE;
}

static cio_err f_file_stat(void *ud, cio_file f, cio_stat *out)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_set_length(void *ud, cio_file f, uint64_t len)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_sync(void *ud, cio_file f)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_set_timestamps(void *ud, cio_file f, const cio_set_timestamps *ts)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_close(void *ud, cio_file f)
{
    return CIO_OK;
}

static cio_err f_process_executable_open(void *ud, const cio_open_file_options *o, cio_file *out)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_process_executable_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    return CIO_E_OPERATION_UNSUPPORTED;
}

static void f_clear_child(cio_child *out)
{
    if (out == NULL)
        return;
    out->id = 0;
    out->handle = CIO_NO_HANDLE;
    for (int i = 0; i < 3; i++)
        out->stdio[i].handle = CIO_NO_HANDLE;
}

static cio_err f_process_spawn(void *ud, const cio_spawn_options *o, cio_child *out)
{
    f_clear_child(out);
    return CIO_E_OPERATION_UNSUPPORTED;
}

static cio_err f_process_spawn_path(void *ud, cio_dir dir, const cio_spawn_options *o, cio_child *out)
{
    f_clear_child(out);
    return CIO_E_OPERATION_UNSUPPORTED;
}

static cio_err f_child_wait(void *ud, cio_child *child, cio_term *term)
{
    return CIO_E_OPERATION_UNSUPPORTED;
}

static void f_child_kill(void *ud, cio_child *child)
{
}

static cio_err f_process_replace(void *ud, const cio_spawn_options *o)
{
    return CIO_E_OPERATION_UNSUPPORTED;
}

static cio_err f_process_replace_path(void *ud, cio_dir dir, const cio_spawn_options *o)
{
    return CIO_E_OPERATION_UNSUPPORTED;
}

static cio_err f_process_current_path(void *ud, char *buf, size_t len, size_t *out_len)
{
    if (out_len != NULL)
        *out_len = 0;
    return CIO_E_UNEXPECTED;
}

static cio_err f_process_set_current_dir(void *ud, cio_dir dir)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_process_set_current_path(void *ud, const char *path)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_lock_stderr(void *ud)
{
    return CIO_OK;
}

static bool f_try_lock_stderr(void *ud)
{
    return true;
}

static void f_unlock_stderr(void *ud)
{
}

static cio_err f_net_listen_ip(void *ud, const cio_ip_address *a, const cio_listen_options *o, cio_server *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_accept(void *ud, cio_handle listener, cio_stream *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_connect_ip(void *ud, const cio_ip_address *a, const cio_connect_options *o, cio_stream *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_bind_ip(void *ud, const cio_ip_address *a, const cio_bind_options *o, cio_socket *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_listen_unix(void *ud, const cio_unix_address *a, const cio_listen_options *o, cio_server *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_connect_unix(void *ud, const cio_unix_address *a, cio_stream *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_read(void *ud, cio_handle h, const cio_iovec *iov, size_t n, size_t *nread)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_write(void *ud, cio_handle h, const cio_const_iovec *iov, size_t n, size_t *nwritten)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_send(void *ud, cio_handle h, const cio_ip_address *dest, const cio_const_iovec *iov, size_t n,
                          size_t *nsent)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_receive(void *ud, cio_handle h, cio_message *msgs, size_t max, cio_timeout t, size_t *count)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_shutdown(void *ud, cio_handle h, int how)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_close(void *ud, cio_handle h)
{
    return CIO_OK;
}

static cio_err f_net_socket_pair(void *ud, cio_stream *out)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_interface_name_resolve(void *ud, const char *name, uint32_t *index)
{
    return CIO_E_INTERFACE_NOT_FOUND;
}

static cio_err f_net_interface_name(void *ud, uint32_t index, char *buf, size_t len, size_t *out_len)
{
    return CIO_E_INTERFACE_NOT_FOUND;
}

static cio_err f_net_write_file(void *ud, cio_handle h, cio_file f, uint64_t off, uint64_t len, uint64_t *n)
{
    if (n != NULL)
        *n = 0;
    return CIO_E_NETWORK_DOWN;
}

/* No native timed operation: cio_operate_timeout falls back to a task, which concurrent refuses. */
static cio_err f_operate(void *ud, struct cio_operation *op, cio_timeout timeout)
{
    return CIO_E_UNIMPLEMENTED;
}

/* No devices: a system without I/O has nothing to control. */
static cio_err f_device_io_control(void *ud, struct cio_operation *op)
{
    return CIO_E_OPERATION_UNSUPPORTED;
}

static cio_err f_net_set_option(void *ud, cio_handle h, int option, int64_t value)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_get_option(void *ud, cio_handle h, int option, int64_t *value)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_multicast(void *ud, cio_handle h, int op, const cio_ip_address *group, const cio_ip_address *iface)
{
    return CIO_E_NETWORK_DOWN;
}

static cio_err f_net_socket_address(void *ud, cio_handle h, bool peer, cio_ip_address *out)
{
    return CIO_E_NETWORK_DOWN;
}

/* ---- signals: no signal ever comes ---- */
static cio_err f_signal_wait(void *ud, const struct cio_sigset *set, int *signo)
{
    return CIO_E_OPERATION_UNSUPPORTED;
}

/* ---- links and metadata: as the other file operations (a missing file, or Unexpected) ---- */

static cio_err f_clock_resolution(void *ud, cio_clock c, int64_t *ns)
{
    if (ns != NULL)
        *ns = 0;
    return CIO_E_CLOCK_UNAVAILABLE;
}

static cio_err f_dir_stat(void *ud, cio_dir d, cio_stat *out)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_dir_sym_link(void *ud, cio_dir d, const char *t, const char *p, unsigned flags)
{
    return CIO_E_NO_SPACE_LEFT;
}

static cio_err f_dir_read_link(void *ud, cio_dir d, const char *p, char *buf, size_t len, size_t *out_len)
{
    if (out_len != NULL)
        *out_len = 0;
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_hard_link(void *ud, cio_dir a, const char *pa, cio_dir b, const char *pb, unsigned flags)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_set_permissions(void *ud, cio_dir d, uint32_t perm)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_dir_set_file_permissions(void *ud, cio_dir d, const char *p, uint32_t perm, unsigned flags)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_set_owner(void *ud, cio_dir d, uint32_t uid, uint32_t gid)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_dir_set_file_owner(void *ud, cio_dir d, const char *p, uint32_t uid, uint32_t gid, unsigned flags)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_set_timestamps(void *ud, cio_dir d, const char *p, const cio_set_timestamps *ts, unsigned flags)
{
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_file_hard_link(void *ud, cio_file f, cio_dir d, const char *p)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_set_permissions(void *ud, cio_file f, uint32_t perm)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_set_owner(void *ud, cio_file f, uint32_t uid, uint32_t gid)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_is_tty(void *ud, cio_file f, bool *out)
{
    if (out != NULL)
        *out = false;
    return CIO_OK;
}

static cio_err f_real_path_none(char *buf, size_t len, size_t *out_len)
{
    if (out_len != NULL)
        *out_len = 0;
    if (buf != NULL && len > 0)
        buf[0] = '\0';
    return CIO_E_FILE_NOT_FOUND;
}

static cio_err f_dir_real_path(void *ud, cio_dir d, char *buf, size_t len, size_t *out_len)
{
    return f_real_path_none(buf, len, out_len);
}

static cio_err f_dir_real_path_file(void *ud, cio_dir d, const char *p, char *buf, size_t len, size_t *out_len)
{
    return f_real_path_none(buf, len, out_len);
}

static cio_err f_file_real_path(void *ud, cio_file f, char *buf, size_t len, size_t *out_len)
{
    return f_real_path_none(buf, len, out_len);
}

/* dir_rename_preserve fails as dir_rename does. */
#define f_dir_rename_preserve f_dir_rename

static cio_err f_file_lock(void *ud, cio_file f, cio_lock lock)
{
    return CIO_E_FILE_LOCKS_UNSUPPORTED;
}

static cio_err f_file_try_lock(void *ud, cio_file f, cio_lock lock, bool *acquired)
{
    if (acquired != NULL)
        *acquired = false;
    return CIO_E_FILE_LOCKS_UNSUPPORTED;
}

static void f_file_unlock(void *ud, cio_file f)
{
}

static cio_err f_file_downgrade_lock(void *ud, cio_file f)
{
    return CIO_E_FILE_LOCKS_UNSUPPORTED;
}

static cio_err f_dir_create_tmp_file(void *ud, cio_dir d, uint32_t perm, cio_file *out)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_write_file(void *ud, cio_file out, bool positional, uint64_t out_offset, cio_file in,
                                 uint64_t in_offset, uint64_t len, uint64_t *nwritten)
{
    if (nwritten != NULL)
        *nwritten = 0;
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_supports_ansi_escape_codes(void *ud, cio_file f, bool *out)
{
    return f_file_is_tty(ud, f, out);
}

static cio_err f_file_enable_ansi_escape_codes(void *ud, cio_file f)
{
    return CIO_E_NOT_TERMINAL_DEVICE;
}

/* Memory maps: Zig's failing Io says AccessDenied to mmap; the wrapper never falls back from it. */
static cio_err f_file_memory_map_create(void *ud, cio_file f, const cio_memory_map_options *o, cio_memory_map *out)
{
    return CIO_E_ACCESS_DENIED;
}

static void f_file_memory_map_destroy(void *ud, cio_memory_map *mm)
{
}

static cio_err f_file_memory_map_set_length(void *ud, cio_memory_map *mm, size_t new_len)
{
    return CIO_E_ACCESS_DENIED;
}

static cio_err f_file_memory_map_read(void *ud, cio_memory_map *mm)
{
    return CIO_E_NOT_OPEN_FOR_READING;
}

static cio_err f_file_memory_map_write(void *ud, cio_memory_map *mm)
{
    return CIO_E_NOT_OPEN_FOR_WRITING;
}

/* dir_delete_dir fails as dir_delete_file does; cancel (request, then as await) as await. */
#define f_dir_delete_dir f_dir_delete_file
#define f_cancel f_await
#define F_SLOT(ret, name, params) .name = f_##name,
static const struct cio_vtable failing_vtable = {CIO_VTABLE_SLOTS(F_SLOT)};

cio_io cio_failing_io(void)
{
    return (cio_io){NULL, &failing_vtable};
}
