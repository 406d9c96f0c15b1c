/* The Evented backend's slot functions, for io.c and the files that implement them. */
#ifndef CIO_EVENTED_SLOTS_H
#define CIO_EVENTED_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"
#include "cio/net.h"

/* cio__e_<name> for every row of CIO_VTABLE_SLOTS (cio/io.h): tasks.c (concurrency, cancellation,
 * futex, sleep), fs.c (dir_, file_, process_), net.c (net_). The clock and the random generators are
 * the Threaded backend's own functions (no loop state): */
#define cio__e_now cio__os_now
#define cio__e_random cio__os_random
#define cio__e_random_secure cio__os_random_secure
/* Interface names never block and need no loop state either. */
#define cio__e_net_interface_name_resolve cio__os_net_interface_name_resolve
#define cio__e_net_interface_name cio__os_net_interface_name
/* Socket options and addresses (issue 25): one call that never blocks, the same on a non-blocking
 * descriptor, so the Threaded functions (sockopt_posix.c) run on the calling fiber. */
#define cio__e_net_set_option cio__os_net_set_option
#define cio__e_net_get_option cio__os_net_get_option
#define cio__e_net_multicast cio__os_net_multicast
#define cio__e_net_socket_address cio__os_net_socket_address
/* fs_links.c: the links-and-metadata slots on the helper pool; these two never block: */
#define cio__e_clock_resolution cio__os_clock_resolution
#define cio__e_file_is_tty cio__os_file_is_tty
/* Locks: only file_lock waits (fs_links.c: the helper pool); trying, unlocking and downgrading never do. */
#define cio__e_file_try_lock cio__os_file_try_lock
#define cio__e_file_unlock cio__os_file_unlock
#define cio__e_file_downgrade_lock cio__os_file_downgrade_lock
/* ANSI escape codes (issue 21): one call that never blocks (isatty; GetConsoleMode/SetConsoleMode). */
#define cio__e_file_supports_ansi_escape_codes cio__os_file_supports_ansi_escape_codes
#define cio__e_file_enable_ansi_escape_codes cio__os_file_enable_ansi_escape_codes
/* Memory maps: unmapping and remapping never wait for the disk (mmap.c runs the others on the helper pool). */
#define cio__e_file_memory_map_destroy cio__os_file_memory_map_destroy
#define cio__e_file_memory_map_set_length cio__os_file_memory_map_set_length
#define CIO__E_SLOT_PROTO(ret, name, params) ret cio__e_##name params;
CIO_VTABLE_SLOTS(CIO__E_SLOT_PROTO)
#undef CIO__E_SLOT_PROTO

#endif /* CIO_EVENTED_SLOTS_H */
