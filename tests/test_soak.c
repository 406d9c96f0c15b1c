/*
 * Concurrency soak (issue 9): a bounded randomized mix of spawning (async, concurrent, group),
 * cancellation (futures, groups, groups whose members keep spawning), queue traffic, Mutex /
 * Condition / Event use and real file I/O, on the Threaded backend.
 *
 * Replay: the PRNG (splitmix64) is seeded from CIO_SOAK_SEED (default below); every failure message
 * and the start line ("soak seed: N") print it. CIO_SOAK_SECONDS sets the time budget (default 3,
 * capped at 60); at least one round always runs, and rounds shrink when a round is slow (QEMU).
 * The seed fixes every choice; thread interleavings still vary from run to run.
 *
 * Invariants checked by the test thread after each phase (workers never call cmocka; they record
 * failures through soak_fail, which is thread-safe):
 *   - queue: every item a producer reports as added is received exactly once (by a consumer or by
 *     the final drain) and no other item is received; producers end with OK, CLOSED or CANCELED;
 *     consumers with OK, CLOSED or CANCELED.
 *   - mutex: the counter protected by a cio_mutex equals the number of successful lock+increment
 *     steps; every worker's result is CIO_OK or CIO_E_CANCELED (canceled workers), the condition
 *     waiter sees the final count or is canceled.
 *   - files: each task writes its own file in a fresh /tmp directory, reads it back and compares;
 *     every task's result is CIO_OK or (if it was or could have been canceled) CIO_E_CANCELED;
 *     every file is deleted (the directory deletes as empty at the end).
 *   - no file descriptor leak: /proc/self/fd has as many entries after as before (where it exists;
 *     on Windows the process's handle count).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "os_helpers.h"

#define SOAK_DEFAULT_SEED 0x5eed2026u
#define SOAK_MAX_PRODUCERS 4
#define SOAK_MAX_CONSUMERS 4
#define SOAK_MAX_ITEMS 256 /* per producer */
#define SOAK_MAX_WORKERS 6
#define SOAK_MAX_FILES 24
#define SOAK_MAX_FILE_LEN 32768

/* ---- PRNG and failure recording ----------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform-ish in [0, n) (n > 0). */
static uint32_t rnd(uint64_t *s, uint32_t n)
{
    return (uint32_t)(splitmix64(s) % n);
}

static uint64_t soak_seed;
static _Atomic(int) soak_failures;
static char soak_first_failure[512];
/* What a run did, printed at the end: items through queues, mutex increments, files verified,
 * tasks that ended CIO_E_CANCELED. */
static _Atomic(uint64_t) stat_items, stat_increments, stat_files, stat_canceled;

#if defined(__MINGW32__)
__attribute__((format(gnu_printf, 1, 2))) /* vsnprintf is mingw's C99 one (__USE_MINGW_ANSI_STDIO) */
#elif defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
soak_fail(const char *fmt, ...)
{
    if (atomic_fetch_add(&soak_failures, 1) == 0) { /* the first one keeps its message */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(soak_first_failure, sizeof soak_first_failure, fmt, ap);
        va_end(ap);
    }
}

/* The test thread: fails the test with the first recorded failure and the seed. */
static void soak_check(const char *phase, uint32_t round)
{
    int n = atomic_load(&soak_failures);
    if (n != 0) {
        print_error("soak %s failed in round %" PRIu32 " (%d failure(s)); first: %s\n"
                    "replay with CIO_SOAK_SEED=%" PRIu64 "\n",
                    phase, round, n, soak_first_failure, soak_seed);
        fail();
    }
}

static bool result_ok_or(cio_err e, cio_err a, cio_err b)
{
    return e == CIO_OK || e == a || e == b;
}

/* ---- phase 1: queue traffic ---------------------------------------------------------------------- */

typedef struct queue_phase {
    cio_io io;
    cio_queue queue;
    uint32_t buffer[16];
    _Atomic(uint32_t) seen[SOAK_MAX_PRODUCERS * SOAK_MAX_ITEMS];
    _Atomic(uint32_t) added[SOAK_MAX_PRODUCERS]; /* producer p added ids p*MAX .. + added[p] */
    _Atomic(uint32_t) consumer_done;
    cio_mutex mutex;
    uint64_t received; /* under mutex */
} queue_phase;

