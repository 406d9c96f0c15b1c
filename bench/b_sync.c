/*
 * Synchronisation between two threads: B7 (Mutex+Condition ping-pong) and B8 (Queue round trip on
 * one thread, B8a, and between two threads, B8b), cio's types (over the Threaded io's futex slots)
 * against pthread mutex+cond and a bounded pthread mutex+cond queue. The second thread is a plain
 * pthread in both cases (placed per --cpus), so only the primitive differs.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- B7: ping-pong; turn 0 = main's, 1 = partner's, 2 = stop ---------------------------------------------- */

typedef struct pp_cio {
    cio_io io;
    cio_mutex mu;
    cio_condition cv;
    int turn;
} pp_cio;

static void *pp_cio_partner(void *arg)
{
    pp_cio *p = (pp_cio *)arg;
    cio_mutex_lock_uncancelable(p->io, &p->mu);
    for (;;) {
        while (p->turn == 0)
            cio_condition_wait_uncancelable(p->io, &p->cv, &p->mu);
        if (p->turn == 2)
            break;
        p->turn = 0;
        cio_condition_signal(p->io, &p->cv);
    }
    cio_mutex_unlock(p->io, &p->mu);
    return NULL;
}

static void pp_cio_body(void *arg, uint64_t n)
{
    pp_cio *p = (pp_cio *)arg;
    cio_mutex_lock_uncancelable(p->io, &p->mu);
    for (uint64_t i = 0; i < n; i++) {
        p->turn = 1;
        cio_condition_signal(p->io, &p->cv);
        while (p->turn == 1)
            cio_condition_wait_uncancelable(p->io, &p->cv, &p->mu);
    }
    cio_mutex_unlock(p->io, &p->mu);
}

typedef struct pp_pt {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;
} pp_pt;

static void *pp_pt_partner(void *arg)
{
    pp_pt *p = (pp_pt *)arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->turn == 0)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->turn == 2)
            break;
        p->turn = 0;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pp_pt_body(void *arg, uint64_t n)
{
    pp_pt *p = (pp_pt *)arg;
    pthread_mutex_lock(&p->mu);
    for (uint64_t i = 0; i < n; i++) {
        p->turn = 1;
        pthread_cond_signal(&p->cv);
        while (p->turn == 1)
            pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

static int b7(const bench_opts *o, const char *contender)
{
    pthread_t th;
    double ns;
    if (strcmp(contender, "pthread") == 0) {
        pp_pt p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
        if (pthread_create(&th, NULL, pp_pt_partner, &p) != 0)
            bench_die("pthread_create");
        ns = bench_measure(pp_pt_body, &p, o->seconds);
        pthread_mutex_lock(&p.mu);
        p.turn = 2;
        pthread_cond_signal(&p.cv);
        pthread_mutex_unlock(&p.mu);
        pthread_join(th, NULL);
    } else {
        bench_backend b;
        (void)bench_backend_open(BENCH_THREADED, 0, &b);
        pp_cio p = {b.io, CIO_MUTEX_INIT, CIO_CONDITION_INIT, 0};
        if (pthread_create(&th, NULL, pp_cio_partner, &p) != 0)
            bench_die("pthread_create");
        ns = bench_measure(pp_cio_body, &p, o->seconds);
        cio_mutex_lock_uncancelable(b.io, &p.mu);
        p.turn = 2;
        cio_condition_signal(b.io, &p.cv);
        cio_mutex_unlock(b.io, &p.mu);
        pthread_join(th, NULL);
        bench_backend_close(&b);
    }
    bench_result("main", ns / 2.0, "ns/hop");
    return 0;
}

/* ---- B8: queues ------------------------------------------------------------------------------------------------ */

#define QCAP 16
#define STOP UINT64_MAX

/* The peer: a bounded ring under one mutex with two conditions. */
typedef struct pt_queue {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    uint64_t ring[QCAP];
    size_t start, len;
} pt_queue;

static void pt_queue_init(pt_queue *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
}

static void pt_put(pt_queue *q, uint64_t v)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == QCAP)
        pthread_cond_wait(&q->not_full, &q->mu);
    q->ring[(q->start + q->len) % QCAP] = v;
    q->len++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->mu);
}

static uint64_t pt_get(pt_queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == 0)
        pthread_cond_wait(&q->not_empty, &q->mu);
    uint64_t v = q->ring[q->start];
    q->start = (q->start + 1) % QCAP;
    q->len--;
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->mu);
    return v;
}

