/*
 * Shared by the suites of the Evented backend's files on Windows (test_iocp_files.c,
 * test_iocp_files_faults.c): instances, fresh files in the current directory (asynchronous when
 * Evented opens them), their mode, data patterns, the child program, and an overlapped named pipe
 * whose reads pend until the test writes to its synchronous client end.
 */
#ifndef CIO_TESTS_IOCP_FILES_HELPERS_H
#define CIO_TESTS_IOCP_FILES_HELPERS_H

#include <stdlib.h>
#include <string.h>

#include "cio.h"
#include "cio/evented.h"
#include "cio/ntapi.h"
#include "cio/ntstatus.h"
#include "iocp_helpers.h"

#define ST(x) ((int)(CIO_NTSTATUS_##x))
#define MIB (1024u * 1024u)

static inline cio_evented *make(unsigned threads)
{
    cio_evented_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    cio_evented *e = NULL;
    assert_ok(cio_evented_create(&o, &e));
    return e;
}

static inline cio_threaded *make_threaded(void)
{
    cio_threaded *t = NULL;
    assert_ok(cio_threaded_create(NULL, &t));
    return t;
}

static char name_buf[64];

/* A fresh file name in the current directory. */
static const char *fresh(const char *what)
{
    static int n;
    snprintf(name_buf, sizeof name_buf, "iocp_files_%lu_%s_%d.tmp", (unsigned long)GetCurrentProcessId(), what, n++);
    return name_buf;
}

static inline cio_file create(cio_io io, const char *name)
{
    cio_create_file_options o = CIO_CREATE_FILE_DEFAULTS;
    o.read = true;
    o.truncate = true;
    cio_file f;
    assert_ok(cio_dir_create_file(io, cio_dir_cwd(), name, &o, &f));
    return f;
}

static inline bool is_async(cio_file f)
{
    cio_nt_io_status_block iosb;
    uint32_t mode = 0;
    assert_true(NtQueryInformationFile(f.handle, &iosb, &mode, sizeof mode, CIO_NT_FileModeInformation) >= 0);
    return (mode & (CIO_NT_FILE_SYNCHRONOUS_IO_ALERT | CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT)) == 0;
}

static inline unsigned char *pattern(size_t len, unsigned seed)
{
    unsigned char *p = (unsigned char *)malloc(len);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 12)) & 0xffu);
    return p;
}

static inline void remove_file(cio_io io, const char *name)
{
    assert_ok(cio_dir_delete_file(io, cio_dir_cwd(), name));
}

static char child_exe[4096];

static const char *child_path(cio_io io)
{
    size_t n = 0;
    assert_ok(cio_process_executable_path(io, child_exe, sizeof child_exe, &n));
    while (n > 0 && child_exe[n - 1] != '\\' && child_exe[n - 1] != '/')
        n--;
    snprintf(child_exe + n, sizeof child_exe - n, "cio_test_child.exe");
    return child_exe;
}

/* ---- an overlapped named pipe ------------------------------------------------------------------------------ */

struct pipe {
    cio_io io;
    cio_file server; /* overlapped: what is read */
    HANDLE client;   /* synchronous: written by the test */
    char buf[16];
    size_t n;
};

static inline void pipe_open(struct pipe *p, cio_io io)
{
    static int n;
    char name[96];
    snprintf(name, sizeof name, "\\\\.\\pipe\\cio_iocp_files_%lu_%d", (unsigned long)GetCurrentProcessId(), n++);
    memset(p, 0, sizeof *p);
    p->io = io;
    HANDLE s = CreateNamedPipeA(name, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED, PIPE_TYPE_BYTE, 1, 4096, 4096, 0,
                                NULL);
    assert_true(s != INVALID_HANDLE_VALUE);
    p->client = CreateFileA(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    assert_true(p->client != INVALID_HANDLE_VALUE);
    p->server.handle = s;
    assert_true(is_async(p->server));
}

static inline void pipe_close(struct pipe *p)
{
    assert_true(CloseHandle(p->client));
    assert_ok(cio_file_close(p->io, p->server));
}

static inline void pipe_write(struct pipe *p, const char *s)
{
    DWORD n = 0;
    assert_true(WriteFile(p->client, s, (DWORD)strlen(s), &n, NULL));
    assert_int_equal(n, strlen(s));
}

static inline cio_err pipe_read(void *ctx)
{
    struct pipe *p = *(struct pipe **)ctx;
    return cio_file_read_streaming(p->io, p->server, p->buf, sizeof p->buf, &p->n);
}

/* Starts a read of p on io, gives it time to pend. */
static inline cio_future pipe_read_pending(struct pipe *p)
{
    cio_future f;
    assert_ok(cio_concurrent(p->io, pipe_read, &p, sizeof p, &f));
    Sleep(50);
    return f;
}


#endif