typedef struct producer_ctx {
    queue_phase *qp;
    uint32_t index;
    uint32_t count;
    cio_err *result; /* for group members; NULL for futures */
} producer_ctx;

static cio_err producer_task(void *context)
{
    producer_ctx *c = (producer_ctx *)context;
    cio_err e = CIO_OK;
    for (uint32_t i = 0; i < c->count; i++) {
        uint32_t id = c->index * SOAK_MAX_ITEMS + i;
        e = cio_queue_put_one(c->qp->io, &c->qp->queue, &id);
        if (e != CIO_OK)
            break;
        atomic_fetch_add(&c->qp->added[c->index], 1);
    }
    if (e == CIO_E_CANCELED)
        atomic_fetch_add(&stat_canceled, 1);
    if (!result_ok_or(e, CIO_E_CLOSED, CIO_E_CANCELED))
        soak_fail("producer %" PRIu32 ": put returned %s", c->index, cio_err_name(e));
    return e;
}

static void record_item(queue_phase *qp, uint32_t id, const char *who)
{
    if (id >= SOAK_MAX_PRODUCERS * SOAK_MAX_ITEMS) {
        soak_fail("%s received out-of-range item %" PRIu32, who, id);
        return;
    }
    atomic_fetch_add(&qp->seen[id], 1);
}

typedef struct consumer_ctx {
    queue_phase *qp;
    uint32_t batch; /* elements per get, 1..4 */
    _Atomic(cio_err) *result;
} consumer_ctx;

static cio_err consumer_task(void *context)
{
    consumer_ctx *c = (consumer_ctx *)context;
    queue_phase *qp = c->qp;
    cio_err e;
    for (;;) {
        uint32_t items[4];
        size_t got = 0;
        e = cio_queue_get(qp->io, &qp->queue, items, c->batch, 1, &got);
        for (size_t i = 0; i < got; i++)
            record_item(qp, items[i], "consumer");
        if (got > 0) {
            cio_mutex_lock_uncancelable(qp->io, &qp->mutex);
            qp->received += got;
            cio_mutex_unlock(qp->io, &qp->mutex);
        }
        if (e != CIO_OK)
            break;
        if (got == 0) {
            soak_fail("consumer: get returned OK with no element (min 1)");
            break;
        }
    }
    if (e == CIO_E_CANCELED)
        atomic_fetch_add(&stat_canceled, 1);
    if (!result_ok_or(e, CIO_E_CLOSED, CIO_E_CANCELED))
        soak_fail("consumer: get returned %s", cio_err_name(e));
    atomic_store(c->result, e);
    atomic_fetch_add(&qp->consumer_done, 1);
    return e;
}

