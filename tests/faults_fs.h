/*
 * The file-system cases both fault suites run (tests/test_faults.c at the POSIX call sites,
 * tests/test_faults_windows.c at the Windows ones): each case is prep (no fault armed) -> run (the
 * operation under the armed fault; returns its error) -> check (reads back what run did, given
 * run's error). They work in the fixture of tests/faults.h: "f" (1000 bytes of data), "d", and
 * f->file open read-write after prep_open_rw.
 */
#ifndef CIO_TESTS_FAULTS_FS_H
#define CIO_TESTS_FAULTS_FS_H
#include "faults.h"

static inline void prep_open_rw(fx *f)
{
    static const cio_open_file_options rw = {CIO_OPEN_READ_WRITE, false, false};
    assert_ok(cio_dir_open_file(f->io, f->dir, "f", &rw, &f->file));
    f->file_open = true;
}

static inline void check_none(fx *f, cio_err err)
{
    (void)f;
    (void)err;
}

static inline cio_err run_open_file(fx *f)
{
    cio_file h;
    cio_err err = cio_dir_open_file(f->io, f->dir, "f", NULL, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

static inline cio_err run_create_file(fx *f)
{
    cio_file h;
    cio_err err = cio_dir_create_file(f->io, f->dir, "new", NULL, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

static inline void check_created(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "new", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
}

static inline cio_err run_open_dir(fx *f)
{
    cio_dir d;
    cio_err err = cio_dir_open_dir(f->io, f->dir, "d", NULL, &d);
    if (err == CIO_OK)
        cio_dir_close(f->io, d);
    return err;
}

static inline cio_err run_create_dir(fx *f)
{
    return cio_dir_create_dir(f->io, f->dir, "e", 0);
}

static inline void check_dir_made(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "e", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
}

static inline cio_err run_stat_file(fx *f)
{
    cio_stat st;
    cio_err err = cio_dir_stat_file(f->io, f->dir, "f", 0, &st);
    if (err == CIO_OK && st.size != 1000)
        fail_msg("stat: size %llu, want 1000", (unsigned long long)st.size);
    return err;
}

static inline cio_err run_rename(fx *f)
{
    return cio_dir_rename(f->io, f->dir, "f", f->dir, "moved");
}

static inline void check_renamed(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "moved", 0, &st), err == CIO_OK ? CIO_OK : CIO_E_FILE_NOT_FOUND);
    assert_err(cio_dir_stat_file(f->io, f->dir, "f", 0, &st), err == CIO_OK ? CIO_E_FILE_NOT_FOUND : CIO_OK);
}

static inline cio_err run_delete_file(fx *f)
{
    return cio_dir_delete_file(f->io, f->dir, "f");
}

static inline void check_deleted(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "f", 0, &st), err == CIO_OK ? CIO_E_FILE_NOT_FOUND : CIO_OK);
}

static inline cio_err run_delete_dir(fx *f)
{
    return cio_dir_delete_dir(f->io, f->dir, "d");
}

static inline void check_dir_deleted(fx *f, cio_err err)
{
    cio_stat st;
    assert_err(cio_dir_stat_file(f->io, f->dir, "d", 0, &st), err == CIO_OK ? CIO_E_FILE_NOT_FOUND : CIO_OK);
}

static inline cio_err run_access(fx *f)
{
    return cio_dir_access(f->io, f->dir, "f", CIO_ACCESS_READ);
}

static inline cio_err run_read_all(fx *f)
{
    unsigned char buf[1200];
    size_t n = 0;
    cio_err err = cio_file_read_all(f->io, f->file, buf, sizeof buf, &n);
    if (err == CIO_OK && (n != 1000 || memcmp(buf, data, 1000) != 0))
        fail_msg("read_all: %lu bytes or different data", (unsigned long)n);
    return err;
}

static inline cio_err run_write_all(fx *f)
{
    return cio_file_write_all(f->io, f->file, data, DATA_LEN);
}

static inline void check_written(fx *f, cio_err err)
{
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(f, "f", buf, sizeof buf);
    assert_int_equal(n, err == CIO_OK ? DATA_LEN : 1000); /* nothing of a failed write */
    assert_memory_equal(buf, data, n);
}

static inline cio_err run_read_positional(fx *f)
{
    unsigned char buf[600];
    size_t done = 0;
    while (done < sizeof buf) {
        size_t n = 0;
        cio_err err = cio_file_read_positional(f->io, f->file, buf + done, sizeof buf - done, 100 + done, &n);
        if (err != CIO_OK)
            return err;
        if (n == 0)
            fail_msg("read_positional: end of file at %lu", (unsigned long)done);
        done += n;
    }
    assert_memory_equal(buf, data + 100, sizeof buf);
    return CIO_OK;
}

static inline cio_err run_write_positional(fx *f)
{
    size_t done = 0;
    while (done < DATA_LEN) {
        size_t n = 0;
        cio_err err = cio_file_write_positional(f->io, f->file, data + done, DATA_LEN - done, done, &n);
        if (err != CIO_OK)
            return err;
        done += n;
    }
    return CIO_OK;
}

static inline cio_err run_seek(fx *f)
{
    cio_err err = cio_file_seek_to(f->io, f->file, 500);
    if (err != CIO_OK)
        return err;
    unsigned char b;
    size_t n;
    assert_ok(cio_file_read_streaming(f->io, f->file, &b, 1, &n));
    assert_int_equal(n, 1);
    assert_int_equal(b, data[500]);
    return CIO_OK;
}

