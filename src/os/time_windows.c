/*
 * Clocks, sleep and OS randomness for the Threaded backend on Windows.
 *
 * Invariants:
 * - CIO_CLOCK_REAL is GetSystemTimePreciseAsFileTime moved to the Unix epoch; AWAKE and BOOT are
 *   QueryPerformanceCounter (Windows has one monotonic counter for both); the CPU clocks are
 *   GetProcessTimes / GetThreadTimes (kernel + user). Counters convert to ns without overflow.
 * - Sleep is alertable (SleepEx with bAlertable TRUE) inside the cancellation bracket: a cancel's
 *   APC ends it with WAIT_IO_COMPLETION. Its timeout becomes a deadline once, so APCs, stray ones
 *   included, and millisecond rounding never lengthen it; it ends only once the deadline passed.
 * - cio_random_secure and cio_random's seed come from BCryptGenRandom with the system-preferred
 *   RNG, which never blocks; lengths above ULONG_MAX are done in pieces.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <bcrypt.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "internal/cio_oscalls.h"
#include "os.h"

#define NS_PER_S 1000000000LL
#define UNIX_EPOCH_AS_FILETIME 116444736000000000LL /* 100 ns units from 1601 to 1970 */

static int64_t filetime_100ns(FILETIME ft)
{
    return (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
}

static int64_t qpc_ns(void)
{
    static _Atomic(int64_t) freq_cache;
    int64_t freq = freq_cache;
    if (freq == 0) {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f); /* never fails on XP and later */
        freq = f.QuadPart > 0 ? f.QuadPart : 1;
        freq_cache = freq;
    }
    LARGE_INTEGER c;
    QueryPerformanceCounter(&c);
    int64_t ticks = c.QuadPart;
    return ticks / freq * NS_PER_S + ticks % freq * NS_PER_S / freq;
}

cio_timestamp cio__os_now(void *ud, cio_clock clock)
{
    (void)ud;
    FILETIME a, b, kernel, user;
    switch (clock) {
    case CIO_CLOCK_REAL: {
        FILETIME ft;
        GetSystemTimePreciseAsFileTime(&ft);
        return (cio_timestamp){(filetime_100ns(ft) - UNIX_EPOCH_AS_FILETIME) * 100};
    }
    case CIO_CLOCK_CPU_PROCESS:
        if (!CIO__SYS(GetProcessTimes, now_cpu_process)(GetCurrentProcess(), &a, &b, &kernel, &user))
            return (cio_timestamp){0};
        return (cio_timestamp){(filetime_100ns(kernel) + filetime_100ns(user)) * 100};
    case CIO_CLOCK_CPU_THREAD:
        if (!CIO__SYS(GetThreadTimes, now_cpu_thread)(GetCurrentThread(), &a, &b, &kernel, &user))
            return (cio_timestamp){0};
        return (cio_timestamp){(filetime_100ns(kernel) + filetime_100ns(user)) * 100};
    default: return (cio_timestamp){qpc_ns()};
    }
}

/* REAL: FILETIME's 100 ns; AWAKE and BOOT: one QueryPerformanceCounter tick; the CPU clocks:
 * FILETIME's 100 ns units. None can fail. */
cio_err cio__os_clock_resolution(void *ud, cio_clock clock, int64_t *ns)
{
    (void)ud;
    if (ns == NULL || (unsigned)clock > (unsigned)CIO_CLOCK_CPU_THREAD)
        return CIO_E_INVALID_ARGUMENT;
    if (clock == CIO_CLOCK_AWAKE || clock == CIO_CLOCK_BOOT) {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f);
        int64_t tick = f.QuadPart > 0 ? NS_PER_S / f.QuadPart : 1;
        *ns = tick > 0 ? tick : 1;
    } else {
        *ns = 100;
    }
    return CIO_OK;
}

cio_err cio__os_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    cio_clock clock = CIO_CLOCK_AWAKE;
    int64_t deadline = INT64_MAX;
    bool forever = timeout.kind == CIO_TIMEOUT_KIND_NONE;
    if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        clock = CIO_CLOCK_REAL;
        deadline = timeout.ns;
    } else if (!forever) {
        int64_t remaining = timeout.ns;
        if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
            remaining = timeout.ns - cio__os_now(NULL, timeout.clock).ns;
        deadline = cio__deadline_after(cio__os_now(NULL, CIO_CLOCK_AWAKE).ns, remaining);
    }
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(sleep, e);
    for (;;) {
        DWORD ms = INFINITE;
        if (!forever) {
            int64_t left = deadline - cio__os_now(NULL, clock).ns;
            if (left <= 0)
                break;
            int64_t m = (left + 999999) / 1000000;
            ms = m >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)m;
        }
        if (CIO__SYS(SleepEx, sleep)(ms, TRUE) == WAIT_IO_COMPLETION) {
            e = cio__t_syscall_interrupted();
            if (e != CIO_OK)
                return CIO__IN_SET(sleep, e);
        }
    }
    cio__t_syscall_end();
    return CIO_OK;
}

/* ---- randomness ------------------------------------------------------------------------------- */

static bool os_random(void *buf, size_t len)
{
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        ULONG n = len > 0x40000000u ? 0x40000000u : (ULONG)len;
        if (!BCRYPT_SUCCESS(CIO__SYS(BCryptGenRandom, os_random)(NULL, p, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return false;
        p += n;
        len -= n;
    }
    return true;
}

bool cio__os_seed(void *buf, size_t len)
{
    return os_random(buf, len);
}

cio_err cio__os_random_secure(void *ud, void *buf, size_t len)
{
    (void)ud;
    cio_err e = cio__t_cancel_point();
    if (e != CIO_OK)
        return CIO__IN_SET(random_secure, e);
    return CIO__IN_SET(random_secure, os_random(buf, len) ? CIO_OK : CIO_E_ENTROPY_UNAVAILABLE);
}
