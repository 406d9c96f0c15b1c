/*
 * Internal helpers shared by every source file (names cio__*). Not installed.
 */
#ifndef CIO_CORE_INTERNAL_H
#define CIO_CORE_INTERNAL_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cio/errors.h"
#include "cio/io.h"

/* Debug builds check that a public function returns only errors of its declared set:
 *     return CIO__IN_SET(file_open, err);
 * Release builds (NDEBUG) reduce it to the value. */
#ifdef NDEBUG
#define CIO__IN_SET(set, err) (err)
#else
/* `err` is evaluated once (it is often the call itself). */
#define CIO__IN_SET(set, err) cio__in_set((err), cio_errset_##set##_contains, #set, __func__)
static inline cio_err cio__in_set(cio_err err, bool (*contains)(cio_err), const char *set, const char *func)
{
    (void)set;
    (void)func;
    /* InvalidArgument (a NULL or out-of-range argument) is allowed everywhere: C cannot check it
     * at compile time the way Zig's types do. */
    assert((err == CIO_OK || err == CIO_E_INVALID_ARGUMENT || contains(err)) &&
           "returned an error outside the function's error set");
    return err;
}
#endif

/* A NULL (or missing) argument where the API forbids one is a bug in the caller. Public entry
 * points check with
 *     if (out == NULL) return CIO__NULL_ARG("out");
 * Every build returns CIO_E_INVALID_ARGUMENT and touches nothing (the rule of cio/diag.h); debug
 * builds also print one line naming the function and the argument. Other impossible arguments (a
 * bad enum value, an offset out of range) are a plain CIO_E_INVALID_ARGUMENT. */
#include "diag.h"
#ifdef NDEBUG
#define CIO__NULL_ARG(what) ((cio_err)CIO_E_INVALID_ARGUMENT)
#else
#define CIO__NULL_ARG(what) cio__invalid_arg(__func__, "NULL " what)
#endif
/* The same check written once: each argument must not be NULL (named as written, checked in
 * order, up to four: CIO__REQUIRE(path, out)); `buf` may be NULL only when `len` is 0. */
