/*
 * Timed stream reads made inside tasks, the path a server's connection task takes (issue 19's
 * idle-timeout server), on every backend. On Threaded a task's timed read is one blocking recvmsg that
 * the pool's alarm (src/threaded/alarm.c) interrupts at the deadline; these tests check that it fires
 * on time (within SLACK_MS, never early), leaves the stream usable with nothing lost, yields to data,
 * to a cancel (which wins and leaves the alarm list sound), to many deadlines at once in any order,
 * to a deadline on the wall clock, to a socket the program made non-blocking and to a task that
 * blocked cancellation; on Linux the OS call table shows which call ran (the alarm's recvmsg site on
 * Threaded) and its faults: EINTR, an error, EAGAIN, and an alarm thread that cannot be started.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#include "asserts.h"
#include "stream_helpers.h"

#if defined(CIO_OS_LINUX)
#include <errno.h>
#include <fcntl.h>
#include "internal/cio_oscalls_test.h"
#define ALARM_SITE "recvmsg@net_read_alarm"
#endif

#define SLACK_MS (cio_test_under_valgrind() ? 250 : 10)

/* One timed read in a task of its own: what it returned, what it read and how long it took. */
typedef struct read_job {
    cio_io io;
    const cio_stream *s;
    cio_timeout timeout;
    cio_cancel_protection protection;
    int wall_ms; /* > 0: the timeout is this many ms from the start of the read, on the wall clock */
    char buf[16];
    size_t n;
    cio_err err;
    int64_t ms;
} read_job;

static cio_err read_job_run(void *p)
{
    read_job *j = *(read_job **)p;
    if (j->protection == CIO_CANCEL_BLOCKED)
        (void)cio_swap_cancel_protection(j->io, CIO_CANCEL_BLOCKED);
    if (j->wall_ms > 0) {
        cio_timestamp now = cio_now(j->io, CIO_CLOCK_REAL);
        j->timeout = cio_timeout_deadline(CIO_CLOCK_REAL, (cio_timestamp){now.ns + (int64_t)j->wall_ms * 1000000});
    }
    int64_t t0 = now_ms(j->io);
    j->n = 99;
    j->err = cio_stream_read_timeout(j->io, j->s, j->buf, sizeof j->buf, &j->n, j->timeout);
    j->ms = now_ms(j->io) - t0;
    return CIO_OK;
}

/* Starts j in a concurrent task; false (skip) where there is none. */
static bool start_job(read_job *j, cio_future *f)
{
    cio_err err = cio_concurrent(j->io, read_job_run, &j, sizeof j, f);
    if (err == CIO_E_CONCURRENCY_UNAVAILABLE)
        return false;
    assert_ok(err);
    return true;
}

static void run_job(read_job *j)
{
    cio_future f;
    if (!start_job(j, &f))
        CIO_SKIP("concurrency unavailable (CIO_E_CONCURRENCY_UNAVAILABLE)");
    assert_ok(cio_await(j->io, &f));
}

/* A task's timed read of an empty stream, best of five tries: Timeout, nothing read, never early,
 * at least once within SLACK_MS. */
static void check_task_timeout(cio_io io, const cio_stream *s, int ms, bool wall, cio_cancel_protection protection)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 5 && best > ms + SLACK_MS; i++) {
        read_job j = {
            .io = io, .s = s, .timeout = cio_timeout_ms(ms), .protection = protection, .wall_ms = wall ? ms : 0};
        run_job(&j);
        assert_err(j.err, CIO_E_TIMEOUT);
        assert_int_equal(j.n, 0);
        assert_true(j.ms >= ms);
        if (j.ms < best)
            best = j.ms;
    }
    if (best > ms + SLACK_MS)
        fail_msg("a task's timeout of %d ms fired after %lld ms at best", ms, (long long)best);
    print_message("      deadline %d ms: fired after %lld ms\n", ms, (long long)best);
}

/* Bytes written to a, then read by a task's timed read of b: all of them, at once. */
static void check_usable(cio_io io, const cio_stream *a, const cio_stream *b)
{
    assert_ok(cio_stream_write_all(io, a, "usable", 6));
    size_t got = 0;
    char buf[8];
    while (got < 6) {
        read_job j = {.io = io, .s = b, .timeout = cio_timeout_ms(5000)};
        run_job(&j);
        assert_ok(j.err);
        assert_true(j.n > 0 && got + j.n <= 6);
        memcpy(buf + got, j.buf, j.n);
        got += j.n;
    }
    assert_memory_equal(buf, "usable", 6);
}

/* Threaded on Linux: how many calls reached the alarm's recvmsg site while `what` ran (-1: no such
 * site to watch here). */
#if defined(CIO_OS_LINUX) && defined(CIO__SYS_TABLE)
static void watch_alarm(void)
{
    cio__fault_reset();
    assert_int_equal(cio__fault_watch(ALARM_SITE), 1);
}
static unsigned alarm_calls(void)
{
    unsigned n = cio__fault_hits(ALARM_SITE);
    cio__fault_reset();
    return n;
}
#else
static void watch_alarm(void)
{
}
static unsigned alarm_calls(void)
{
    return 0;
}
#endif

