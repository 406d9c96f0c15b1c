/**
 * @file cio/fs.h
 * @brief Files and directories through a cio_io, and the program's own executable.
 *
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

/** How a file is opened. */
typedef enum cio_open_mode {
    CIO_OPEN_READ_ONLY = 0, /**< reading only */
    CIO_OPEN_WRITE_ONLY,    /**< writing only */
    CIO_OPEN_READ_WRITE     /**< reading and writing */
} cio_open_mode;

/** Options of cio_dir_open_file. All-zero means: read only, follow symlinks, allow opening a directory. */
typedef struct cio_open_file_options {
    cio_open_mode mode;      /**< read, write or both */
    bool no_follow_symlinks; /**< the last component must not be a symlink (SymLinkLoop) */
    bool forbid_directory;   /**< opening a directory is IsDir */
} cio_open_file_options;

/** Options of cio_dir_create_file. Use CIO_CREATE_FILE_DEFAULTS (truncate on) and change fields; NULL
 * means the defaults. */
typedef struct cio_create_file_options {
    bool read;            /**< open for reading too */
    bool truncate;        /**< truncate an existing file (default on) */
    bool exclusive;       /**< fail with PathAlreadyExists when the file exists */
    uint32_t permissions; /**< 0: 0666 (before umask) */
} cio_create_file_options;

/** The default cio_create_file_options: write only, truncate, not exclusive, 0666. */
#define CIO_CREATE_FILE_DEFAULTS ((cio_create_file_options){false, true, false, 0})

/** Options of cio_dir_open_dir (NULL or all-zero: neither). */
typedef struct cio_open_dir_options {
    bool iterate;            /**< will be read with cio_dir_read */
    bool no_follow_symlinks; /**< the last component must not be a symlink (SymLinkLoop) */
} cio_open_dir_options;

/** What kind of object a file system entry is. */
typedef enum cio_file_kind {
    CIO_FILE_KIND_UNKNOWN = 0,        /**< the OS did not say */
    CIO_FILE_KIND_FILE,               /**< a regular file */
    CIO_FILE_KIND_DIRECTORY,          /**< a directory */
    CIO_FILE_KIND_SYM_LINK,           /**< a symbolic link */
    CIO_FILE_KIND_NAMED_PIPE,         /**< a FIFO */
    CIO_FILE_KIND_UNIX_DOMAIN_SOCKET, /**< a Unix-domain socket */
    CIO_FILE_KIND_BLOCK_DEVICE,       /**< a block device */
    CIO_FILE_KIND_CHARACTER_DEVICE    /**< a character device */
} cio_file_kind;

/** What cio_file_stat and cio_dir_stat_file report. */
typedef struct cio_stat {
    uint64_t inode;      /**< the inode (file index) number */
    uint64_t size;       /**< the size in bytes */
    uint64_t nlink;      /**< the number of hard links */
    uint32_t mode;       /**< permission bits (POSIX st_mode & 07777) */
    cio_file_kind kind;  /**< the object's kind */
    bool has_atime;      /**< false where the file system does not keep access times */
    cio_timestamp atime; /**< last access, CIO_CLOCK_REAL */
    cio_timestamp mtime; /**< last modification, CIO_CLOCK_REAL */
    cio_timestamp ctime; /**< last status change, CIO_CLOCK_REAL */
} cio_stat;

/** cio_dir_stat_file flag: stat a symlink itself, not its target. */
#define CIO_STAT_NO_FOLLOW 1u
/** Flag of the by-path metadata and link functions (set_file_permissions, set_file_owner,
 * set_timestamps, hard_link): act on a final symbolic link itself, not on what it points to. */
#define CIO_NO_FOLLOW CIO_STAT_NO_FOLLOW
/** cio_dir_sym_link flag: the link points to a directory (Windows makes directory links apart). */
#define CIO_SYM_LINK_DIRECTORY 1u
/** A uid or gid for cio_*_set_owner that keeps the current one. */
#define CIO_OWNER_UNCHANGED UINT32_MAX

/** cio_dir_access mode bit (mode 0 = exists): readable. */
#define CIO_ACCESS_READ 1u
/** cio_dir_access mode bit: writable. */
#define CIO_ACCESS_WRITE 2u
/** cio_dir_access mode bit: executable. */
#define CIO_ACCESS_EXECUTE 4u

/** What cio_file_set_timestamps does with one timestamp. */
typedef enum cio_timestamp_action {
    CIO_TIMESTAMP_UNCHANGED = 0, /**< leave it */
    CIO_TIMESTAMP_NOW,           /**< set it to the current time */
    CIO_TIMESTAMP_SET            /**< set it to the given value */
} cio_timestamp_action;

