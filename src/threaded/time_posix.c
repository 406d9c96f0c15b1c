/*
 * Clocks, sleep and randomness for the Threaded backend on POSIX.
 *
 * Invariants:
 * - Sleep turns its timeout into an absolute CLOCK_MONOTONIC (or CLOCK_REALTIME) deadline once, so
 *   a signal that interrupts clock_nanosleep never lengthens the sleep; it is a bracketed syscall.
 * - cio_random: each thread owns a ChaCha20 generator keyed from getrandom (fast key erasure: every
 *   refill of the 64-byte block also replaces the key), so no lock and no shared state. A thread
 *   whose getrandom fails seeds from clocks and addresses (cio_random is not the secure one).
 * - cio_random_secure reads the OS every call (getrandom), with no fallback.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cio/errmap.h"
#include "internal.h"
#include "task.h"
#include "threaded.h"

#define NS_PER_S 1000000000LL

static clockid_t os_clock(cio_clock clock)
{
    switch (clock) {
    case CIO_CLOCK_REAL: return CLOCK_REALTIME;
#ifdef CLOCK_BOOTTIME
    case CIO_CLOCK_BOOT: return CLOCK_BOOTTIME;
#endif
    case CIO_CLOCK_CPU_PROCESS: return CLOCK_PROCESS_CPUTIME_ID;
    case CIO_CLOCK_CPU_THREAD: return CLOCK_THREAD_CPUTIME_ID;
    default: return CLOCK_MONOTONIC;
    }
}

cio_timestamp cio__t_now(void *ud, cio_clock clock)
{
    (void)ud;
    struct timespec ts;
    if (clock_gettime(os_clock(clock), &ts) != 0)
        return (cio_timestamp){0};
    return (cio_timestamp){(int64_t)ts.tv_sec * NS_PER_S + (int64_t)ts.tv_nsec};
}

cio_err cio__t_sleep(void *ud, cio_timeout timeout)
{
    (void)ud;
    clockid_t clk = CLOCK_MONOTONIC;
    int64_t deadline;
    if (timeout.kind == CIO_TIMEOUT_KIND_NONE) {
        deadline = INT64_MAX;
    } else if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE && timeout.clock == CIO_CLOCK_REAL) {
        clk = CLOCK_REALTIME;
        deadline = timeout.ns;
    } else {
        int64_t remaining = timeout.ns;
        if (timeout.kind == CIO_TIMEOUT_KIND_DEADLINE)
            remaining = timeout.ns - cio__t_now(NULL, timeout.clock).ns;
        if (remaining < 0)
            remaining = 0;
        int64_t mono = cio__t_now(NULL, CIO_CLOCK_AWAKE).ns;
        deadline = remaining > INT64_MAX - mono ? INT64_MAX : mono + remaining;
    }
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline / NS_PER_S);
    ts.tv_nsec = (long)(deadline % NS_PER_S);
    if ((int64_t)ts.tv_sec != deadline / NS_PER_S) { /* 32-bit time_t: sleep "forever" in steps */
        ts.tv_sec = (time_t)INT32_MAX;
        ts.tv_nsec = 0;
    }
    cio_err e = cio__t_syscall_begin();
    if (e != CIO_OK)
        return CIO__IN_SET(sleep, e);
    for (;;) {
        int rc = clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL);
        if (rc == 0) {
            if (timeout.kind == CIO_TIMEOUT_KIND_NONE)
                continue; /* forever means until canceled */
            break;
        }
        if (rc == EINTR) {
            e = cio__t_syscall_interrupted();
            if (e != CIO_OK)
                return CIO__IN_SET(sleep, e);
            continue;
        }
        cio__t_syscall_end();
        cio__mapped m = cio__errno_nanosleep(rc);
        return CIO__IN_SET(sleep, m.action == CIO__MAP_BUG ? CIO__BUG("clock_nanosleep") : m.err);
    }
    cio__t_syscall_end();
    return CIO_OK;
}

/* ---- cio_random: per-thread ChaCha20 ----------------------------------------------------------- */

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define QR(a, b, c, d)                                   \
    a += b; d ^= a; d = ROTL(d, 16);                     \
    c += d; b ^= c; b = ROTL(b, 12);                     \
    a += b; d ^= a; d = ROTL(d, 8);                      \
    c += d; b ^= c; b = ROTL(b, 7)

typedef struct chacha {
    uint32_t key[8];
    uint64_t counter;
    unsigned char block[64];
    size_t used;
    int seeded;
} chacha;

static _Thread_local chacha rng;

static void chacha_block(const uint32_t key[8], uint64_t counter, uint32_t out[16])
{
    uint32_t s[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u,
                      key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
                      (uint32_t)counter, (uint32_t)(counter >> 32), 0, 0};
    uint32_t x[16];
    memcpy(x, s, sizeof x);
    for (int i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]);
        QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]);
        QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]);
        QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]);
        QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++)
        out[i] = x[i] + s[i];
}

static void rng_seed(void)
{
    unsigned char seed[32];
    if (getrandom(seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
        struct timespec a, b;
        clock_gettime(CLOCK_REALTIME, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        uint64_t mix[4] = {(uint64_t)a.tv_sec ^ (uint64_t)a.tv_nsec, (uint64_t)b.tv_nsec,
                           (uint64_t)(uintptr_t)&rng, (uint64_t)(uintptr_t)seed};
        memcpy(seed, mix, sizeof seed);
    }
    memcpy(rng.key, seed, sizeof rng.key);
    memset(seed, 0, sizeof seed);
    rng.counter = 0;
    rng.used = sizeof rng.block;
    rng.seeded = 1;
}

static void rng_refill(void)
{
    uint32_t a[16], b[16];
    chacha_block(rng.key, rng.counter++, a);
    chacha_block(rng.key, rng.counter++, b);
    memcpy(rng.key, a, sizeof rng.key); /* fast key erasure: the first half becomes the new key */
    memcpy(rng.block, a + 8, 32);
    memcpy(rng.block + 32, b, 32);
    rng.used = 0;
}

void cio__t_random(void *ud, void *buf, size_t len)
{
    (void)ud;
    if (!rng.seeded)
        rng_seed();
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        if (rng.used == sizeof rng.block)
            rng_refill();
        size_t n = sizeof rng.block - rng.used;
        if (n > len)
            n = len;
        memcpy(p, rng.block + rng.used, n);
        memset(rng.block + rng.used, 0, n);
        rng.used += n;
        p += n;
        len -= n;
    }
}

cio_err cio__t_random_secure(void *ud, void *buf, size_t len)
{
    (void)ud;
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        cio_err e = cio__t_syscall_begin();
        if (e != CIO_OK)
            return CIO__IN_SET(random_secure, e);
        ssize_t n = getrandom(p, len > 33554431u ? 33554431u : len, 0);
        if (n < 0) {
            int err = errno;
            if (err == EINTR) {
                e = cio__t_syscall_interrupted();
                if (e != CIO_OK)
                    return CIO__IN_SET(random_secure, e);
                cio__t_syscall_end();
                continue;
            }
            cio__t_syscall_end();
            cio__mapped m = cio__errno_getrandom(err);
            return CIO__IN_SET(random_secure, m.action == CIO__MAP_BUG ? CIO__BUG("getrandom") : m.err);
        }
        cio__t_syscall_end();
        p += n;
        len -= (size_t)n;
    }
    return CIO_OK;
}
