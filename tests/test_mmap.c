/*
 * Memory maps (cio/mmap.h) on every backend, in both of Zig's modes: an OS mapping (mmap /
 * MapViewOfFile) and the fallback heap buffer (asked for by the options; the only mode on WASI,
 * which has no file mappings). Each round trip stores into the memory, syncs it with
 * cio_file_memory_map_write and reads the file back through another handle; each read-side test
 * changes the file through another handle and checks the memory after cio_file_memory_map_read.
 * The file is 192 KiB so that a 64 KiB offset (a page, and Windows' allocation granularity) has
 * data after it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#include "asserts.h"

#define FILE_LEN (192u * 1024u)
#define GRAIN (64u * 1024u)

/* Where the OS maps files; elsewhere (WASI) every map is the fallback buffer. */
#if defined(CIO_OS_WASI)
#define OS_MAPS false
#else
#define OS_MAPS true
#endif

typedef struct fixture {
    cio_io io;
    char path[300];
    cio_dir dir;
    cio_file rw;    /* the mapped handle */
    cio_file other; /* a second handle on the same file */
} fixture;

static uint8_t pattern_at(size_t i)
{
    return (uint8_t)((i * 7u + (i >> 9)) & 0xffu);
}

static void fx_open(void **state, fixture *fx, cio_open_mode mode)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-mmap"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, NULL, &fx->dir));
    cio_file c;
    assert_ok(cio_dir_create_file(fx->io, fx->dir, "m", NULL, &c));
    uint8_t *buf = (uint8_t *)malloc(FILE_LEN);
    assert_non_null(buf);
    for (size_t i = 0; i < FILE_LEN; i++)
        buf[i] = pattern_at(i);
    assert_ok(cio_file_write_all(fx->io, c, buf, FILE_LEN));
    free(buf);
    cio_file_close(fx->io, c);
    cio_open_file_options o = {mode, false, false};
    assert_ok(cio_dir_open_file(fx->io, fx->dir, "m", &o, &fx->rw));
    cio_open_file_options orw = {CIO_OPEN_READ_WRITE, false, false};
    assert_ok(cio_dir_open_file(fx->io, fx->dir, "m", &orw, &fx->other));
}

static void fx_close(fixture *fx)
{
    cio_file_close(fx->io, fx->rw);
    cio_file_close(fx->io, fx->other);
    assert_ok(cio_dir_delete_file(fx->io, fx->dir, "m"));
    cio_dir_close(fx->io, fx->dir);
    assert_ok(cio_dir_delete_dir(fx->io, cio_dir_cwd(), fx->path));
}

/* The file's bytes [off, off + len) through the other handle. */
static void read_other(fixture *fx, uint64_t off, uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t n = 0;
        assert_ok(cio_file_read_positional(fx->io, fx->other, buf + done, len - done, off + done, &n));
        assert_true(n > 0);
        done += n;
    }
}

static void expect_pattern(const uint8_t *mem, size_t len, uint64_t off)
{
    for (size_t i = 0; i < len; i++)
        if (mem[i] != pattern_at((size_t)off + i))
            fail_msg("byte %lu: %u, want %u", (unsigned long)i, mem[i], pattern_at((size_t)off + i));
}

/* Maps [offset, offset + len) read-write, stores, syncs, and sees the stores in the file; the
 * bytes it did not store are unchanged. */
static void round_trip(void **state, bool fallback, uint64_t offset, size_t len)
{
    fixture fx;
    fx_open(state, &fx, CIO_OPEN_READ_WRITE);
    cio_memory_map_options o = {.len = len, .offset = offset, .fallback = fallback};
    cio_memory_map mm;
    assert_ok(cio_file_memory_map_create(fx.io, fx.rw, &o, &mm));
    assert_int_equal(mm.mapped, OS_MAPS && !fallback);
    assert_int_equal(mm.len, len);
    assert_int_equal(mm.protection, CIO_MEMORY_MAP_READ | CIO_MEMORY_MAP_WRITE);
    expect_pattern(mm.memory, len, offset);
    memcpy(mm.memory + 10, "mapped", 6);
    mm.memory[len - 1] = 0xA5;
    assert_ok(cio_file_memory_map_write(fx.io, &mm));
    uint8_t got[16];
    read_other(&fx, offset + 10, got, 6);
    assert_memory_equal(got, "mapped", 6);
    read_other(&fx, offset + len - 2, got, 2);
    assert_int_equal(got[0], pattern_at((size_t)offset + len - 2));
    assert_int_equal(got[1], 0xA5);
    cio_file_memory_map_destroy(fx.io, &mm);
    assert_null(mm.memory);
    /* After the map is gone the file keeps the stores and its length. */
    cio_stat st;
    assert_ok(cio_file_stat(fx.io, fx.other, &st));
    assert_int_equal(st.size, FILE_LEN);
    read_other(&fx, offset + 10, got, 6);
    assert_memory_equal(got, "mapped", 6);
    fx_close(&fx);
}