static void queue_round(cio_io io, uint64_t *r, uint32_t round, uint32_t scale)
{
    static queue_phase qp_storage; /* large: keep it off the stack */
    queue_phase *qp = &qp_storage;
    memset(qp, 0, sizeof *qp);
    qp->io = io;
    cio_queue_init(&qp->queue, qp->buffer, sizeof(uint32_t), rnd(r, 17)); /* 0: rendezvous */

    uint32_t nprod = 1 + rnd(r, SOAK_MAX_PRODUCERS), ncons = 1 + rnd(r, SOAK_MAX_CONSUMERS);
    uint32_t count = 1 + rnd(r, SOAK_MAX_ITEMS / scale);
    _Atomic(cio_err) cons_result[SOAK_MAX_CONSUMERS];
    consumer_ctx cc[SOAK_MAX_CONSUMERS];
    cio_group consumers = CIO_GROUP_INIT;
    /* Consumers first, each with a thread of its own, so an inline producer cannot block for good. */
    for (uint32_t i = 0; i < ncons; i++) {
        atomic_init(&cons_result[i], CIO_OK);
        cc[i] = (consumer_ctx){qp, 1 + rnd(r, 4), &cons_result[i]};
        CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &consumers, consumer_task, &cc[i], sizeof cc[i]));
    }
    cio_future prod[SOAK_MAX_PRODUCERS];
    for (uint32_t p = 0; p < nprod; p++) {
        producer_ctx pc = {qp, p, count, NULL};
        if (rnd(r, 2))
            prod[p] = cio_async(io, producer_task, &pc, sizeof pc);
        else
            CIO_REQUIRE_CONCURRENT(cio_concurrent(io, producer_task, &pc, sizeof pc, &prod[p]));
    }
    uint32_t action = rnd(r, 4); /* 0: plain, 1: cancel a producer, 2: cancel consumers, 3: both */
    if (action != 0)
        (void)cio_sleep(io, cio_timeout_ns((int64_t)rnd(r, 2000000)));
    if (action & 1) {
        uint32_t p = rnd(r, nprod);
        cio_err e = cio_cancel(io, &prod[p]);
        if (!result_ok_or(e, CIO_E_CLOSED, CIO_E_CANCELED))
            soak_fail("canceled producer %" PRIu32 " returned %s", p, cio_err_name(e));
    }
    if (action & 2) {
        cio_group_cancel(io, &consumers); /* nobody consumes any more: close so producers finish */
        cio_queue_close(io, &qp->queue);
    }
    for (uint32_t p = 0; p < nprod; p++)
        (void)cio_await(io, &prod[p]);
    cio_queue_close(io, &qp->queue);
    cio_err ge = cio_group_await(io, &consumers);
    if (ge != CIO_OK)
        soak_fail("consumer group await returned %s", cio_err_name(ge));
    if (atomic_load(&qp->consumer_done) != ncons)
        soak_fail("%" PRIu32 " of %" PRIu32 " consumers finished", atomic_load(&qp->consumer_done), ncons);
    /* What the canceled consumers left behind. */
    uint32_t item;
    uint64_t drained = 0;
    while (cio_queue_get_one_uncancelable(io, &qp->queue, &item) == CIO_OK) {
        record_item(qp, item, "drain");
        drained++;
    }
    uint64_t total = 0;
    for (uint32_t p = 0; p < SOAK_MAX_PRODUCERS; p++) {
        uint32_t added = atomic_load(&qp->added[p]);
        total += added;
        for (uint32_t i = 0; i < SOAK_MAX_ITEMS; i++) {
            uint32_t want = i < added ? 1u : 0u, got = atomic_load(&qp->seen[p * SOAK_MAX_ITEMS + i]);
            if (got != want) {
                soak_fail("item %" PRIu32 " of producer %" PRIu32 " received %" PRIu32 " times, expected %" PRIu32
                          " (added %" PRIu32 ")",
                          i, p, got, want, added);
                p = SOAK_MAX_PRODUCERS; /* one message is enough */
                break;
            }
        }
    }
    atomic_fetch_add(&stat_items, total);
    if (qp->received + drained != total)
        soak_fail("received %" PRIu64 " + drained %" PRIu64 " != added %" PRIu64, qp->received, drained, total);
    soak_check("queue", round);
}

/* ---- phase 2: Mutex, Condition, Event ------------------------------------------------------------ */

typedef struct lock_phase {
    cio_io io;
    cio_mutex mutex;
    cio_condition cond;
    cio_event start;
    uint64_t counter; /* under mutex */
    bool done;        /* under mutex */
    _Atomic(uint64_t) increments;
} lock_phase;

typedef struct worker_ctx {
    lock_phase *lp;
    uint32_t steps;
    bool wait_start;
} worker_ctx;

static cio_err lock_worker_task(void *context)
{
    worker_ctx *c = (worker_ctx *)context;
    lock_phase *lp = c->lp;
    if (c->wait_start) {
        cio_err e = cio_event_wait(lp->io, &lp->start);
        if (e != CIO_OK)
            return e;
    }
    for (uint32_t i = 0; i < c->steps; i++) {
        cio_err e = cio_mutex_lock(lp->io, &lp->mutex);
        if (e != CIO_OK)
            return e;
        lp->counter++;
        atomic_fetch_add(&lp->increments, 1);
        if (i % 7 == 0)
            cio_condition_signal(lp->io, &lp->cond);
        cio_mutex_unlock(lp->io, &lp->mutex);
        if (i % 64 == 63 && (e = cio_check_cancel(lp->io)) != CIO_OK)
            return e;
    }
    return CIO_OK;
}

