/*
 * The child program of the process suites where the system's own (true, cat, sleep, env) are not at
 * hand (Windows under Wine: no cmd.exe needed): built with the suites, next to them.
 *   cio_test_child exit N        exits with N
 *   cio_test_child args A B ...  writes each argument and a newline (checks the command line quoting;
 *                                Windows: as CommandLineToArgvW splits it, in UTF-8)
 *   cio_test_child cat           copies stdin to stdout
 *   cio_test_child env NAME      writes the variable's value, or "(unset)"
 *   cio_test_child cwd           writes the working directory
 *   cio_test_child sleep MS      sleeps MS milliseconds, then exits 0
 *   cio_test_child probe H       writes "open" if H (hex) is a valid descriptor here (Windows: a
 *                                pipe handle other than its own stdio)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <direct.h>
#include <fcntl.h>
#include <io.h>
#else
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#endif

#if defined(_WIN32)
#include <shellapi.h>
/* The arguments as CommandLineToArgvW splits the command line (the rules spawn quotes for), in
 * UTF-8 (the C runtime's argv would be in the ANSI code page). */
static char **utf8_argv(int *argc)
{
    LPWSTR *w = CommandLineToArgvW(GetCommandLineW(), argc);
    if (w == NULL)
        exit(102);
    char **a = (char **)calloc((size_t)*argc + 1, sizeof *a);
    for (int i = 0; a != NULL && i < *argc; i++) {
        int n = WideCharToMultiByte(CP_UTF8, 0, w[i], -1, NULL, 0, NULL, NULL);
        a[i] = (char *)malloc((size_t)n);
        if (a[i] == NULL || WideCharToMultiByte(CP_UTF8, 0, w[i], -1, a[i], n, NULL, NULL) != n)
            exit(103);
    }
    return a;
}
#endif

int main(int argc, char **argv)
{
#if defined(_WIN32)
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stdin), _O_BINARY);
    argv = utf8_argv(&argc);
#endif
    if (argc < 2)
        return 100;
    const char *mode = argv[1];
    if (strcmp(mode, "exit") == 0 && argc == 3)
        return atoi(argv[2]);
    if (strcmp(mode, "args") == 0) {
        for (int i = 2; i < argc; i++)
            printf("%s\n", argv[i]);
        return 0;
    }
    if (strcmp(mode, "cat") == 0) {
        static char buf[1 << 16];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
            if (fwrite(buf, 1, n, stdout) != n)
                return 2;
        return fflush(stdout) == 0 ? 0 : 3;
    }
    if (strcmp(mode, "env") == 0 && argc == 3) {
        const char *v = getenv(argv[2]);
        printf("%s", v != NULL ? v : "(unset)");
        return 0;
    }
    if (strcmp(mode, "cwd") == 0) {
        char buf[4096];
#if defined(_WIN32)
        if (_getcwd(buf, sizeof buf) == NULL)
#else
        if (getcwd(buf, sizeof buf) == NULL)
#endif
            return 4;
        printf("%s", buf);
        return 0;
    }
    if (strcmp(mode, "sleep") == 0 && argc == 3) {
        long ms = atol(argv[2]);
#if defined(_WIN32)
        Sleep((DWORD)ms);
#else
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
#endif
        return 0;
    }
    if (strcmp(mode, "probe") == 0 && argc == 3) {
        unsigned long long v = strtoull(argv[2], NULL, 16);
#if defined(_WIN32)
        /* Only a pipe that is not this child's own stdio counts: the value the parent names may be
         * one of the child's own objects (handle values are per process), which says nothing. */
        HANDLE h = (HANDLE)(uintptr_t)v;
        bool own = h == GetStdHandle(STD_INPUT_HANDLE) || h == GetStdHandle(STD_OUTPUT_HANDLE) ||
                   h == GetStdHandle(STD_ERROR_HANDLE);
        DWORD flags;
        bool pipe = !own && GetHandleInformation(h, &flags) && GetFileType(h) == FILE_TYPE_PIPE;
        printf("%s", pipe ? "open" : "closed");
#else
        printf("%s", fcntl((int)v, F_GETFD) >= 0 ? "open" : "closed");
#endif
        return 0;
    }
    return 101;
}
