/*
 * Start-up code for programs cio links for OpenBSD with no sysroot (what crt0.o does there): the
 * kernel (through ld.so) enters _start with argc/argv/envp on the stack and ld.so's cleanup
 * function in a register. environ and __progname are defined here because libc refers to them.
 * x86_64: %rdx = cleanup (endbr64 first: OpenBSD enforces IBT). aarch64: x2 = cleanup (bti c first).
 */
#include <stddef.h>
#include <stdlib.h>

char **environ;
char *__progname;
static char empty[] = "";

int main(int argc, char **argv, char **env);
void cio_crt_start(long *ap, void (*cleanup)(void));

void cio_crt_start(long *ap, void (*cleanup)(void))
{
    int argc = (int)ap[0];
    char **argv = (char **)(ap + 1);
    environ = argv + argc + 1;
    __progname = empty;
    if (argv[0] != NULL) {
        __progname = argv[0];
        for (char *c = argv[0]; *c; c++)
            if (*c == '/')
                __progname = c + 1;
    }
    if (cleanup != NULL)
        atexit(cleanup);
    exit(main(argc, argv, environ));
}

#if defined(__x86_64__)
__asm__(".text\n.globl _start\n.type _start,@function\n_start:\n"
        "\tendbr64\n\tmovq %rsp, %rdi\n\tmovq %rdx, %rsi\n\tandq $-16, %rsp\n\tcall cio_crt_start\n\thlt\n"
        ".size _start, . - _start\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl _start\n.type _start,%function\n_start:\n"
        "\thint #34\n\tmov x0, sp\n\tmov x1, x2\n\tbl cio_crt_start\n\tbrk #0\n.size _start, . - _start\n");
#else
#error "crt0_openbsd.c: x86_64 and aarch64 only"
#endif
