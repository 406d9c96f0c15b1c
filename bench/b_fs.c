/*
 * Files: B9 (stat, B9s, and 4 KiB positional read, B9r, of a cached file with 1 / 4 / 32 requests
 * in flight: --param) and B13 (the article's saveData: N files written concurrently, --param N)
 * in $TMPDIR or /tmp, and B13m, the same on /dev/shm (tmpfs: no disk under it). On ext4, closing
 * a file that was truncated and rewritten starts its writeback (auto_da_alloc), so B13 waits on
 * the disk as a real saveData would; B13m measures the dispatch alone.
 *
 * "In flight" on cio is what a user writes: a ring of `depth` futures from cio_async, the oldest
 * awaited and replaced, one operation per task. The backend decides where each runs (Threaded runs
 * async inline once its async limit is reached: that is its design, and it is measured as such).
 * libuv keeps `depth` requests queued, each completion callback submitting the next; liburing keeps
 * `depth` SQEs (statx / read) in the ring, refilling from each batch of completions with one
 * io_uring_enter (what the Evented backend's io_uring path can aim for). "sync" is the same
 * syscalls made directly on the measuring thread: the floor, not a contender.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>
#include <uv.h>

#include "bench.h"
#include "pool.h"

#define FILE_SIZE (1024 * 1024)
#define BLOCK 4096
#define MAX_DEPTH 64

static char tmpdir[64];
static char datapath[128];

static bool on_shm; /* B13m: the directory on /dev/shm (tmpfs) */

static void make_tmpdir(void)
{
    const char *base = on_shm ? "/dev/shm" : getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/cio-bench-XXXXXX", base != NULL && strlen(base) < 40 ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        bench_die("mkdtemp");
}

/* A 1 MiB file, read once so that it is in the page cache. */
static int make_datafile(void)
{
    make_tmpdir();
    snprintf(datapath, sizeof datapath, "%s/data", tmpdir);
    int fd = open(datapath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        bench_die("open");
    static char chunk[BLOCK];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < FILE_SIZE / BLOCK; i++)
        if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            bench_die("write");
    for (int i = 0; i < FILE_SIZE / BLOCK; i++)
        if (pread(fd, chunk, sizeof chunk, (off_t)i * BLOCK) != (ssize_t)sizeof chunk)
            bench_die("pread");
    return fd;
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "cio_bench: could not remove %s\n", tmpdir);
}

static long depth_of(const bench_opts *o)
{
    long d = o->param > 0 ? o->param : 1;
    return d > MAX_DEPTH ? MAX_DEPTH : d;
}

/* ---- B9, cio: a ring of futures ----------------------------------------------------------------------- */

typedef struct b9_op {
    cio_io io;
    bool stat;
    cio_file file;
    uint64_t offset;
    unsigned char *buf;
} b9_op;

static cio_err b9_task(void *context)
{
    b9_op *op = (b9_op *)context;
    if (op->stat) {
        cio_stat st;
        return cio_dir_stat_file(op->io, cio_dir_cwd(), datapath, 0, &st);
    }
    size_t n = 0;
    return cio_file_read_positional(op->io, op->file, op->buf, BLOCK, op->offset, &n);
}

typedef struct b9_cio {
    cio_io io;
    bool stat;
    cio_file file;
    long depth;
    uint64_t next_offset;
    cio_future ring[MAX_DEPTH];
    unsigned char bufs[MAX_DEPTH][BLOCK];
} b9_cio;

static cio_future b9_issue(b9_cio *c, long slot)
{
    b9_op op = {c->io, c->stat, c->file, c->next_offset, c->bufs[slot]};
    c->next_offset = (c->next_offset + BLOCK) % FILE_SIZE;
    return cio_async(c->io, b9_task, &op, sizeof op);
}

static void b9_cio_body(void *arg, uint64_t n)
{
    b9_cio *c = (b9_cio *)arg;
    uint64_t issued = 0;
    long first = 0, live = 0;
    while (live < c->depth && issued < n) {
        c->ring[live] = b9_issue(c, live);
        live++;
        issued++;
    }
    while (live > 0) {
        cio_err err = cio_await(c->io, &c->ring[first]);
        if (err != CIO_OK)
            bench_fail("B9 operation", err);
        if (issued < n) {
            c->ring[first] = b9_issue(c, first);
            issued++;
        } else {
            live--;
        }
        first = (first + 1) % c->depth;
    }
}

