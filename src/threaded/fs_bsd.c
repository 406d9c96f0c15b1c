/*
 * The FreeBSD / NetBSD / OpenBSD half of files and directories for the Threaded backend (the rest is
 * fs_posix.c): directory reading with getdents(2) straight into the reader's buffer, and the
 * fs_posix.h hooks, which change nothing on these kernels (they honour O_NOFOLLOW and
 * UTIME_NOW/UTIME_OMIT themselves; the UTIME_* and O_* values are each OS's own, from <sys/stat.h>
 * and <fcntl.h>).
 *
 * Invariants:
 * - The reader's buffer holds raw struct dirent records from buf[0] to buf[end]; pos is the next
 *   unread record. The three systems lay struct dirent out differently (FreeBSD and OpenBSD have
 *   d_off, NetBSD has not; d_namlen is 16 bits on FreeBSD/NetBSD and 8 on OpenBSD), so fields are
 *   found with offsetof on the system's struct and read with memcpy (the buffer may be unaligned).
 *   A record whose length runs past `end`, or whose name runs past its record, is Unexpected.
 * - The buffer is refilled only at the start of a call (never once an entry was handed out in this
 *   call, since its name points into the buffer). `.` and `..` are skipped.
 * - getdents runs in the cancellation bracket; its errno goes through the getdents map.
 * - faccessat asks with the effective ids (AT_EACCESS) only in set-id programs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal.h"
#include "threaded.h"

#define FIELD(rec, member, out) memcpy(&(out), (rec) + offsetof(struct dirent, member), sizeof(out))

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

/* Refills the reader's buffer: *got is the number of bytes read (0 at the end). */
static cio_err read_dents(cio_dir_reader *r, size_t *got)
{
    cio_err err;
    long n;
    size_t want = r->buf_len > (size_t)INT_MAX ? (size_t)INT_MAX : r->buf_len;
    CIO__T_SYSCALL(err, n, getdents, (long)getdents(r->dir.handle, (char *)r->buf, want));
    *got = (err == CIO_OK && n > 0) ? (size_t)n : 0;
    return err;
}

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
        size_t avail = reader->end - reader->pos;
        if (avail < offsetof(struct dirent, d_name)) {
            reader->pos = reader->end;
            return CIO__IN_SET(dir_iterate, CIO_E_UNEXPECTED);
        }
        struct dirent probe; /* only for the field types */
        __typeof__(probe.d_reclen) reclen;
        __typeof__(probe.d_type) type;
        __typeof__(probe.d_namlen) namlen;
        __typeof__(probe.d_fileno) ino;
        FIELD(rec, d_reclen, reclen);
        FIELD(rec, d_type, type);
        FIELD(rec, d_namlen, namlen);
        FIELD(rec, d_fileno, ino);
        if (reclen == 0 || reclen > avail || offsetof(struct dirent, d_name) + (size_t)namlen > reclen) {
            reader->pos = reader->end;
            return CIO__IN_SET(dir_iterate, CIO_E_UNEXPECTED);
        }
        reader->pos += reclen;
        const char *name = (const char *)rec + offsetof(struct dirent, d_name);
        size_t name_len = (size_t)namlen;
        if (ino == 0) /* a deleted entry some file systems leave in place */
            continue;
        if ((name_len == 1 && name[0] == '.') || (name_len == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        entries[n].name = name;
        entries[n].name_len = name_len;
        entries[n].kind = kind_from_dtype(type);
        entries[n].inode = (uint64_t)ino;
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