/** The timestamps cio_file_set_timestamps sets. */
typedef struct cio_set_timestamps {
    cio_timestamp_action access_action; /**< what to do with the access time */
    cio_timestamp access;               /**< the access time for CIO_TIMESTAMP_SET, CIO_CLOCK_REAL */
    cio_timestamp_action modify_action; /**< what to do with the modification time */
    cio_timestamp modify;               /**< the modification time for CIO_TIMESTAMP_SET, CIO_CLOCK_REAL */
} cio_set_timestamps;

/** Directory iteration: the reader owns a caller-provided buffer; entry names point into it and stay
 * valid until the next cio_dir_read on the same reader. `.` and `..` are never returned. The fields
 * are the reader's own (set up by cio_dir_reader_init). */
typedef struct cio_dir_reader {
    cio_dir dir;        /**< the directory read */
    unsigned char *buf; /**< the caller's buffer */
    size_t buf_len;     /**< its length */
    size_t pos;         /**< the next unread byte in buf */
    size_t end;         /**< the end of the valid bytes in buf */
    bool eof;           /**< the OS reported the end */
} cio_dir_reader;

/** One directory entry, as cio_dir_read returns it. */
typedef struct cio_dir_entry {
    const char *name;   /**< NUL-terminated, in the reader's buffer */
    size_t name_len;    /**< its length without the NUL */
    cio_file_kind kind; /**< the entry's kind (CIO_FILE_KIND_UNKNOWN where the OS does not say) */
    uint64_t inode;     /**< its inode number */
} cio_dir_entry;

/**
 * Sets up a reader over a directory opened with `iterate`.
 * The buffer must hold at least one entry of the longest name: 1024 bytes is always enough.
 * @param[out] reader the reader
 * @param dir the directory
 * @param buffer the caller's buffer, used until the last cio_dir_read
 * @param len its length
 * @cancellation no (no OS call)
 */
void cio_dir_reader_init(cio_dir_reader *reader, cio_dir dir, void *buffer, size_t len);

/**
 * The process's current directory (AT_FDCWD on POSIX).
 * @return a cio_dir for relative paths (never closed).
 * @cancellation no (no OS call)
 */
cio_dir cio_dir_cwd(void);

/**
 * Creates (or opens and truncates, by the options) a file for writing.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param options NULL: CIO_CREATE_FILE_DEFAULTS
 * @param[out] out the open file
 * @return #CIO_OK, or an error of File.OpenError \errset_file_open
 * @cancellation yes
 */
cio_err cio_dir_create_file(cio_io io, cio_dir dir, const char *path, const cio_create_file_options *options,
                            cio_file *out);
/**
 * Opens a file.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param options NULL or all-zero: read only, follow symlinks, allow a directory
 * @param[out] out the open file
 * @return #CIO_OK, or an error of File.OpenError \errset_file_open
 * @cancellation yes
 */
cio_err cio_dir_open_file(cio_io io, cio_dir dir, const char *path, const cio_open_file_options *options,
                          cio_file *out);
/**
 * Opens a directory.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param options NULL: the defaults (all-zero)
 * @param[out] out the open directory
 * @return #CIO_OK, or an error of Dir.OpenError \errset_dir_open
 * @cancellation yes
 */
cio_err cio_dir_open_dir(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options, cio_dir *out);
/**
 * Creates a directory. permissions 0: 0777 (before umask).
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param permissions its permission bits
 * @return #CIO_OK, or an error of Dir.CreateDirError \errset_dir_create_dir
 * @cancellation yes
 */
cio_err cio_dir_create_dir(cio_io io, cio_dir dir, const char *path, uint32_t permissions);
/**
 * mkdir -p: creates the directory and every missing parent.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param permissions the new directories' permission bits (0: 0777 before umask)
 * @param[out] created (if not NULL) whether the last component was created
 * @return #CIO_OK, or an error of Dir.MakePathError \errset_dir_make_path
 * @cancellation yes
 */
cio_err cio_dir_create_dir_path(cio_io io, cio_dir dir, const char *path, uint32_t permissions, bool *created);
/**
 * mkdir -p, then open the result (Zig's makeOpenPath).
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param options how to open it (NULL: the defaults)
 * @param[out] out the open directory
 * @return #CIO_OK, or an error of Dir.MakeOpenPathError \errset_dir_make_open_path
 * @cancellation yes
 */
