/*
 * The Linux half of directory reading for the Threaded backend (fs_dirent.c has the loop and the
 * fs_posix.h hooks, fs_posix.c every other file slot): getdents64 straight into the reader's
 * buffer, and the layout of its records.
 *
 * Invariants:
 * - The buffer holds raw linux_dirent64 records; they are read field by field with memcpy (the
 *   buffer may be unaligned), and a record shorter than its header or running past what was read
 *   is malformed (Unexpected), its name never read.
 * - getdents64 runs in the cancellation bracket; its errno goes through the getdents map.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "cio/errmap.h"
#include "fs_dirent.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

/* struct linux_dirent64, read field by field with memcpy: the caller's buffer may be unaligned. */
struct cio__dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

cio_err cio__os_fs_read_dents(cio_dir_reader *r, size_t *got)
{
    cio_err err;
    long n;
    size_t want = r->buf_len > (size_t)INT_MAX ? (size_t)INT_MAX : r->buf_len;
    CIO__OS_SYSCALL(err, n, getdents, CIO__SYS(getdents64, read_dents)(r->dir.handle, r->buf, want));
    *got = (err == CIO_OK && n > 0) ? (size_t)n : 0; /* -1 with CIO_OK: ENOENT, a removed directory */
    return err;
}

bool cio__os_fs_decode_dirent(const unsigned char *rec, size_t avail, cio__os_dirent *out)
{
    const size_t header = offsetof(struct cio__dirent64, name);
    unsigned short reclen;
    unsigned char type;
    if (avail < header)
        return false;
    memcpy(&reclen, rec + offsetof(struct cio__dirent64, reclen), sizeof reclen);
    memcpy(&type, rec + offsetof(struct cio__dirent64, type), sizeof type);
    memcpy(&out->ino, rec + offsetof(struct cio__dirent64, ino), sizeof out->ino);
    if (reclen < header || reclen > avail)
        return false;
    out->reclen = reclen;
    out->type = type;
    out->name = (const char *)rec + header;
    out->name_len = strnlen(out->name, reclen - header);
    return true;
}
