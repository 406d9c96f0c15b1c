/*
 * Directory reading for the Threaded backend on Linux and the BSDs: cio__os_dir_read over the raw
 * records the OS half reads (fs_linux.c: getdents64; fs_bsd.c: getdents) and decodes, and the
 * fs_posix.h hooks, which change nothing on these kernels (they honour O_NOFOLLOW and
 * UTIME_NOW/UTIME_OMIT themselves).
 *
 * Invariants:
 * - The reader's buffer holds raw records from buf[0] to buf[end]; pos is the next unread one. A
 *   record the OS half calls malformed is Unexpected, and the rest of the buffer is dropped.
 * - The buffer is refilled only at the start of a call (never once an entry was handed out in this
 *   call, since its name points into the buffer), so a call returns fewer than max entries whenever
 *   the buffer runs dry. `.` and `..` are skipped.
 * - faccessat asks with the effective ids (AT_EACCESS) only in set-id programs, where they differ
 *   from the real ones (some C libraries emulate AT_EACCESS expensively, so only then).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_dirent.h"
#include "fs_posix.h"
#include "internal.h"
#include "os.h"

static cio_file_kind kind_from_dtype(unsigned t)
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

cio_err cio__os_dir_read(void *ud, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count)
{
    (void)ud;
    if (reader == NULL || count == NULL || (entries == NULL && max > 0) || reader->buf == NULL || reader->buf_len == 0)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    size_t n = 0;
    while (n < max) {
        if (reader->pos >= reader->end) {
            if (reader->eof || n > 0)
                break;
            size_t got;
            cio_err err = cio__os_fs_read_dents(reader, &got);
            if (err != CIO_OK)
                return CIO__IN_SET(dir_iterate, err);
            reader->pos = 0;
            reader->end = got;
            if (got == 0) {
                reader->eof = true;
                break;
            }
        }
        cio__os_dirent d;
        if (!cio__os_fs_decode_dirent(reader->buf + reader->pos, reader->end - reader->pos, &d)) {
            reader->pos = reader->end; /* never from a sane kernel */
            return CIO__IN_SET(dir_iterate, CIO_E_UNEXPECTED);
        }
        reader->pos += d.reclen;
        if (d.name == NULL)
            continue;
        if ((d.name_len == 1 && d.name[0] == '.') || (d.name_len == 2 && d.name[0] == '.' && d.name[1] == '.'))
            continue;
        entries[n].name = d.name;
        entries[n].name_len = d.name_len;
        entries[n].kind = kind_from_dtype(d.type);
        entries[n].inode = d.ino;
        n++;
    }
    *count = n;
    return CIO_OK;
}

/* ---- the fs_posix.h hooks ------------------------------------------------------------------------ */

int cio__os_fs_access_flags(void)
{
    return (geteuid() != getuid() || getegid() != getgid()) ? AT_EACCESS : 0;
}

cio_err cio__os_fs_check_no_follow(cio_dir dir, const char *path)
{
    (void)dir;
    (void)path;
    return CIO_OK;
}

bool cio__os_fs_adjust_times(struct timespec times[2])
{
    (void)times;
    return true;
}
