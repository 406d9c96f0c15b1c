/*
 * File locks for the Threaded backend on Windows: LockFileEx / UnlockFileEx on the file's first byte
 * (offset 0, length 1), shared or exclusive, owned by the handle. Locking one byte keeps the lock
 * advisory for the data (Windows locks are mandatory for the bytes they cover).
 *
 * Invariants:
 * - Every attempt passes LOCKFILE_FAIL_IMMEDIATELY: a thread is never parked inside LockFileEx,
 *   where no cancel could reach it. A blocking file_lock retries after cancelable sleeps (1 ms,
 *   doubling to 32 ms): a cancel ends the wait with CIO_E_CANCELED and no lock taken.
 * - ERROR_LOCK_VIOLATION / ERROR_IO_PENDING mean "held by another"; ERROR_NOT_ENOUGH_MEMORY and
 *   ERROR_OUTOFMEMORY SystemResources; ERROR_NOT_SUPPORTED / ERROR_INVALID_FUNCTION a device or file
 *   system without locks (FileLocksUnsupported); ERROR_INVALID_HANDLE the caller's bug; anything
 *   else Unexpected.
 * - Each attempt's OVERLAPPED carries an event with its low bit set, so it queues no completion
 *   packet: a file the Evented backend opened is asynchronous and may be attached to a loop's
 *   completion port (poll_iocp.c), where NT queues a packet for a lock granted on such a handle, with
 *   the address of this stack's OVERLAPPED, after the call returned. The event itself is never
 *   waited on (FAIL_IMMEDIATELY: the attempt is decided before LockFileEx returns); UnlockFileEx
 *   queues no packet.
 * - Replacing a lock (shared <-> exclusive through file_lock) unlocks first; downgrade takes the
 *   shared lock while the exclusive one is held (a handle may stack them) and then releases one,
 *   the exclusive, so the byte is never unlocked in between.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

/* One LockFileEx attempt: CIO_OK with *got, or the error. */
static cio_err try_once(HANDLE h, cio_lock lock, bool *got)
{
    *got = false;
    HANDLE ev = CIO__SYS(CreateEventW, lock_event)(NULL, TRUE, FALSE, NULL);
    if (ev == NULL) /* ERROR_NOT_ENOUGH_MEMORY, ERROR_NO_SYSTEM_RESOURCES: no kernel memory */
        return CIO_E_SYSTEM_RESOURCES;
    OVERLAPPED ov;
    ZeroMemory(&ov, sizeof ov);
    ov.hEvent = (HANDLE)((uintptr_t)ev | 1u); /* no completion packet (see the invariants) */
    DWORD flags = LOCKFILE_FAIL_IMMEDIATELY | (lock == CIO_LOCK_EXCLUSIVE ? LOCKFILE_EXCLUSIVE_LOCK : 0u);
    BOOL ok = CIO__SYS(LockFileEx, lock)(h, flags, 0, 1, 0, &ov);
    DWORD code = ok ? 0 : GetLastError();
    (void)CIO__SYS(CloseHandle, lock_event)(ev); /* a failure leaves nothing to do */
    if (ok) {
        *got = true;
        return CIO_OK;
    }
    switch (code) {
    case ERROR_LOCK_VIOLATION:
    case ERROR_IO_PENDING: return CIO_OK;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: return CIO_E_SYSTEM_RESOURCES;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION: return CIO_E_FILE_LOCKS_UNSUPPORTED;
    case ERROR_INVALID_HANDLE: return CIO__BUG("LockFileEx: not an open file");
    default: return cio__unexpected_os(CIO_OS_ERROR_WIN32, (int64_t)code, "file_lock");
    }
}

/* Releases one lock on the first byte; false when none was held. */
static bool unlock_once(HANDLE h)
{
    OVERLAPPED ov;
    ZeroMemory(&ov, sizeof ov);
    return CIO__SYS(UnlockFileEx, unlock)(h, 0, 1, 0, &ov) != 0;
}

/* Drops every lock this handle holds on the byte (at most two: a downgrade's). */
static void unlock_all(HANDLE h)
{
    for (int i = 0; i < 2 && unlock_once(h); i++)
        ;
}

cio_err cio__os_file_lock(void *ud, cio_file file, cio_lock lock)
{
    if ((unsigned)lock > (unsigned)CIO_LOCK_EXCLUSIVE)
        return CIO_E_INVALID_ARGUMENT;
    unlock_all(file.handle);
    if (lock == CIO_LOCK_NONE)
        return CIO_OK;
    int64_t ms = 1;
    for (;;) {
        bool got;
        cio_err e = try_once(file.handle, lock, &got);
        if (e != CIO_OK || got)
            return CIO__IN_SET(file_lock, e);
        e = cio__os_sleep(ud, cio_timeout_ms(ms)); /* the wait's cancellation point */
        if (e != CIO_OK)
            return CIO__IN_SET(file_lock, e == CIO_E_CANCELED ? e : CIO_E_UNEXPECTED);
        if (ms < 32)
            ms *= 2;
    }
}

cio_err cio__os_file_try_lock(void *ud, cio_file file, cio_lock lock, bool *acquired)
{
    (void)ud;
    if (acquired == NULL || (unsigned)lock > (unsigned)CIO_LOCK_EXCLUSIVE)
        return CIO_E_INVALID_ARGUMENT;
    *acquired = false;
    unlock_all(file.handle);
    if (lock == CIO_LOCK_NONE) {
        *acquired = true;
        return CIO_OK;
    }
    return CIO__IN_SET(file_lock, try_once(file.handle, lock, acquired));
}

void cio__os_file_unlock(void *ud, cio_file file)
{
    (void)ud;
    unlock_all(file.handle);
}

cio_err cio__os_file_downgrade_lock(void *ud, cio_file file)
{
    (void)ud;
    bool got;
    cio_err e = try_once(file.handle, CIO_LOCK_SHARED, &got);
    if (e == CIO_OK && !got)
        e = CIO_E_INVALID_ARGUMENT; /* held exclusively by another handle: this one had no lock */
    if (e == CIO_OK)
        (void)unlock_once(file.handle); /* the first unlock releases the exclusive lock */
    return CIO__IN_SET(file_lock, e);
}
