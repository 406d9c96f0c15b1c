/*
 * B18: copy a tree of 10,000 small files (100 directories of 100 files, 100 B - 4 KiB each; made
 * once in $TMPDIR or /tmp as cio-bench-tree-<N> and kept for later runs, so its pages are cached)
 * to a new directory beside it, once per process; the headline is the wall time per file. The copy
 * is removed afterwards (not timed). Contenders:
 *   threaded, evented-*  cio_dir_copy_tree (cp -a: each file through an atomic file, a temporary
 *                        renamed into place, with its mode and times; 16 files at once in tasks)
 *   nftw                 nftw(3) + copy_file_range(2) on one thread, mode at creation and times
 *                        (futimens): what a C programmer writes without a library
 *   libuv                the tree read with uv_fs_scandir and the directories made on the loop's
 *                        thread, then uv_fs_copyfile, 16 in flight (libuv keeps the mode, not times)
 *   go                   bench/peers: filepath.WalkDir + io.Copy, 16 goroutines at once (run by
 *                        this program with the two paths, which it makes and removes)
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "bench.h"

#define DIRS 100
#define PATHLEN 512

static char src_root[128], dst_base[128], dst_root[160];
static bool keep_source = true; /* --smoke removes its (tiny) source tree too */

static long files_of(const bench_opts *o)
{
    keep_source = !o->smoke;
    return o->smoke ? 100 : o->param > 0 ? o->param : 10000;
}

static void write_file(const char *path, size_t size)
{
    static char data[4096];
    memset(data, 'f', sizeof data);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) != 0)
        bench_die("write source file");
}

/* The source tree (made once, kept: its ".complete" marker says it is whole) and a fresh parent for
 * the copy, dst_root = <parent>/tree (not made: every contender makes it). */
static void make_trees(long files)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || strlen(base) > 60)
        base = "/tmp";
    snprintf(src_root, sizeof src_root, "%s/cio-bench-tree-%ld", base, files);
    char path[PATHLEN];
    snprintf(path, sizeof path, "%s/.complete", src_root);
    if (access(path, F_OK) != 0) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", src_root);
        if (system(cmd) != 0 || mkdir(src_root, 0755) != 0)
            bench_die("mkdir source tree");
        long dirs = files < DIRS ? 1 : DIRS;
        for (long d = 0; d < dirs; d++) {
            snprintf(path, sizeof path, "%s/d%03ld", src_root, d);
            if (mkdir(path, 0755) != 0)
                bench_die("mkdir");
        }
        for (long i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/d%03ld/f%05ld.txt", src_root, i % dirs, i);
            write_file(path, 100 + (size_t)(i * 397 % 3997));
        }
        snprintf(path, sizeof path, "%s/.complete", src_root);
        write_file(path, 0);
    }
    snprintf(dst_base, sizeof dst_base, "%s/cio-bench-copy-XXXXXX", base);
    if (mkdtemp(dst_base) == NULL)
        bench_die("mkdtemp");
    snprintf(dst_root, sizeof dst_root, "%s/tree", dst_base);
}

static void remove_copy(void)
{
    char cmd[320];
    if (keep_source)
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dst_base);
    else
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dst_base, src_root);
    if (system(cmd) != 0)
        fprintf(stderr, "cio_bench: could not remove %s\n", dst_base);
}

static void report(int64_t ns, long files)
{
    bench_result("main", (double)ns / (double)(files + 1), "ns/file"); /* + the marker */
    bench_result("files", (double)files, "n");
}

/* ---- cio ------------------------------------------------------------------------------------------------ */

static void cio_copy(bench_backend *b, void *arg)
{
    (void)arg;
    cio_err err = cio_dir_copy_tree(b->io, cio_dir_cwd(), src_root, cio_dir_cwd(), dst_root, NULL);
    if (err != CIO_OK)
        bench_fail("cio_dir_copy_tree", err);
}

static int tree_cio(const bench_opts *o, const char *contender)
{
    bench_backend_kind kind;
    bench_backend b;
    if (!bench_kind_of(contender, &kind))
        return 2;
    if (!bench_backend_open(kind, 0, &b))
        return BENCH_NA;
    make_trees(files_of(o));
    int64_t t0 = bench_now_ns();
    bench_backend_run(&b, cio_copy, NULL);
    int64_t ns = bench_now_ns() - t0;
    bench_backend_close(&b);
    report(ns, files_of(o));
    remove_copy();
    return 0;
}

/* ---- nftw + copy_file_range ------------------------------------------------------------------------------ */

static int nftw_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    char to[PATHLEN];
    snprintf(to, sizeof to, "%s%s", dst_root, path + strlen(src_root));
    if (type == FTW_D)
        return mkdir(to, st->st_mode & 07777) == 0 ? 0 : -1;
    if (type != FTW_F)
        return -1;
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->st_mode & 07777);
    if (in < 0 || out < 0)
        return -1;
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0);
        if (n == 0)
            break;
        if (n < 0)
            return -1;
    }
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    int rc = futimens(out, times);
    close(in);
    return close(out) == 0 && rc == 0 ? 0 : -1;
}

