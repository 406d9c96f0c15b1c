/*
 * Start-up code for programs cio links for NetBSD with no sysroot (what crt0.o does there): the
 * kernel (through ld.elf_so) enters _start with rtld's cleanup function and the process's
 * struct ps_strings; libc needs _libc_init() before main. environ, __progname and __ps_strings are
 * defined here because libc refers to them, as NetBSD's own crt0 does.
 * x86_64: %rdx = cleanup, %rbx = ps_strings. aarch64: x0 = cleanup, x2 = ps_strings.
 */
#include <stddef.h>
#include <stdlib.h>

struct ps_strings {
    char **ps_argvstr;
    int ps_nargvstr;
    char **ps_envstr;
    int ps_nenvstr;
};

char **environ;
struct ps_strings *__ps_strings;
static char empty[] = "";
char *__progname = empty;

int main(int argc, char **argv, char **env);
void cio_crt_start(void (*cleanup)(void), struct ps_strings *ps);

void cio_crt_start(void (*cleanup)(void), struct ps_strings *ps)
{
    __ps_strings = ps;
    environ = ps->ps_envstr;
    if (ps->ps_argvstr[0] != NULL) {
        __progname = ps->ps_argvstr[0];
        for (char *c = ps->ps_argvstr[0]; *c; c++)
            if (*c == '/')
                __progname = c + 1;
    }
    if (cleanup != NULL)
        atexit(cleanup);
    _libc_init();
    exit(main(ps->ps_nargvstr, ps->ps_argvstr, environ));
}

#if defined(__x86_64__)
__asm__(".text\n.globl _start\n.type _start,@function\n_start:\n"
        "\tandq $-16, %rsp\n\tmovq %rdx, %rdi\n\tmovq %rbx, %rsi\n\tcall cio_crt_start\n\thlt\n"
        ".size _start, . - _start\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl _start\n.type _start,%function\n_start:\n"
        "\tmov x1, x2\n\tbl cio_crt_start\n\tbrk #0\n.size _start, . - _start\n");
#else
#error "crt0_netbsd.c: x86_64 and aarch64 only"
#endif
