/*
 * Win32 path -> NT path conversion for the Windows Threaded backend (issue 4), as pure functions:
 * no I/O, no allocation, no OS calls, so they build and are tested on every target.
 *
 * Invariants:
 *  - WTF-16 text is uint16_t code units in native order (on Windows, WCHAR is the same type);
 *    every length is in units of the element type and no input needs a terminating NUL.
 *  - Every writer takes its capacity explicitly, never writes past it, and never writes a NUL;
 *    when the result does not fit it returns CIO_E_NAME_TOO_LONG and *out_len is unspecified.
 *  - NT paths are at most CIO__WIN_NT_PATH_MAX units (a UNICODE_STRING's byte Length is a u16).
 *  - Path classification values equal ntdll's RTL_PATH_TYPE (RtlDetermineDosPathNameType_U).
 */
#ifndef CIO_THREADED_PATH_WINDOWS_H
#define CIO_THREADED_PATH_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cio/errors.h"

#define CIO__WIN_NT_PATH_MAX 32767u

/* UTF-8 (also WTF-8: surrogate code points encoded in 3 bytes are accepted, paired or not) to
 * WTF-16. Any other ill-formed input (stray or missing continuation bytes, overlong forms, code
 * points past U+10FFFF, bytes C0 C1 F5..FF) -> CIO_E_BAD_PATH_NAME. NUL is an ordinary code point. */
cio_err cio__win_utf8_to_wtf16(const char *s, size_t len, uint16_t *out, size_t cap, size_t *out_len);
/* WTF-16 to WTF-8: surrogate pairs become 4-byte sequences, unpaired surrogates 3-byte ones. */
cio_err cio__win_wtf16_to_wtf8(const uint16_t *s, size_t len, char *out, size_t cap, size_t *out_len);

typedef enum cio__win_path_type {
    CIO__WIN_PATH_UNKNOWN = 0,
    CIO__WIN_PATH_UNC_ABSOLUTE = 1,     /* \\server\share, \\x, \\.x */
    CIO__WIN_PATH_DRIVE_ABSOLUTE = 2,   /* C:\x */
    CIO__WIN_PATH_DRIVE_RELATIVE = 3,   /* C:x, C: */
    CIO__WIN_PATH_ROOTED = 4,           /* \x */
    CIO__WIN_PATH_RELATIVE = 5,         /* x, "" */
    CIO__WIN_PATH_LOCAL_DEVICE = 6,     /* \\.\x, \\?\x (either separator) */
    CIO__WIN_PATH_ROOT_LOCAL_DEVICE = 7 /* exactly \\. or \\? */
} cio__win_path_type;

/* RtlDetermineDosPathNameType_U on path[0..len) (a unit at or past len, or a NUL, ends the path;
 * '/' and '\' are both separators). Never UNKNOWN. */
cio__win_path_type cio__win_path_type_of(const uint16_t *path, size_t len);

/* Removes "." and ".." components, in place, from a relative path that uses only '\' with no
 * repeated separators and no leading one. ".." that would climb above the start ->
 * CIO__WIN_TOO_MANY_PARENT_DIRS (not a cio_err: callers turn it into a fallback or an error).
 * Examples: "a\..\.\.\b" -> "b"; "a\b\.." -> "a\"; "a\.." -> ""; ".." -> TooManyParentDirs. */
#define CIO__WIN_TOO_MANY_PARENT_DIRS (-1)
int cio__win_remove_dot_dirs(uint16_t *path, size_t len, size_t *out_len);

/* For open-file: a name of exactly "." or ".." names a directory, so the open is CIO_E_IS_DIR
 * before any conversion (the conversion turns "." into "", which would open the directory
 * itself). Returns CIO_E_IS_DIR for those two names, CIO_OK for every other. */
cio_err cio__win_check_open_file_name(const uint16_t *name, size_t len);

typedef struct cio__win_nt_path_options {
    /* The process's current directory as a full DOS path ("C:\dir\" or "\\server\share\dir\"; a
     * missing trailing separator is supplied). Needed by drive-relative and rooted paths, by
     * relative paths when keep_relative is false or they hold too many "..": then it is the
     * path of the directory they are relative to. NULL -> such paths are CIO_E_BAD_PATH_NAME. */
    const uint16_t *cwd;
    size_t cwd_len;
    /* true: a relative path stays relative (for NtCreateFile with a root directory handle), only
     * normalised ('/' -> '\', repeated separators collapsed, "." and ".." removed). false:
     * resolved against cwd, as RtlDosPathNameToNtPathName_U does. */
    bool keep_relative;
} cio__win_nt_path_options;

/* Win32 path -> NT path (RtlDosPathNameToNtPathName_U's result, without DOS device names such as
 * NUL or COM1): "\??\" + the full path for drive-absolute, drive-relative, rooted and local-device
 * paths ("\\.\X" -> "\??\X"), "\??\UNC\server\share" for UNC, "\??\" for "\\." and "\\?"; "\\?\X"
 * only has its prefix swapped and "\??\X" is returned as is. Full paths are canonicalised like
 * Win32: '/' -> '\', repeated separators collapsed, "." and ".." resolved (never above the drive
 * root, the UNC share or the device name's start), trailing dots of inner components and trailing
 * dots and spaces of the path removed.
 * *is_absolute tells whether the result is an NT path (open with no root directory) or a relative
 * one (open relative to the directory handle). Errors: CIO_E_BAD_PATH_NAME for a NUL inside the
 * path, an absolute path of only spaces (or empty), or a missing cwd; CIO_E_NAME_TOO_LONG when the
 * result (or, before ".." is resolved, the joined path) exceeds cap or CIO__WIN_NT_PATH_MAX. */
cio_err cio__win_to_nt_path(const uint16_t *path, size_t len, const cio__win_nt_path_options *options, uint16_t *out,
                            size_t cap, size_t *out_len, bool *is_absolute);

/* cio__win_utf8_to_wtf16 into scratch[0..scratch_cap) (no allocation here: the caller owns the
 * memory, CIO__WIN_NT_PATH_MAX units always suffice), then cio__win_to_nt_path; same errors. */
cio_err cio__win_utf8_to_nt_path(const char *path, size_t len, const cio__win_nt_path_options *options,
                                 uint16_t *scratch, size_t scratch_cap, uint16_t *out, size_t cap, size_t *out_len,
                                 bool *is_absolute);

#endif /* CIO_THREADED_PATH_WINDOWS_H */
