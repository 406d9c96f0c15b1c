/* Shared by process_cwd_windows.c and process_spawn_windows.c (Windows only). */
#ifndef CIO_OS_PROCESS_WINDOWS_H
#define CIO_OS_PROCESS_WINDOWS_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "cio/io.h"

/* The path of the open directory h as a NUL-terminated WTF-16 string on the heap (*out, freed by the
 * caller; NULL on failure), without the \\?\ prefix GetFinalPathNameByHandleW gives ("\\?\C:\x" ->
 * "C:\x", "\\?\UNC\s\x" -> "\\s\x"), as CreateProcessW and SetCurrentDirectoryW take paths.
 * Errors: SystemResources, AccessDenied, FileNotFound, NameTooLong, Unexpected. */
cio_err cio__win_dir_wpath(void *h, WCHAR **out);

#endif /* CIO_OS_PROCESS_WINDOWS_H */
