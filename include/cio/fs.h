/*
 * Files and directories through a cio_io. Paths are UTF-8 (opaque bytes on POSIX) and relative to
 * the given directory unless absolute. cio_file and cio_dir are plain values around the OS handle:
 * wrap a handle you own with (cio_file){fd}. Every function is a cancellation point unless noted.
 * Error sets are named after each function (spec/errors.yaml).
 */
#ifndef CIO_FS_H
#define CIO_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cio_open_mode {
    CIO_OPEN_READ_ONLY = 0,
    CIO_OPEN_WRITE_ONLY,
    CIO_OPEN_READ_WRITE
} cio_open_mode;

/* All-zero means: read only, follow symlinks, allow opening a directory. */
typedef struct cio_open_file_options {
    cio_open_mode mode;
    bool no_follow_symlinks; /* the last component must not be a symlink (SymLinkLoop) */
    bool forbid_directory;   /* opening a directory is IsDir */
} cio_open_file_options;

/* Use CIO_CREATE_FILE_DEFAULTS (truncate on) and change fields; NULL means the defaults. */
typedef struct cio_create_file_options {
    bool read;            /* open for reading too */
    bool truncate;        /* truncate an existing file (default on) */
    bool exclusive;       /* fail with PathAlreadyExists when the file exists */
    uint32_t permissions; /* 0: 0666 (before umask) */
} cio_create_file_options;

#define CIO_CREATE_FILE_DEFAULTS ((cio_create_file_options){false, true, false, 0})

typedef struct cio_open_dir_options {
    bool iterate;            /* will be read with cio_dir_read */
    bool no_follow_symlinks;
} cio_open_dir_options;

typedef enum cio_file_kind {
    CIO_FILE_KIND_UNKNOWN = 0,
    CIO_FILE_KIND_FILE,
    CIO_FILE_KIND_DIRECTORY,
    CIO_FILE_KIND_SYM_LINK,
    CIO_FILE_KIND_NAMED_PIPE,
    CIO_FILE_KIND_UNIX_DOMAIN_SOCKET,
    CIO_FILE_KIND_BLOCK_DEVICE,
    CIO_FILE_KIND_CHARACTER_DEVICE
} cio_file_kind;

typedef struct cio_stat {
    uint64_t inode;
    uint64_t size;
    uint64_t nlink;
    uint32_t mode;       /* permission bits (POSIX st_mode & 07777) */
    cio_file_kind kind;
    bool has_atime;      /* false where the file system does not keep access times */
    cio_timestamp atime; /* CIO_CLOCK_REAL */
    cio_timestamp mtime;
    cio_timestamp ctime;
} cio_stat;

/* cio_dir_stat_file flags */
#define CIO_STAT_NO_FOLLOW 1u

/* cio_dir_access modes (0 = exists) */
#define CIO_ACCESS_READ 1u
#define CIO_ACCESS_WRITE 2u
#define CIO_ACCESS_EXECUTE 4u

typedef enum cio_timestamp_action {
    CIO_TIMESTAMP_UNCHANGED = 0,
    CIO_TIMESTAMP_NOW,
    CIO_TIMESTAMP_SET
} cio_timestamp_action;

typedef struct cio_set_timestamps {
    cio_timestamp_action access_action;
    cio_timestamp access; /* CIO_CLOCK_REAL */
    cio_timestamp_action modify_action;
    cio_timestamp modify;
} cio_set_timestamps;

/* Directory iteration: the reader owns a caller-provided buffer; entry names point into it and stay
 * valid until the next cio_dir_read on the same reader. `.` and `..` are never returned. */
typedef struct cio_dir_reader {
    cio_dir dir;
    unsigned char *buf;
    size_t buf_len;
    size_t pos;
    size_t end;
    bool eof;
} cio_dir_reader;

typedef struct cio_dir_entry {
    const char *name; /* NUL-terminated */
    size_t name_len;
    cio_file_kind kind;
    uint64_t inode;
} cio_dir_entry;

/* The buffer must hold at least one entry of the longest name: 1024 bytes is always enough. */
void cio_dir_reader_init(cio_dir_reader *reader, cio_dir dir, void *buffer, size_t len);

/* The process's current directory (AT_FDCWD on POSIX). */
cio_dir cio_dir_cwd(void);