static void test_round_trip_mapped(void **state)
{
    round_trip(state, false, 0, FILE_LEN);
}

static void test_round_trip_fallback(void **state)
{
    round_trip(state, true, 0, FILE_LEN);
}

static void test_round_trip_offset(void **state)
{
    round_trip(state, false, GRAIN, GRAIN + 1000); /* a length that is no page multiple */
    round_trip(state, true, GRAIN + 3, 1000);      /* the fallback takes any offset */
}

/* A read-only map: the contents, a write refused, and a change made through another handle seen
 * after cio_file_memory_map_read. */
static void read_only(void **state, bool fallback)
{
    fixture fx;
    fx_open(state, &fx, CIO_OPEN_READ_ONLY);
    cio_memory_map_options o = {.len = FILE_LEN, .protection = CIO_MEMORY_MAP_READ, .fallback = fallback};
    cio_memory_map mm;
    assert_ok(cio_file_memory_map_create(fx.io, fx.rw, &o, &mm));
    assert_int_equal(mm.mapped, OS_MAPS && !fallback);
    expect_pattern(mm.memory, FILE_LEN, 0);
    assert_err(cio_file_memory_map_write(fx.io, &mm), CIO_E_INVALID_ARGUMENT);
    size_t n = 0;
    assert_ok(cio_file_write_positional(fx.io, fx.other, "changed", 7, 5000, &n));
    assert_int_equal(n, 7);
    assert_ok(cio_file_memory_map_read(fx.io, &mm));
    assert_memory_equal(mm.memory + 5000, "changed", 7);
    expect_pattern(mm.memory + 5007, FILE_LEN - 5007, 5007);
    cio_file_memory_map_destroy(fx.io, &mm);
    fx_close(&fx);
}

static void test_read_only_mapped(void **state)
{
    read_only(state, false);
}

static void test_read_only_fallback(void **state)
{
    read_only(state, true);
}

/* A read-write map of a read-only handle is AccessDenied (the OS refuses the mapping). */
static void test_write_map_of_read_only_handle(void **state)
{
    fixture fx;
    fx_open(state, &fx, CIO_OPEN_READ_ONLY);
    cio_memory_map_options o = {.len = 4096};
    cio_memory_map mm;
    cio_err err = cio_file_memory_map_create(fx.io, fx.rw, &o, &mm);
    if (!OS_MAPS) {
        /* The fallback reads fine; its write is the positional write's refusal: WASI's missing
         * right (ENOTCAPABLE: AccessDenied), or EBADF (NotOpenForWriting) where a runtime says that. */
        assert_ok(err);
        cio_err w = cio_file_memory_map_write(fx.io, &mm);
        if (w != CIO_E_ACCESS_DENIED && w != CIO_E_NOT_OPEN_FOR_WRITING)
            fail_msg("write of a map of a read-only handle: %s", cio_err_name(w));
        cio_file_memory_map_destroy(fx.io, &mm);
    } else {
        assert_err(err, CIO_E_ACCESS_DENIED);
        assert_null(mm.memory);
    }
    fx_close(&fx);
}

/* Past the end of the file the memory reads as zeroes (the fallback buffer: a mapping would fault
 * there), and a write extends the file. */
static void test_past_end(void **state)
{
    fixture fx;
    fx_open(state, &fx, CIO_OPEN_READ_WRITE);
    cio_memory_map_options o = {.len = 2 * GRAIN, .offset = 2 * GRAIN};
    cio_memory_map mm;
    assert_ok(cio_file_memory_map_create(fx.io, fx.rw, &o, &mm));
    assert_false(mm.mapped);
    expect_pattern(mm.memory, GRAIN, 2 * GRAIN);
    for (size_t i = GRAIN; i < 2 * GRAIN; i++)
        if (mm.memory[i] != 0)
            fail_msg("byte %lu past the end: %u", (unsigned long)i, mm.memory[i]);
    mm.memory[2 * GRAIN - 1] = 0x5A;
    assert_ok(cio_file_memory_map_write(fx.io, &mm));
    cio_file_memory_map_destroy(fx.io, &mm);
    cio_stat st;
    assert_ok(cio_file_stat(fx.io, fx.other, &st));
    assert_int_equal(st.size, 4 * GRAIN);
    uint8_t last = 0;
    read_other(&fx, 4 * GRAIN - 1, &last, 1);
    assert_int_equal(last, 0x5A);
    fx_close(&fx);
}

