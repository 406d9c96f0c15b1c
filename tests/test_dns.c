/*
 * The DNS wire parser (src/core/dns.c) on hand-built packets: answers, CNAME chains with
 * compression, and hostile input (every truncation of a valid packet, pointer loops, out-of-bounds
 * pointers, wrong id/question). Pure: no I/O. Run under ASan by build.py --sanitize.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cio.h"
#include "dns.h"
#include "fuzz/fuzz_dns.c" /* LLVMFuzzerTestOneInput: the corpus replays through the fuzz target */

#include <stdio.h>

typedef struct pkt {
    uint8_t b[1024];
    size_t n;
} pkt;

static void put8(pkt *p, unsigned v)
{
    p->b[p->n++] = (uint8_t)v;
}
static void put16(pkt *p, unsigned v)
{
    put8(p, v >> 8);
    put8(p, v & 0xff);
}
static void put_name(pkt *p, const char *name)
{
    while (*name) {
        const char *dot = strchr(name, '.');
        size_t l = dot ? (size_t)(dot - name) : strlen(name);
        put8(p, (unsigned)l);
        memcpy(p->b + p->n, name, l);
        p->n += l;
        name += l + (dot ? 1 : 0);
    }
    put8(p, 0);
}
static void header(pkt *p, unsigned id, unsigned rcode, unsigned an)
{
    p->n = 0;
    put16(p, id);
    put8(p, 0x81);
    put8(p, 0x80 | rcode);
    put16(p, 1);
    put16(p, an);
    put16(p, 0);
    put16(p, 0);
}
static void question(pkt *p, const char *name, unsigned type)
{
    put_name(p, name);
    put16(p, type);
    put16(p, 1);
}
static void rr_head(pkt *p, unsigned type, unsigned rdlen)
{
    put16(p, type);
    put16(p, 1);
    put16(p, 0);
    put16(p, 60);
    put16(p, rdlen);
}

/* www.example.test CNAME (ptr) -> web.example.test (compressed), A 10.0.0.1, A 10.0.0.2 */
static void cname_packet(pkt *p)
{
    header(p, 0x1234, 0, 3);
    question(p, "www.example.test", CIO__DNS_TYPE_A); /* name at offset 12 */
    put16(p, 0xC00C);
    rr_head(p, CIO__DNS_TYPE_CNAME, 6);
    size_t target = p->n;
    put8(p, 3);
    put8(p, 'w');
    put8(p, 'e');
    put8(p, 'b');
    put16(p, 0xC000 | 16); /* "example.test" inside the question */
    put16(p, (unsigned)(0xC000 | target));
    rr_head(p, CIO__DNS_TYPE_A, 4);
    put8(p, 10);
    put8(p, 0);
    put8(p, 0);
    put8(p, 1);
    put16(p, (unsigned)(0xC000 | target));
    rr_head(p, CIO__DNS_TYPE_A, 4);
    put8(p, 10);
    put8(p, 0);
    put8(p, 0);
    put8(p, 2);
}

static void test_build_query(void **state)
{
    (void)state;
    uint8_t b[CIO__DNS_QUERY_MAX];
    size_t n = cio__dns_build_query(b, sizeof b, 0xBEEF, "a.bc.", CIO__DNS_TYPE_AAAA);
    const uint8_t want[] = {0xBE, 0xEF, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 2, 'b', 'c', 0, 0, 28, 0, 1};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    assert_int_equal(cio__dns_build_query(b, sizeof b, 1, "a..b", 1), 0);
    assert_int_equal(cio__dns_build_query(b, sizeof b, 1, "", 1), 0);
    char long_label[80];
    memset(long_label, 'x', 64);
    long_label[64] = '\0';
    assert_int_equal(cio__dns_build_query(b, sizeof b, 1, long_label, 1), 0);
    assert_int_equal(cio__dns_build_query(b, 10, 1, "a.b", 1), 0);
}

