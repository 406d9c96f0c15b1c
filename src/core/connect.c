/*
 * cio_hostname_connect: the lookup and the connection attempts race in one cio_select.
 *
 * Invariants:
 *   - every address is raced, however many the lookup finds, at most MAX_ATTEMPTS at a time: the
 *     lookup task takes a slot (a permit of `slots`, a cancelable wait) before it forwards an
 *     address, and the loop gives the slot back when that address's attempt has reported. A slot
 *     is one message at a time (the address, then the attempt's result), so the select's queue
 *     (QUEUE_CAP > MAX_ATTEMPTS + 1, the lookup's own result) holds every message that can be
 *     posted: no uncancelable post can block and cio_select_cancel always returns;
 *   - a lookup run inline (no concurrency) cannot wait for a slot (nobody would give one back
 *     before it returns): it takes free slots only and drops the addresses past MAX_ATTEMPTS;
 *   - after the winner is taken (or on any exit), cio_select_cancel cancels the lookup and every
 *     attempt, waits for them, and every stream found among the remaining results is closed:
 *     exactly one stream (the winner) survives, or none;
 *   - the error rule (see net.h) is applied over the attempts' and the lookup's results only.
 */
#include <string.h>

#include "cio/net.h"
#include "internal.h"
#include "resolve.h"

#define MAX_ATTEMPTS 32
#define QUEUE_CAP (2 * MAX_ATTEMPTS + 4)
#define STAGGER_NS ((int64_t)250 * 1000000)

typedef enum msg_kind {
    MSG_NONE = 0,
    MSG_ADDRESS,     /* the lookup found an address */
    MSG_LOOKUP_DONE, /* the lookup returned `err` */
    MSG_CONNECTED    /* an attempt returned `err` (CIO_OK: `stream` is open) */
} msg_kind;

typedef struct race_msg {
    msg_kind kind;
    cio_err err;
    cio_ip_address address;
    cio_stream stream;
} race_msg;

typedef struct lookup_task {
    cio_io io;
    cio_select *sel;
    cio_semaphore *slots;
    bool inline_run;
    const char *name;
    cio_lookup_options options;
} lookup_task;

typedef struct forward_ctx {
    cio_io io;
    cio_select *sel;
    cio_semaphore *slots;
    bool inline_run;
} forward_ctx;

static cio_err forward(void *ctx, const cio_lookup_result *r)
{
    forward_ctx *f = (forward_ctx *)ctx;
    if (r->kind != CIO_LOOKUP_ADDRESS)
        return CIO_OK;
    if (f->inline_run) {
        if (cio_semaphore_wait_timeout(f->io, f->slots, cio_timeout_ns(0)) != CIO_OK)
            return CIO_OK; /* no slot free and none can come back: this address is dropped */
    } else {
        cio_err err = cio_semaphore_wait(f->io, f->slots);
        if (err != CIO_OK)
            return err;
    }
    race_msg m;
    memset(&m, 0, sizeof m);
    m.kind = MSG_ADDRESS;
    m.address = r->address;
    return cio_queue_put_one(f->io, &f->sel->queue, &m);
}

static cio_err run_lookup(void *context, void *result)
{
    lookup_task *t = (lookup_task *)context;
    forward_ctx f = {t->io, t->sel, t->slots, t->inline_run};
    race_msg *m = (race_msg *)result;
    m->kind = MSG_LOOKUP_DONE;
    m->err = cio__hostname_lookup_emit(t->io, t->name, &t->options, forward, &f);
    return m->err;
}

typedef struct attempt_task {
    cio_io io;
    cio_ip_address address;
    cio_connect_options options;
    int64_t delay_ns;
} attempt_task;

static cio_err run_attempt(void *context, void *result)
{
    attempt_task *t = (attempt_task *)context;
    race_msg *m = (race_msg *)result;
    m->kind = MSG_CONNECTED;
    m->address = t->address;
    m->err = CIO_OK;
    if (t->delay_ns > 0)
        m->err = cio_sleep(t->io, cio_timeout_ns(t->delay_ns));
    if (m->err == CIO_OK)
        m->err = cio_net_connect(t->io, &t->address, &t->options, &m->stream);
    return m->err;
}

static bool preferred(cio_err e)
{
    return e == CIO_E_CONNECTION_REFUSED || e == CIO_E_TIMEOUT;
}

cio_err cio_hostname_connect(cio_io io, const char *name, uint16_t port, const cio_connect_options *options,
                             cio_stream *out)
{
    CIO__REQUIRE(name, out);
    cio_connect_options opt;
    memset(&opt, 0, sizeof opt);
    if (options != NULL)
        opt = *options;
    opt.lookup.port = port;

    race_msg buffer[QUEUE_CAP];
    cio_select sel;
    cio_select_init(&sel, buffer, sizeof buffer[0], QUEUE_CAP);

    cio_semaphore slots = CIO_SEMAPHORE_INIT(MAX_ATTEMPTS);
    lookup_task lt = {io, &sel, &slots, false, name, opt.lookup};
    if (cio_select_concurrent(io, &sel, run_lookup, &lt, sizeof lt) != CIO_OK) {
        lt.inline_run = true; /* no concurrency: inline (or as async pleases; it never waits for a slot) */
        cio_select_async(io, &sel, run_lookup, &lt, sizeof lt);
    }

    cio_connect_options attempt_options = {.timeout = opt.timeout, .sockopts = opt.sockopts};
    size_t started = 0, finished = 0;
    bool lookup_done = false, have_winner = false, canceled = false;
    cio_err lookup_err = CIO_OK, best = CIO_OK;
    race_msg m;
    while (!have_winner && !(lookup_done && finished == started)) {
        cio_err err = cio_select_await(io, &sel, &m);
        if (err != CIO_OK) {
            canceled = true; /* CIO_E_CANCELED (the queue cannot close before we cancel) */
            break;
        }
        switch (m.kind) {
        case MSG_ADDRESS: {
            attempt_task at = {io, m.address, attempt_options, opt.stagger ? STAGGER_NS * (int64_t)started : 0};
            if (cio_select_concurrent(io, &sel, run_attempt, &at, sizeof at) != CIO_OK)
                cio_select_async(io, &sel, run_attempt, &at, sizeof at);
            started++;
            break;
        }
        case MSG_LOOKUP_DONE:
            lookup_done = true;
            lookup_err = m.err;
            break;
        case MSG_CONNECTED:
            finished++;
            cio_semaphore_post(io, &slots); /* its address's slot */
            if (m.err == CIO_OK) {
                *out = m.stream;
                have_winner = true;
            } else if (m.err != CIO_E_CANCELED) {
                if (best == CIO_OK || (preferred(m.err) && !preferred(best)))
                    best = m.err;
            }
            break;
        default: break;
        }
    }
    /* Cancel the lookup and the losers; close every stream that still arrives. */
    while (cio_select_cancel(io, &sel, &m)) {
        if (m.kind == MSG_CONNECTED && m.err == CIO_OK)
            (void)cio_stream_close(io, &m.stream);
    }
    if (have_winner) {
        if (canceled)
            cio_recancel(io);
        return CIO_OK;
    }
    if (canceled)
        return CIO_E_CANCELED;
    cio_err err;
    if (best != CIO_OK)
        err = best;
    else if (lookup_err != CIO_OK)
        err = lookup_err;
    else
        err = CIO_E_UNKNOWN_HOST_NAME;
    return err == CIO_E_INVALID_ARGUMENT ? err : CIO__IN_SET(host_name_connect, err);
}
