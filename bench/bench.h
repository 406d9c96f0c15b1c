/*
 * The benchmark program's shared pieces (bench/b_*.c and main.c; driven by bench/driver.py, see bench/README.md).
 *
 * One process runs one contender of one benchmark once and prints
 *     RESULT <metric> <value> <unit>
 * lines (metric "main" for the headline number), or "NA <reason>" and exit status 3 when the
 * contender cannot run here (Evented not built, io_uring refused, …). The driver interleaves the
 * processes (A B A B …) and takes medians.
 *
 * CPU placement (--cpus), set up by bench_pin_init() before any thread exists:
 *   one    the process runs on CPU 0 (single-threaded benchmarks)
 *   same   every thread of the process runs on CPU 0
 *   split  the measuring (main) thread runs on CPU 0 and every thread it or the library creates
 *          runs on CPU 1: pthread_create is wrapped (-Wl,--wrap=pthread_create) for the statically
 *          linked code (cio and bench/), and libuv's pool (a shared library) is started while the
 *          main thread is briefly on CPU 1 (bench_uv_pool_start), so its threads inherit CPU 1.
 *          Evented: the measuring code is a fiber of a loop thread, so the backend's threads may
 *          run on CPUs 0 and 1 (the main thread only waits for that fiber).
 *   Two-process benchmarks (TCP) put the server process, all its threads, on CPU 1 for split, CPU 0
 *   for same.
 */
#ifndef CIO_BENCH_H
#define CIO_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cio.h>

typedef enum bench_cpus { BENCH_CPUS_FREE = 0, BENCH_CPUS_ONE, BENCH_CPUS_SAME, BENCH_CPUS_SPLIT } bench_cpus;

typedef struct bench_opts {
    bench_cpus cpus;
    double seconds; /* measuring time per run */
    long param;     /* depth, file count, … (per benchmark; 0: its default) */
    bool smoke;     /* tiny sizes: only checks that it runs */
} bench_opts;

/* Exit status of a contender that cannot run here (after printing "NA <reason>"). */
#define BENCH_NA 3

/* ---- clocks and results -------------------------------------------------------------------------- */
int64_t bench_now_ns(void);
void bench_result(const char *metric, double value, const char *unit);
int bench_na(const char *reason);
/* main.c prints "cpu" (process CPU time / wall time) after a run unless this is cleared (the TCP
 * benchmarks: the server is another process, the client reports its own share). */
extern bool bench_report_cpu;
/* Prints the error and exits with status 1. */
_Noreturn void bench_fail(const char *what, cio_err err);
_Noreturn void bench_die(const char *what);

/* Calls body(arg, n) with growing n until `seconds` are used (after a warm-up of ~10 %), and
 * returns nanoseconds per unit of n. */
typedef void (*bench_body)(void *arg, uint64_t n);
double bench_measure(bench_body body, void *arg, double seconds);

/* ---- CPU placement ------------------------------------------------------------------------------- */
void bench_pin_init(bench_cpus cpus);
/* Pins the calling thread to one CPU. */
void bench_pin_self(int cpu);
/* The CPU threads created from here on should run on (-1: inherit). */
int bench_worker_cpu(void);
/* Pins the process to `cpu` (no-op for -1): its threads created from here on inherit it. */
void bench_pin_process(int cpu);
/* 2-process benchmarks: the CPU for the server / client process under the mode (-1: free). */
int bench_server_cpu(bench_cpus cpus);
int bench_client_cpu(bench_cpus cpus);

/* ---- cio backends as contenders ------------------------------------------------------------------ */
typedef enum bench_backend_kind {
    BENCH_THREADED = 0,
    BENCH_EVENTED_URING,
    BENCH_EVENTED_EPOLL
} bench_backend_kind;

typedef struct bench_backend {
    bench_backend_kind kind;
    cio_io io;
    void *instance;
    /* The "+conc" contenders (B3, B5): every task on a unit of concurrency of its own, never inline
     * (Threaded: no async limit; Evented: cio_concurrent / cio_group_concurrent, awaited as fibers). */
    bool all_concurrent;
} bench_backend;

