/* The plain pthread pool peer of B5 and B9 (pool.c). */
#ifndef CIO_BENCH_POOL_H
#define CIO_BENCH_POOL_H

#include <stdbool.h>

typedef struct bench_pool bench_pool;

/* A job: fn(arg) on a pool thread; `done` is set (under the pool's lock) when it returned. */
typedef struct bench_pool_job {
    void (*fn)(void *arg);
    void *arg;
    struct bench_pool_job *next;
    bool done;
} bench_pool_job;

bench_pool *bench_pool_create(void);
void bench_pool_submit(bench_pool *p, bench_pool_job *j);
/* Waits until j has run. */
void bench_pool_wait(bench_pool *p, bench_pool_job *j);
void bench_pool_destroy(bench_pool *p);

#endif