/* Arguments: length 0, an unknown protection bit, an unaligned offset of an OS mapping, a map of a
 * directory. */
static void test_arguments(void **state)
{
    fixture fx;
    fx_open(state, &fx, CIO_OPEN_READ_WRITE);
    cio_memory_map mm;
    cio_memory_map_options o = {.len = 0};
    assert_err(cio_file_memory_map_create(fx.io, fx.rw, &o, &mm), CIO_E_INVALID_ARGUMENT);
    o.len = 100;
    o.protection = 4;
    assert_err(cio_file_memory_map_create(fx.io, fx.rw, &o, &mm), CIO_E_INVALID_ARGUMENT);
    o.protection = 0;
    o.offset = 1;
    cio_err err = cio_file_memory_map_create(fx.io, fx.rw, &o, &mm);
    if (OS_MAPS) {
        assert_err(err, CIO_E_INVALID_ARGUMENT);
    } else {
        assert_ok(err);
        cio_file_memory_map_destroy(fx.io, &mm);
    }
    fx_close(&fx);
}

/* set_length: the fallback buffer grows with zeroes and keeps its bytes; a mapped map shrinks in
 * place where the OS remaps (Linux) and is OperationUnsupported elsewhere, and never grows past the
 * file's end. */
static void test_set_length(void **state)
{
    fixture fx;
    fx_open(state, &fx, CIO_OPEN_READ_WRITE);
    cio_memory_map mm;
    cio_memory_map_options o = {.len = 1000, .fallback = true};
    assert_ok(cio_file_memory_map_create(fx.io, fx.rw, &o, &mm));
    assert_ok(cio_file_memory_map_set_length(fx.io, &mm, 3000));
    expect_pattern(mm.memory, 1000, 0);
    for (size_t i = 1000; i < 3000; i++)
        assert_int_equal(mm.memory[i], 0);
    assert_ok(cio_file_memory_map_read(fx.io, &mm));
    expect_pattern(mm.memory, 3000, 0);
    cio_file_memory_map_destroy(fx.io, &mm);

    cio_memory_map_options m = {.len = 2 * GRAIN};
    assert_ok(cio_file_memory_map_create(fx.io, fx.rw, &m, &mm));
    assert_err(cio_file_memory_map_set_length(fx.io, &mm, 4 * GRAIN),
               mm.mapped ? CIO_E_OPERATION_UNSUPPORTED : CIO_OK); /* past the file's end */
    if (mm.mapped) {
        cio_err err = cio_file_memory_map_set_length(fx.io, &mm, GRAIN);
#if defined(CIO_OS_LINUX)
        assert_ok(err);
        assert_int_equal(mm.len, GRAIN);
        expect_pattern(mm.memory, GRAIN, 0);
        assert_ok(cio_file_memory_map_set_length(fx.io, &mm, 3 * GRAIN)); /* grows back, inside the file */
        expect_pattern(mm.memory, 3 * GRAIN, 0);
#else
        assert_err(err, CIO_E_OPERATION_UNSUPPORTED);
        assert_int_equal(mm.len, 2 * GRAIN);
#endif
    }
    cio_file_memory_map_destroy(fx.io, &mm);
    fx_close(&fx);
}

/* The failing Io: mmap is AccessDenied, as in Zig's failing Io (no fallback from it). */
static void test_failing_io(void **state)
{
    (void)state;
    cio_memory_map mm;
    cio_memory_map_options o = {.len = 100};
    cio_file f = {0};
    assert_err(cio_file_memory_map_create(cio_failing_io(), f, &o, &mm), CIO_E_ACCESS_DENIED);
    assert_null(mm.memory);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_round_trip_mapped),  CIO_TESTS(test_round_trip_fallback),
        CIO_TESTS(test_round_trip_offset),  CIO_TESTS(test_read_only_mapped),
        CIO_TESTS(test_read_only_fallback), CIO_TESTS(test_write_map_of_read_only_handle),
        CIO_TESTS(test_past_end),           CIO_TESTS(test_arguments),
        CIO_TESTS(test_set_length),         cmocka_unit_test(test_failing_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