cio_err cio_dir_create_dir_path_open(cio_io io, cio_dir dir, const char *path, const cio_open_dir_options *options,
                                     cio_dir *out);
/**
 * Renames old_path to new_path; replaces new_path if it exists. A target another handle has open is
 * replaced too (that handle keeps the old file) on POSIX and on Windows 10 1607+
 * (FileRenameInformationEx with POSIX semantics); where Windows lacks that class (Wine 8) such a
 * target is AccessDenied.
 * @param io the Io
 * @param old_dir the directory old_path is relative to
 * @param old_path the object to rename
 * @param new_dir the directory new_path is relative to
 * @param new_path its new name
 * @return #CIO_OK, or an error of Dir.RenameError \errset_dir_rename
 * @cancellation yes
 */
cio_err cio_dir_rename(cio_io io, cio_dir old_dir, const char *old_path, cio_dir new_dir, const char *new_path);
/**
 * Deletes a file (not a directory).
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @return #CIO_OK, or an error of Dir.DeleteFileError \errset_dir_delete_file
 * @cancellation yes
 */
cio_err cio_dir_delete_file(cio_io io, cio_dir dir, const char *path);
/**
 * Deletes an empty directory.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @return #CIO_OK, or an error of Dir.DeleteDirError \errset_dir_delete_dir
 * @cancellation yes
 */
cio_err cio_dir_delete_dir(cio_io io, cio_dir dir, const char *path);
/**
 * Reports a file system object by path.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param flags CIO_STAT_NO_FOLLOW or 0
 * @param[out] out what the OS reports
 * @return #CIO_OK, or an error of Dir.StatFileError \errset_dir_stat_file
 * @cancellation yes
 */
cio_err cio_dir_stat_file(cio_io io, cio_dir dir, const char *path, unsigned flags, cio_stat *out);
/**
 * Tests whether the object exists and may be read, written or executed.
 * @param io the Io
 * @param dir the directory `path` is relative to
 * @param path the path (UTF-8; relative to dir unless absolute)
 * @param mode 0 (exists) or CIO_ACCESS_READ | CIO_ACCESS_WRITE | CIO_ACCESS_EXECUTE
 * @return #CIO_OK, or an error of Dir.AccessError \errset_dir_access
 * @cancellation yes
 */
cio_err cio_dir_access(cio_io io, cio_dir dir, const char *path, unsigned mode);
/**
 * Reads up to max entries (0 at the end); names point into the reader's buffer.
 * @param io the Io
 * @param reader the reader (cio_dir_reader_init)
 * @param[out] entries where the entries go
 * @param max how many at most
 * @param[out] count how many were read (0 at the end)
 * @return #CIO_OK, or an error of Dir.IterateError \errset_dir_iterate
 * @cancellation yes
 */
cio_err cio_dir_read(cio_io io, cio_dir_reader *reader, cio_dir_entry *entries, size_t max, size_t *count);
/**
 * Closes a directory. The handle is gone afterwards whatever the result (a close is never retried:
 * on Linux the descriptor is freed even when close reports EINTR). NotOpen means it was not open
 * (closed twice, CIO_DIR_INVALID, or never opened; debug builds also print a line naming the
 * function and the handle). See cio_file_close for the handle-reuse hazard of a double close.
 * @param io the Io
 * @param dir the directory (exactly once)
 * @return #CIO_OK, or an error of CloseError \errset_close
 * @cancellation no
 */
cio_err cio_dir_close(cio_io io, cio_dir dir);

/**
 * Reads from the file's current position. 0 bytes read means the end.
 * @param io the Io
 * @param file the file
 * @param buf where the bytes go
 * @param len its length
 * @param[out] nread how many were read (0: the end)
 * @return #CIO_OK, or an error of File.Reader.Error \errset_file_reader
 * @cancellation yes
 */
cio_err cio_file_read_streaming(cio_io io, cio_file file, void *buf, size_t len, size_t *nread);
/**
 * Vectored streaming read; 0 bytes means the end.
 * @param io the Io
 * @param file the file
 * @param iov the buffers
 * @param iovcnt how many
 * @param[out] nread how many bytes were read (0: the end)
 * @return #CIO_OK, or an error of File.Reader.Error \errset_file_reader
 * @cancellation yes
 */
cio_err cio_file_read_streaming_v(cio_io io, cio_file file, const cio_iovec *iov, size_t iovcnt, size_t *nread);
/**
 * Writes at the file's current position (may be short).
 * @param io the Io
 * @param file the file
 * @param buf the bytes
 * @param len how many
 * @param[out] nwritten how many were written
 * @return #CIO_OK, or an error of File.WriteStreamingError \errset_file_write_streaming
 * @cancellation yes
 */
