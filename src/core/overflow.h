/*
 * Stack overflow in a cio task: a message instead of a bare SIGSEGV or STATUS_STACK_OVERFLOW
 * (overflow_posix.c: a signal handler; overflow_windows.c: a vectored exception handler; a no-op
 * where there is nothing to catch: overflow_none.c; the resolvers and the message, shared:
 * overflow_common.c). Internal (cio__).
 *
 * Every task stack cio makes has a guard page below it (fibers: src/evented/stack.c; Threaded
 * workers: the thread library's guard). A task that runs off its stack faults there. The handler,
 * on an alternate signal stack of the faulting thread (the task's own stack is used up; Windows:
 * the stack's last pages, which the thread keeps free with SetThreadStackGuarantee), asks each
 * backend's resolver whether the faulting address lies just below the stack of the task the thread
 * runs now; if one says yes it prints one line (the stack size, the task's function and where it
 * was spawned) and aborts; otherwise it passes the signal on to whatever handler was there before
 * (the default: the usual crash).
 *
 * Threads: cio__overflow_install may be called from any thread, any number of times (each instance's
 * create calls it; a resolver is added once); cio__overflow_thread_begin/_end by a thread
 * that runs tasks (a loop or worker thread), at its start and end. The resolvers run inside the
 * signal handler: they read only the faulting thread's own state, take no lock and call nothing
 * that is not async-signal-safe.
 */
#ifndef CIO_CORE_OVERFLOW_H
#define CIO_CORE_OVERFLOW_H

#include <stdbool.h>
#include <stddef.h>

/* How far below a stack's lowest usable byte a fault still counts as that stack's overflow: a
 * frame bigger than the guard page can jump past it (code built without -fstack-clash-protection). */
#define CIO__OVERFLOW_REACH ((size_t)1 << 20)

/* What a resolver says about the task that overflowed. */
typedef struct cio__overflow_info {
    size_t stack_size;  /* usable bytes of its stack */
    const char *kind;   /* "an Evented fiber", "a Threaded worker" */
    const char *option; /* the option that sets the size, for the message */
    const char *site;   /* where it was spawned ("file:line"), or NULL: unknown */
    const void *fn;     /* its task function, or NULL */
} cio__overflow_info;

/* Whether `addr` (the faulting address) lies just below the stack of the task this thread runs; if
 * so fills *out. Runs in the signal handler. */
typedef bool (*cio__overflow_resolver)(const void *addr, cio__overflow_info *out);

/* Installs the process's SIGSEGV/SIGBUS handler (unless it is in place: a handler installed since the
 * last call is kept to pass other faults on to) and adds `r` to the resolvers it asks. */
void cio__overflow_install(cio__overflow_resolver r);
/* An alternate signal stack for the calling thread (unless it has one already); no-op on failure
 * (the thread then dies of a plain SIGSEGV on an overflow, as without cio). */
void cio__overflow_thread_begin(void);
/* Removes and frees the alternate stack cio__overflow_thread_begin made, if any. */
void cio__overflow_thread_end(void);

/* For the per-OS handlers (overflow_common.c). cio__overflow_add: adds `r` to the resolvers (once;
 * at most four). cio__overflow_check: in the handler, asks the resolvers about `addr`; if one
 * knows it, prints the message (`fault` names the signal or exception) and aborts; else returns. */
void cio__overflow_add(cio__overflow_resolver r);
void cio__overflow_check(const void *addr, const char *fault);

/* Spawn sites: the public spawn calls (cio_async, cio_concurrent, cio_group_async,
 * cio_group_concurrent) are macros that pass "file:line" of the call (cio/io.h); the wrapper keeps
 * it here, on the calling thread, for the backend's slot to store in the task it makes. */
const char *cio__spawn_site(void);

#endif
