/* The Evented backend's slot functions (signatures as struct cio_vtable in cio/io.h), for io.c. */
#ifndef CIO_EVENTED_SLOTS_H
#define CIO_EVENTED_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"

/* tasks.c */
cio_err cio__e_sleep(void *ud, cio_timeout timeout);
struct cio_any_future *cio__e_async(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, cio_err *inline_result);
cio_err cio__e_concurrent(void *ud, cio_task_fn fn, const void *ctx, size_t ctx_size, struct cio_any_future **out);
cio_err cio__e_await(void *ud, struct cio_any_future *task);
cio_err cio__e_cancel(void *ud, struct cio_any_future *task);
void cio__e_group_async(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size);
cio_err cio__e_group_concurrent(void *ud, cio_group *g, cio_task_fn fn, const void *ctx, size_t ctx_size);
cio_err cio__e_group_await(void *ud, cio_group *g);
void cio__e_group_cancel(void *ud, cio_group *g);
cio_err cio__e_check_cancel(void *ud);
void cio__e_recancel(void *ud);
cio_cancel_protection cio__e_swap_cancel_protection(void *ud, cio_cancel_protection prot);
cio_err cio__e_futex_wait(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected, cio_timeout timeout);
void cio__e_futex_wait_uncancelable(void *ud, const _Atomic(uint32_t) *ptr, uint32_t expected);
void cio__e_futex_wake(void *ud, const _Atomic(uint32_t) *ptr, uint32_t max_waiters);
cio_err cio__e_sleep(void *ud, cio_timeout timeout);
cio_err cio__e_dir_open_file(void *ud, cio_dir dir, const char *path, const cio_open_file_options *options,
                             cio_file *out);
cio_err cio__e_dir_create_file(void *ud, cio_dir dir, const char *path, const cio_create_file_options *options,
                               cio_file *out);
cio_err cio__e_dir_open_dir(void *ud, cio_dir dir, const char *path, const cio_open_dir_options *options,
                            cio_dir *out);
cio_err cio__e_dir_create_dir(void *ud, cio_dir dir, const char *path, uint32_t permissions);
cio_err cio__e_dir_create_dir_path(void *ud, cio_dir dir, const char *path, uint32_t permissions, bool *created);
cio_err cio__e_dir_create_dir_path_open(void *ud, cio_dir dir, const char *path,
                                        const cio_open_dir_options *options, cio_dir *out);
cio_err cio__e_dir_rename(void *ud, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path);
cio_err cio__e_dir_delete_file(void *ud, cio_dir dir, const char *path);
cio_err cio__e_dir_delete_dir(void *ud, cio_dir dir, const char *path);
cio_err cio__e_dir_stat_file(void *ud, cio_dir dir, const char *path, unsigned flags, cio_stat *out);
cio_err cio__e_dir_access(void *ud, cio_dir dir, const char *path, unsigned mode);
cio_err cio__e_dir_read(void *ud, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count);
void cio__e_dir_close(void *ud, cio_dir dir);
cio_err cio__e_file_read_streaming(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread);
cio_err cio__e_file_write_streaming(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    size_t *nwritten);
cio_err cio__e_file_read_positional(void *ud, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                    size_t *nread);
cio_err cio__e_file_write_positional(void *ud, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                     uint64_t offset, size_t *nwritten);
cio_err cio__e_file_seek(void *ud, cio_file file, int whence, int64_t offset, uint64_t *pos);
cio_err cio__e_file_stat(void *ud, cio_file file, cio_stat *out);
cio_err cio__e_file_set_length(void *ud, cio_file file, uint64_t length);
cio_err cio__e_file_sync(void *ud, cio_file file);
cio_err cio__e_file_set_timestamps(void *ud, cio_file file, const cio_set_timestamps *ts);
void cio__e_file_close(void *ud, cio_file file);
cio_err cio__e_process_executable_open(void *ud, const cio_open_file_options *options, cio_file *out);
cio_err cio__e_process_executable_path(void *ud, char *buf, size_t len, size_t *out_len);
cio_err cio__e_net_listen_ip(void *ud, const cio_ip_address *address, const cio_listen_options *options,
                             cio_server *out);
cio_err cio__e_net_accept(void *ud, cio_handle listener, cio_stream *out);
cio_err cio__e_net_connect_ip(void *ud, const cio_ip_address *address, const cio_connect_options *options,
                              cio_stream *out);
cio_err cio__e_net_bind_ip(void *ud, const cio_ip_address *address, const cio_bind_options *options,
                           cio_socket *out);
cio_err cio__e_net_listen_unix(void *ud, const cio_unix_address *address, const cio_listen_options *options,
                               cio_server *out);
cio_err cio__e_net_connect_unix(void *ud, const cio_unix_address *address, cio_stream *out);
cio_err cio__e_net_read(void *ud, cio_handle stream, const cio_iovec *iov, size_t iovcnt, size_t *nread);
cio_err cio__e_net_write(void *ud, cio_handle stream, const cio_const_iovec *iov, size_t iovcnt,
                         size_t *nwritten);
cio_err cio__e_net_send(void *ud, cio_handle socket, const cio_ip_address *dest, const cio_const_iovec *iov,
                        size_t iovcnt, size_t *nsent);
cio_err cio__e_net_receive(void *ud, cio_handle socket, cio_message *msgs, size_t max, cio_timeout timeout,
                           size_t *count);
cio_err cio__e_net_shutdown(void *ud, cio_handle socket, int how);
void cio__e_net_close(void *ud, cio_handle socket);

#endif /* CIO_EVENTED_SLOTS_H */