cio_err cio_file_write_streaming(cio_io io, cio_file file, const void *buf, size_t len, size_t *nwritten);
/**
 * Vectored streaming write (may be short).
 * @param io the Io
 * @param file the file
 * @param iov the buffers
 * @param iovcnt how many
 * @param[out] nwritten how many bytes were written
 * @return #CIO_OK, or an error of File.WriteStreamingError \errset_file_write_streaming
 * @cancellation yes
 */
cio_err cio_file_write_streaming_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                   size_t *nwritten);
/**
 * Writes every byte, retrying short writes. A write that takes 0 bytes is retried once (as in
 * Zig's Writer, 0 is not the end of a sink); a second one in a row returns CIO_E_UNEXPECTED (the
 * sink makes no progress and names no reason; Zig's writeAll would call it forever), as does a
 * backend that reports more bytes than it was given.
 * @param io the Io
 * @param file the file
 * @param buf the bytes
 * @param len how many
 * @return #CIO_OK, or an error of File.WriteStreamingError \errset_file_write_streaming
 * @cancellation yes
 */
cio_err cio_file_write_all(cio_io io, cio_file file, const void *buf, size_t len);
/**
 * Reads until buf is full or the end; *nread may be less than len only at the end.
 * @param io the Io
 * @param file the file
 * @param buf where the bytes go
 * @param len its length
 * @param[out] nread how many were read
 * @return #CIO_OK, or an error of File.Reader.Error \errset_file_reader
 * @cancellation yes
 */
cio_err cio_file_read_all(cio_io io, cio_file file, void *buf, size_t len, size_t *nread);
/**
 * Reads at offset without moving the file position; 0 bytes at or past the end. An offset above
 * INT64_MAX is InvalidArgument on every backend.
 * @param io the Io
 * @param file the file
 * @param buf where the bytes go
 * @param len its length
 * @param offset the position in the file
 * @param[out] nread how many were read
 * @return #CIO_OK, or an error of File.ReadPositionalError \errset_file_read_positional
 * @cancellation yes
 */
cio_err cio_file_read_positional(cio_io io, cio_file file, void *buf, size_t len, uint64_t offset, size_t *nread);
/**
 * Vectored positional read; 0 bytes at or past the end.
 * @param io the Io
 * @param file the file
 * @param iov the buffers
 * @param iovcnt how many
 * @param offset the position in the file
 * @param[out] nread how many bytes were read
 * @return #CIO_OK, or an error of File.ReadPositionalError \errset_file_read_positional
 * @cancellation yes
 */
cio_err cio_file_read_positional_v(cio_io io, cio_file file, const cio_iovec *iov, size_t iovcnt, uint64_t offset,
                                   size_t *nread);
/**
 * Writes at offset without moving the file position (may be short).
 * @param io the Io
 * @param file the file
 * @param buf the bytes
 * @param len how many
 * @param offset the position in the file
 * @param[out] nwritten how many were written
 * @return #CIO_OK, or an error of File.WritePositionalError \errset_file_write_positional
 * @cancellation yes
 */
cio_err cio_file_write_positional(cio_io io, cio_file file, const void *buf, size_t len, uint64_t offset,
                                  size_t *nwritten);
/**
 * Vectored positional write (may be short).
 * @param io the Io
 * @param file the file
 * @param iov the buffers
 * @param iovcnt how many
 * @param offset the position in the file
 * @param[out] nwritten how many bytes were written
 * @return #CIO_OK, or an error of File.WritePositionalError \errset_file_write_positional
 * @cancellation yes
 */
cio_err cio_file_write_positional_v(cio_io io, cio_file file, const cio_const_iovec *iov, size_t iovcnt,
                                    uint64_t offset, size_t *nwritten);
/**
 * Moves a streaming file's position to offset.
 * @param io the Io
 * @param file the file
 * @param offset bytes from the start
 * @return #CIO_OK, or an error of File.SeekError \errset_file_seek
 * @cancellation yes
 */
cio_err cio_file_seek_to(cio_io io, cio_file file, uint64_t offset);
/**
 * Moves a streaming file's position by delta.
 * @param io the Io
 * @param file the file
 * @param delta bytes, negative: backwards
 * @return #CIO_OK, or an error of File.SeekError \errset_file_seek
 * @cancellation yes
 */