typedef struct qpair {
    cio_io io;
    cio_queue q1, q2;
    uint64_t b1[QCAP], b2[QCAP];
    pt_queue p1, p2;
} qpair;

static void cq_put(qpair *p, cio_queue *q, uint64_t v)
{
    cio_err err = cio_queue_put_one_uncancelable(p->io, q, &v);
    if (err != CIO_OK)
        bench_fail("cio_queue_put_one", err);
}

static uint64_t cq_get(qpair *p, cio_queue *q)
{
    uint64_t v = 0;
    cio_err err = cio_queue_get_one_uncancelable(p->io, q, &v);
    if (err != CIO_OK)
        bench_fail("cio_queue_get_one", err);
    return v;
}

static void b8a_cio_body(void *arg, uint64_t n)
{
    qpair *p = (qpair *)arg;
    for (uint64_t i = 0; i < n; i++) {
        cq_put(p, &p->q1, i);
        (void)cq_get(p, &p->q1);
    }
}

static void b8a_pt_body(void *arg, uint64_t n)
{
    qpair *p = (qpair *)arg;
    for (uint64_t i = 0; i < n; i++) {
        pt_put(&p->p1, i);
        (void)pt_get(&p->p1);
    }
}

static void *b8b_cio_partner(void *arg)
{
    qpair *p = (qpair *)arg;
    for (;;) {
        uint64_t v = cq_get(p, &p->q1);
        if (v == STOP)
            return NULL;
        cq_put(p, &p->q2, v);
    }
}

static void *b8b_pt_partner(void *arg)
{
    qpair *p = (qpair *)arg;
    for (;;) {
        uint64_t v = pt_get(&p->p1);
        if (v == STOP)
            return NULL;
        pt_put(&p->p2, v);
    }
}

static void b8b_cio_body(void *arg, uint64_t n)
{
    qpair *p = (qpair *)arg;
    for (uint64_t i = 0; i < n; i++) {
        cq_put(p, &p->q1, i);
        (void)cq_get(p, &p->q2);
    }
}

static void b8b_pt_body(void *arg, uint64_t n)
{
    qpair *p = (qpair *)arg;
    for (uint64_t i = 0; i < n; i++) {
        pt_put(&p->p1, i);
        (void)pt_get(&p->p2);
    }
}

static int b8(const bench_opts *o, const char *contender, bool cross)
{
    qpair *p = (qpair *)calloc(1, sizeof *p);
    if (p == NULL)
        bench_die("calloc");
    bool cio = strcmp(contender, "threaded") == 0;
    bench_backend b;
    memset(&b, 0, sizeof b);
    if (cio) {
        (void)bench_backend_open(BENCH_THREADED, 0, &b);
        p->io = b.io;
        cio_queue_init(&p->q1, p->b1, sizeof(uint64_t), QCAP);
        cio_queue_init(&p->q2, p->b2, sizeof(uint64_t), QCAP);
    } else {
        pt_queue_init(&p->p1);
        pt_queue_init(&p->p2);
    }
    double ns;
    if (!cross) {
        ns = bench_measure(cio ? b8a_cio_body : b8a_pt_body, p, o->seconds);
    } else {
        pthread_t th;
        if (pthread_create(&th, NULL, cio ? b8b_cio_partner : b8b_pt_partner, p) != 0)
            bench_die("pthread_create");
        ns = bench_measure(cio ? b8b_cio_body : b8b_pt_body, p, o->seconds);
        if (cio)
            cq_put(p, &p->q1, STOP);
        else
            pt_put(&p->p1, STOP);
        pthread_join(th, NULL);
    }
    if (cio)
        bench_backend_close(&b);
    free(p);
    bench_result("main", ns, "ns/rt");
    return 0;
}

static int b8a(const bench_opts *o, const char *contender)
{
    return b8(o, contender, false);
}

static int b8b(const bench_opts *o, const char *contender)
{
    return b8(o, contender, true);
}

const bench_entry bench_sync_entries[] = {
    {"B7", "threaded", b7},   {"B7", "pthread", b7},   {"B8a", "threaded", b8a}, {"B8a", "pthread", b8a},
    {"B8b", "threaded", b8b}, {"B8b", "pthread", b8b}, {NULL, NULL, NULL},
};