cio_err cio_dir_create_file(cio_io io, cio_dir dir, const char *path, const cio_create_file_options *options,
                            cio_file *out);
cio_err cio_dir_open_file(cio_io io, cio_dir dir, const char *path, const cio_open_file_options *options,
                          cio_file *out);
cio_err cio_dir_open_dir(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options,
                         cio_dir *out);
/* permissions 0: 0777 (before umask). */
cio_err cio_dir_create_dir(cio_io io, cio_dir dir, const char *path, uint32_t permissions);
/* mkdir -p. *created (if not NULL) tells whether the last component was created. */
cio_err cio_dir_create_dir_path(cio_io io, cio_dir dir, const char *path, uint32_t permissions, bool *created);
/* mkdir -p, then open the result (Zig's makeOpenPath). */
cio_err cio_dir_create_dir_path_open(cio_io io, cio_dir dir, const char *path,
                                     const cio_open_dir_options *options, cio_dir *out);
/* Replaces new_path if it exists. */
cio_err cio_dir_rename(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path);
cio_err cio_dir_delete_file(cio_io io, cio_dir dir, const char *path);
cio_err cio_dir_delete_dir(cio_io io, cio_dir dir, const char *path);
cio_err cio_dir_stat_file(cio_io io, cio_dir dir, const char *path, unsigned flags, cio_stat *out);
cio_err cio_dir_access(cio_io io, cio_dir dir, const char *path, unsigned mode);
cio_err cio_dir_read(cio_io io, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count);
void cio_dir_close(cio_io io, cio_dir dir);

/* 0 bytes read means the end. */
cio_err cio_file_read_streaming(cio_io io, cio_file file, void *buf, size_t len, size_t *nread);
cio_err cio_file_read_streaming_v(cio_io io, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread);
cio_err cio_file_write_streaming(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten);
cio_err cio_file_write_streaming_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                   size_t *nwritten);
/* Writes every byte, retrying short writes. Set: File.WriteStreamingError. A write that takes 0 bytes
 * is retried once (as in Zig's Writer, 0 is not the end of a sink); a second one in a row returns
 * CIO_E_UNEXPECTED (the sink makes no progress and names no reason; Zig's writeAll would call it
 * forever), as does a backend that reports more bytes than it was given. */
cio_err cio_file_write_all(cio_io io, cio_file file, const void *buf, size_t len);
/* Reads until buf is full or the end; *nread may be less than len only at the end. */
cio_err cio_file_read_all(cio_io io, cio_file file, void *buf, size_t len, size_t *nread);
/* 0 bytes at or past the end. Positional reads and writes: an offset above INT64_MAX is
 * InvalidArgument on every backend. */
cio_err cio_file_read_positional(cio_io io, cio_file file, void *buf, size_t len, uint64_t offset, size_t *nread);
cio_err cio_file_read_positional_v(cio_io io, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                   size_t *nread);
cio_err cio_file_write_positional(cio_io io, cio_file file, const void *buf, size_t len, uint64_t offset,
                                  size_t *nwritten);
cio_err cio_file_write_positional_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    uint64_t offset, size_t *nwritten);
cio_err cio_file_seek_to(cio_io io, cio_file file, uint64_t offset);
cio_err cio_file_seek_by(cio_io io, cio_file file, int64_t delta);
/* The current offset of a streaming file. */
cio_err cio_file_position(cio_io io, cio_file file, uint64_t *pos);
cio_err cio_file_length(cio_io io, cio_file file, uint64_t *length);
/* Truncates or zero-extends; never moves the file offset. */
cio_err cio_file_set_length(cio_io io, cio_file file, uint64_t length);
cio_err cio_file_stat(cio_io io, cio_file file, cio_stat *out);
cio_err cio_file_sync(cio_io io, cio_file file);
cio_err cio_file_set_timestamps(cio_io io, cio_file file, const cio_set_timestamps *ts);
void cio_file_close(cio_io io, cio_file file);
cio_file cio_file_stdin(void);
cio_file cio_file_stdout(void);
cio_file cio_file_stderr(void);

/* Opens the running program's own executable (Zig's openSelfExe). */
cio_err cio_process_executable_open(cio_io io, const cio_open_file_options *options, cio_file *out);
/* Writes the executable's absolute path and a NUL; NameTooLong if len is too small. */
cio_err cio_process_executable_path(cio_io io, char *buf, size_t len, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* CIO_FS_H */