/* ---- B9, libuv: depth requests, each callback submits the next ------------------------------------------ */

typedef struct b9_uv b9_uv;
typedef struct b9_uv_req {
    uv_fs_t req;
    b9_uv *owner;
    char buf[BLOCK];
} b9_uv_req;

struct b9_uv {
    uv_loop_t *loop;
    bool stat;
    uv_file file;
    uint64_t left;
    uint64_t next_offset;
    b9_uv_req reqs[MAX_DEPTH];
};

static void b9_uv_cb(uv_fs_t *req);

static void b9_uv_issue(b9_uv_req *r)
{
    b9_uv *u = r->owner;
    u->left--;
    r->req.data = r;
    int rc;
    if (u->stat) {
        rc = uv_fs_stat(u->loop, &r->req, datapath, b9_uv_cb);
    } else {
        uv_buf_t b = uv_buf_init(r->buf, BLOCK);
        rc = uv_fs_read(u->loop, &r->req, u->file, &b, 1, (int64_t)u->next_offset, b9_uv_cb);
        u->next_offset = (u->next_offset + BLOCK) % FILE_SIZE;
    }
    if (rc != 0)
        bench_die("uv_fs_*");
}

static void b9_uv_cb(uv_fs_t *req)
{
    b9_uv_req *r = (b9_uv_req *)req->data;
    if (req->result < 0)
        bench_die("uv_fs_* result");
    uv_fs_req_cleanup(req);
    if (r->owner->left > 0)
        b9_uv_issue(r);
}

static long b9_uv_depth;

static void b9_uv_body(void *arg, uint64_t n)
{
    b9_uv *u = (b9_uv *)arg;
    u->left = n;
    for (long i = 0; i < b9_uv_depth && u->left > 0; i++)
        b9_uv_issue(&u->reqs[i]);
    uv_run(u->loop, UV_RUN_DEFAULT);
}

/* ---- B9, sync ------------------------------------------------------------------------------------------------- */

typedef struct b9_sync {
    bool stat;
    int fd;
    uint64_t offset;
    char buf[BLOCK];
} b9_sync;

static void b9_sync_body(void *arg, uint64_t n)
{
    b9_sync *s = (b9_sync *)arg;
    for (uint64_t i = 0; i < n; i++) {
        if (s->stat) {
            struct stat st;
            if (stat(datapath, &st) != 0)
                bench_die("stat");
        } else {
            if (pread(s->fd, s->buf, BLOCK, (off_t)s->offset) != BLOCK)
                bench_die("pread");
            s->offset = (s->offset + BLOCK) % FILE_SIZE;
        }
    }
}

/* ---- B9, liburing: depth requests in the ring, each completion refilled, one enter per batch --------------- */

typedef struct b9_ring {
    struct io_uring ring;
    bool stat;
    int fd;
    long depth;
    uint64_t next_offset;
    struct statx stx[MAX_DEPTH];
    char bufs[MAX_DEPTH][BLOCK];
} b9_ring;

static void b9_ring_prep(b9_ring *r, long slot)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (sqe == NULL)
        bench_die("io_uring_get_sqe");
    if (r->stat) {
        io_uring_prep_statx(sqe, AT_FDCWD, datapath, 0, STATX_BASIC_STATS, &r->stx[slot]);
    } else {
        io_uring_prep_read(sqe, r->fd, r->bufs[slot], BLOCK, r->next_offset);
        r->next_offset = (r->next_offset + BLOCK) % FILE_SIZE;
    }
    io_uring_sqe_set_data64(sqe, (uint64_t)slot);
}

