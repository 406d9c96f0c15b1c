/*
 * File locks (cio_file_lock and friends, cio/fs.h) on every backend: shared locks coexist and keep an
 * exclusive one out; a lock held through one handle blocks a lock wait through another until it is
 * released; a canceled lock wait returns Canceled and takes nothing; a downgrade lets shared lockers
 * in and keeps exclusive ones out. Every handle is opened separately (a separate owner, as flock and
 * LockFileEx count them). WASI has no locks: the tests skip there, saying so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#include "asserts.h"

typedef struct fixture {
    cio_io io;
    char path[300];
    cio_dir dir;
    cio_file f[3];
} fixture;

/* A fresh directory with "lockfile" open three times; skips where there are no locks. */
static void fx_open(void **state, fixture *fx)
{
    fx->io = cio_test_io(state);
    assert_true(cio_test_make_tmp_dir(fx->path, sizeof fx->path, "cio-test-lock"));
    assert_ok(cio_dir_open_dir(fx->io, cio_dir_cwd(), fx->path, NULL, &fx->dir));
    cio_file c;
    assert_ok(cio_dir_create_file(fx->io, fx->dir, "lockfile", NULL, &c));
    cio_file_close(fx->io, c);
    static const cio_open_file_options rw = {CIO_OPEN_READ_WRITE, false, false};
    for (int i = 0; i < 3; i++)
        assert_ok(cio_dir_open_file(fx->io, fx->dir, "lockfile", &rw, &fx->f[i]));
}

static void fx_close(fixture *fx)
{
    for (int i = 0; i < 3; i++)
        cio_file_close(fx->io, fx->f[i]);
    assert_ok(cio_dir_delete_file(fx->io, fx->dir, "lockfile"));
    cio_dir_close(fx->io, fx->dir);
    assert_ok(cio_dir_delete_dir(fx->io, cio_dir_cwd(), fx->path));
}

static void skip_without_locks(fixture *fx, cio_err err)
{
    if (err == CIO_E_FILE_LOCKS_UNSUPPORTED) {
        fx_close(fx);
        CIO_SKIP("no file locks on this target (WASI)");
    }
}

static bool try_lock(fixture *fx, int i, cio_lock lock)
{
    bool got = true;
    assert_ok(cio_file_try_lock(fx->io, fx->f[i], lock, &got));
    return got;
}

static void test_shared_and_exclusive(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_err err = cio_file_lock(fx.io, fx.f[0], CIO_LOCK_SHARED);
    skip_without_locks(&fx, err);
    assert_ok(err);
    assert_true(try_lock(&fx, 1, CIO_LOCK_SHARED));
    assert_false(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE));
    cio_file_unlock(fx.io, fx.f[0]);
    assert_false(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE)); /* f[1] still shares it */
    assert_ok(cio_file_lock(fx.io, fx.f[1], CIO_LOCK_NONE));
    assert_true(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE));
    assert_false(try_lock(&fx, 0, CIO_LOCK_SHARED));
    cio_file_unlock(fx.io, fx.f[2]);
    cio_file_unlock(fx.io, fx.f[2]); /* nothing held: nothing happens */
    assert_true(try_lock(&fx, 0, CIO_LOCK_SHARED));
    cio_file_unlock(fx.io, fx.f[0]);
    bool got;
    assert_err(cio_file_try_lock(fx.io, fx.f[0], (cio_lock)7, &got), CIO_E_INVALID_ARGUMENT);
    assert_err(cio_file_lock(fx.io, fx.f[0], (cio_lock)7), CIO_E_INVALID_ARGUMENT);
    fx_close(&fx);
}

typedef struct waiter {
    cio_io io;
    cio_file file;
    _Atomic int *locked;
} waiter;

static cio_err lock_waiter(void *p)
{
    waiter *w = (waiter *)p;
    cio_err err = cio_file_lock(w->io, w->file, CIO_LOCK_EXCLUSIVE);
    if (err == CIO_OK)
        atomic_store(w->locked, 1);
    return err;
}

static void test_lock_blocks_until_released(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_err err = cio_file_lock(io, fx.f[0], CIO_LOCK_EXCLUSIVE);
    skip_without_locks(&fx, err);
    assert_ok(err);
    _Atomic int locked = 0;
    waiter w = {io, fx.f[1], &locked};
    cio_future fut;
    err = cio_concurrent(io, lock_waiter, &w, sizeof w, &fut);
    if (err != CIO_OK)
        fx_close(&fx);
    CIO_REQUIRE_CONCURRENT(err);
    assert_ok(cio_sleep(io, cio_timeout_ms(100)));
    assert_int_equal(atomic_load(&locked), 0); /* still waiting behind f[0] */
    cio_file_unlock(io, fx.f[0]);
    assert_ok(cio_await(io, &fut));
    assert_int_equal(atomic_load(&locked), 1);
    assert_false(try_lock(&fx, 0, CIO_LOCK_SHARED)); /* f[1] holds it now */
    cio_file_unlock(io, fx.f[1]);
    fx_close(&fx);
}

static void test_lock_wait_canceled(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_err err = cio_file_lock(io, fx.f[0], CIO_LOCK_EXCLUSIVE);
    skip_without_locks(&fx, err);
    assert_ok(err);
    _Atomic int locked = 0;
    waiter w = {io, fx.f[1], &locked};
    cio_future fut;
    err = cio_concurrent(io, lock_waiter, &w, sizeof w, &fut);
    if (err != CIO_OK)
        fx_close(&fx);
    CIO_REQUIRE_CONCURRENT(err);
    assert_ok(cio_sleep(io, cio_timeout_ms(50)));
    assert_err(cio_cancel(io, &fut), CIO_E_CANCELED);
    assert_int_equal(atomic_load(&locked), 0);
    /* The canceled wait took nothing: once f[0] lets go, anyone can lock. */
    cio_file_unlock(io, fx.f[0]);
    assert_true(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE));
    cio_file_unlock(io, fx.f[2]);
    fx_close(&fx);
}

static void test_downgrade(void **state)
{
    fixture fx;
    fx_open(state, &fx);
    cio_io io = fx.io;
    cio_err err = cio_file_lock(io, fx.f[0], CIO_LOCK_EXCLUSIVE);
    skip_without_locks(&fx, err);
    assert_ok(err);
    assert_false(try_lock(&fx, 1, CIO_LOCK_SHARED));
    assert_ok(cio_file_downgrade_lock(io, fx.f[0]));
    assert_true(try_lock(&fx, 1, CIO_LOCK_SHARED));     /* shared lockers get in */
    assert_false(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE)); /* exclusive ones do not */
    cio_file_unlock(io, fx.f[1]);
    assert_false(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE)); /* f[0] still holds its shared lock */
    cio_file_unlock(io, fx.f[0]);
    assert_true(try_lock(&fx, 2, CIO_LOCK_EXCLUSIVE));
    cio_file_unlock(io, fx.f[2]);
    fx_close(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_shared_and_exclusive),
        CIO_TESTS(test_lock_blocks_until_released),
        CIO_TESTS(test_lock_wait_canceled),
        CIO_TESTS(test_downgrade),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