static void test_parse_a_aaaa(void **state)
{
    (void)state;
    pkt p;
    cio__dns_response r;
    header(&p, 7, 0, 1);
    question(&p, "both.test", CIO__DNS_TYPE_AAAA);
    put16(&p, 0xC00C);
    rr_head(&p, CIO__DNS_TYPE_AAAA, 16);
    for (unsigned i = 0; i < 16; i++)
        put8(&p, i == 15 ? 1 : 0);
    assert_int_equal(cio__dns_parse(p.b, p.n, 7, "BOTH.test.", CIO__DNS_TYPE_AAAA, &r), CIO_OK);
    assert_int_equal(r.rcode, 0);
    assert_int_equal(r.naddrs, 1);
    assert_int_equal(r.addrs[0].type, CIO__DNS_TYPE_AAAA);
    assert_int_equal(r.addrs[0].bytes[15], 1);
    assert_string_equal(r.canonical, "BOTH.test");
    /* wrong id, wrong type, wrong name: dropped */
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 8, "both.test", CIO__DNS_TYPE_AAAA, &r), CIO_OK);
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 7, "both.test", CIO__DNS_TYPE_A, &r), CIO_OK);
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 7, "other.test", CIO__DNS_TYPE_AAAA, &r), CIO_OK);
    /* a query (QR clear) is not a response */
    p.b[2] &= 0x7f;
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 7, "both.test", CIO__DNS_TYPE_AAAA, &r), CIO_OK);

    /* an A record of 5 bytes */
    header(&p, 9, 0, 1);
    question(&p, "a.test", CIO__DNS_TYPE_A);
    put16(&p, 0xC00C);
    rr_head(&p, CIO__DNS_TYPE_A, 5);
    for (unsigned i = 0; i < 5; i++)
        put8(&p, 1);
    assert_int_equal(cio__dns_parse(p.b, p.n, 9, "a.test", CIO__DNS_TYPE_A, &r), CIO_E_INVALID_DNS_A_RECORD);

    /* NXDOMAIN, no answers */
    header(&p, 10, 3, 0);
    question(&p, "nx.test", CIO__DNS_TYPE_A);
    assert_int_equal(cio__dns_parse(p.b, p.n, 10, "nx.test", CIO__DNS_TYPE_A, &r), CIO_OK);
    assert_int_equal(r.rcode, 3);
    assert_int_equal(r.naddrs, 0);
}

static void test_parse_cname_chain(void **state)
{
    (void)state;
    pkt p;
    cio__dns_response r;
    cname_packet(&p);
    assert_int_equal(cio__dns_parse(p.b, p.n, 0x1234, "www.example.test", CIO__DNS_TYPE_A, &r), CIO_OK);
    assert_string_equal(r.canonical, "web.example.test");
    assert_int_equal(r.naddrs, 2);
    assert_int_equal(r.addrs[0].bytes[3], 1);
    assert_int_equal(r.addrs[1].bytes[3], 2);
    char name[CIO__DNS_NAME_MAX];
    size_t off = 12;
    assert_int_equal(cio__dns_read_name(p.b, p.n, &off, name), 0);
    assert_string_equal(name, "www.example.test");
}

static void test_truncated_everywhere(void **state)
{
    (void)state;
    pkt p;
    cio__dns_response r;
    cname_packet(&p);
    for (size_t n = 0; n < p.n; n++) {
        /* a fresh heap copy of exactly n bytes, so ASan sees any read past the end */
        uint8_t *copy = (uint8_t *)test_malloc(n > 0 ? n : 1);
        memcpy(copy, p.b, n);
        assert_int_not_equal(cio__dns_parse(copy, n, 0x1234, "www.example.test", CIO__DNS_TYPE_A, &r), CIO_OK);
        test_free(copy);
    }
}

static void test_pointer_loops_and_bounds(void **state)
{
    (void)state;
    pkt p;
    cio__dns_response r;
    char name[CIO__DNS_NAME_MAX];
    /* question name is a pointer to itself */
    header(&p, 1, 0, 0);
    put16(&p, 0xC00C);
    put16(&p, 1);
    put16(&p, 1);
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 1, "x", CIO__DNS_TYPE_A, &r), CIO_OK);
    size_t off = 12;
    assert_int_equal(cio__dns_read_name(p.b, p.n, &off, name), -1);
    /* a forward pointer (out of bounds) */
    header(&p, 1, 0, 0);
    put16(&p, 0xC000 | 900);
    off = 12;
    assert_int_equal(cio__dns_read_name(p.b, p.n, &off, name), -1);
    /* two pointers pointing at each other: label at 12 then a pointer to 14 -> 12 ... */
    header(&p, 1, 0, 1);
    question(&p, "a.test", CIO__DNS_TYPE_A);
    size_t first = p.n;
    put16(&p, (unsigned)(0xC000 | (first + 2)));
    put16(&p, (unsigned)(0xC000 | first));
    off = first;
    assert_int_equal(cio__dns_read_name(p.b, p.n, &off, name), -1);
    /* a CNAME loop (a -> b -> a): dropped as a bad CNAME chain */
    header(&p, 2, 0, 2);
    question(&p, "a.test", CIO__DNS_TYPE_A);
    put_name(&p, "a.test");
    rr_head(&p, CIO__DNS_TYPE_CNAME, 8);
    put_name(&p, "b.test");
    put_name(&p, "b.test");
    rr_head(&p, CIO__DNS_TYPE_CNAME, 8);
    put_name(&p, "a.test");
    assert_int_equal(cio__dns_parse(p.b, p.n, 2, "a.test", CIO__DNS_TYPE_A, &r), CIO_E_INVALID_DNS_CNAME_RECORD);
    /* a reserved label type (0x40) and an rdlength past the end */
    header(&p, 3, 0, 0);
    put8(&p, 0x41);
    put8(&p, 'a');
    put8(&p, 0);
    off = 12;
    assert_int_equal(cio__dns_read_name(p.b, p.n, &off, name), -1);
    header(&p, 4, 0, 1);
    question(&p, "a.test", CIO__DNS_TYPE_A);
    put16(&p, 0xC00C);
    rr_head(&p, CIO__DNS_TYPE_A, 400);
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 4, "a.test", CIO__DNS_TYPE_A, &r), CIO_OK);
}


