/*
 * Runs commands concurrently, at most N at a time and in the order given, capturing each one's
 * standard output through a pipe; the first command that fails (cannot start, or exits with a status
 * other than 0, or dies of a signal) cancels the rest: the running ones are killed, the ones not
 * started yet never start. Then it prints what each command wrote and a summary. The same code runs on the Threaded
 * backend and, with --evented, on the Evented one (fibers: no thread per child).
 *
 *     ./run_jobs [--evented] [-j N] command args... [:: command args...]...
 *     ./run_jobs -j 2 echo one :: echo two :: sleep 1
 *     ./run_jobs --evented sleep 30 :: false :: sleep 30     # false cancels both sleeps
 *
 * Exit status: 0 when every command succeeded, 1 when one failed, 2 for a usage error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cio.h>

enum status { PENDING, OK, FAILED, CANCELED };

struct job {
    char **argv; /* NULL-terminated, within main's argv */
    enum status status;
    cio_err err; /* why it could not run (FAILED with no term) */
    bool exited; /* term is valid */
    cio_term term;
    char *out; /* what it wrote to its stdout */
    size_t out_len;
};

struct shared {
    cio_io io;
    cio_queue done; /* indexes of finished jobs, in the order they finished */
};

struct task {
    struct shared *s;
    struct job *jobs;
    int index;
};

/* Reads the pipe to its end, growing job->out. */
static cio_err capture(cio_io io, cio_file pipe, struct job *job)
{
    size_t cap = 0;
    for (;;) {
        if (cap - job->out_len < 4096) {
            char *more = (char *)realloc(job->out, cap + 65536);
            if (more == NULL)
                return CIO_E_OUT_OF_MEMORY;
            job->out = more;
            cap += 65536;
        }
        size_t n = 0;
        cio_err err = cio_file_read_streaming(io, pipe, job->out + job->out_len, cap - job->out_len, &n);
        if (err != CIO_OK)
            return err;
        if (n == 0)
            return CIO_OK;
        job->out_len += n;
    }
}

/* Starts the command, captures its output, waits for it. A cancel (Canceled from the read or the
 * wait) kills the child; nothing is left running or unreaped. */
static enum status run(cio_io io, struct job *job)
{
    cio_spawn_options o = {.argv = (const char *const *)job->argv};
    o.stdio[0].kind = CIO_STDIO_IGNORE;
    o.stdio[1].kind = CIO_STDIO_PIPE;
    cio_child child;
    job->err = cio_process_spawn(io, &o, &child);
    if (job->err != CIO_OK)
        return job->err == CIO_E_CANCELED ? CANCELED : FAILED;
    cio_err err = capture(io, child.stdio[1], job);
    cio_file_close(io, child.stdio[1]);
    if (err == CIO_OK)
        err = cio_child_wait(io, &child, &job->term);
    if (err != CIO_OK) {
        cio_child_kill(io, &child); /* SIGTERM (TerminateProcess) and reap: not a cancellation point */
        job->err = err;
        return err == CIO_E_CANCELED ? CANCELED : FAILED;
    }
    job->exited = true;
    return job->term.kind == CIO_TERM_EXITED && job->term.code == 0 ? OK : FAILED;
}

static cio_err run_job(void *p)
{
    struct task *t = (struct task *)p;
    struct job *job = &t->jobs[t->index];
    cio_io io = t->s->io;
    job->status = run(io, job);
    (void)cio_queue_put_one(io, &t->s->done, &t->index); /* room for every job: never waits */
    return CIO_OK;
}

