/*
 * libFuzzer target for the DNS response parser (src/core/dns.c): `python3 build.py test --fuzz`
 * builds it with clang -fsanitize=fuzzer,address,undefined and runs it for a bounded time over
 * tests/fuzz/corpus/dns. The same corpus replays in tests/test_dns.c on every normal test run.
 * The packet's own id is used as the expected id, so mutations reach past the id check; the
 * question name and type are fixed (what the seeds ask), and cio__dns_read_name is also run on
 * every offset.
 */
#include <stddef.h>
#include <stdint.h>

#include "dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cio__dns_response r;
    uint16_t id = size >= 2 ? (uint16_t)((data[0] << 8) | data[1]) : 0;
    (void)cio__dns_parse(data, size, id, "www.example.test", CIO__DNS_TYPE_A, &r);
    (void)cio__dns_parse(data, size, id, "www.example.test", CIO__DNS_TYPE_AAAA, &r);
    (void)cio__dns_parse(data, size, id, "both.test", CIO__DNS_TYPE_A, &r);
    for (size_t off = 0; off < size && off < 64; off++) {
        char name[CIO__DNS_NAME_MAX];
        size_t o = off;
        (void)cio__dns_read_name(data, size, &o, name);
    }
    return 0;
}
