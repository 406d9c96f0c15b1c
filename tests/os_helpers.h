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

/* Which handle values were open at the last counts, one snapshot per value the callers compared
 * (`tag`: the count itself, or CIO_TEST_SNAP_DERIVED + a value derived from it; a later count with
 * the same tag replaces it), CIO_TEST_SNAPS of them, so that a failed leak
 * check can name the handles that appeared since the count it compares with, and their kinds
 * (cio_test_print_new_handles). */
#define CIO_TEST_SNAPS 16
#define CIO_TEST_SNAP_DERIVED 1000000L
#define CIO_TEST_SNAP_VALUES 65536u /* handle values 4 .. 4 * 65535 */
typedef struct cio_test_snap {
    long tag;
    int used;
    uint8_t open[CIO_TEST_SNAP_VALUES / 8];
} cio_test_snap;

typedef struct cio_test_snap_ring {
    cio_test_snap snap[CIO_TEST_SNAPS], last; /* last: the newest count's values */
    unsigned next;
} cio_test_snap_ring;

static inline cio_test_snap_ring *cio_test_snaps(void)
{
    static cio_test_snap_ring ring;
    return &ring;
}

/* Keeps the newest count's values under `tag`. */
static inline void cio_test_snap_keep(long tag)
{
    cio_test_snap_ring *r = cio_test_snaps();
    cio_test_snap *slot = NULL;
    for (unsigned k = 0; k < CIO_TEST_SNAPS && slot == NULL; k++)
        if (r->snap[k].used && r->snap[k].tag == tag)
            slot = &r->snap[k];
    if (slot == NULL)
        slot = &r->snap[r->next++ % CIO_TEST_SNAPS];
    *slot = r->last;
    slot->tag = tag;
    slot->used = 1;
}

/* Every open handle of the process, of any kind (threads, events, completion ports too).
 * GetProcessHandleCount answers 0 under Wine 8 (not implemented), so the handle values are probed:
 * NT hands out the lowest free value, so the table is dense and the probe stops 256 free values
 * after the last open one. The values found are kept under the count. */
static inline int cio_test_count_all_handles(void)
{
    cio_test_snap *s = &cio_test_snaps()->last;
    memset(s->open, 0, sizeof s->open);
    int n = 0, gap = 0;
    for (uintptr_t v = 4; gap < 256 && v < 4u * CIO_TEST_SNAP_VALUES; v += 4) {
        DWORD flags;
        if (GetHandleInformation((HANDLE)v, &flags)) {
            s->open[v / 4 / 8] |= (uint8_t)(1u << (v / 4 % 8));
            n++;
            gap = 0;
        } else {
            gap++;
        }
    }
    cio_test_snap_keep(n);
    return n;
}

/* An object's kind ("Event", "File", "Thread", ...), from ntdll's NtQueryObject(ObjectTypeInformation). */
static inline void cio_test_handle_kind(HANDLE h, char *out, size_t cap)
{
    typedef LONG(WINAPI * query_fn)(HANDLE, int, void *, ULONG, ULONG *);
    static query_fn query;
    if (query == NULL)
        query = (query_fn)(void (*)(void))GetProcAddress(GetModuleHandleA("ntdll.dll"), "NtQueryObject");
    union {
        struct {
            USHORT len, cap;
            WCHAR *chars;
        } name; /* a UNICODE_STRING */
        unsigned char raw[512];
    } info;
    ULONG got = 0;
    snprintf(out, cap, "?");
    if (query == NULL || query(h, 2 /* ObjectTypeInformation */, &info, sizeof info, &got) < 0)
        return;
    size_t n = info.name.len / 2, i = 0;
    for (; i < n && i + 1 < cap; i++)
        out[i] = info.name.chars[i] < 128 ? (char)info.name.chars[i] : '?';
    out[i] = '\0';
}

/* After a failed leak check against `tag`: the handles open now that the newest snapshot with that
 * tag did not have, with their kinds, on stderr. */
static inline void cio_test_print_new_handles(long tag)
{
    cio_test_snap_ring *r = cio_test_snaps();
    static cio_test_snap then; /* a copy: the count below may reuse its slot */
    int found = 0;
    for (unsigned k = 0; k < CIO_TEST_SNAPS && !found; k++)
        if (r->snap[k].used && r->snap[k].tag == tag) {
            then = r->snap[k];
            found = 1;
        }
    if (!found) {
        fprintf(stderr, "      (no snapshot of the count %ld is left to compare with)\n", tag);
        return;
    }
    (void)cio_test_count_all_handles();
    const cio_test_snap *now = &r->last;
    int shown = 0;
    for (uintptr_t v = 4; v < 4u * CIO_TEST_SNAP_VALUES && shown < 32; v += 4) {
        size_t i = v / 4 / 8;
        uint8_t bit = (uint8_t)(1u << (v / 4 % 8));
        if ((now->open[i] & bit) && !(then.open[i] & bit)) {
            char kind[64];
            cio_test_handle_kind((HANDLE)v, kind, sizeof kind);
            fprintf(stderr, "      new handle 0x%lx: %s\n", (unsigned long)v, kind);
            shown++;
        }
    }
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
