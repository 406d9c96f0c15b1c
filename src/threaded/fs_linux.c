/*
 * The Linux half of files and directories for the Threaded backend (the rest is fs_posix.c):
 * directory reading with getdents64 straight into the reader's buffer, and the fs_posix.h hooks,
 * which on Linux change nothing (the kernel honours O_NOFOLLOW and UTIME_NOW/UTIME_OMIT).
 *
 * Invariants:
 * - The reader's buffer holds raw linux_dirent64 records from buf[0] to buf[end]; pos is the next
 *   unread record. Records are read field by field with memcpy (the buffer may be unaligned) and a
 *   record whose length runs past `end` is Unexpected, never read.
 * - The buffer is refilled only at the start of a call (never once an entry was handed out in this
 *   call, since its name points into the buffer), so a call returns fewer than max entries whenever
 *   the buffer runs dry. `.` and `..` are skipped.
 * - getdents64 runs in the cancellation bracket; its errno goes through the getdents map.
 * - faccessat asks with the effective ids (AT_EACCESS) only in set-id programs, where they differ
 *   from the real ones (some C libraries emulate AT_EACCESS expensively, so only then).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "threaded.h"

/* struct linux_dirent64, read field by field with memcpy: the caller's buffer may be unaligned. */
struct cio__dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

static cio_file_kind kind_from_dtype(unsigned char t)
{
    switch (t) {
    case DT_REG: return CIO_FILE_KIND_FILE;
    case DT_DIR: return CIO_FILE_KIND_DIRECTORY;
    case DT_LNK: return CIO_FILE_KIND_SYM_LINK;
    case DT_FIFO: return CIO_FILE_KIND_NAMED_PIPE;
    case DT_SOCK: return CIO_FILE_KIND_UNIX_DOMAIN_SOCKET;
    case DT_BLK: return CIO_FILE_KIND_BLOCK_DEVICE;
    case DT_CHR: return CIO_FILE_KIND_CHARACTER_DEVICE;
    default: return CIO_FILE_KIND_UNKNOWN;
    }
}

/* Refills the reader's buffer: *got is the number of bytes read (0 at the end). */
static cio_err read_dents(cio_dir_reader *r, size_t *got)
{
    cio_err err;
    long n;
    size_t want = r->buf_len > (size_t)INT_MAX ? (size_t)INT_MAX : r->buf_len;
    CIO__T_SYSCALL(err, n, getdents, CIO__SYS(getdents64, read_dents)(r->dir.handle, r->buf, want));
    *got = (err == CIO_OK && n > 0) ? (size_t)n : 0; /* -1 with CIO_OK: ENOENT, a removed directory */
    return err;
}

/*
 * Entries come from the buffer until it is used up. The buffer is refilled only at the start of a
 * call (never once an entry was handed out in this call, since its name points into the buffer), so
 * a call returns fewer than max entries whenever the buffer runs dry.
 */
cio_err cio__t_dir_read(void *ud, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count)
{
    (void)ud;
    if (reader == NULL || count == NULL || (entries == NULL && max > 0) || reader->buf == NULL ||
        reader->buf_len == 0)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    size_t n = 0;
    while (n < max) {
        if (reader->pos >= reader->end) {
            if (reader->eof || n > 0)
                break;
            size_t got;
            cio_err err = read_dents(reader, &got);
            if (err != CIO_OK)
                return CIO__IN_SET(dir_iterate, err);
            reader->pos = 0;
            reader->end = got;
            if (got == 0) {
                reader->eof = true;
                break;
            }
        }
        unsigned char *rec = reader->buf + reader->pos;
        unsigned short reclen;
        unsigned char type;
        uint64_t ino;
        memcpy(&reclen, rec + offsetof(struct cio__dirent64, reclen), sizeof reclen);
        memcpy(&type, rec + offsetof(struct cio__dirent64, type), sizeof type);
        memcpy(&ino, rec + offsetof(struct cio__dirent64, ino), sizeof ino);
        if (reclen == 0 || reclen > reader->end - reader->pos) { /* never from a sane kernel */
            reader->pos = reader->end;
            return CIO__IN_SET(dir_iterate, CIO_E_UNEXPECTED);
        }
        reader->pos += reclen;
        const char *name = (const char *)rec + offsetof(struct cio__dirent64, name);
        size_t name_max = reclen - offsetof(struct cio__dirent64, name);
        size_t name_len = strnlen(name, name_max);
        if ((name_len == 1 && name[0] == '.') || (name_len == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        entries[n].name = name;
        entries[n].name_len = name_len;
        entries[n].kind = kind_from_dtype(type);
        entries[n].inode = ino;
        n++;
    }
    *count = n;
    return CIO_OK;
}

/* ---- the fs_posix.h hooks ------------------------------------------------------------------------ */

int cio__t_fs_access_flags(void)
{
    return (geteuid() != getuid() || getegid() != getgid()) ? AT_EACCESS : 0;
}

cio_err cio__t_fs_check_no_follow(cio_dir dir, const char *path)
{
    (void)dir;
    (void)path;
    return CIO_OK;
}

bool cio__t_fs_adjust_times(struct timespec times[2])
{
    (void)times;
    return true;
}