static void print_job(int i, const struct job *job)
{
    static const char *const names[] = {"not run", "ok", "FAILED", "canceled"};
    printf("[%d] %s: %s", i, job->argv[0], names[job->status]);
    if (job->exited && job->term.kind == CIO_TERM_EXITED)
        printf(", exit status %u", (unsigned)job->term.code);
    else if (job->exited)
        printf(", %s %u", job->term.kind == CIO_TERM_SIGNAL ? "signal" : "term", (unsigned)job->term.code);
    else if (job->status == FAILED)
        printf(" (%s)", cio_err_name(job->err));
    printf(", %zu bytes of output\n", job->out_len);
    if (job->out_len > 0)
        printf("%.*s%s", (int)job->out_len, job->out, job->out[job->out_len - 1] == '\n' ? "" : "\n");
}

static int run_all(cio_io io, struct job *jobs, int n, unsigned limit)
{
    int *done_buf = (int *)calloc((size_t)n, sizeof *done_buf);
    struct task *tasks = (struct task *)calloc((size_t)n, sizeof *tasks);
    if (done_buf == NULL || tasks == NULL)
        return 2;
    struct shared s;
    memset(&s, 0, sizeof s);
    s.io = io;
    cio_queue_init(&s.done, done_buf, sizeof *done_buf, (size_t)n);
    cio_group group = CIO_GROUP_INIT;
    bool failed = false;
    int next = 0;
    for (unsigned running = 0;;) {
        for (; next < n && running < limit; next++, running++) { /* start commands while there is room */
            tasks[next] = (struct task){&s, jobs, next};
            if (cio_group_concurrent(io, &group, run_job, &tasks[next], sizeof tasks[next]) != CIO_OK)
                cio_group_async(io, &group, run_job, &tasks[next], sizeof tasks[next]); /* no concurrency */
        }
        int i;
        if (running == 0 || cio_queue_get_one(io, &s.done, &i) != CIO_OK)
            break;
        running--;
        if (jobs[i].status == FAILED) {
            failed = true;
            break;
        }
    }
    if (failed)
        cio_group_cancel(io, &group); /* the running ones are killed; the rest never start */
    else
        (void)cio_group_await(io, &group);
    int counts[4] = {0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        print_job(i, &jobs[i]);
        counts[jobs[i].status]++;
        free(jobs[i].out);
    }
    printf("summary: %d ok, %d failed, %d canceled, %d not run\n", counts[OK], counts[FAILED], counts[CANCELED],
           counts[PENDING]);
    free(done_buf);
    free(tasks);
    return counts[OK] == n ? 0 : 1;
}

int main(int argc, char **argv)
{
    bool evented = false;
    unsigned limit = 4;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "--evented") == 0)
            evented = true;
        else if (strcmp(argv[a], "-j") == 0 && a + 1 < argc && atoi(argv[a + 1]) > 0)
            limit = (unsigned)atoi(argv[++a]);
        else
            break;
    }
    struct job *jobs = (struct job *)calloc((size_t)argc, sizeof *jobs);
    if (jobs == NULL)
        return 2;
    int n = 0;
    while (a < argc) { /* command args... [::] : each "::" ends a command (becomes its argv's NULL) */
        jobs[n].argv = &argv[a];
        while (a < argc && strcmp(argv[a], "::") != 0)
            a++;
        if (a < argc)
            argv[a++] = NULL;
        if (jobs[n].argv[0] != NULL)
            n++;
    }
    if (n == 0) {
        fprintf(stderr, "usage: run_jobs [--evented] [-j N] command args... [:: command args...]...\n");
        return 2;
    }
    int rc;
    if (evented) {
#if CIO_HAVE_EVENTED
        cio_evented *e;
        if (cio_evented_create(NULL, &e) != CIO_OK)
            return 2;
        rc = run_all(cio_evented_io(e), jobs, n, limit);
        cio_evented_destroy(e);
#else
        fprintf(stderr, "run_jobs: no Evented backend on this target\n");
        rc = 2;
#endif
    } else {
        cio_threaded *t;
        if (cio_threaded_create(NULL, &t) != CIO_OK)
            return 2;
        rc = run_all(cio_threaded_io(t), jobs, n, limit);
        cio_threaded_destroy(t);
    }
    free(jobs);
    return rc;
}