/* Waits on the condition until the test thread says done; checks the count never goes backwards. */
static cio_err lock_waiter_task(void *context)
{
    lock_phase *lp = *(lock_phase **)context;
    cio_err e = cio_mutex_lock(lp->io, &lp->mutex);
    if (e != CIO_OK)
        return e;
    uint64_t last = lp->counter;
    while (!lp->done) {
        e = cio_condition_wait_timeout(lp->io, &lp->cond, &lp->mutex, cio_timeout_ms(5));
        if (lp->counter < last)
            soak_fail("counter went backwards: %" PRIu64 " after %" PRIu64, lp->counter, last);
        last = lp->counter;
        if (e == CIO_E_CANCELED)
            break;
        if (e != CIO_OK && e != CIO_E_TIMEOUT) {
            soak_fail("condition wait returned %s", cio_err_name(e));
            break;
        }
    }
    cio_mutex_unlock(lp->io, &lp->mutex);
    return e == CIO_E_TIMEOUT ? CIO_OK : e;
}

static void lock_round(cio_io io, uint64_t *r, uint32_t round, uint32_t scale)
{
    lock_phase lp = {io, CIO_MUTEX_INIT, CIO_CONDITION_INIT, CIO_EVENT_INIT, 0, false, 0};
    uint32_t n = 2 + rnd(r, SOAK_MAX_WORKERS - 1);
    cio_future workers[SOAK_MAX_WORKERS], waiter;
    bool cancel[SOAK_MAX_WORKERS];
    lock_phase *lpp = &lp;
    CIO_REQUIRE_CONCURRENT(cio_concurrent(io, lock_waiter_task, &lpp, sizeof lpp, &waiter));
    for (uint32_t i = 0; i < n; i++) {
        worker_ctx wc = {&lp, 1 + rnd(r, 2000 / scale), rnd(r, 2) != 0};
        cancel[i] = rnd(r, 3) == 0;
        CIO_REQUIRE_CONCURRENT(cio_concurrent(io, lock_worker_task, &wc, sizeof wc, &workers[i]));
    }
    (void)cio_sleep(io, cio_timeout_ns((int64_t)rnd(r, 1000000)));
    cio_event_set(io, &lp.start);
    bool cancel_waiter = rnd(r, 3) == 0;
    for (uint32_t i = 0; i < n; i++) {
        cio_err e = cancel[i] ? cio_cancel(io, &workers[i]) : cio_await(io, &workers[i]);
        if (e == CIO_E_CANCELED)
            atomic_fetch_add(&stat_canceled, 1);
        if (cancel[i] ? !result_ok_or(e, CIO_E_CANCELED, CIO_E_CANCELED) : e != CIO_OK)
            soak_fail("lock worker %" PRIu32 " (canceled: %d) returned %s", i, cancel[i], cio_err_name(e));
    }
    cio_err we;
    if (cancel_waiter) {
        we = cio_cancel(io, &waiter);
    } else {
        cio_mutex_lock_uncancelable(io, &lp.mutex);
        lp.done = true;
        cio_condition_broadcast(io, &lp.cond);
        cio_mutex_unlock(io, &lp.mutex);
        we = cio_await(io, &waiter);
    }
    if (cancel_waiter ? !result_ok_or(we, CIO_E_CANCELED, CIO_E_CANCELED) : we != CIO_OK)
        soak_fail("condition waiter (canceled: %d) returned %s", cancel_waiter, cio_err_name(we));
    if (lp.counter != atomic_load(&lp.increments))
        soak_fail("mutex counter %" PRIu64 " != %" PRIu64 " successful increments", lp.counter,
                  atomic_load(&lp.increments));
    atomic_fetch_add(&stat_increments, lp.counter);
    soak_check("mutex", round);
}

/* ---- phase 3: file I/O, with group cancellation while members spawn ------------------------------ */