static void b9_ring_body(void *arg, uint64_t n)
{
    b9_ring *r = (b9_ring *)arg;
    uint64_t issued = 0, done = 0;
    for (long i = 0; i < r->depth && issued < n; i++, issued++)
        b9_ring_prep(r, i);
    while (done < n) {
        if (io_uring_submit_and_wait(&r->ring, 1) < 0)
            bench_die("io_uring_submit_and_wait");
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&r->ring, head, cqe)
        {
            if (cqe->res < 0) {
                errno = -cqe->res;
                bench_die("io_uring op");
            }
            seen++;
            done++;
            if (issued < n) {
                b9_ring_prep(r, (long)io_uring_cqe_get_data64(cqe));
                issued++;
            }
        }
        io_uring_cq_advance(&r->ring, seen);
    }
}

/* ---- B9, the plain pthread pool: a ring of jobs ---------------------------------------------------------- */

typedef struct b9_pool {
    bench_pool *pool;
    bool stat;
    int fd;
    long depth;
    uint64_t next_offset;
    bench_pool_job jobs[MAX_DEPTH];
    uint64_t offsets[MAX_DEPTH];
    unsigned char bufs[MAX_DEPTH][BLOCK];
} b9_pool;

static b9_pool *b9_pool_self; /* one at a time: a job finds its slot by its address */

static void b9_pool_job(void *arg)
{
    b9_pool *p = b9_pool_self;
    long slot = (long)(intptr_t)arg;
    if (p->stat) {
        struct stat st;
        if (stat(datapath, &st) != 0)
            bench_die("stat");
    } else if (pread(p->fd, p->bufs[slot], BLOCK, (off_t)p->offsets[slot]) != BLOCK) {
        bench_die("pread");
    }
}

static void b9_pool_issue(b9_pool *p, long slot)
{
    p->offsets[slot] = p->next_offset;
    p->next_offset = (p->next_offset + BLOCK) % FILE_SIZE;
    p->jobs[slot].fn = b9_pool_job;
    p->jobs[slot].arg = (void *)(intptr_t)slot;
    bench_pool_submit(p->pool, &p->jobs[slot]);
}

static void b9_pool_body(void *arg, uint64_t n)
{
    b9_pool *p = (b9_pool *)arg;
    uint64_t issued = 0;
    long first = 0, live = 0;
    while (live < p->depth && issued < n) {
        b9_pool_issue(p, live++);
        issued++;
    }
    while (live > 0) {
        bench_pool_wait(p->pool, &p->jobs[first]);
        if (issued < n) {
            b9_pool_issue(p, first);
            issued++;
        } else {
            live--;
        }
        first = (first + 1) % p->depth;
    }
}

static int b9(const bench_opts *o, const char *contender, bool stat_op)
{
    double ns = 0;
    bench_backend b;
    bench_backend_kind kind;
    bool is_cio = bench_kind_of(contender, &kind);
    if (is_cio && !bench_backend_open(kind, 0, &b))
        return BENCH_NA;
    if (is_cio && bench_conc_of(contender) && kind == BENCH_THREADED) /* every operation on a worker */
        cio_threaded_set_async_limit((cio_threaded *)b.instance, SIZE_MAX);
    int fd = make_datafile();
    if (strcmp(contender, "pthread-pool") == 0) {
        b9_pool *p = (b9_pool *)calloc(1, sizeof *p);
        if (p == NULL || (p->pool = bench_pool_create()) == NULL)
            bench_die("bench_pool_create");
        p->stat = stat_op;
        p->fd = fd;
        p->depth = depth_of(o);
        b9_pool_self = p;
        ns = bench_measure(b9_pool_body, p, o->seconds);
        bench_pool_destroy(p->pool);
        free(p);
    } else if (is_cio) {
        b9_cio *c = (b9_cio *)calloc(1, sizeof *c);
        if (c == NULL)
            bench_die("calloc");
        c->io = b.io;
        c->stat = stat_op;
        c->file = (cio_file){fd};
        c->depth = depth_of(o);
        ns = bench_measure_on(&b, b9_cio_body, c, o->seconds);
        free(c);
        bench_backend_close(&b);
    } else if (strcmp(contender, "liburing") == 0) {
        b9_ring *r = (b9_ring *)calloc(1, sizeof *r);
        if (r == NULL)
            bench_die("calloc");
        int rc = io_uring_queue_init(2 * MAX_DEPTH, &r->ring, 0);
        if (rc < 0) {
            free(r);
            close(fd);
            remove_tmpdir();
            char why[96];
            snprintf(why, sizeof why, "io_uring_queue_init: %s", strerror(-rc));
            return bench_na(why);
        }
        r->stat = stat_op;
        r->fd = fd;
        r->depth = depth_of(o);
        ns = bench_measure(b9_ring_body, r, o->seconds);
        io_uring_queue_exit(&r->ring);
        free(r);
    } else if (strcmp(contender, "libuv") == 0) {
        b9_uv *u = (b9_uv *)calloc(1, sizeof *u);
        if (u == NULL)
            bench_die("calloc");
        u->loop = uv_default_loop();
        u->stat = stat_op;
        u->file = fd;
        for (int i = 0; i < MAX_DEPTH; i++)
            u->reqs[i].owner = u;
        b9_uv_depth = depth_of(o);
        bench_uv_pool_start(u->loop);
        ns = bench_measure(b9_uv_body, u, o->seconds);
        free(u);
    } else {
        b9_sync s;
        memset(&s, 0, sizeof s);
        s.stat = stat_op;
        s.fd = fd;
        ns = bench_measure(b9_sync_body, &s, o->seconds);
    }
    close(fd);
    remove_tmpdir();
    bench_result("main", 1e9 / ns, "ops/s");
    return 0;
}

