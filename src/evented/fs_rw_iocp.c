/*
 * The Evented backend's file reads, writes and sync on Windows (the iocp flavour; fs.c is the POSIX
 * one): for now the Threaded implementation (ntdll, src/os/fs_windows_io.c) on the helper pool,
 * canceled like any helper call. Overlapped file I/O on the loop's completion port (a handle opened
 * with FILE_FLAG_OVERLAPPED) is issue 24's later step; a pipe or console handle never is (they are
 * opened synchronous), so those stay on the helper pool.
 * Invariants: as fs_helper.c's (a foreign thread runs the call directly, helper.c).
 */
#include "evented.h"
#include "slots.h"
#include "helper_slot.h"
#include "os.h"

CIO__E_HELPER_SLOT(file_read_streaming, 4, cio_file, file, const cio_iovec *, iov, size_t, iovcnt, size_t *, nread)
CIO__E_HELPER_SLOT(file_write_streaming, 4, cio_file, file, const cio_const_iovec *, iov, size_t, iovcnt, size_t *,
                   nwritten)
CIO__E_HELPER_SLOT(file_read_positional, 5, cio_file, file, const cio_iovec *, iov, size_t, iovcnt, uint64_t, offset,
                   size_t *, nread)
CIO__E_HELPER_SLOT(file_write_positional, 5, cio_file, file, const cio_const_iovec *, iov, size_t, iovcnt, uint64_t,
                   offset, size_t *, nwritten)
CIO__E_HELPER_SLOT(file_sync, 1, cio_file, file)