static bool alarm_path_here(void **state)
{
#if defined(CIO_OS_LINUX) && defined(CIO__SYS_TABLE)
    return cio_test_threaded(state) != NULL;
#else
    (void)state;
    return false;
#endif
}

static void test_task_read_timeout(void **state)
{
    cio_io io = cio_test_io(state);
    int fds = cio_test_count_handles();
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    watch_alarm();
    check_task_timeout(io, &b, 50, false, CIO_CANCEL_UNBLOCKED);
    unsigned calls = alarm_calls();
    if (alarm_path_here(state) && calls == 0)
        fail_msg("Threaded: a task's timed read did not take the alarm's blocking recvmsg");
    check_usable(io, &a, &b);
    /* a deadline on the wall clock, converted to the alarm's clock */
    check_task_timeout(io, &b, 50, true, CIO_CANCEL_UNBLOCKED);
    check_usable(io, &a, &b);
    close_pairs(io, &a, &b, 1);
    assert_int_equal(cio_test_count_handles(), fds);
}

/* A pair (a, b) and a task whose read of b waits with a 10 s timeout, 30 ms into its wait (a skip,
 * the pair closed, where there is no task to be had). */
static void start_waiting_read(cio_io io, cio_stream *a, cio_stream *b, read_job *j, cio_future *f)
{
    socket_pairs(io, a, b, 1);
    *j = (read_job){.io = io, .s = b, .timeout = cio_timeout_ms(10000)};
    if (!start_job(j, f)) {
        close_pairs(io, a, b, 1);
        CIO_SKIP("concurrency unavailable (CIO_E_CONCURRENCY_UNAVAILABLE)");
    }
    assert_ok(cio_sleep(io, cio_timeout_ms(30)));
}

/* A read waiting with a long timeout returns the bytes as they come, not at the deadline. */
static void test_task_read_wakes_on_data(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a, b;
    read_job j;
    cio_future f;
    start_waiting_read(io, &a, &b, &j, &f);
    assert_ok(cio_stream_write_all(io, &a, "hello", 5));
    assert_ok(cio_await(io, &f));
    assert_ok(j.err);
    assert_int_equal(j.n, 5);
    assert_memory_equal(j.buf, "hello", 5);
    assert_true(j.ms < 5000);
    close_pairs(io, &a, &b, 1);
}

/* A cancel ends a read that waits with a long timeout (Canceled, at once), and the next task's
 * timeout still fires on time: the canceled read left nothing behind in the alarm list. */
static void test_task_read_cancel(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a, b;
    read_job j;
    cio_future f;
    start_waiting_read(io, &a, &b, &j, &f);
    int64_t t0 = now_ms(io);
    assert_ok(cio_cancel(io, &f));
    assert_err(j.err, CIO_E_CANCELED);
    assert_int_equal(j.n, 0);
    assert_true(now_ms(io) - t0 < 5000);
    check_task_timeout(io, &b, 30, false, CIO_CANCEL_UNBLOCKED);
    check_usable(io, &a, &b);
    close_pairs(io, &a, &b, 1);
}

/* Sixteen tasks wait at once with sixteen deadlines, started in a scrambled order: each times out,
 * none early; in at least one of up to five rounds at most a quarter are later than SLACK_MS (a
 * loaded machine may delay some wake-ups; an alarm that fires late every time fails). */
#define MANY 16
static int staggered_round(cio_io io, cio_stream *b)
{
    read_job j[MANY];
    cio_future f[MANY];
    int deadline[MANY];
    for (int i = 0; i < MANY; i++) {
        int k = (i * 7) % MANY; /* 0, 7, 14, 5, ...: every rank once, out of order */
        deadline[i] = 30 + 6 * k;
        j[i] = (read_job){.io = io, .s = &b[i], .timeout = cio_timeout_ms(deadline[i])};
        if (!start_job(&j[i], &f[i])) {
            for (int m = 0; m < i; m++)
                (void)cio_cancel(io, &f[m]);
            return -1;
        }
    }
    int late = 0;
    for (int i = 0; i < MANY; i++) {
        assert_ok(cio_await(io, &f[i]));
        assert_err(j[i].err, CIO_E_TIMEOUT);
        assert_int_equal(j[i].n, 0);
        assert_true(j[i].ms >= deadline[i]);
        if (j[i].ms > deadline[i] + SLACK_MS)
            late++;
    }
    return late;
}

static void test_task_read_timeouts_staggered(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a[MANY], b[MANY];
    socket_pairs(io, a, b, MANY);
    int best = MANY + 1;
    for (int round = 0; round < 5 && best > MANY / 4; round++) {
        int late = staggered_round(io, b);
        if (late < 0) {
            close_pairs(io, a, b, MANY);
            CIO_SKIP("concurrency unavailable (CIO_E_CONCURRENCY_UNAVAILABLE)");
        }
        if (late < best)
            best = late;
    }
    if (best > MANY / 4)
        fail_msg("%d of %d timeouts fired later than %d ms after their deadline, at best", best, MANY, SLACK_MS);
    print_message("      %d of %d late by more than %d ms\n", best, MANY, SLACK_MS);
    for (int i = 0; i < MANY; i++)
        check_usable(io, &a[i], &b[i]);
    close_pairs(io, a, b, MANY);
}

