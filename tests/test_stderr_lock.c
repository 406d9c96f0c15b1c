/*
 * The stderr lock shared with cio's own diagnostics (cio/process.h, src/core/diag.c): lines written
 * by tasks that hold the lock never have a diagnostic of another task inside them, on every backend;
 * and a thread that takes the lock through two instances of different backends is one owner.
 *
 * fd 2 is pointed at a file for the test (and back after); the diagnostic used is the wrapper's
 * "invalid argument" line of cio_process_spawn with NULL options (debug builds, as the suites are).
 */
#define _GNU_SOURCE 1
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asserts.h"
#include "backends.h"
#include "os_helpers.h"

#if CIO_HAVE_THREADS /* WASI: one thread, no dup, nothing can hold the lock while another writes */
#define WRITERS 4
#define DIAGS 4
#define ROUNDS 25

struct job {
    cio_io io;
    int k;
};

/* One write to fd 2 (no cmocka assertion here: tasks run on other threads). */
static bool put(const char *s)
{
    size_t n = strlen(s);
    return write(2, s, (unsigned)n) == (int)n;
}

/* Holds the lock across a sleep between the two halves of each line. */
static cio_err writer(void *p)
{
    struct job *j = (struct job *)p;
    char head[32];
    snprintf(head, sizeof head, "W%d<", j->k);
    for (int i = 0; i < ROUNDS; i++) {
        cio_err err = cio_lock_stderr(j->io);
        if (err != CIO_OK)
            return err;
        bool ok = put(head);
        (void)cio_sleep(j->io, cio_timeout_ms(1));
        ok = put(">\n") && ok;
        cio_unlock_stderr(j->io);
        if (!ok)
            return CIO_E_UNEXPECTED;
    }
    return CIO_OK;
}

static cio_err diagnoser(void *p)
{
    struct job *j = (struct job *)p;
    for (int i = 0; i < ROUNDS * 2; i++) {
        cio_child c;
        if (cio_process_spawn(j->io, NULL, &c) != CIO_E_INVALID_ARGUMENT)
            return CIO_E_UNEXPECTED;
        if (i % 8 == 0)
            (void)cio_sleep(j->io, cio_timeout_ms(1));
    }
    return CIO_OK;
}

static void test_diagnostics_take_the_lock(void **state)
{
    cio_io io = cio_test_io(state);
    char path[512];
    snprintf(path, sizeof path, "%scio_stderr_lock_%d.txt", cio_test_tmp_root(), (int)getpid());
#if defined(O_BINARY)
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_BINARY, 0600); /* Windows: no \r added */
#else
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
#endif
    assert_true(fd >= 0);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fd, 2) != -1); /* the CRT's _dup2 says 0, POSIX the descriptor */
    struct job jobs[WRITERS + DIAGS];
    cio_future f[WRITERS + DIAGS];
    int started = 0;
    cio_err cerr = CIO_OK;
    for (int k = 0; k < WRITERS + DIAGS && cerr == CIO_OK; k++) {
        jobs[k].io = io;
        jobs[k].k = k;
        cerr = cio_concurrent(io, k < WRITERS ? writer : diagnoser, &jobs[k], sizeof jobs[k], &f[k]);
        if (cerr == CIO_OK)
            started++;
    }
    cio_err results[WRITERS + DIAGS];
    for (int k = 0; k < started; k++)
        results[k] = cio_await(io, &f[k]);
    assert_true(dup2(saved, 2) != -1);
    close(saved);
    if (cerr != CIO_OK) {
        close(fd);
        (void)unlink(path);
        assert_int_equal(cerr, CIO_E_CONCURRENCY_UNAVAILABLE);
        CIO_SKIP("no concurrency on this target: no task can write while another holds the lock");
    }
    for (int k = 0; k < started; k++)
        assert_ok(results[k]);
    off_t size = lseek(fd, 0, SEEK_END);
    assert_true(size > 0);
    char *text = (char *)malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    size_t got = 0;
    while (got < (size_t)size) {
        int n = (int)read(fd, text + got, (unsigned)((size_t)size - got));
        assert_true(n > 0);
        got += (size_t)n;
    }
    text[got] = '\0';
    close(fd);
    (void)unlink(path);
    int wlines = 0, dlines = 0;
    for (char *line = text; *line != '\0';) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        *end = '\0';
        if (line[0] == 'W') {
            int k = -1;
            char tail[8] = "";
            if (sscanf(line, "W%d<%7s", &k, tail) != 2 || strcmp(tail, ">") != 0 || k < 0 || k >= WRITERS)
                fail_msg("a line held under the lock was broken: \"%s\"", line);
            wlines++;
        } else if (strncmp(line, "cio: cio_process_spawn: invalid argument", 40) == 0) {
            if (strchr(line, '<') != NULL || strchr(line, '>') != NULL)
                fail_msg("a diagnostic line has a held line's text in it: \"%s\"", line);
            dlines++;
        } else {
            fail_msg("an unexpected line on stderr: \"%s\"", line);
        }
        line = end + 1;
    }
    free(text);
    assert_int_equal(wlines, WRITERS * ROUNDS);
#ifndef NDEBUG
    assert_int_equal(dlines, DIAGS * ROUNDS * 2);
#endif
}
#else
static void test_diagnostics_take_the_lock(void **state)
{
    (void)state;
    CIO_SKIP("no threads on this target: no task can write while another holds the lock");
}
#endif

/* One thread, two instances of two backends: one owner (the second lock nests in the first), and
 * another thread can take the lock once both are released. */
#if CIO_HAVE_EVENTED
static cio_err try_elsewhere(void *p)
{
    cio_io io = *(cio_io *)p;
    if (!cio_try_lock_stderr(io))
        return CIO_E_TIMEOUT;
    cio_unlock_stderr(io);
    return CIO_OK;
}
#endif

static void test_one_thread_one_owner(void **state)
{
    (void)state;
#if CIO_HAVE_EVENTED
    cio_threaded *t = NULL;
    cio_evented *e = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    assert_ok(cio_evented_create(NULL, &e));
    cio_io ti = cio_threaded_io(t), ei = cio_evented_io(e);
    assert_ok(cio_lock_stderr(ti));
    assert_true(cio_try_lock_stderr(ei)); /* the same thread: it nests */
    assert_ok(cio_lock_stderr(ei));
    cio_future f;
    assert_ok(cio_concurrent(ti, try_elsewhere, &ti, sizeof ti, &f));
    assert_err(cio_await(ti, &f), CIO_E_TIMEOUT); /* held: by this thread, through both */
    cio_unlock_stderr(ei);
    cio_unlock_stderr(ti);
    assert_ok(cio_concurrent(ti, try_elsewhere, &ti, sizeof ti, &f));
    assert_err(cio_await(ti, &f), CIO_E_TIMEOUT); /* still held once */
    cio_unlock_stderr(ei);
    assert_ok(cio_concurrent(ti, try_elsewhere, &ti, sizeof ti, &f));
    assert_ok(cio_await(ti, &f));
    cio_evented_destroy(e);
    cio_threaded_destroy(t);
#else
    CIO_SKIP("no Evented backend on this target: one instance kind only");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_diagnostics_take_the_lock),
        cmocka_unit_test(test_one_thread_one_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