/* A TC answer cut inside its third record: the two whole ones count; without TC it is malformed.
 * 40 A records: naddrs counts them all, addrs[] keeps 32, cio__dns_next_addr walks all 40. */
static void test_truncated_answer_and_many(void **state)
{
    (void)state;
    pkt p;
    cio__dns_response r;
    header(&p, 5, 0, 3);
    p.b[2] |= 0x02; /* TC */
    question(&p, "t.test", CIO__DNS_TYPE_A);
    for (unsigned i = 1; i <= 3; i++) {
        put16(&p, 0xC00C);
        rr_head(&p, CIO__DNS_TYPE_A, 4);
        put8(&p, 10);
        put8(&p, 0);
        put8(&p, 0);
        put8(&p, i);
    }
    size_t cut = p.n - 3;
    assert_int_equal(cio__dns_parse(p.b, cut, 5, "t.test", CIO__DNS_TYPE_A, &r), CIO_OK);
    assert_true(r.truncated);
    assert_int_equal(r.naddrs, 2);
    p.b[2] &= (uint8_t)~0x02;
    assert_int_not_equal(cio__dns_parse(p.b, cut, 5, "t.test", CIO__DNS_TYPE_A, &r), CIO_OK);

    header(&p, 6, 0, 40);
    question(&p, "many.test", CIO__DNS_TYPE_A);
    for (unsigned i = 1; i <= 40; i++) {
        put16(&p, 0xC00C);
        rr_head(&p, CIO__DNS_TYPE_A, 4);
        put8(&p, 10);
        put8(&p, 0);
        put8(&p, 0);
        put8(&p, i);
    }
    assert_int_equal(cio__dns_parse(p.b, p.n, 6, "many.test", CIO__DNS_TYPE_A, &r), CIO_OK);
    assert_false(r.truncated);
    assert_int_equal(r.naddrs, 40);
    assert_int_equal(r.addrs[31].bytes[3], 32);
    size_t cursor[2] = {0, 0};
    cio__dns_addr a;
    unsigned n = 0;
    while (cio__dns_next_addr(p.b, p.n, &r, cursor, &a)) {
        n++;
        assert_int_equal(a.type, CIO__DNS_TYPE_A);
        assert_int_equal(a.bytes[3], n);
    }
    assert_int_equal(n, 40);
}