/* A task that blocked cancellation still gets its timeout (the alarm is not for it: poll), and a
 * socket the program made non-blocking still waits for its deadline, then for data. */
static void test_task_read_other_paths(void **state)
{
    cio_io io = cio_test_io(state);
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    check_task_timeout(io, &b, 40, false, CIO_CANCEL_BLOCKED);
    check_usable(io, &a, &b);
#if !defined(CIO_OS_WINDOWS) && !defined(CIO_OS_WASI)
    int fl = fcntl((int)b.handle, F_GETFL);
    assert_true(fl >= 0);
    assert_int_equal(fcntl((int)b.handle, F_SETFL, fl | O_NONBLOCK), 0);
    check_task_timeout(io, &b, 40, false, CIO_CANCEL_UNBLOCKED);
    check_usable(io, &a, &b);
#endif
    close_pairs(io, &a, &b, 1);
}

/* ---- faults (Linux: the OS call table) ------------------------------------------------------------ */

#if defined(CIO_OS_LINUX) && defined(CIO__SYS_TABLE)
static void covered(const char *site, const char *fault)
{
    if (cio__fault_injected(site) == 0)
        fail_msg("%s: the %s fault was never injected (the operation did not reach the site)", site, fault);
    print_message("fault-covered: %s %s\n", site, fault);
}

/* `count` failures with `err` at the alarm's recvmsg while a task reads 5 bytes written first. */
static void alarm_read_fault(cio_io io, int err, int count, cio_err want, const char *name)
{
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    assert_ok(cio_stream_write_all(io, &a, "fault", 5));
    cio__fault_reset();
    assert_int_equal(cio__fault_errno(ALARM_SITE, err, 0, count), 1);
    read_job j = {.io = io, .s = &b, .timeout = cio_timeout_ms(5000)};
    run_job(&j);
    covered(ALARM_SITE, name);
    cio__fault_reset();
    assert_err(j.err, want);
    if (want == CIO_OK) {
        assert_int_equal(j.n, 5);
        assert_memory_equal(j.buf, "fault", 5);
    }
    close_pairs(io, &a, &b, 1);
}

static void test_task_read_faults(void **state)
{
    cio_io io = cio_test_io(state);
    if (cio_test_threaded(state) == NULL)
        CIO_SKIP("the alarm is the Threaded backend's (Evented reads through its own loop)");
    alarm_read_fault(io, EINTR, 50, CIO_OK, "EINTR"); /* a stray signal: called again */
    alarm_read_fault(io, ECONNRESET, 1, CIO_E_CONNECTION_RESET_BY_PEER, "ECONNRESET");
    alarm_read_fault(io, EAGAIN, 1, CIO_OK, "EAGAIN"); /* the poll path, then the bytes */
    /* an endless EINTR storm: the deadline still ends the read (the alarm thread's flag) */
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    assert_int_equal(cio__fault_errno(ALARM_SITE, EINTR, 0, -1), 1);
    read_job j = {.io = io, .s = &b, .timeout = cio_timeout_ms(50)};
    run_job(&j);
    covered(ALARM_SITE, "EINTR-storm");
    cio__fault_reset();
    assert_err(j.err, CIO_E_TIMEOUT);
    assert_int_equal(j.n, 0);
    close_pairs(io, &a, &b, 1);
}

/* A pool whose alarm thread cannot be started: its tasks' timed reads wait with poll, on time. */
static void test_task_alarm_thread_fails(void **state)
{
    if (cio_test_threaded(state) == NULL)
        CIO_SKIP("the alarm is the Threaded backend's");
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    cio_io io = cio_threaded_io(t);
    cio_stream a, b;
    socket_pairs(io, &a, &b, 1);
    cio__fault_reset();
    assert_int_equal(cio__fault_errno("pthread_create@alarm", EAGAIN, 0, 1), 1);
    assert_int_equal(cio__fault_watch(ALARM_SITE), 1);
    check_task_timeout(io, &b, 40, false, CIO_CANCEL_UNBLOCKED);
    covered("pthread_create@alarm", "EAGAIN");
    assert_int_equal(cio__fault_hits(ALARM_SITE), 0); /* never armed: the poll path */
    cio__fault_reset();
    check_usable(io, &a, &b);
    close_pairs(io, &a, &b, 1);
    cio_threaded_destroy(t);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_task_read_timeout),
        CIO_TESTS(test_task_read_wakes_on_data),
        CIO_TESTS(test_task_read_cancel),
        CIO_TESTS(test_task_read_timeouts_staggered),
        CIO_TESTS(test_task_read_other_paths),
#if defined(CIO_OS_LINUX) && defined(CIO__SYS_TABLE)
        CIO_TESTS(test_task_read_faults),
        CIO_TESTS(test_task_alarm_thread_fails),
#endif
    };
    return cmocka_run_group_tests_name("task timeouts", tests, NULL, NULL);
}
