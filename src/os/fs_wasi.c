/*
 * The WASI half of files and directories for the Threaded backend (the rest is fs_posix.c, shared
 * with Linux): directory reading with fd_readdir (preview1), and the fs_posix.h hooks for what WASI
 * hosts do differently.
 *
 * The hooks:
 * - faccessat: no user ids, so no AT_EACCESS (wasi-libc checks existence and the handle's rights).
 * - O_NOFOLLOW: Node's WASI (uvwasi) follows a final symlink even without the SYMLINK_FOLLOW lookup
 *   flag, so the final component is looked at first with a no-follow fstatat; a symlink is
 *   SymLinkLoop. Racy against a concurrent swap, which the host leaves no way to close.
 * - futimens: uvwasi rejects UTIME_NOW and an all-UTIME_OMIT call with EINVAL, so NOW becomes the
 *   real-time clock's reading and a call that changes nothing is skipped. (It also keeps whole
 *   seconds only: not fixable from here.)
 *
 * fd_readdir resumes from a cookie (the d_next of the last entry taken), returns names without a
 * NUL, may cut the last entry short when the buffer is full, and leaves d_ino 0 on some hosts
 * (Node's uvwasi). So the reader's buffer is laid out as:
 *
 *   buf[0..8)    the cookie of the next fd_readdir (native byte order)
 *   buf[8]       1 when the last fd_readdir returned less than asked: nothing follows the records
 *   buf[16..end) complete records, each rewritten in place right after the fd_readdir:
 *                  +0 inode (u64), +8 kind (cio_file_kind, one byte), +12 name length (u32),
 *                  +16 the name and a NUL;  the record's stride is still 24 + name length
 *
 * Invariants:
 * - end == 0 only before the first fd_readdir (cookie: the start); afterwards HDR <= pos <= end.
 * - Only complete records lie below `end`; a record cut short by fd_readdir is read again from the
 *   saved cookie. A buffer that cannot hold one whole record is InvalidArgument.
 * - The rewrite moves each name 8 bytes down and puts the NUL where the old name's last byte was,
 *   so it never touches the next record. Fields are read and written with memcpy (the caller's
 *   buffer may be unaligned).
 * - An inode of 0 is looked up with fstatat (no-follow) on the entry; a kind of Unknown is taken
 *   from the same stat. If the entry vanished meanwhile, the entry keeps inode 0 / kind Unknown.
 * - The buffer is refilled only at the start of a call (names point into it), so a call returns
 *   fewer than max entries whenever it runs dry. `.` and `..` are skipped.
 * - fd_readdir runs in the cancellation bracket; its errno goes through the getdents map.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <wasi/api.h>

#include "cio/errmap.h"
#include "fs_posix.h"
#include "internal/cio_oscalls.h"
#include "internal.h"
#include "os.h"

#define HDR ((size_t)16)
#define RAW ((size_t)24) /* sizeof(__wasi_dirent_t) */

_Static_assert(sizeof(__wasi_dirent_t) == 24, "WASI preview1 dirent layout");

static cio_file_kind kind_from_filetype(__wasi_filetype_t t)
{
    switch (t) {
    case __WASI_FILETYPE_REGULAR_FILE: return CIO_FILE_KIND_FILE;
    case __WASI_FILETYPE_DIRECTORY: return CIO_FILE_KIND_DIRECTORY;
    case __WASI_FILETYPE_SYMBOLIC_LINK: return CIO_FILE_KIND_SYM_LINK;
    case __WASI_FILETYPE_BLOCK_DEVICE: return CIO_FILE_KIND_BLOCK_DEVICE;
    case __WASI_FILETYPE_CHARACTER_DEVICE: return CIO_FILE_KIND_CHARACTER_DEVICE;
    case __WASI_FILETYPE_SOCKET_STREAM: return CIO_FILE_KIND_UNIX_DOMAIN_SOCKET;
    default: return CIO_FILE_KIND_UNKNOWN;
    }
}

static cio_file_kind kind_from_mode(mode_t mode)
{
    if (S_ISREG(mode))
        return CIO_FILE_KIND_FILE;
    if (S_ISDIR(mode))
        return CIO_FILE_KIND_DIRECTORY;
    if (S_ISLNK(mode))
        return CIO_FILE_KIND_SYM_LINK;
    if (S_ISBLK(mode))
        return CIO_FILE_KIND_BLOCK_DEVICE;
    if (S_ISCHR(mode))
        return CIO_FILE_KIND_CHARACTER_DEVICE;
    return CIO_FILE_KIND_UNKNOWN;
}

/* fd_readdir as a libc-style call (-1 and errno) for the bracket. WASI errno values are errno's. */
static int readdir_call(int fd, unsigned char *buf, size_t len, uint64_t cookie, size_t *used)
{
    __wasi_size_t n = 0;
    __wasi_errno_t e = CIO__SYS(wasi_fd_readdir, readdir_call)((__wasi_fd_t)fd, buf, (__wasi_size_t)len, cookie, &n);
    if (e != __WASI_ERRNO_SUCCESS) {
        errno = (int)e;
        return -1;
    }
    *used = (size_t)n;
    return 0;
}

/* Rewrites the complete records in buf[HDR, HDR + used) in place (see the top); returns the end of
 * the last complete one and stores the cookie that follows it in *next. */