static int b9s(const bench_opts *o, const char *contender)
{
    return b9(o, contender, true);
}

static int b9r(const bench_opts *o, const char *contender)
{
    return b9(o, contender, false);
}

/* ---- B13: saveData, N files of 4 KiB written concurrently --------------------------------------------------- */

static char payload[BLOCK];
static char names[MAX_DEPTH][128];

static long files_of(const bench_opts *o)
{
    return depth_of(o);
}

typedef struct save_args {
    cio_io io;
    const char *name;
} save_args;

static cio_err save_file(void *context)
{
    save_args *a = (save_args *)context;
    cio_file f;
    cio_err err = cio_dir_create_file(a->io, cio_dir_cwd(), a->name, NULL, &f);
    if (err != CIO_OK)
        return err;
    err = cio_file_write_all(a->io, f, payload, sizeof payload);
    cio_file_close(a->io, f);
    return err;
}

typedef struct b13_cio {
    cio_io io;
    long files;
    cio_future futures[MAX_DEPTH];
} b13_cio;

static void b13_cio_body(void *arg, uint64_t n)
{
    b13_cio *c = (b13_cio *)arg;
    for (uint64_t i = 0; i < n; i++) {
        for (long k = 0; k < c->files; k++) {
            save_args a = {c->io, names[k]};
            c->futures[k] = cio_async(c->io, save_file, &a, sizeof a);
        }
        for (long k = 0; k < c->files; k++) {
            cio_err err = cio_await(c->io, &c->futures[k]);
            if (err != CIO_OK)
                bench_fail("save_file", err);
        }
    }
}

/* libuv: per file open -> write -> close, chained in callbacks; all files started, then the loop. */
typedef struct b13_uv_file {
    uv_fs_t req;
    uv_file fd;
    uv_buf_t buf;
} b13_uv_file;

typedef struct b13_uv {
    uv_loop_t *loop;
    long files;
    b13_uv_file f[MAX_DEPTH];
} b13_uv;

static void b13_uv_closed(uv_fs_t *req)
{
    if (req->result < 0)
        bench_die("uv_fs_close");
    uv_fs_req_cleanup(req);
}

static void b13_uv_written(uv_fs_t *req)
{
    b13_uv_file *f = (b13_uv_file *)req->data;
    if (req->result != BLOCK)
        bench_die("uv_fs_write");
    uv_fs_req_cleanup(req);
    uv_fs_close(req->loop, req, f->fd, b13_uv_closed);
}

static void b13_uv_opened(uv_fs_t *req)
{
    b13_uv_file *f = (b13_uv_file *)req->data;
    if (req->result < 0)
        bench_die("uv_fs_open");
    f->fd = (uv_file)req->result;
    uv_fs_req_cleanup(req);
    f->buf = uv_buf_init(payload, BLOCK);
    uv_fs_write(req->loop, req, f->fd, &f->buf, 1, -1, b13_uv_written);
}