typedef struct file_phase {
    cio_io io;
    cio_dir dir;
    cio_group *group;
    uint32_t round;
    _Atomic(uint32_t) next; /* slots handed out */
    _Atomic(cio_err) result[SOAK_MAX_FILES];
    _Atomic(int) finished;
} file_phase;

typedef struct file_ctx {
    file_phase *fp;
    uint32_t slot;
    uint64_t seed;
} file_ctx;

static cio_err file_work_with(file_phase *fp, uint32_t slot, uint64_t seed, char *name, unsigned char *out,
                              unsigned char *in);

static cio_err file_work(file_phase *fp, uint32_t slot, uint64_t seed, char *name)
{
    /* Per task, on the heap: a thread-local buffer would be shared by every fiber of a loop thread
     * (Evented), and a fiber's stack is small. */
    unsigned char *out = (unsigned char *)malloc(2 * (size_t)SOAK_MAX_FILE_LEN);
    if (out == NULL)
        return CIO_E_SYSTEM_RESOURCES;
    unsigned char *in = out + SOAK_MAX_FILE_LEN;
    cio_err e = file_work_with(fp, slot, seed, name, out, in);
    free(out);
    return e;
}

static cio_err file_work_with(file_phase *fp, uint32_t slot, uint64_t seed, char *name, unsigned char *out,
                              unsigned char *in)
{
    cio_io io = fp->io;
    uint64_t s = seed;
    size_t len = rnd(&s, SOAK_MAX_FILE_LEN);
    for (size_t i = 0; i < len; i++)
        out[i] = (unsigned char)splitmix64(&s);
    cio_file f;
    cio_err e = cio_dir_create_file(io, fp->dir, name, NULL, &f);
    if (e != CIO_OK)
        return e;
    if (len > 0 && rnd(&s, 2)) { /* two positional halves, second first */
        size_t half = len / 2, n = 0;
        e = cio_file_write_positional(io, f, out + half, len - half, half, &n);
        if (e == CIO_OK && n == len - half)
            e = cio_file_write_positional(io, f, out, half, 0, &n);
        else if (e == CIO_OK)
            e = CIO_E_UNEXPECTED; /* a short positional write on a regular file: report below */
    } else {
        e = cio_file_write_all(io, f, out, len);
    }
    cio_file_close(io, f);
    if (e != CIO_OK)
        return e;
    e = cio_dir_open_file(io, fp->dir, name, NULL, &f);
    if (e != CIO_OK)
        return e;
    size_t got = 0;
    e = cio_file_read_all(io, f, in, SOAK_MAX_FILE_LEN, &got);
    cio_file_close(io, f);
    if (e == CIO_OK && (got != len || memcmp(in, out, len) != 0))
        soak_fail("file %s (slot %" PRIu32 "): read back %zu bytes, wrote %zu%s", name, slot, got, len,
                  got == len ? " (contents differ)" : "");
    else if (e == CIO_OK)
        atomic_fetch_add(&stat_files, 1);
    return e;
}

static cio_err file_task(void *context)
{
    file_ctx *c = (file_ctx *)context;
    file_phase *fp = c->fp;
    char name[48];
    snprintf(name, sizeof name, "r%" PRIu32 "-f%" PRIu32, fp->round, c->slot);
    cio_err e = file_work(fp, c->slot, c->seed, name);
    /* Clean up whatever happened, shielded from a (second) cancel request. */
    cio_cancel_protection prev = cio_swap_cancel_protection(fp->io, CIO_CANCEL_BLOCKED);
    cio_err de = cio_dir_delete_file(fp->io, fp->dir, name);
    (void)cio_swap_cancel_protection(fp->io, prev);
    if (de != CIO_OK && de != CIO_E_FILE_NOT_FOUND)
        soak_fail("deleting %s returned %s", name, cio_err_name(de));
    if (e == CIO_E_CANCELED)
        atomic_fetch_add(&stat_canceled, 1);
    if (e != CIO_OK && e != CIO_E_CANCELED)
        soak_fail("file task %s returned %s", name, cio_err_name(e));
    atomic_store(&fp->result[c->slot], e);
    atomic_fetch_add(&fp->finished, 1);
    return e;
}

