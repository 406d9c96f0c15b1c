/*
 * libFuzzer target for the DNS response parser (src/core/dns.c): `python3 build.py test --fuzz`
 * builds it with clang -fsanitize=fuzzer,address,undefined and runs it for a bounded time over
 * tests/fuzz/corpus/dns. The same corpus replays in tests/test_dns.c on every normal test run.
 * The packet's own id is used as the expected id, so mutations reach past the id check; the
 * question name and type are fixed (what the seeds ask), and cio__dns_read_name is also run on
 * every offset. Every parsed answer's addresses are walked (cio__dns_next_addr).
 * The same bytes also go through the DNS-over-TCP path: read as a stream (a two-byte length, then
 * the message) by cio__dns_tcp_reader in chunks of 1 to 8 bytes (the sizes vary with the input's
 * last byte), and a message it completes is parsed like a UDP one. Seeds tcp_*.bin are framed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses pkt as the answer to (name, qtype) and walks every address it has. */
static void fuzz_parse(const uint8_t *pkt, size_t len, uint16_t id, const char *name, uint16_t qtype)
{
    cio__dns_response r;
    if (cio__dns_parse(pkt, len, id, name, qtype, &r) != CIO_OK)
        return;
    size_t cursor[2] = {0, 0}, n = 0;
    cio__dns_addr a;
    while (cio__dns_next_addr(pkt, len, &r, cursor, &a))
        n++;
    if (n != r.naddrs)
        __builtin_trap(); /* the walk and the parse must agree */
}

static void fuzz_tcp(const uint8_t *data, size_t size)
{
    static uint8_t buf[CIO__DNS_TCP_MAX + 2];
    cio__dns_tcp_reader rd;
    cio__dns_tcp_reader_init(&rd, buf, sizeof buf);
    unsigned seed = size > 0 ? data[size - 1] : 0;
    size_t pos = 0;
    int st = 0;
    while (st == 0 && pos < size) {
        size_t want = 0;
        uint8_t *p = cio__dns_tcp_space(&rd, &want);
        if (want == 0 || p < buf || p + want > buf + sizeof buf)
            __builtin_trap(); /* an incomplete message always asks for bytes, inside the buffer */
        size_t n = 1 + (seed + pos) % 8;
        if (n > want)
            n = want;
        if (n > size - pos)
            n = size - pos;
        memcpy(p, data + pos, n);
        pos += n;
        st = cio__dns_tcp_advance(&rd, n);
    }
    if (st != 1)
        return;
    if (rd.msg_len < 12 || rd.have != rd.msg_len + 2)
        __builtin_trap();
    uint16_t id = (uint16_t)((buf[2] << 8) | buf[3]);
    fuzz_parse(buf + 2, rd.msg_len, id, "www.example.test", CIO__DNS_TYPE_A);
    fuzz_parse(buf + 2, rd.msg_len, id, "both.test", CIO__DNS_TYPE_AAAA);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint16_t id = size >= 2 ? (uint16_t)((data[0] << 8) | data[1]) : 0;
    fuzz_parse(data, size, id, "www.example.test", CIO__DNS_TYPE_A);
    fuzz_parse(data, size, id, "www.example.test", CIO__DNS_TYPE_AAAA);
    fuzz_parse(data, size, id, "both.test", CIO__DNS_TYPE_A);
    fuzz_tcp(data, size);
    for (size_t off = 0; off < size && off < 64; off++) {
        char name[CIO__DNS_NAME_MAX];
        size_t o = off;
        (void)cio__dns_read_name(data, size, &o, name);
    }
    return 0;
}
