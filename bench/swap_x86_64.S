/*
 * B2's raw register-swap peer (x86_64 System V): the least a stackful switch can do. Saves the six
 * callee-saved registers on the current stack, stores the stack pointer through rdi, loads rsi as
 * the new stack pointer, restores the six registers from it and jumps (pop + jmp rather than ret, so
 * the return-stack predictor is not desynchronised on every switch).
 *
 *     void bench_swap(void **save_sp, void *load_sp);
 *
 * A fresh stack for bench_swap to enter: 6 register slots, then the entry address, then one unused
 * word, with the first slot 16-byte aligned (so the entry starts as if just called).
 */
    .text
    .globl bench_swap
    .type bench_swap, @function
bench_swap:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    popq %r8
    jmpq *%r8
    .size bench_swap, .-bench_swap
    .section .note.GNU-stack,"",@progbits