static int tree_nftw(const bench_opts *o, const char *contender)
{
    (void)contender;
    make_trees(files_of(o));
    int64_t t0 = bench_now_ns();
    if (nftw(src_root, nftw_one, 64, FTW_PHYS) != 0)
        bench_die("nftw copy");
    int64_t ns = bench_now_ns() - t0;
    report(ns, files_of(o));
    remove_copy();
    return 0;
}

/* ---- libuv: scandir, then copyfile with 16 in flight ------------------------------------------------------- */

#define UV_INFLIGHT 16

typedef struct uv_copy {
    uv_loop_t *loop;
    char (*from)[PATHLEN];
    char (*to)[PATHLEN];
    long n, next, done;
    uv_fs_t reqs[UV_INFLIGHT];
} uv_copy;

static void uv_copied(uv_fs_t *req);

static void uv_copy_next(uv_copy *u, uv_fs_t *req)
{
    if (u->next == u->n)
        return;
    long i = u->next++;
    req->data = u;
    if (uv_fs_copyfile(u->loop, req, u->from[i], u->to[i], UV_FS_COPYFILE_EXCL, uv_copied) != 0)
        bench_die("uv_fs_copyfile");
}

static void uv_copied(uv_fs_t *req)
{
    uv_copy *u = (uv_copy *)req->data;
    if (req->result < 0)
        bench_die("uv_fs_copyfile result");
    uv_fs_req_cleanup(req);
    u->done++;
    uv_copy_next(u, req);
}

/* Walks `from` with uv_fs_scandir (synchronous, on the loop's thread), makes the directories under
 * `to` and lists the files. */
static void uv_tree_walk(uv_copy *u, const char *from, const char *to, long cap)
{
    uv_fs_t req;
    if (uv_fs_mkdir(u->loop, &req, to, 0755, NULL) != 0)
        bench_die("uv_fs_mkdir");
    uv_fs_req_cleanup(&req);
    if (uv_fs_scandir(u->loop, &req, from, 0, NULL) < 0)
        bench_die("uv_fs_scandir");
    uv_dirent_t ent;
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        char f[PATHLEN], t[PATHLEN];
        snprintf(f, sizeof f, "%s/%s", from, ent.name);
        snprintf(t, sizeof t, "%s/%s", to, ent.name);
        if (ent.type == UV_DIRENT_DIR) {
            uv_tree_walk(u, f, t, cap);
        } else if (u->n < cap) {
            memcpy(u->from[u->n], f, sizeof f);
            memcpy(u->to[u->n], t, sizeof t);
            u->n++;
        }
    }
    uv_fs_req_cleanup(&req);
}

static int tree_libuv(const bench_opts *o, const char *contender)
{
    (void)contender;
    long cap = files_of(o) + 16;
    uv_copy u;
    memset(&u, 0, sizeof u);
    u.loop = uv_default_loop();
    bench_uv_pool_start(u.loop);
    u.from = (char(*)[PATHLEN])malloc((size_t)cap * PATHLEN);
    u.to = (char(*)[PATHLEN])malloc((size_t)cap * PATHLEN);
    if (u.from == NULL || u.to == NULL)
        bench_die("malloc");
    make_trees(files_of(o));
    int64_t t0 = bench_now_ns();
    uv_tree_walk(&u, src_root, dst_root, cap);
    for (int i = 0; i < UV_INFLIGHT; i++)
        uv_copy_next(&u, &u.reqs[i]);
    uv_run(u.loop, UV_RUN_DEFAULT);
    int64_t ns = bench_now_ns() - t0;
    if (u.done != u.n)
        bench_die("libuv copy incomplete");
    report(ns, files_of(o));
    remove_copy();
    free(u.from);
    free(u.to);
    return 0;
}

/* ---- Go: the peer program, run with the two paths ------------------------------------------------------------ */

static int tree_go(const bench_opts *o, const char *contender)
{
    const char *why = NULL;
    const char *exe = bench_external_peer(contender, &why);
    if (exe == NULL)
        return bench_na(why != NULL ? why : "no Go peer");
    bench_report_cpu = false; /* the Go program reports its own */
    make_trees(files_of(o));
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork");
    if (pid == 0) {
        execl(exe, exe, "B18", src_root, dst_root, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    remove_copy();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

const bench_entry bench_tree_entries[] = {
    {"B18", "threaded", tree_cio},
    {"B18", "evented-uring", tree_cio},
    {"B18", "evented-epoll", tree_cio},
    {"B18", "nftw", tree_nftw},
    {"B18", "libuv", tree_libuv},
    {"B18", "go", tree_go},
    {NULL, NULL, NULL},
};