static inline cio_err run_set_length(fx *f)
{
    return cio_file_set_length(f->io, f->file, 10);
}

static inline void check_length(fx *f, cio_err err)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(f->io, f->dir, "f", 0, &st));
    assert_int_equal(st.size, err == CIO_OK ? 10 : 1000);
}

static inline cio_err run_sync(fx *f)
{
    return cio_file_sync(f->io, f->file);
}

static inline cio_err run_file_stat(fx *f)
{
    cio_stat st;
    cio_err err = cio_file_stat(f->io, f->file, &st);
    if (err == CIO_OK)
        assert_int_equal(st.size, 1000);
    return err;
}

#define TS_MTIME (INT64_C(1000000000) * 2000000)

static inline cio_err run_set_timestamps(fx *f)
{
    cio_set_timestamps ts;
    memset(&ts, 0, sizeof ts);
    ts.access_action = CIO_TIMESTAMP_SET;
    ts.access.ns = INT64_C(1000000000) * 1000000;
    ts.modify_action = CIO_TIMESTAMP_SET;
    ts.modify.ns = TS_MTIME;
    return cio_file_set_timestamps(f->io, f->file, &ts);
}

static inline void check_timestamps(fx *f, cio_err err)
{
    cio_stat st;
    assert_ok(cio_dir_stat_file(f->io, f->dir, "f", 0, &st));
    assert_true((st.mtime.ns == TS_MTIME) == (err == CIO_OK));
}

static inline void prep_many(fx *f)
{
    char name[16];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "d/x%02d", i);
        write_file(f, name, 1);
    }
}

static inline cio_err iterate(fx *f, unsigned *seen)
{
    cio_dir d;
    cio_err err = cio_dir_open_dir(f->io, f->dir, "d", &iterate_opts, &d);
    if (err != CIO_OK)
        return err;
    _Alignas(8) unsigned char buf[1024];
    cio_dir_reader r;
    cio_dir_reader_init(&r, d, buf, sizeof buf);
    *seen = 0;
    for (;;) {
        cio_dir_entry e[4];
        size_t n = 0;
        err = cio_dir_read(f->io, &r, e, 4, &n);
        if (err != CIO_OK || n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            unsigned k = (unsigned)atoi(e[i].name + 1);
            if (e[i].name[0] != 'x' || k >= 20 || (*seen & (1u << k)))
                fail_msg("dir_read: unexpected or repeated entry %s", e[i].name);
            *seen |= 1u << k;
        }
    }
    cio_dir_close(f->io, d);
    return err;
}

static inline cio_err run_iterate(fx *f)
{
    unsigned seen = 0;
    cio_err err = iterate(f, &seen);
    if (err == CIO_OK && seen != (1u << 20) - 1)
        fail_msg("dir_read: saw %#x, want every entry once", seen);
    return err;
}

static inline void check_many_cleanup(fx *f, cio_err err)
{
    (void)err;
    char name[16];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "d/x%02d", i);
        assert_ok(cio_dir_delete_file(f->io, f->dir, name));
    }
}

static inline cio_err run_open_no_follow(fx *f)
{
    static const cio_open_file_options o = {CIO_OPEN_READ_ONLY, true, false}; /* no_follow_symlinks */
    cio_file h;
    cio_err err = cio_dir_open_file(f->io, f->dir, "f", &o, &h);
    if (err == CIO_OK)
        cio_file_close(f->io, h);
    return err;
}

/* cio_file_write_all of data to `h` (the file `name`, empty) with a fault armed that fills the disk after
 * 12000 bytes: NoSpaceLeft (the fault is reset then), and `h` is closed; the file holds the 12000 bytes. */
static inline void write_all_until_full(fx *f, cio_file h, const char *name)
{
    assert_err(cio_file_write_all(f->io, h, data, DATA_LEN), CIO_E_NO_SPACE_LEFT);
    cio__sys_reset();
    cio_file_close(f->io, h);
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(f, name, buf, sizeof buf);
    assert_int_equal(n, 12000);
    assert_memory_equal(buf, data, 12000);
}

/* Writes data at offset 100 of `h` (the file `name`) in positional writes while they succeed, with a
 * fault armed that fills the disk after 12000 bytes: the last write fails with NoSpaceLeft (the fault
 * is reset then), and `h` is closed; the file holds 100 zero bytes, then the 12000 bytes written. */
static inline void write_positional_until_full(fx *f, cio_file h, const char *name)
{
    size_t done = 0;
    cio_err err = CIO_OK;
    while (done < DATA_LEN && err == CIO_OK) {
        size_t w = 0;
        err = cio_file_write_positional(f->io, h, data + done, DATA_LEN - done, 100 + done, &w);
        done += w;
    }
    cio__sys_reset();
    assert_err(err, CIO_E_NO_SPACE_LEFT);
    assert_int_equal(done, 12000);
    cio_file_close(f->io, h);
    static unsigned char buf[DATA_LEN + 100];
    size_t n = read_back(f, name, buf, sizeof buf);
    assert_int_equal(n, 12100);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(buf[i], 0);
    assert_memory_equal(buf + 100, data, 12000);
}

#endif