/* Creates the backend; returns false (after printing NA) when it does not exist here.
 * evented_threads: the Evented backend's loop threads (0: its default); ignored by Threaded. */
bool bench_backend_open(bench_backend_kind kind, unsigned evented_threads, bench_backend *out);
void bench_backend_close(bench_backend *b);
/* Prints the backend's task counts since it was opened: RESULT inline (% of tasks whose function ran
 * inline on the caller or the awaiting fiber) and RESULT units (tasks that ran on a unit of
 * concurrency of their own: a worker thread, a fiber), so a row shows the path it measured. */
void bench_backend_report_tasks(const bench_backend *b);
/* Runs fn(arg) where the backend's tasks live: directly on Threaded, inside one concurrent task on
 * Evented (so the measuring code is a fiber of the loop, not a foreign thread). */
void bench_backend_run(bench_backend *b, void (*fn)(bench_backend *b, void *arg), void *arg);
/* bench_measure(body, arg, seconds) run through bench_backend_run. */
double bench_measure_on(bench_backend *b, bench_body body, void *arg, double seconds);

/* ---- libuv ------------------------------------------------------------------------------------------ */
/* Starts libuv's thread pool (placed per bench_pin_init) before anything is measured. */
struct uv_loop_s;
void bench_uv_pool_start(struct uv_loop_s *loop);

/* ---- the benchmarks: one entry per (benchmark, contender) ------------------------------------------- */
typedef int (*bench_fn)(const bench_opts *o, const char *contender);

typedef struct bench_entry {
    const char *bench;     /* "B3" */
    const char *contender; /* "threaded", "evented-uring", "evented-epoll", "libuv", … */
    bench_fn fn;
} bench_entry;

/* Each bench/b_*.c file's table, terminated by {0}. */
extern const bench_entry bench_tasks_entries[];
extern const bench_entry bench_sync_entries[];
extern const bench_entry bench_fs_entries[];
extern const bench_entry bench_net_entries[];
extern const bench_entry bench_misc_entries[];
extern const bench_entry bench_fiber_entries[];
extern const bench_entry bench_http_entries[];
extern const bench_entry bench_tree_entries[];
extern const bench_entry bench_timer_entries[];

/* ---- TCP over loopback (b_net.c), shared by the two-process benchmarks ------------------------------- */
/* A listening socket on 127.0.0.1 (an ephemeral port, written to *port); dies on failure. */
int bench_listen_loopback(uint16_t *port, int backlog);
/* A blocking connection to 127.0.0.1:port with TCP_NODELAY; dies on failure. */
int bench_connect_loopback(uint16_t port);
/* A peer that is a program of its own (bench/peers/: "go", "tokio"): the program the driver named in
 * CIO_BENCH_<NAME>, or NULL with *why (NULL too when the contender is no such peer). */
const char *bench_external_peer(const char *contender, const char **why);
/* In a server child: runs `exe mode FD` on the listening socket (it inherits it). */
_Noreturn void bench_exec_peer_server(const char *exe, const char *mode, int listen_fd);
/* In a server child, first thing: dies with its parent, runs on the placement's server CPU. */
void bench_server_child_init(const bench_opts *o);
/* Stops a server child (SIGTERM: a cio server prints its task counts; then SIGKILL) and reaps it. */
void bench_stop_server(int pid);
/* CPU time (user + system, every thread) of this process / of another one (-1 if unreadable), in s. */
double bench_cpu_seconds(void);
double bench_proc_cpu_seconds(int pid);

/* Echo servers without a library (b_net_peers.c): the B10/B16 peers "thread-per-conn" and "raw-epoll". */
_Noreturn void bench_echo_thread_per_conn(int listen_fd);
_Noreturn void bench_echo_raw_epoll(int listen_fd);

/* The cio contenders of a benchmark all share one function; this maps the name to the kind. */
bool bench_kind_of(const char *contender, bench_backend_kind *kind);
/* Whether the contender is a "+conc" one (bench_backend.all_concurrent). */
bool bench_conc_of(const char *contender);

#endif