static size_t rewrite_records(cio_dir dir, unsigned char *buf, size_t used, uint64_t *next)
{
    size_t p = HDR, limit = HDR + used;
    while (limit - p >= RAW) {
        __wasi_dirent_t d;
        memcpy(&d, buf + p, RAW);
        if ((size_t)d.d_namlen > limit - p - RAW)
            break; /* cut short: read again from *next */
        uint64_t ino = d.d_ino;
        unsigned char kind = (unsigned char)kind_from_filetype(d.d_type);
        uint32_t len = (uint32_t)d.d_namlen;
        memmove(buf + p + 16, buf + p + RAW, len);
        buf[p + 16 + len] = '\0';
        if (ino == 0 || kind == CIO_FILE_KIND_UNKNOWN) {
            struct stat st;
            if (CIO__SYS(fstatat, wasi_entry_stat)(dir.handle, (const char *)buf + p + 16, &st, AT_SYMLINK_NOFOLLOW) ==
                0) {
                if (ino == 0)
                    ino = (uint64_t)st.st_ino;
                if (kind == CIO_FILE_KIND_UNKNOWN)
                    kind = (unsigned char)kind_from_mode(st.st_mode);
            }
        }
        memcpy(buf + p, &ino, sizeof ino);
        buf[p + 8] = kind;
        memcpy(buf + p + 12, &len, sizeof len);
        *next = d.d_next;
        p += RAW + len;
    }
    return p;
}

/* Refills the buffer from the saved cookie; *got is false at the end of the directory. */
static cio_err refill(cio_dir_reader *r, bool *got)
{
    unsigned char *buf = r->buf;
    uint64_t cookie = __WASI_DIRCOOKIE_START;
    if (r->end != 0) {
        if (buf[8] != 0) { /* the last fd_readdir already reached the end */
            *got = false;
            return CIO_OK;
        }
        memcpy(&cookie, buf, sizeof cookie);
    }
    size_t cap = r->buf_len - HDR, used = 0;
    cio_err err;
    int rc;
    CIO__OS_SYSCALL(err, rc, getdents, readdir_call(r->dir.handle, buf + HDR, cap, cookie, &used));
    (void)rc;
    if (err != CIO_OK)
        return err;
    *got = used > 0;
    if (used == 0)
        return CIO_OK;
    uint64_t next = cookie;
    size_t end = rewrite_records(r->dir, buf, used, &next);
    if (end == HDR)
        return CIO_E_INVALID_ARGUMENT; /* not even one entry fits: the buffer is too small */
    memcpy(buf, &next, sizeof next);
    buf[8] = (unsigned char)(used < cap);
    r->pos = HDR;
    r->end = end;
    return CIO_OK;
}

cio_err cio__os_dir_read(void *ud, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count)
{
    (void)ud;
    if (reader == NULL || count == NULL || (entries == NULL && max > 0) || reader->buf == NULL ||
        reader->buf_len <= HDR + RAW)
        return CIO_E_INVALID_ARGUMENT;
    *count = 0;
    size_t n = 0;
    while (n < max) {
        if (reader->pos >= reader->end) {
            if (reader->eof || n > 0)
                break;
            bool got = false;
            cio_err err = refill(reader, &got);
            if (err == CIO_E_INVALID_ARGUMENT)
                return err;
            if (err != CIO_OK)
                return CIO__IN_SET(dir_iterate, err);
            if (!got) {
                reader->eof = true;
                break;
            }
        }
        unsigned char *rec = reader->buf + reader->pos;
        uint64_t ino;
        uint32_t len;
        memcpy(&ino, rec, sizeof ino);
        memcpy(&len, rec + 12, sizeof len);
        reader->pos += RAW + len;
        const char *name = (const char *)rec + 16;
        if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        entries[n].name = name;
        entries[n].name_len = len;
        entries[n].kind = (cio_file_kind)rec[8];
        entries[n].inode = ino;
        n++;
    }
    *count = n;
    return CIO_OK;
}

/* ---- the fs_posix.h hooks ------------------------------------------------------------------------ */

int cio__os_fs_access_flags(void)
{
    return 0;
}

cio_err cio__os_fs_check_no_follow(cio_dir dir, const char *path)
{
    struct stat st;
    cio_err err;
    CIO__OS_CALL(err, fstatat, CIO__SYS(fstatat, wasi_check_no_follow)(dir.handle, path, &st, AT_SYMLINK_NOFOLLOW));
    return err == CIO_OK && S_ISLNK(st.st_mode) ? CIO_E_SYM_LINK_LOOP : CIO_OK;
}

bool cio__os_fs_adjust_times(struct timespec times[2])
{
    bool any = false;
    for (int i = 0; i < 2; i++) {
        if (times[i].tv_nsec == UTIME_NOW &&
            CIO__SYS(clock_gettime, wasi_adjust_times)(CLOCK_REALTIME, &times[i]) != 0) {
            /* No clock: UTIME_NOW would reach the host, which rejects it (EINVAL, a "bug" in the
             * futimens map). Leave that time as it is instead. */
            times[i].tv_sec = 0;
            times[i].tv_nsec = UTIME_OMIT;
        }
        any |= times[i].tv_nsec != UTIME_OMIT;
    }
    return any;
}
