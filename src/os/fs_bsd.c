/*
 * The FreeBSD / NetBSD / OpenBSD half of directory reading for the Threaded backend (fs_dirent.c
 * has the loop and the fs_posix.h hooks, fs_posix.c every other file slot; the UTIME_* and O_*
 * values are each OS's own, from <sys/stat.h> and <fcntl.h>): getdents(2) straight into the
 * reader's buffer, and the layout of its records.
 *
 * Invariants:
 * - The three systems lay struct dirent out differently (FreeBSD and OpenBSD have d_off, NetBSD has
 *   not; d_namlen is 16 bits on FreeBSD/NetBSD and 8 on OpenBSD), so fields are found with offsetof
 *   on the system's struct and read with memcpy (the buffer may be unaligned). A record shorter
 *   than its header, running past what was read, or whose name runs past it is malformed.
 * - getdents runs in the cancellation bracket; its errno goes through the getdents map.
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
#include "fs_dirent.h"
#include "internal.h"
#include "os.h"

#define FIELD(rec, member, out) memcpy(&(out), (rec) + offsetof(struct dirent, member), sizeof(out))

cio_err cio__os_fs_read_dents(cio_dir_reader *r, size_t *got)
{
    cio_err err;
    long n;
    size_t want = r->buf_len > (size_t)INT_MAX ? (size_t)INT_MAX : r->buf_len;
    CIO__OS_SYSCALL(err, n, getdents, (long)getdents(r->dir.handle, (char *)r->buf, want));
    *got = (err == CIO_OK && n > 0) ? (size_t)n : 0;
    return err;
}

bool cio__os_fs_decode_dirent(const unsigned char *rec, size_t avail, cio__os_dirent *out)
{
    const size_t header = offsetof(struct dirent, d_name);
    if (avail < header)
        return false;
    struct dirent probe; /* only for the field types */
    __typeof__(probe.d_reclen) reclen;
    __typeof__(probe.d_type) type;
    __typeof__(probe.d_namlen) namlen;
    __typeof__(probe.d_fileno) ino;
    FIELD(rec, d_reclen, reclen);
    FIELD(rec, d_type, type);
    FIELD(rec, d_namlen, namlen);
    FIELD(rec, d_fileno, ino);
    if (reclen == 0 || reclen > avail || header + (size_t)namlen > reclen)
        return false;
    out->reclen = reclen;
    out->type = type;
    out->ino = (uint64_t)ino;
    out->name = ino == 0 ? NULL : (const char *)rec + header; /* 0: a deleted entry left in place */
    out->name_len = (size_t)namlen;
    return true;
}