/* A group member that adds more file tasks to its own group (racing a group cancel). */
static cio_err spawner_task(void *context)
{
    file_ctx *c = (file_ctx *)context;
    file_phase *fp = c->fp;
    uint64_t s = c->seed;
    uint32_t n = 1 + rnd(&s, 6);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = atomic_fetch_add(&fp->next, 1);
        if (slot >= SOAK_MAX_FILES)
            break;
        file_ctx fc = {fp, slot, splitmix64(&s)};
        if (rnd(&s, 2)) {
            cio_group_async(fp->io, fp->group, file_task, &fc, sizeof fc);
        } else if (cio_group_concurrent(fp->io, fp->group, file_task, &fc, sizeof fc) != CIO_OK) {
            cio_group_async(fp->io, fp->group, file_task, &fc, sizeof fc); /* at the thread limit */
        }
    }
    return CIO_OK;
}

static void file_round(cio_io io, uint64_t *r, cio_dir dir, uint32_t round)
{
    cio_group group = CIO_GROUP_INIT;
    static file_phase fp_storage;
    file_phase *fp = &fp_storage;
    memset(fp, 0, sizeof *fp);
    fp->io = io;
    fp->dir = dir;
    fp->group = &group;
    fp->round = round;
    for (uint32_t i = 0; i < SOAK_MAX_FILES; i++)
        atomic_init(&fp->result[i], CIO_OK);

    uint32_t direct = 1 + rnd(r, 4);
    for (uint32_t i = 0; i < direct; i++) {
        file_ctx fc = {fp, atomic_fetch_add(&fp->next, 1), splitmix64(r)};
        if (rnd(r, 2))
            cio_group_async(io, &group, file_task, &fc, sizeof fc);
        else
            CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, file_task, &fc, sizeof fc));
    }
    uint32_t spawners = rnd(r, 3);
    for (uint32_t i = 0; i < spawners; i++) {
        file_ctx sc = {fp, 0, splitmix64(r)};
        CIO_REQUIRE_CONCURRENT(cio_group_concurrent(io, &group, spawner_task, &sc, sizeof sc));
    }
    /* Two more as futures, one of them maybe canceled. */
    cio_future fut[2];
    uint32_t fut_slot[2];
    for (uint32_t i = 0; i < 2; i++) {
        fut_slot[i] = atomic_fetch_add(&fp->next, 1);
        file_ctx fc = {fp, fut_slot[i], splitmix64(r)};
        if (i == 0)
            fut[i] = cio_async(io, file_task, &fc, sizeof fc);
        else
            CIO_REQUIRE_CONCURRENT(cio_concurrent(io, file_task, &fc, sizeof fc, &fut[i]));
    }
    bool cancel_group = rnd(r, 3) == 0, cancel_future = rnd(r, 2) != 0;
    if (cancel_group || cancel_future)
        (void)cio_sleep(io, cio_timeout_ns((int64_t)rnd(r, 3000000)));
    for (uint32_t i = 0; i < 2; i++) {
        cio_err e = (i == 1 && cancel_future) ? cio_cancel(io, &fut[i]) : cio_await(io, &fut[i]);
        if (e != CIO_OK && !(e == CIO_E_CANCELED && i == 1 && cancel_future))
            soak_fail("file future %" PRIu32 " (canceled: %d) returned %s", i, i == 1 && cancel_future,
                      cio_err_name(e));
        if (e != atomic_load(&fp->result[fut_slot[i]]))
            soak_fail("file future %" PRIu32 ": await gave %s, the task returned %s", i, cio_err_name(e),
                      cio_err_name(atomic_load(&fp->result[fut_slot[i]])));
    }
    if (cancel_group) {
        cio_group_cancel(io, &group);
    } else {
        cio_err e = cio_group_await(io, &group);
        if (e != CIO_OK)
            soak_fail("file group await returned %s", cio_err_name(e));
    }
    uint32_t slots = atomic_load(&fp->next);
    if (slots > SOAK_MAX_FILES)
        slots = SOAK_MAX_FILES;
    if ((uint32_t)atomic_load(&fp->finished) != slots)
        soak_fail("%d of %" PRIu32 " file tasks finished after the group returned", atomic_load(&fp->finished), slots);
    for (uint32_t i = 0; i < slots; i++) {
        cio_err e = atomic_load(&fp->result[i]);
        if (e == CIO_E_CANCELED && !cancel_group && !(cancel_future && i == fut_slot[1]))
            soak_fail("file slot %" PRIu32 " was canceled though nothing canceled it", i);
    }
    soak_check("files", round);
}

