/*
 * Fault injection at the memory-map call sites (src/os/mmap_posix.c, mmap_remap_linux.c,
 * mmap_windows.c, and the fallback buffer's malloc sites of src/core/mmap.c) on every backend: for
 * each site the errors the OS gives there (the exact mapped cio error), EINTR storms where a call is
 * retried, an OS that cannot map (ENODEV, ERROR_NOT_SUPPORTED: the fallback buffer instead), and
 * no handle leaked (an undone section is closed). Works in the fixture of tests/faults.h ("f": 1000
 * bytes, opened read-write by every case).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.h"
#include "faults_fs.h"

#if defined(CIO_OS_WINDOWS)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <errno.h>
#endif

#define MAP_LEN 1000

/* The map a case made in its run, for its check and cleanup. */
static cio_memory_map the_map;

static void prep_mapped(fx *f)
{
    prep_open_rw(f);
    cio_memory_map_options o = {.len = MAP_LEN};
    assert_ok(cio_file_memory_map_create(f->io, f->file, &o, &the_map));
#if !defined(CIO_OS_WASI)
    assert_true(the_map.mapped);
#endif
}

static void prep_fallback(fx *f)
{
    prep_open_rw(f);
    cio_memory_map_options o = {.len = MAP_LEN, .fallback = true};
    assert_ok(cio_file_memory_map_create(f->io, f->file, &o, &the_map));
}

/* Maps "f" read-write; on success checks the contents and keeps the map in the_map. */
static cio_err run_create(fx *f)
{
    cio_memory_map_options o = {.len = MAP_LEN};
    cio_err err = cio_file_memory_map_create(f->io, f->file, &o, &the_map);
    if (err == CIO_OK && memcmp(the_map.memory, data, MAP_LEN) != 0)
        fail_msg("mapped bytes differ from the file");
    if (err != CIO_OK && the_map.memory != NULL)
        fail_msg("a failed create left memory in the map");
    return err;
}

static cio_err run_create_fallback(fx *f)
{
    cio_memory_map_options o = {.len = MAP_LEN, .fallback = true};
    return cio_file_memory_map_create(f->io, f->file, &o, &the_map);
}

static cio_err run_destroy(fx *f)
{
    cio_file_memory_map_destroy(f->io, &the_map);
    if (the_map.memory != NULL)
        fail_msg("destroy left the map's memory");
    return CIO_OK;
}

static cio_err run_map_write(fx *f)
{
    memcpy(the_map.memory, "stored", 6);
    return cio_file_memory_map_write(f->io, &the_map);
}

static cio_err run_map_read(fx *f)
{
    return cio_file_memory_map_read(f->io, &the_map);
}

/* A shrink of a mapped map (Linux remaps) or a growth of a fallback one; a failure keeps the map. */
static cio_err run_map_set_length(fx *f)
{
    size_t before = the_map.len;
    size_t want = the_map.mapped ? MAP_LEN / 2 : 2 * MAP_LEN;
    cio_err err = cio_file_memory_map_set_length(f->io, &the_map, want);
    if (the_map.len != (err == CIO_OK ? want : before))
        fail_msg("set_length: length %lu after %s", (unsigned long)the_map.len, cio_err_name(err));
    if (memcmp(the_map.memory, data, the_map.len < MAP_LEN ? the_map.len : MAP_LEN) != 0)
        fail_msg("set_length lost the map's bytes");
    return err;
}

/* Unmaps whatever the case left mapped; for a create that fell back, the map is a buffer. */
static void check_unmap(fx *f, cio_err err)
{
    (void)err;
    cio_file_memory_map_destroy(f->io, &the_map);
}

/* The fallback took over: a heap buffer with the file's bytes. */
static void check_fell_back(fx *f, cio_err err)
{
    if (err == CIO_OK && the_map.mapped)
        fail_msg("mapped although the OS said it cannot map");
    check_unmap(f, err);
}

/* The stored bytes reached the file when the write succeeded. */
static void check_stored(fx *f, cio_err err)
{
    cio_file_memory_map_destroy(f->io, &the_map);
    unsigned char buf[DATA_LEN];
    size_t n = read_back(f, "f", buf, sizeof buf);
    assert_int_equal(n, 1000);
    if (err == CIO_OK && memcmp(buf, "stored", 6) != 0)
        fail_msg("the write succeeded but the file does not hold the stored bytes");
}

typedef struct map_case {
    const char *name;
    void (*prep)(fx *f);
    cio_err (*run)(fx *f);
    void (*check)(fx *f, cio_err err);
} map_case;

static const map_case cases[] = {
    {"create", prep_open_rw, run_create, check_unmap},
    {"create_fallback", prep_open_rw, run_create_fallback, check_unmap},
    {"create_falls_back", prep_open_rw, run_create, check_fell_back},
    {"destroy", prep_mapped, run_destroy, check_unmap},
    {"write", prep_mapped, run_map_write, check_stored},
    {"read", prep_mapped, run_map_read, check_unmap},
    {"set_length", prep_mapped, run_map_set_length, check_unmap},
    {"set_length_fallback", prep_fallback, run_map_set_length, check_unmap},
};

typedef struct map_error {
    const char *site;
    const char *what; /* the case */
    int code;
    const char *name;
    int count;
    cio_err want;
} map_error;

#define M(site, what, code, count, want)     \
    {                                        \
        site, what, code, #code, count, want \
    }

