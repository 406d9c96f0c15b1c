/*
 * cio_random for the Threaded backend (every OS): a ChaCha20 generator per thread.
 *
 * Invariants:
 * - Each thread owns its generator (no lock, no shared state), keyed on first use from
 *   cio__os_seed (time_posix.c: getrandom; time_wasi.c: getentropy). If the OS has no entropy to
 *   give without blocking, the key comes from clocks and addresses: cio_random is the fast one, not
 *   the secure one (that is cio_random_secure, which never falls back).
 * - Fast key erasure: every refill of the 64-byte output block also replaces the key, and bytes are
 *   wiped from the block as they are handed out, so past output cannot be recomputed from the state.
 * - On WASI (no threads) _Thread_local is an ordinary global.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "os.h"

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define QR(a, b, c, d) \
    a += b;            \
    d ^= a;            \
    d = ROTL(d, 16);   \
    c += d;            \
    b ^= c;            \
    b = ROTL(b, 12);   \
    a += b;            \
    d ^= a;            \
    d = ROTL(d, 8);    \
    c += d;            \
    b ^= c;            \
    b = ROTL(b, 7)

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
    uint32_t s[16] = {0x61707865u,
                      0x3320646eu,
                      0x79622d32u,
                      0x6b206574u,
                      key[0],
                      key[1],
                      key[2],
                      key[3],
                      key[4],
                      key[5],
                      key[6],
                      key[7],
                      (uint32_t)counter,
                      (uint32_t)(counter >> 32),
                      0,
                      0};
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
    if (!cio__os_seed(seed, sizeof seed)) {
        uint64_t mix[4] = {(uint64_t)cio__os_now(NULL, CIO_CLOCK_REAL).ns,
                           (uint64_t)cio__os_now(NULL, CIO_CLOCK_AWAKE).ns, (uint64_t)(uintptr_t)&rng,
                           (uint64_t)(uintptr_t)seed};
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

void cio__os_random(void *ud, void *buf, size_t len)
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
