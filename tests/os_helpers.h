/*
 * The few OS calls the suites make themselves (outside cio): where temporary directories go, making
 * one, and counting the process's open descriptors/handles and threads. POSIX and Windows versions
 * side by side, so that a suite runs unchanged under Wine.
 */
#ifndef CIO_TESTS_OS_HELPERS_H
#define CIO_TESTS_OS_HELPERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cio/target.h"

#if defined(CIO_OS_WINDOWS)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <tlhelp32.h>

/* The directory for temporary files, with a trailing separator ("C:\users\x\Temp\"). */
static inline const char *cio_test_tmp_root(void)
{
    static char root[MAX_PATH + 1];
    if (root[0] == '\0') {
        DWORD n = GetTempPathA(sizeof root, root);
        if (n == 0 || n >= sizeof root)
            strcpy(root, "C:\\");
    }
    return root;
}

/* mkdir with owner-only permissions; true if it made the directory. */
static inline bool cio_test_mkdir(const char *path)
{
    return CreateDirectoryA(path, NULL) != 0;
}

/* Every open handle of the process, of any kind (threads, events, completion ports too).
 * GetProcessHandleCount answers 0 under Wine 8 (not implemented), so the handle values are probed:
 * NT hands out the lowest free value, so the table is dense and the probe stops 256 free values
 * after the last open one. */
static inline int cio_test_count_all_handles(void)
{
    int n = 0, gap = 0;
    for (uintptr_t v = 4; gap < 256 && v < 4u * 65536u; v += 4) {
        DWORD flags;
        if (GetHandleInformation((HANDLE)v, &flags)) {
            n++;
            gap = 0;
        } else {
            gap++;
        }
    }
    return n;
}

/* Open file handles of the process (files, directories, pipes, consoles, sockets: what POSIX
 * calls descriptors; thread and event handles are left out): every handle value up to 64Ki that
 * GetHandleInformation accepts and GetFileType recognises. (GetProcessHandleCount is a stub that
 * says 0 under Wine 8, and it would count the workers' threads too.) */
static inline int cio_test_count_handles(void)
{
    int n = 0;
    for (uintptr_t v = 4; v < 65536; v += 4) {
        DWORD flags;
        if (!GetHandleInformation((HANDLE)v, &flags))
            continue;
        SetLastError(0);
        n += GetFileType((HANDLE)v) != FILE_TYPE_UNKNOWN || GetLastError() == 0;
    }
    return n;
}

/* Makes a fresh directory `<tmp>prefix-XXXXXX` and writes its absolute path to out. */
static inline bool cio_test_make_tmp_dir(char *out, size_t cap, const char *prefix)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        LARGE_INTEGER c;
        QueryPerformanceCounter(&c);
        unsigned v = (unsigned)(c.QuadPart ^ (c.QuadPart >> 20)) ^ (unsigned)GetCurrentThreadId() * 2654435761u;
        int n = snprintf(out, cap, "%s%s-%06x", cio_test_tmp_root(), prefix, v & 0xffffffu);
        if (n <= 0 || (size_t)n >= cap)
            return false;
        if (CreateDirectoryA(out, NULL))
            return true;
    }
    return false;
}

/* A symbolic link `dir_path\name` -> target (relative); false if the system cannot make one that
 * resolves (Wine 8 reports success for links it cannot follow). */
static inline bool cio_test_symlink(const char *dir_path, const char *target, const char *name)
{
    char link[MAX_PATH], full[MAX_PATH];
    snprintf(link, sizeof link, "%s\\%s", dir_path, name);
    snprintf(full, sizeof full, "%s\\%s", dir_path, target);
    DWORD flags = GetFileAttributesA(full) & FILE_ATTRIBUTE_DIRECTORY ? 1u : 0u;
    if (!CreateSymbolicLinkA(link, target, flags | 2u /* ALLOW_UNPRIVILEGED_CREATE */))
        return false;
    DWORD a = GetFileAttributesA(link);
    if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_REPARSE_POINT)) {
        DeleteFileA(link);
        return false;
    }
    return true;
}

/* Threads of the process (-1 if unknown). */
static inline int cio_test_count_threads(void)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return -1;
    THREADENTRY32 te;
    te.dwSize = sizeof te;
    int n = 0;
    DWORD self = GetCurrentProcessId();
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te))
        n += te.th32OwnerProcessID == self;
    CloseHandle(snap);
    return n;
}
#else
#include <dirent.h>
#include <sys/stat.h>

static inline const char *cio_test_tmp_root(void)
{
    return "/tmp/";
}

static inline bool cio_test_mkdir(const char *path)
{
    return mkdir(path, 0700) == 0;
}

#include <stdlib.h>
#include <unistd.h>

#if defined(CIO_OS_WASI)
#include <sys/random.h> /* getentropy, whatever the feature macros */

/* wasi-libc has no mkdtemp: the same with random names and mkdir (exclusive by nature). */
static inline bool cio_test_make_tmp_dir(char *out, size_t cap, const char *prefix)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[6];
        if (getentropy(r, sizeof r) != 0)
            return false;
        char name[7];
        for (size_t i = 0; i < 6; i++)
            name[i] = chars[r[i] % (sizeof chars - 1)];
        name[6] = '\0';
        int n = snprintf(out, cap, "/tmp/%s-%s", prefix, name);
        if (n <= 0 || (size_t)n >= cap)
            return false;
        if (mkdir(out, 0700) == 0)
            return true;
    }
    return false;
}
#else
static inline bool cio_test_make_tmp_dir(char *out, size_t cap, const char *prefix)
{
    int n = snprintf(out, cap, "/tmp/%s-XXXXXX", prefix);
    return n > 0 && (size_t)n < cap && mkdtemp(out) != NULL;
}
#endif

/* Entries of /proc/self/fd (-1 where there is no /proc), the DIR's own fd included. */
static inline int cio_test_count_handles(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}
#endif

#endif /* CIO_TESTS_OS_HELPERS_H */