static const map_error errors[] = {
    M("malloc@memory_map_fallback", "create_fallback", ENOMEM, 1, CIO_E_OUT_OF_MEMORY),
    M("malloc@memory_map_length", "set_length_fallback", ENOMEM, 1, CIO_E_OUT_OF_MEMORY),
#if defined(CIO_OS_LINUX)
    M("sysconf@mmap_page", "create", EINVAL, 1, CIO_OK), /* the page size taken as 4096 */
    M("mmap@memory_map", "create", EACCES, 1, CIO_E_ACCESS_DENIED),
    M("mmap@memory_map", "create", EAGAIN, 1, CIO_E_LOCKED_MEMORY_LIMIT_EXCEEDED),
    M("mmap@memory_map", "create", ENOMEM, 1, CIO_E_OUT_OF_MEMORY),
    M("mmap@memory_map", "create", EMFILE, 1, CIO_E_PROCESS_FD_QUOTA_EXCEEDED),
    M("mmap@memory_map", "create", EPERM, 1, CIO_E_PERMISSION_DENIED),
    M("mmap@memory_map", "create_falls_back", ENODEV, 1, CIO_OK),
    M("munmap@memory_map", "destroy", EINVAL, 1, CIO_OK), /* unmapped all the same; noted as a bug */
    M("msync@memory_map_write", "write", EINTR, 20, CIO_OK),
    M("msync@memory_map_write", "write", EIO, 1, CIO_E_INPUT_OUTPUT),
    M("msync@memory_map_write", "write", ENOSPC, 1, CIO_E_NO_SPACE_LEFT),
    M("msync@memory_map_read", "read", EINTR, 20, CIO_OK),
    M("msync@memory_map_read", "read", EIO, 1, CIO_E_INPUT_OUTPUT),
    M("mremap@memory_map", "set_length", ENOMEM, 1, CIO_E_OUT_OF_MEMORY),
    M("mremap@memory_map", "set_length", EAGAIN, 1, CIO_E_LOCKED_MEMORY_LIMIT_EXCEEDED),
#elif defined(CIO_OS_WINDOWS)
    M("CreateFileMappingW@memory_map", "create", ERROR_ACCESS_DENIED, 1, CIO_E_ACCESS_DENIED),
    M("CreateFileMappingW@memory_map", "create", ERROR_NOT_ENOUGH_MEMORY, 1, CIO_E_OUT_OF_MEMORY),
    M("CreateFileMappingW@memory_map", "create_falls_back", ERROR_NOT_SUPPORTED, 1, CIO_OK),
    M("MapViewOfFile@memory_map", "create", ERROR_NOT_ENOUGH_MEMORY, 1, CIO_E_OUT_OF_MEMORY),
    M("MapViewOfFile@memory_map", "create", ERROR_LOCK_VIOLATION, 1, CIO_E_LOCK_VIOLATION),
    M("UnmapViewOfFile@memory_map", "destroy", ERROR_INVALID_ADDRESS, 1, CIO_OK),
    M("CloseHandle@memory_map", "destroy", ERROR_INVALID_HANDLE, 1, CIO_OK),
    M("FlushViewOfFile@memory_map_write", "write", ERROR_LOCK_VIOLATION, 1, CIO_E_LOCK_VIOLATION),
    M("FlushViewOfFile@memory_map_write", "write", ERROR_DISK_FULL, 1, CIO_E_NO_SPACE_LEFT),
#endif
};

static void map_fault(void **state, const map_error *e)
{
    const map_case *c = (const map_case *)case_named(cases, sizeof cases / sizeof cases[0], sizeof cases[0], e->what);
    fx f;
    fx_open(state, &f);
    memset(&the_map, 0, sizeof the_map);
    c->prep(&f);
    int fds = fd_count();
    unsigned injected = run_with_fault(&f, c->run, e->site, e->what, 'e', e->code, e->count, 0, e->want, e->name);
    if (injected != (unsigned)e->count)
        fail_msg("%s (%s): %u faults injected, want %d", e->site, e->what, injected, e->count);
    c->check(&f, e->want);
    if (!settled_at_most(fd_count, fds))
        fail_msg("%s (%s) with %s: handles %d, were %d", e->site, e->what, e->name, fd_count(), fds);
    covered(e->site, e->name);
    fx_close(&f);
}

static void test_mmap_errors(void **state)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        map_fault(state, &errors[i]);
}

#if defined(CIO_OS_WINDOWS)
/* A view that cannot be made closes the section made for it; a failure of that close changes
 * nothing for the caller (the section is closed all the same). */
static void test_mmap_undo_close(void **state)
{
    fx f;
    fx_open(state, &f);
    memset(&the_map, 0, sizeof the_map);
    prep_open_rw(&f);
    int fds = fd_count();
    assert_int_equal(cio__fault_errno("MapViewOfFile@memory_map", ERROR_NOT_ENOUGH_MEMORY, 0, 1), 1);
    assert_int_equal(cio__fault_errno("CloseHandle@memory_map_undo", ERROR_INVALID_HANDLE, 0, 1), 1);
    assert_err(run_create(&f), CIO_E_OUT_OF_MEMORY);
    assert_int_equal(cio__fault_injected("CloseHandle@memory_map_undo"), 1);
    cio__sys_reset();
    assert_true(settled_at_most(fd_count, fds));
    covered("CloseHandle@memory_map_undo", "ERROR_INVALID_HANDLE");
    fx_close(&f);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_mmap_errors),
#if defined(CIO_OS_WINDOWS)
        CIO_TESTS(test_mmap_undo_close),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
