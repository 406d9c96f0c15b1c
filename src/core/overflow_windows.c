/*
 * Stack overflow in a cio task on Windows: a vectored exception handler that recognises
 * EXCEPTION_STACK_OVERFLOW just above the bottom of the running task's stack and says so before
 * aborting (overflow.h), where the OS would end the process without a word.
 *
 * Windows raises the exception on the overflowing thread's own stack, in what is left below the
 * guard: under Wine 8 that is too little for the message (measured: a handler with a 400-byte local
 * faults again and the process vanishes), and SetThreadStackGuarantee, which each worker asks for,
 * is not honoured there. So the handler only reads the exception record; the resolvers and the
 * message run on an emergency stack of the process (`emergency`, in .bss), switched to with four
 * instructions and switched back from when the fault is not a task's. The exception record's second
 * parameter is the faulting address (measured under Wine 8: NumberParameters 2, the address 7 KiB
 * above the reservation's bottom).
 *
 * Invariants: the handler is added once per process (`added`, under install_mu) and never removed.
 * One thread at a time runs on the emergency stack (`busy`); a second overflowing thread spins until
 * the first has aborted the process or given the stack back. The handler takes no lock of cio's but
 * the stderr diagnostic lock inside cio__misuse_abort, which an overflowing task cannot hold (it is
 * in its own code). Exceptions that are not a task's overflow go on to the next handler unchanged.
 * x86_64 only (the one Windows target).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal/cio_oscalls.h"
#include "overflow.h"
#include "os_mutex.h"

#define STACK_GUARANTEE ((ULONG)32 * 1024)
#define EMERGENCY_SIZE ((size_t)64 * 1024)

static cio__mutex install_mu = CIO__MUTEX_INIT;
static bool added;
static _Alignas(64) unsigned char emergency[EMERGENCY_SIZE];
static atomic_flag busy = ATOMIC_FLAG_INIT;

/* On the emergency stack: prints and aborts if the fault is a task's overflow, else returns. */
static void check_on_emergency(void *addr)
{
    cio__overflow_check(addr, "EXCEPTION_STACK_OVERFLOW");
}

/* Calls fn(arg) with the stack pointer at `top` (16-byte aligned), then comes back to the caller's
 * stack. r12 (nonvolatile in the Windows x64 ABI) keeps the caller's stack pointer across the call;
 * the 32 bytes below `top` are fn's home space. */
static void call_on_stack(void *top, void (*fn)(void *), void *arg)
{
    __asm__ volatile("mov %%rsp, %%r12\n\t"
                     "mov %%rcx, %%rsp\n\t"
                     "sub $32, %%rsp\n\t"
                     "mov %%rdx, %%rcx\n\t"
                     "call *%%rax\n\t"
                     "mov %%r12, %%rsp"
                     : "+a"(fn), "+c"(top), "+d"(arg)
                     :
                     : "r8", "r9", "r10", "r11", "r12", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "memory", "cc");
}

static LONG CALLBACK on_exception(EXCEPTION_POINTERS *ep)
{
    const EXCEPTION_RECORD *r = ep->ExceptionRecord;
    if (r->ExceptionCode != EXCEPTION_STACK_OVERFLOW || r->NumberParameters < 2)
        return EXCEPTION_CONTINUE_SEARCH;
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
        YieldProcessor();
    call_on_stack(emergency + EMERGENCY_SIZE, check_on_emergency, (void *)r->ExceptionInformation[1]);
    atomic_flag_clear_explicit(&busy, memory_order_release); /* not a task's: the stack is free again */
    return EXCEPTION_CONTINUE_SEARCH;
}

void cio__overflow_install(cio__overflow_resolver r)
{
    cio__mu_lock(&install_mu);
    /* Refused (no memory for the entry): overflows end the process as without cio; a later create
     * tries again. */
    if (!added)
        added = CIO__SYS(AddVectoredExceptionHandler, overflow_install)(1, on_exception) != NULL;
    cio__mu_unlock(&install_mu);
    cio__overflow_add(r);
}

void cio__overflow_thread_begin(void)
{
    ULONG size = STACK_GUARANTEE;
    /* Refused: the handler runs in what the OS keeps back by default, which is enough for the
     * switch to the emergency stack; nothing else changes. */
    (void)CIO__SYS(SetThreadStackGuarantee, overflow_guarantee)(&size);
}

void cio__overflow_thread_end(void)
{
}
