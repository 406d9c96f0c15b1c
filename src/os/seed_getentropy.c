/*
 * cio_random's seed (the generator is random_chacha.c) where the OS's entropy call is getentropy:
 * OpenBSD (getentropy(2), never blocking: the kernel's pool is seeded at boot) and WASI (wasi-libc's
 * getentropy over preview 1's random_get). At most 256 bytes a call, so a longer seed takes several;
 * a failure is false (random_chacha.c falls back). The call site keeps its first name, wasi_os_seed
 * (the BSDs have no OS call table: there CIO__SYS is the call itself).
 */
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#include "internal/cio_oscalls.h"
#include "os.h"

#define GETENTROPY_MAX 256

bool cio__os_seed(void *buf, size_t len)
{
    unsigned char *p = (unsigned char *)buf;
    while (len > 0) {
        size_t n = len > GETENTROPY_MAX ? GETENTROPY_MAX : len;
        if (CIO__SYS(getentropy, wasi_os_seed)(p, n) != 0)
            return false;
        p += n;
        len -= n;
    }
    return true;
}
