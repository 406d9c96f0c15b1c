/**
 * @file cio/fs_tree.h
 * @brief Whole files and trees (issue 21): copying file to file without user memory, atomic files,
 *        copying and deleting directory trees, ANSI escape codes on terminals.
 *
 * Included at the end of cio/fs.h. Every function takes a cio_io; the library code here (atomic files,
 * trees, the copy fallback) runs through the vtable slots only, so it behaves alike on every backend.
 */
#ifndef CIO_FS_TREE_H
#define CIO_FS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/fs.h"
#include "cio/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== file to file ========================================================================================= */

/**
 * Copies up to len bytes of `in`, from in_offset, to `out` at out's file position (which moves on),
 * without passing them through user memory where the OS can (Linux: copy_file_range); elsewhere,
 * and where the kernel refuses (two file systems: EXDEV, EINVAL, ENOSYS, an O_APPEND target), the
 * library copies with positional reads and streaming writes. Stops at the end of `in`.
 * @param io        the Io
 * @param out       the file written, open for writing
 * @param in        the file read, open for reading (its position is not used nor moved)
 * @param in_offset where reading starts
 * @param len       the most bytes to copy (UINT64_MAX: to the end of `in`)
 * @param[out] nwritten (if not NULL) the bytes copied, also when an error ends the call
 * @return #CIO_OK, or an error of File.WriteFileCopyError \errset_file_write_file_copy
 * @cancellation yes: the bytes copied so far are counted
 */
cio_err cio_file_write_file_streaming(cio_io io, cio_file out, cio_file in, uint64_t in_offset, uint64_t len,
                                      uint64_t *nwritten);

/**
 * As cio_file_write_file_streaming, writing at out_offset (out's file position neither used nor moved).
 * @param io         the Io
 * @param out        the file written, open for writing
 * @param out_offset where writing starts (at most INT64_MAX)
 * @param in         the file read, open for reading
 * @param in_offset  where reading starts
 * @param len        the most bytes to copy (UINT64_MAX: to the end of `in`)
 * @param[out] nwritten (if not NULL) the bytes copied, also when an error ends the call
 * @return #CIO_OK, or an error of File.WriteFileCopyError \errset_file_write_file_copy
 * @cancellation yes: the bytes copied so far are counted
 */
cio_err cio_file_write_file_positional(cio_io io, cio_file out, uint64_t out_offset, cio_file in, uint64_t in_offset,
                                       uint64_t len, uint64_t *nwritten);

/* ==== atomic files ========================================================================================= */

/** Options of cio_dir_create_file_atomic (NULL or all-zero: 0666 before umask, no parents made). */
typedef struct cio_create_file_atomic_options {
    uint32_t permissions; /**< the file's permission bits (0: 0666 before umask) */
    bool make_path;       /**< create the destination's missing parent directories first */
    bool replace;         /**< will be finished with cio_file_atomic_replace (a named temporary then) */
} cio_create_file_atomic_options;

/** An atomic file being written (Zig's File.Atomic): write to `file`, then cio_file_atomic_link or
 * cio_file_atomic_replace puts it at its destination in one step (closing the file), and
 * cio_file_atomic_discard always ends it (closing the file if still open; removing the temporary when
 * it was not put in place). The other fields are the library's. */
typedef struct cio_file_atomic {
    cio_file file;       /**< the temporary file, open for reading and writing */
    cio_dir dir;         /**< the destination's directory */
    bool close_dir;      /**< dir was opened here (closed by discard) */
    bool unnamed;        /**< the temporary has no name (Linux O_TMPFILE) */
    bool named_in_place; /**< the temporary's name is gone: linked or renamed into place */
    char tmp_name[32];   /**< the named temporary's name in dir */
    char *dest;          /**< the destination's last component (heap) */
} cio_file_atomic;

/**
 * Creates a temporary file that will become `path` in one step: an unnamed file (Linux O_TMPFILE)
 * where the file system has them and options->replace is off, else a file with a random name
 * beginning ".cio-atomic-" in the destination's directory. Nothing is at `path` until link or
 * replace; a process that dies before leaves no file at `path` (and, with an unnamed file, nothing).
 * @param io      the Io
 * @param dir     the directory `path` is relative to
 * @param path    the destination (its directory must exist unless options->make_path)
 * @param options the permissions and whether to make parents (NULL: the defaults)
 * @param[out] out the atomic file; end it with cio_file_atomic_discard (also after link/replace)
 * @return #CIO_OK, or an error of Dir.CreateFileAtomicError \errset_dir_create_file_atomic
 * @cancellation yes
 */
cio_err cio_dir_create_file_atomic(cio_io io, cio_dir dir, const char *path,
                                   const cio_create_file_atomic_options *options, cio_file_atomic *out);

/**
 * Puts the file at its destination if nothing is there: PathAlreadyExists otherwise (linkat of the
 * unnamed file; renameat2 RENAME_NOREPLACE, or a hard link and the temporary's removal, for a named
 * one). Closes the file (set its permissions and times before); a failed link may be tried again.
 * @param io the Io
 * @param af the atomic file
 * @return #CIO_OK, or an error of File.Atomic.LinkError \errset_file_atomic_link
 * @cancellation yes
 */