#define CIO__REQUIRE_ONE(arg)           \
    do {                                \
        if ((arg) == NULL)              \
            return CIO__NULL_ARG(#arg); \
    } while (0)
#define CIO__REQUIRE_2(a, b) \
    CIO__REQUIRE_ONE(a);     \
    CIO__REQUIRE_ONE(b)
#define CIO__REQUIRE_3(a, b, c) \
    CIO__REQUIRE_2(a, b);       \
    CIO__REQUIRE_ONE(c)
#define CIO__REQUIRE_4(a, b, c, d) \
    CIO__REQUIRE_3(a, b, c);       \
    CIO__REQUIRE_ONE(d)
#define CIO__REQUIRE_PICK(a, b, c, d, m, ...) m
#define CIO__REQUIRE(...)                                                                                  \
    do {                                                                                                   \
        CIO__REQUIRE_PICK(__VA_ARGS__, CIO__REQUIRE_4, CIO__REQUIRE_3, CIO__REQUIRE_2, CIO__REQUIRE_ONE, ) \
        (__VA_ARGS__);                                                                                     \
    } while (0)
/* An (offset) beyond INT64_MAX: no OS takes it; io_uring and preadv2 would read "-1" as "here". */
#define CIO__REQUIRE_OFFSET(offset)                                      \
    do {                                                                 \
        if ((offset) > (uint64_t)INT64_MAX)                              \
            return cio__invalid_arg(__func__, "offset above INT64_MAX"); \
    } while (0)
#define CIO__REQUIRE_BUF(buf, len)      \
    do {                                \
        if ((buf) == NULL && (len) > 0) \
            return CIO__NULL_ARG(#buf); \
    } while (0)

/* Returns the error of `call` (a cio_err expression, evaluated once) unless it is CIO_OK. */
#define CIO__TRY(call)                 \
    do {                               \
        cio_err cio__try_err = (call); \
        if (cio__try_err != CIO_OK)    \
            return cio__try_err;       \
    } while (0)

/* A native error that means a programming error (EBADF, EFAULT: often the caller's, a closed or
 * bad handle): CIO_E_UNEXPECTED, its code recorded by the error map (cio_last_os_error); debug
 * builds also print a line naming the function. Never an abort. */
#ifdef NDEBUG
#define CIO__BUG(what) ((cio_err)CIO_E_UNEXPECTED)
#else
#define CIO__BUG(what) cio__bug_note(__func__, what)
#endif

/* A misuse no return value can report (a NULL future to await, a stale copy of a future, a zeroed
 * cio_io): one line on stderr naming it, then abort, in every build. */
#define CIO__MISUSE(what) cio__misuse_abort(__func__, what)

/* The vtable of io, or for a zeroed cio_io (no backend) one whose every slot aborts naming the
 * misuse (zeroed.c): the public wrappers call slots through it. */
extern const struct cio_vtable cio__zeroed_vtable;
#define CIO__VT(io) ((io).vtable != NULL ? (io).vtable : &cio__zeroed_vtable)

/* cio_io_destroy's registry (io_destroy.c): a backend's cio_io maker registers "is this io mine?"
 * and its destroy (idempotent, lock-free). */
typedef bool (*cio__owns_fn)(cio_io io);
typedef void (*cio__destroy_fn)(void *userdata);
void cio__register_backend(cio__owns_fn owns, cio__destroy_fn destroy);

/* A duration timeout as a deadline on its clock, computed once, so that spurious wake-ups and
 * retries never extend it; NONE and DEADLINE pass through (io.c). */
#include "cio/io.h"
cio_timeout cio__timeout_to_deadline(cio_io io, cio_timeout timeout);

/* now + ns, saturating at INT64_MAX; a negative ns counts as 0 (an expired timeout). */
static inline int64_t cio__deadline_after(int64_t now, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    return ns > INT64_MAX - now ? INT64_MAX : now + ns;
}

/* A backend's record made on first use and published once in *slot (0: none yet), as a group's in
 * cio_group.token: the record there, or with `create` a new one from make() (NULL: no memory) if it
 * wins the race to publish; a loser goes to unmake() and the winner is returned. */
static inline void *cio__lazy_record(_Atomic(uintptr_t) *slot, bool create, void *(*make)(void), void (*unmake)(void *))
{
    uintptr_t have = atomic_load_explicit(slot, memory_order_acquire);
    if (have != 0 || !create)
        return (void *)have;
    void *fresh = make();
    if (fresh == NULL)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &have, (uintptr_t)fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    unmake(fresh);
    return (void *)have;
}

/* Runs fn inline on a copy of the context aligned to CIO_CONTEXT_ALIGN (as a task would see it);
 * with no memory for a large copy, on the caller's own bytes. Returns fn's result (io.c). */
cio_err cio__run_inline(cio_task_fn fn, const void *ctx, size_t ctx_size);

/* The loop of cio_file_write_all and cio_stream_write_all over one write (fs.c): calls `write`
 * until len bytes are written or it fails. A short write goes again; so does one 0-byte write (as in
 * Zig's Writer, 0 is not the end of a sink), but a second 0-byte write in a row, or a count larger
 * than what was asked, is CIO_E_UNEXPECTED: the sink makes no progress and names no reason. */
typedef cio_err (*cio__write_fn)(cio_io io, const void *target, const void *buf, size_t len, size_t *n);
cio_err cio__write_all(cio_io io, const void *target, cio__write_fn write, const void *buf, size_t len);

/* cio_ip_format / cio_ip_format_host with the scope written as scope_name (NULL: the index)
 * (net_addr.c; cio_ip_format_resolve uses it). */
struct cio_ip_address;
cio_err cio__ip_format_scoped(const struct cio_ip_address *a, const char *scope_name, char *buf, size_t len,
                              size_t *out_len, bool with_port);

/* The library's copy of [in_offset, in_offset + len) of `in` (fs_copy.c; cio_file_write_file_* and
 * cio_net_write_file): positional reads of up to 64 KiB in one heap buffer, each handed to `put` in
 * full before the next read; `at` is the read's distance from in_offset. *total counts what put
 * took, also when an error ends the copy; a put that takes nothing is CIO_E_UNEXPECTED; a read of 0
 * bytes is the end of `in`. */
typedef cio_err (*cio__put_fn)(cio_io io, const void *target, const void *buf, size_t len, uint64_t at, size_t *n);
cio_err cio__copy_by_hand(cio_io io, cio_file in, uint64_t in_offset, uint64_t len, const void *target, cio__put_fn put,
                          uint64_t *total);

/* Whether the environment variable `name` is set and not empty (cio_tty_config_detect): the
 * environment block read directly on POSIX and WASI (fs_ansi_posix.c: the BSD targets' C library
 * surface has no getenv), getenv on Windows (fs_windows_ansi.c). */
bool cio__env_set(const char *name);

/* The case labels of the socket options whose value is a flag, 0 or 1: cio_net_set_option's range
 * (net_sockopt.c) and the OS files' read-back normalisation (os/net_common.c) switch on it. */
#define CIO__SOCKOPT_FLAG_CASES      \
    case CIO_SOCKOPT_NODELAY:        \
    case CIO_SOCKOPT_KEEPALIVE:      \
    case CIO_SOCKOPT_REUSE_ADDRESS:  \
    case CIO_SOCKOPT_REUSE_PORT:     \
    case CIO_SOCKOPT_IP6_ONLY:       \
    case CIO_SOCKOPT_BROADCAST:      \
    case CIO_SOCKOPT_MULTICAST_LOOP: \
    case CIO_SOCKOPT_MULTICAST_LOOP6

#endif /* CIO_CORE_INTERNAL_H */