cio_err cio_file_seek_by(cio_io io, cio_file file, int64_t delta);
/**
 * The current offset of a streaming file.
 * @param io the Io
 * @param file the file
 * @param[out] pos the offset
 * @return #CIO_OK, or an error of File.SeekError \errset_file_seek
 * @cancellation yes
 */
cio_err cio_file_position(cio_io io, cio_file file, uint64_t *pos);
/**
 * The file's size in bytes.
 * @param io the Io
 * @param file the file
 * @param[out] length the size
 * @return #CIO_OK, or an error of File.LengthError \errset_file_length
 * @cancellation yes
 */
cio_err cio_file_length(cio_io io, cio_file file, uint64_t *length);
/**
 * Truncates or zero-extends; never moves the file offset.
 * @param io the Io
 * @param file the file
 * @param length the new size in bytes
 * @return #CIO_OK, or an error of File.SetLengthError \errset_file_set_length
 * @cancellation yes
 */
cio_err cio_file_set_length(cio_io io, cio_file file, uint64_t length);
/**
 * Reports an open file.
 * @param io the Io
 * @param file the file
 * @param[out] out what the OS reports
 * @return #CIO_OK, or an error of File.StatError \errset_file_stat
 * @cancellation yes
 */
cio_err cio_file_stat(cio_io io, cio_file file, cio_stat *out);
/**
 * Flushes the file's data and metadata to the device.
 * @param io the Io
 * @param file the file
 * @return #CIO_OK, or an error of File.SyncError \errset_file_sync
 * @cancellation yes
 */
cio_err cio_file_sync(cio_io io, cio_file file);
/**
 * Sets the access and modification times.
 * @param io the Io
 * @param file the file
 * @param ts what to set
 * @return #CIO_OK, or an error of File.SetTimestampsError \errset_file_set_timestamps
 * @cancellation yes
 */
cio_err cio_file_set_timestamps(cio_io io, cio_file file, const cio_set_timestamps *ts);
/**
 * Closes a file. The handle is gone afterwards whatever the result (a close is never retried: on
 * Linux the descriptor is freed even when close reports EINTR). InputOutput (and, on NFS, NoSpaceLeft
 * or DiskQuota) reports a failed write-back of data written earlier. NotOpen means the handle was not
 * open (closed twice, CIO_FILE_INVALID, or never opened); debug builds also print a line naming the
 * function and the handle.
 * Closing a handle twice is a bug that cio reports only as far as the OS can tell: the second close
 * returns NotOpen while the number is still free, but once any thread of the process has opened
 * something else under the same number (POSIX reuses the lowest free descriptor, Windows its handle
 * values), the second close closes that other object and returns OK. Close each handle exactly once,
 * and do not use it afterwards.
 * @param io the Io
 * @param file the file (exactly once)
 * @return #CIO_OK, or an error of CloseError \errset_close
 * @cancellation no
 */
cio_err cio_file_close(cio_io io, cio_file file);
/**
 * The process's standard input.
 * @return a cio_file (do not close it unless you mean to).
 * @cancellation no (no OS call)
 */
cio_file cio_file_stdin(void);
/**
 * The process's standard output.
 * @return a cio_file (do not close it unless you mean to).
 * @cancellation no (no OS call)
 */
cio_file cio_file_stdout(void);
/**
 * The process's standard error.
 * @return a cio_file (do not close it unless you mean to).
 * @cancellation no (no OS call)
 */
cio_file cio_file_stderr(void);

/**
 * Opens the running program's own executable (Zig's openSelfExe).
 * @param io the Io
 * @param options how to open it (NULL: read only)
 * @param[out] out the open file
 * @return #CIO_OK, or an error of ProcessExecutableOpenError \errset_process_executable_open
 * @cancellation yes
 */
cio_err cio_process_executable_open(cio_io io, const cio_open_file_options *options, cio_file *out);
/**
 * Writes the executable's absolute path and a NUL; NameTooLong if len is too small.
 * @param io the Io
 * @param buf where the path goes
 * @param len its length
 * @param[out] out_len the path's length without the NUL
 * @return #CIO_OK, or an error of ProcessExecutablePathError \errset_process_executable_path
 * @cancellation yes
 */
cio_err cio_process_executable_path(cio_io io, char *buf, size_t len, size_t *out_len);

#ifdef __cplusplus
}
#endif

/* cio/fs_meta.h continues this header: links, permissions, owners, timestamps, real paths,
 * rename without replace and file locks. */
#include "cio/fs_meta.h"
/* cio/fs_tree.h: file-to-file copies, atomic files, trees, ANSI escape codes. */
#include "cio/fs_tree.h"

#endif /* CIO_FS_H */
