/*
 * Directory reading over kernel dirent records, shared by Linux and the BSDs (fs_dirent.c holds
 * cio__os_dir_read and the fs_posix.h hooks, which change nothing on these kernels); the OS half
 * (fs_linux.c, fs_bsd.c) reads the records and knows their layout.
 */
#ifndef CIO_THREADED_FS_DIRENT_H
#define CIO_THREADED_FS_DIRENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"

/* One record, as the OS half found it. */
typedef struct cio__os_dirent {
    size_t reclen;    /* bytes to the next record */
    const char *name; /* NULL: a record to pass over (a deleted entry some file systems keep) */
    size_t name_len;
    unsigned type; /* a DT_* value */
    uint64_t ino;
} cio__os_dirent;

/* Refills the reader's buffer from buf[0]: *got is the number of bytes read (0 at the end). The
 * syscall runs in the cancellation bracket; its errno goes through the getdents map. */
cio_err cio__os_fs_read_dents(cio_dir_reader *r, size_t *got);
/* Decodes the record at rec, with `avail` bytes of the buffer from rec on (the buffer may be
 * unaligned: fields are read with memcpy). False when it is malformed: shorter than its header,
 * a length of 0 or past `avail`, or a name past its record. */
bool cio__os_fs_decode_dirent(const unsigned char *rec, size_t avail, cio__os_dirent *out);

#endif /* CIO_THREADED_FS_DIRENT_H */
