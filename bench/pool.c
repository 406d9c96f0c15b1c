/*
 * The plain pthread pool peer ("pthread-pool" in B5, B9s, B9r): what a C programmer writes when
 * no library is at hand. Four threads (libuv's default pool size) take jobs from one FIFO queue
 * under one mutex and condition variable; a job's submitter waits for it on the job's own flag
 * (the pool's done condition variable). No work stealing, no inline runs, no batching.
 *
 * Threads: the submitting thread (bench_pool_submit / bench_pool_wait) and the pool's workers.
 * Lock: pool->mu guards the queue, every job's `done` and the shutdown flag; it is the only lock.
 */
#include <pthread.h>
#include <stdlib.h>

#include "pool.h"

#define POOL_THREADS 4

struct bench_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or shutdown */
    pthread_cond_t done; /* a job finished */
    bench_pool_job *head, *tail;
    bool shutdown;
    pthread_t threads[POOL_THREADS];
};

static void *worker(void *arg)
{
    bench_pool *p = (bench_pool *)arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == NULL && !p->shutdown)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->head == NULL)
            break;
        bench_pool_job *j = p->head;
        p->head = j->next;
        if (p->head == NULL)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        j->fn(j->arg);
        pthread_mutex_lock(&p->mu);
        j->done = true;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

bench_pool *bench_pool_create(void)
{
    bench_pool *p = (bench_pool *)calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < POOL_THREADS; i++)
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            abort();
    return p;
}

void bench_pool_submit(bench_pool *p, bench_pool_job *j)
{
    j->next = NULL;
    j->done = false;
    pthread_mutex_lock(&p->mu);
    if (p->tail != NULL)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void bench_pool_wait(bench_pool *p, bench_pool_job *j)
{
    pthread_mutex_lock(&p->mu);
    while (!j->done)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void bench_pool_destroy(bench_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->shutdown = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < POOL_THREADS; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