/* The OPT record (RFC 6891) and a FORMERR without a question. */
static void test_edns_opt_and_formerr(void **state)
{
    (void)state;
    uint8_t b[CIO__DNS_QUERY_MAX];
    size_t n = cio__dns_build_query(b, sizeof b, 0xBEEF, "a.bc", CIO__DNS_TYPE_A);
    size_t m = cio__dns_add_opt(b, sizeof b, n, CIO__DNS_EDNS_PAYLOAD);
    const uint8_t opt[] = {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(m, n + 11);
    assert_memory_equal(b + n, opt, sizeof opt);
    assert_int_equal(b[10], 0);
    assert_int_equal(b[11], 1); /* ARCOUNT */
    assert_int_equal(cio__dns_add_opt(b, n + 10, n, 1232), 0);
    pkt p;
    cio__dns_response r;
    header(&p, 9, 1, 0);
    p.b[5] = 0; /* QDCOUNT 0 */
    assert_int_equal(cio__dns_parse(p.b, p.n, 9, "a.bc", CIO__DNS_TYPE_A, &r), CIO_OK);
    assert_int_equal(r.rcode, CIO__DNS_RCODE_FORMERR);
    assert_int_equal(r.naddrs, 0);
    header(&p, 9, 0, 0);
    p.b[5] = 0; /* NOERROR without the question: still malformed */
    assert_int_not_equal(cio__dns_parse(p.b, p.n, 9, "a.bc", CIO__DNS_TYPE_A, &r), CIO_OK);
}

/* Feeds `len` bytes to a reader over buf[cap], `chunk` at a time; returns the final state. */
static int feed(cio__dns_tcp_reader *rd, uint8_t *buf, size_t cap, const uint8_t *data, size_t len, size_t chunk)
{
    cio__dns_tcp_reader_init(rd, buf, cap);
    int st = 0;
    for (size_t pos = 0; st == 0 && pos < len;) {
        size_t want = 0;
        uint8_t *p = cio__dns_tcp_space(rd, &want);
        assert_true(want > 0);
        size_t n = chunk < want ? chunk : want;
        if (n > len - pos)
            n = len - pos;
        memcpy(p, data + pos, n);
        pos += n;
        st = cio__dns_tcp_advance(rd, n);
    }
    return st;
}

/* RFC 1035 4.2.2 framing: byte by byte or whole, never a byte past the frame; a length under a
 * header, over the buffer, or more bytes reported than asked fail; a stream cut short is incomplete. */
static void test_tcp_framing(void **state)
{
    (void)state;
    pkt p;
    cname_packet(&p);
    uint8_t framed[1100], buf[1100];
    framed[0] = (uint8_t)(p.n >> 8);
    framed[1] = (uint8_t)p.n;
    memcpy(framed + 2, p.b, p.n);
    framed[p.n + 2] = 0xAA; /* the next frame's first byte: never consumed */
    cio__dns_tcp_reader rd;
    for (size_t chunk = 1; chunk <= 9; chunk += 4) {
        assert_int_equal(feed(&rd, buf, sizeof buf, framed, p.n + 3, chunk), 1);
        assert_int_equal(rd.msg_len, p.n);
        assert_int_equal(rd.have, p.n + 2);
        cio__dns_response r;
        assert_int_equal(cio__dns_parse(buf + 2, rd.msg_len, 0x1234, "www.example.test", CIO__DNS_TYPE_A, &r), CIO_OK);
        assert_int_equal(r.naddrs, 2);
    }
    assert_int_equal(feed(&rd, buf, sizeof buf, framed, p.n + 1, 1), 0); /* closed early */
    assert_int_equal(feed(&rd, buf, p.n + 1, framed, p.n + 2, 1), -1);   /* over the buffer */
    const uint8_t short_len[] = {0, 5, 1, 2, 3, 4, 5};
    assert_int_equal(feed(&rd, buf, sizeof buf, short_len, sizeof short_len, 1), -1);
    cio__dns_tcp_reader_init(&rd, buf, sizeof buf);
    assert_int_equal(cio__dns_tcp_advance(&rd, 3), -1); /* more than the 2 asked */
}

/* A deterministic random mutation pass: flips bytes of valid packets; only checks no crash. */
static void test_mutations(void **state)
{
    (void)state;
    pkt p;
    cio__dns_response r;
    uint32_t x = 12345;
    for (unsigned round = 0; round < 20000; round++) {
        cname_packet(&p);
        for (unsigned k = 0; k < 1 + round % 4; k++) {
            x = x * 1103515245u + 12345u;
            p.b[(x >> 8) % p.n] = (uint8_t)(x >> 20);
        }
        x = x * 1103515245u + 12345u;
        size_t n = (x >> 8) % (p.n + 1);
        uint8_t *copy = (uint8_t *)test_malloc(n > 0 ? n : 1);
        memcpy(copy, p.b, n);
        (void)cio__dns_parse(copy, n, 0x1234, "www.example.test", CIO__DNS_TYPE_A, &r);
        test_free(copy);
    }
}

/* Every file of tests/fuzz/corpus/dns (the fuzzer's seeds and any regression input added there;
 * CMake lists them in dns_corpus.h) through the fuzz target, each in a heap buffer of its exact
 * size. A target whose runner cannot reach the host's files (WASI without a preopen) skips. */
#ifdef CIO_DNS_CORPUS_LIST
#include "dns_corpus.h"
#endif

static void test_corpus_replay(void **state)
{
    (void)state;
#ifdef CIO_DNS_CORPUS_LIST
    int files = 0, listed = 0;
    for (const char *const *p = cio_dns_corpus_files; *p != NULL; p++) {
        listed++;
        FILE *f = fopen(*p, "rb");
        if (f == NULL)
            continue;
        uint8_t buf[4096];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        uint8_t *copy = (uint8_t *)test_malloc(n > 0 ? n : 1);
        memcpy(copy, buf, n);
        (void)LLVMFuzzerTestOneInput(copy, n);
        test_free(copy);
        files++;
    }
    assert_true(listed >= 6);
    if (files == 0) {
        print_message("      skip: the corpus files are not reachable from this target\n");
        skip();
    }
    assert_int_equal(files, listed);
#else
    print_message("      skip: no corpus list\n");
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_query),
        cmocka_unit_test(test_parse_a_aaaa),
        cmocka_unit_test(test_parse_cname_chain),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_pointer_loops_and_bounds),
        cmocka_unit_test(test_truncated_answer_and_many),
        cmocka_unit_test(test_edns_opt_and_formerr),
        cmocka_unit_test(test_tcp_framing),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_corpus_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