cio_err cio_file_atomic_link(cio_io io, cio_file_atomic *af);

/**
 * Puts the file at its destination, replacing what is there in one step (rename): a reader opening
 * the destination meanwhile sees the old file or the new one, never a part. Closes the file first
 * (Windows renames no open file); a failed replace may be tried again (on Windows, AccessDenied
 * while another handle has the destination open).
 * @param io the Io
 * @param af the atomic file
 * @return #CIO_OK, or an error of File.Atomic.ReplaceError \errset_file_atomic_replace
 * @cancellation yes
 */
cio_err cio_file_atomic_replace(cio_io io, cio_file_atomic *af);

/**
 * Ends the atomic file: closes it, removes the temporary unless link or replace put it in place,
 * closes the directory it opened. Safe on a zeroed struct after a failed create.
 * @param io the Io
 * @param af the atomic file
 * @cancellation no (the removal runs with cancellation blocked)
 */
void cio_file_atomic_discard(cio_io io, cio_file_atomic *af);

/* ==== trees ================================================================================================ */

/** Options of cio_dir_copy_tree (NULL or all-zero: the defaults). */
typedef struct cio_copy_tree_options {
    size_t concurrency; /**< files copied at once (0: 16); 1 copies in the calling task */
    bool replace;       /**< replace existing files in the destination (else PathAlreadyExists) */
} cio_copy_tree_options;

/**
 * cp -a: copies the tree at src_path to dst_path (created with missing parents; it may exist),
 * keeping contents, permission bits, modification and access times, and symbolic links as links
 * (never followed). Each file goes through an atomic file, so a failed or canceled copy leaves no
 * partial file visible (files already copied stay). Up to options->concurrency files are copied at
 * once, each in its own task (cio_group_concurrent), where the backend has concurrency.
 * @param io       the Io
 * @param src_dir  the directory src_path is relative to
 * @param src_path the tree to copy (a directory)
 * @param dst_dir  the directory dst_path is relative to
 * @param dst_path the copy
 * @param options  concurrency and replacement (NULL: the defaults)
 * @return #CIO_OK, or an error of Dir.CopyTreeError \errset_dir_copy_tree
 * @cancellation yes: the copy stops with Canceled and leaves no partial file
 */
cio_err cio_dir_copy_tree(cio_io io, cio_dir src_dir, const char *src_path, cio_dir dst_dir, const char *dst_path,
                          const cio_copy_tree_options *options);

/**
 * rm -rf: deletes `path` and, when it is a directory, everything under it. Symbolic links are
 * deleted, never followed; a directory without write permission is given it (to empty it) first.
 * A path that does not exist is CIO_OK.
 * @param io   the Io
 * @param dir  the directory `path` is relative to
 * @param path what to delete
 * @return #CIO_OK, or an error of Dir.DeleteTreeError \errset_dir_delete_tree
 * @cancellation yes: what is deleted stays deleted
 */
cio_err cio_dir_delete_tree(cio_io io, cio_dir dir, const char *path);

/* ==== terminals ============================================================================================ */

/**
 * Whether the file is a terminal that takes ANSI escape codes now (POSIX: a tty; Windows: a console
 * with virtual terminal processing on).
 * @param io   the Io
 * @param file the file
 * @param[out] out the answer
 * @return #CIO_OK, or an error of Cancelable \errset_cancelable
 * @cancellation no (never blocks)
 */
cio_err cio_file_supports_ansi_escape_codes(cio_io io, cio_file file, bool *out);

/**
 * Makes the terminal take ANSI escape codes (Windows: turns virtual terminal processing on; POSIX
 * terminals take them as they are). NotTerminalDevice for a file, a pipe, or a console that cannot.
 * @param io   the Io
 * @param file the file
 * @return #CIO_OK, or an error of File.EnableAnsiEscapeCodesError \errset_file_enable_ansi_escape_codes
 * @cancellation no (never blocks)
 */
cio_err cio_file_enable_ansi_escape_codes(cio_io io, cio_file file);

/** How to color output (Zig's tty.Config). */
typedef enum cio_tty_config {
    CIO_TTY_NO_COLOR = 0,    /**< plain text */
    CIO_TTY_ESCAPE_CODES = 1 /**< ANSI escape codes */
} cio_tty_config;

/**
 * Zig's tty.Config.detect: NO_COLOR set and not empty: no color; else CLICOLOR_FORCE set and not
 * empty: escape codes; else escape codes when cio_file_enable_ansi_escape_codes succeeds; else none.
 * @param io   the Io
 * @param file the file output goes to
 * @return how to color output to it
 * @cancellation no (never blocks)
 */
cio_tty_config cio_tty_config_detect(cio_io io, cio_file file);

#ifdef __cplusplus
}
#endif

#endif /* CIO_FS_TREE_H */