/* ---- the driver ---------------------------------------------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    char *end;
    unsigned long long x = strtoull(v, &end, 0);
    return *end == '\0' ? (uint64_t)x : dflt;
}

static void test_soak(void **state)
{
    cio_io io = cio_test_io(state);
    CIO_REQUIRE_THREADS(io);
    soak_seed = env_u64("CIO_SOAK_SEED", SOAK_DEFAULT_SEED);
    uint64_t seconds = env_u64("CIO_SOAK_SECONDS", 3);
    if (seconds > 60)
        seconds = 60;
    atomic_store(&soak_failures, 0);
    atomic_store(&stat_items, 0);
    atomic_store(&stat_increments, 0);
    atomic_store(&stat_files, 0);
    atomic_store(&stat_canceled, 0);
    print_message("soak seed: %" PRIu64 " (%" PRIu64 " s; replay with CIO_SOAK_SEED=%" PRIu64 ")\n", soak_seed, seconds,
                  soak_seed);

    int fds_before = cio_test_count_handles();
    uint64_t r = soak_seed;
    char path[400];
    bool made = false;
    for (int attempt = 0; attempt < 100 && !made; attempt++) {
        snprintf(path, sizeof path, "%scio-soak-%016" PRIx64, cio_test_tmp_root(),
                 splitmix64(&r) ^ (uint64_t)cio_now(io, CIO_CLOCK_REAL).ns);
        made = cio_test_mkdir(path);
    }
    assert_true(made);
    cio_dir dir;
    assert_int_equal(cio_dir_open_dir(io, cio_dir_cwd(), path, NULL, &dir), CIO_OK);

    int64_t start = cio_now(io, CIO_CLOCK_AWAKE).ns, budget = (int64_t)seconds * 1000000000;
    uint32_t round = 0, scale = 1;
    do {
        uint64_t rr = soak_seed ^ ((uint64_t)round * 0x2545f4914f6cdd1du);
        (void)splitmix64(&rr);
        int64_t t0 = cio_now(io, CIO_CLOCK_AWAKE).ns;
        queue_round(io, &rr, round, scale);
        lock_round(io, &rr, round, scale);
        file_round(io, &rr, dir, round);
        if (cio_now(io, CIO_CLOCK_AWAKE).ns - t0 > 200000000) /* a slow machine (QEMU): smaller rounds */
            scale = 4;
        round++;
    } while (cio_now(io, CIO_CLOCK_AWAKE).ns - start < budget && round < 1000000);
    print_message("soak: %" PRIu32 " rounds, %" PRIu64 " queue items, %" PRIu64 " mutex increments, %" PRIu64
                  " files verified, %" PRIu64 " tasks canceled\n",
                  round, atomic_load(&stat_items), atomic_load(&stat_increments), atomic_load(&stat_files),
                  atomic_load(&stat_canceled));

    cio_dir_close(io, dir);
    cio_err e = cio_dir_delete_dir(io, cio_dir_cwd(), path);
    if (e != CIO_OK)
        print_error("soak: %s not empty or not removable (%s); replay with CIO_SOAK_SEED=%" PRIu64 "\n", path,
                    cio_err_name(e), soak_seed);
    assert_int_equal(e, CIO_OK);
    int fds_after = cio_test_count_handles();
    if (fds_before != fds_after)
        print_error("soak: %d fds before, %d after; replay with CIO_SOAK_SEED=%" PRIu64 "\n", fds_before, fds_after,
                    soak_seed);
    assert_int_equal(fds_before, fds_after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CIO_TESTS(test_soak),
    };
    return cmocka_run_group_tests_name("soak", tests, NULL, NULL);
}
