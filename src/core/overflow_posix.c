/*
 * Stack overflow in a cio task on POSIX: a SIGSEGV/SIGBUS handler on an alternate signal stack that
 * recognises a fault just below the running task's stack and says so before aborting (overflow.h).
 *
 * Invariants: the resolvers and the message are overflow_common.c's. `previous_*` are
 * written under install_mu by the sigaction that installs the handler, and read only by it.
 * A thread's alternate stack (`alt`) is its own: made and freed by that thread.
 *
 * Linux and the BSDs. The BSD builds have no sysroot: siginfo_t (si_addr's offset differs per OS),
 * stack_t, struct sigaction and sigaltstack (NetBSD's __sigaltstack14) come from the stand-in
 * headers generated from spec/libc.yaml, which names the OS file each layout and value was read from.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diag.h"
#include "internal/cio_oscalls.h"
#include "overflow.h"

#define ALT_SIZE ((size_t)64 * 1024) /* above MINSIGSTKSZ and SIGSTKSZ everywhere we build */

static struct sigaction previous_segv, previous_bus;
static _Thread_local void *alt;
static _Atomic(void *) stranded; /* the last alternate stack that could not be removed */

/* The handler that was there before, for a fault that is not a task's overflow. With the default
 * (or ignore) the default comes back and the faulting instruction, run again, ends the process as
 * it would have without cio. */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = sig == SIGSEGV ? &previous_segv : &previous_bus;
    if ((p->sa_flags & SA_SIGINFO) != 0 && p->sa_sigaction != NULL) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (CIO__SYS(sigaction, overflow_pass_on)(sig, &dfl, NULL) != 0) /* else it would fault forever */
        cio__misuse_abort("SIGSEGV", "a fault outside every cio task's stack, and its default action "
                                     "could not be restored");
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    cio__overflow_check(si->si_addr, sig == SIGSEGV ? "SIGSEGV" : "SIGBUS"); /* returns: not a task's overflow */
    pass_on(sig, si, uc);
}

/* Installs on_fault for sig unless it is there already; what was there becomes `previous`. */
static void install_for(int sig, struct sigaction *previous)
{
    struct sigaction sa, cur;
    if (CIO__SYS(sigaction, overflow_query)(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) != 0 &&
        cur.sa_sigaction == on_fault)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    /* Refused (EINVAL: never for these signals): overflows stay a bare SIGSEGV, nothing else changes. */
    (void)CIO__SYS(sigaction, overflow_install)(sig, &sa, previous);
}

/* Each instance's create makes sure the handler is in place: a handler the program (or a test
 * framework) installed since then is kept as the one to pass other faults on to. Serialized by
 * install_mu; a fault meanwhile reads `previous` as it was or as it becomes. */
static pthread_mutex_t install_mu = PTHREAD_MUTEX_INITIALIZER;

void cio__overflow_install(cio__overflow_resolver r)
{
    pthread_mutex_lock(&install_mu);
    install_for(SIGSEGV, &previous_segv);
    install_for(SIGBUS, &previous_bus);
    pthread_mutex_unlock(&install_mu);
    cio__overflow_add(r);
}

static void unmap(void *stack)
{
    if (stack != NULL) /* EINVAL (never for a mapping of ours): the pages stay mapped, nothing else */
        (void)CIO__SYS(munmap, overflow_altstack)(stack, ALT_SIZE);
}

void cio__overflow_thread_begin(void)
{
    stack_t old;
    if (alt != NULL || CIO__SYS(sigaltstack, overflow_query)(NULL, &old) != 0 || (old.ss_flags & SS_DISABLE) == 0)
        return; /* it has one (ours, or a sanitizer's, or the program's) */
    /* Mapped, not malloc'd: a child forked from a process whose loop threads have these is left with
     * blocks no thread of its own points to, which a leak checker would count as lost. */
    void *mem = CIO__SYS(mmap, overflow_altstack)(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                                  -1, 0);
    if (mem == MAP_FAILED)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = mem;
    ss.ss_size = ALT_SIZE;
    if (CIO__SYS(sigaltstack, overflow_altstack)(&ss, NULL) != 0) {
        unmap(mem);
        return;
    }
    alt = mem;
}

void cio__overflow_thread_end(void)
{
    if (alt == NULL)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    if (CIO__SYS(sigaltstack, overflow_altstack_off)(&ss, NULL) == 0)
        unmap(alt);
    else /* refused (EPERM: only while running on it): the kernel may still use it, so it is kept */
        unmap(atomic_exchange_explicit(&stranded, alt, memory_order_relaxed)); /* the one before: its thread is gone */
    alt = NULL;
}
