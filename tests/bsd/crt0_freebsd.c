/*
 * Start-up code for programs cio links for FreeBSD with no sysroot (what crt1.o does there): the
 * kernel (through rtld) enters _start with a pointer to argc/argv/env on the stack and rtld's
 * cleanup function; libc's __libc_start1 (FBSD_1.7) runs the rest and calls main. environ and
 * __progname are defined here because libc refers to them, as FreeBSD's own crt1 does.
 * x86_64: %rdi = the argument block, %rsi = cleanup. aarch64: x0 = the argument block, x2 = cleanup.
 */
#include <stddef.h>
#include <stdlib.h>

char **environ;
const char *__progname = "";

int main(int argc, char **argv, char **env);
void cio_crt_start(long *ap, void (*cleanup)(void));

void cio_crt_start(long *ap, void (*cleanup)(void))
{
    int argc = (int)ap[0];
    char **argv = (char **)(ap + 1);
    char **env = argv + argc + 1;
    __libc_start1(argc, argv, env, cleanup, main);
    for (;;) {
    }
}

#if defined(__x86_64__)
__asm__(".text\n.globl _start\n.type _start,@function\n_start:\n"
        "\txorl %ebp, %ebp\n\tandq $-16, %rsp\n\tcall cio_crt_start\n\thlt\n.size _start, . - _start\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl _start\n.type _start,%function\n_start:\n"
        "\tmov x1, x2\n\tmov x29, #0\n\tmov x30, #0\n\tbl cio_crt_start\n\tbrk #0\n.size _start, . - _start\n");
#else
#error "crt0_freebsd.c: x86_64 and aarch64 only"
#endif