static void b13_uv_body(void *arg, uint64_t n)
{
    b13_uv *u = (b13_uv *)arg;
    for (uint64_t i = 0; i < n; i++) {
        for (long k = 0; k < u->files; k++) {
            u->f[k].req.data = &u->f[k];
            uv_fs_open(u->loop, &u->f[k].req, names[k], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666, b13_uv_opened);
        }
        uv_run(u->loop, UV_RUN_DEFAULT);
    }
}

static void b13_sync_body(void *arg, uint64_t n)
{
    long files = *(long *)arg;
    for (uint64_t i = 0; i < n; i++)
        for (long k = 0; k < files; k++) {
            int fd = open(names[k], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
            if (fd < 0 || write(fd, payload, BLOCK) != BLOCK)
                bench_die("open/write");
            close(fd);
        }
}

static int b13(const bench_opts *o, const char *contender)
{
    bench_backend b;
    bench_backend_kind kind;
    bool is_cio = bench_kind_of(contender, &kind);
    if (is_cio && !bench_backend_open(kind, 0, &b))
        return BENCH_NA;
    if (is_cio && bench_conc_of(contender) && kind == BENCH_THREADED) /* every file on a worker */
        cio_threaded_set_async_limit((cio_threaded *)b.instance, SIZE_MAX);
    long files = files_of(o);
    make_tmpdir();
    memset(payload, 'p', sizeof payload);
    for (long k = 0; k < files; k++)
        snprintf(names[k], sizeof names[k], "%s/save%ld.txt", tmpdir, k);
    double ns;
    if (is_cio) {
        b13_cio *c = (b13_cio *)calloc(1, sizeof *c);
        if (c == NULL)
            bench_die("calloc");
        c->io = b.io;
        c->files = files;
        ns = bench_measure_on(&b, b13_cio_body, c, o->seconds);
        free(c);
        bench_backend_close(&b);
    } else if (strcmp(contender, "libuv") == 0) {
        b13_uv *u = (b13_uv *)calloc(1, sizeof *u);
        if (u == NULL)
            bench_die("calloc");
        u->loop = uv_default_loop();
        u->files = files;
        bench_uv_pool_start(u->loop);
        ns = bench_measure(b13_uv_body, u, o->seconds);
        free(u);
    } else {
        ns = bench_measure(b13_sync_body, &files, o->seconds);
    }
    /* Every file must hold the payload (a contender that wrote nothing would look fast). */
    for (long k = 0; k < files; k++) {
        struct stat st;
        if (stat(names[k], &st) != 0 || st.st_size != BLOCK) {
            fprintf(stderr, "cio_bench: saveData: %s was not written (%s)\n", names[k], contender);
            remove_tmpdir();
            return 1;
        }
    }
    remove_tmpdir();
    bench_result("main", 1e9 * (double)files / ns, "files/s");
    return 0;
}

static int b13m(const bench_opts *o, const char *contender)
{
    on_shm = true;
    return b13(o, contender);
}

const bench_entry bench_fs_entries[] = {
    {"B9s", "threaded", b9s},
    {"B9s", "evented-uring", b9s},
    {"B9s", "libuv", b9s},
    {"B9s", "sync", b9s},
    {"B9s", "liburing", b9s},
    {"B9s", "threaded+conc", b9s},
    {"B9s", "pthread-pool", b9s},
    {"B9r", "threaded", b9r},
    {"B9r", "evented-uring", b9r},
    {"B9r", "libuv", b9r},
    {"B9r", "sync", b9r},
    {"B9r", "liburing", b9r},
    {"B9r", "threaded+conc", b9r},
    {"B9r", "pthread-pool", b9r},
    {"B13", "threaded", b13},
    {"B13", "evented-uring", b13},
    {"B13", "libuv", b13},
    {"B13", "sync", b13},
    {"B13", "threaded+conc", b13},
    {"B13m", "threaded", b13m},
    {"B13m", "evented-uring", b13m},
    {"B13m", "libuv", b13m},
    {"B13m", "sync", b13m},
    {"B13m", "threaded+conc", b13m},
    {NULL, NULL, NULL},
};
