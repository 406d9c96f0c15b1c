/*
 * Child processes on Windows (Zig's processSpawn, childWait, childKill): CreateProcessW.
 *
 * Invariants:
 * - The command line is built so that CommandLineToArgvW (and the C runtime's parser, which follows
 *   the same rules) gives the child exactly argv: an argument with a space, tab, newline or quote (or
 *   an empty one) is quoted, a quote inside is escaped with a backslash, and backslashes are doubled
 *   only where they precede a quote (or the closing one). argv[0] follows the first argument's
 *   rules (quotes only, no escapes), so it may not contain a quote (InvalidName).
 * - A .bat or .cmd program is run by cmd.exe, whose parser is not CommandLineToArgvW's (the
 *   BatBadBut problem, CVE-2024-24576): such a spawn is refused with InvalidBatchScriptArg when any
 *   argument holds a character cmd.exe interprets (" % ! ^ & | < > ( ) and line breaks); plain
 *   arguments pass.
 * - Only the child's three standard handles are inherited: each is an inheritable duplicate made
 *   here, named in PROC_THREAD_ATTRIBUTE_HANDLE_LIST, and closed right after CreateProcessW; the
 *   parent's pipe ends are never inheritable. A given file that is an asynchronous handle (one the
 *   Evented backend opened: no synchronous flag) is not given as it is, since a child's plain
 *   ReadFile/WriteFile passes no offset, which NT refuses there: the file is opened again through it
 *   (empty name, the handle as root) synchronously, with its access, at the position it stores
 *   (the child's transfers then move that new handle's position, not the caller's). Nothing made here outlives the call
 * on any path except the returned process handle and pipe ends.
 * - A wait is an alertable WaitForSingleObjectEx inside the cancellation bracket: a cancel's APC
 *   ends it with WAIT_IO_COMPLETION (Canceled), leaving the child waitable. Kill is TerminateProcess
 *   and an uncancelable wait.
 * - spawn_path and cwd_dir go through the directory's path (GetFinalPathNameByHandleW,
 *   cio__win_dir_wpath): spawn_path passes the program as CreateProcessW's application name (no
 *   search; ".exe" added to a last component without an extension, as CreateProcessW does for a
 *   command line's first word); cio_dir_cwd() (a NULL handle) is the current directory as it is.
 * - Replace is OperationUnsupported (process_replace_none.c): Windows has no exec, and Zig's
 *   processReplace returns OperationUnsupported there too (std.process.can_replace is false on Windows); emulating it
 *   (spawn, wait, exit with the child's code) would change the process id and what a parent sees.
 *   Process groups are CREATE_NEW_PROCESS_GROUP; sessions and ids do not exist
 *   (OperationUnsupported).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cio/errmap.h"
#include "cio/ntapi.h"
#include "cio/process.h"
#include "fs_windows.h"
#include "internal.h"
#include "internal/cio_oscalls.h"
#include "path_windows.h"
#include "os.h"
#include "process_windows.h"

/* ---- the command line --------------------------------------------------------------------------- */

static bool needs_quotes(const char *a)
{
    if (a[0] == '\0')
        return true;
    for (; *a != '\0'; a++)
        if (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\v' || *a == '"')
            return true;
    return false;
}

/* Writes one quoted-as-needed argument at out (NULL: only counts); returns its length. */
static size_t put_arg(const char *a, char *out)
{
    size_t n = 0;
#define PUT(c) (out != NULL ? (void)(out[n] = (c)) : (void)0, n++)
    if (!needs_quotes(a)) {
        for (; *a != '\0'; a++)
            PUT(*a);
        return n;
    }
    PUT('"');
    for (;;) {
        size_t slashes = 0;
        while (*a == '\\') {
            slashes++;
            a++;
        }
        if (*a == '\0') {
            for (size_t i = 0; i < 2 * slashes; i++)
                PUT('\\');
            break;
        }
        if (*a == '"') {
            for (size_t i = 0; i < 2 * slashes + 1; i++)
                PUT('\\');
        } else {
            for (size_t i = 0; i < slashes; i++)
                PUT('\\');
        }
        PUT(*a);
        a++;
    }
    PUT('"');
#undef PUT
    return n;
}

static bool is_batch(const char *prog)
{
    size_t n = strlen(prog);
    while (n > 0 && (prog[n - 1] == '.' || prog[n - 1] == ' '))
        n--;
    if (n < 4 || prog[n - 4] != '.')
        return false;
    char e[3];
    for (int i = 0; i < 3; i++) {
        char c = prog[n - 3 + (size_t)i];
        e[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return memcmp(e, "bat", 3) == 0 || memcmp(e, "cmd", 3) == 0;
}

static cio_err check_argv(const char *const *argv)
{
    if (strchr(argv[0], '"') != NULL)
        return CIO_E_INVALID_NAME;
    if (!is_batch(argv[0]))
        return CIO_OK;
    for (size_t i = 1; argv[i] != NULL; i++)
        if (strpbrk(argv[i], "\"%!^&|<>()\r\n") != NULL)
            return CIO_E_INVALID_BATCH_SCRIPT_ARG;
    return CIO_OK;
}

/* UTF-8 text to a NUL-terminated WTF-16 copy on the heap. */
static cio_err to_wide(const char *s, size_t len, WCHAR **out)
{
    *out = NULL;
    WCHAR *w = (WCHAR *)CIO__SYS(malloc, spawn_wide)((len + 1) * sizeof(WCHAR));
    if (w == NULL)
        return CIO_E_OUT_OF_MEMORY;
    size_t n = 0;
    cio_err err = cio__win_utf8_to_wtf16(s, len, (uint16_t *)w, len, &n);
    if (err != CIO_OK) {
        free(w);
        return CIO_E_INVALID_WTF8;
    }
    w[n] = 0;
    *out = w;
    return CIO_OK;
}

static cio_err command_line(const char *const *argv, WCHAR **out)
{
    size_t len = 0;
    for (size_t i = 0; argv[i] != NULL; i++)
        len += (i > 0) + (i == 0 ? strlen(argv[0]) + 2 : put_arg(argv[i], NULL));
    char *s = (char *)CIO__SYS(malloc, spawn_cmdline)(len + 1);
    if (s == NULL)
        return CIO_E_OUT_OF_MEMORY;
    size_t n = 0;
    bool q = strpbrk(argv[0], " \t") != NULL;
    if (q)
        s[n++] = '"';
    memcpy(s + n, argv[0], strlen(argv[0]));
    n += strlen(argv[0]);
    if (q)
        s[n++] = '"';
    for (size_t i = 1; argv[i] != NULL; i++) {
        s[n++] = ' ';
        n += put_arg(argv[i], s + n);
    }
    cio_err err = to_wide(s, n, out);
    free(s);
    return err;
}

/* ---- the environment block ------------------------------------------------------------------------- */

static bool same_name_w(const WCHAR *a, const WCHAR *b)
{
    /* a leading '=' is part of the name (the per-drive "=C:" entries) */
    if (*a == '=' && *b == '=') {
        a++;
        b++;
    }
    for (; *a != 0 && *a != '=' && *b != 0 && *b != '='; a++, b++) {
        WCHAR x = (*a >= 'a' && *a <= 'z') ? (WCHAR)(*a - 32) : *a;
        WCHAR y = (*b >= 'a' && *b <= 'z') ? (WCHAR)(*b - 32) : *b;
        if (x != y)
            return false;
    }
    return (*a == 0 || *a == '=') && (*b == 0 || *b == '=');
}

static cio_err env_block(const cio_spawn_options *o, WCHAR **out)
{
    *out = NULL;
    if (o->env_mode == CIO_ENV_INHERIT)
        return CIO_OK;
    size_t m = 0;
    while (o->env != NULL && o->env[m] != NULL)
        m++;
    WCHAR **add = (WCHAR **)CIO__SYS(calloc, spawn_env)(m + 1, sizeof *add);
    if (add == NULL)
        return CIO_E_OUT_OF_MEMORY;
    cio_err err = CIO_OK;
    size_t total = 1;
    for (size_t j = 0; j < m && err == CIO_OK; j++) {
        err = to_wide(o->env[j], strlen(o->env[j]), &add[j]);
        if (err == CIO_OK)
            total += wcslen(add[j]) + 1;
    }
    WCHAR *parent = NULL;
    if (err == CIO_OK && o->env_mode == CIO_ENV_ADD) {
        parent = CIO__SYS(GetEnvironmentStringsW, spawn_env)();
        if (parent == NULL)
            err = CIO_E_OUT_OF_MEMORY;
        for (const WCHAR *e = parent; err == CIO_OK && *e != 0; e += wcslen(e) + 1)
            total += wcslen(e) + 1;
    }
    WCHAR *block = NULL;
    if (err == CIO_OK) {
        block = (WCHAR *)CIO__SYS(malloc, win_spawn_env)((total + 1) * sizeof(WCHAR));
        if (block == NULL)
            err = CIO_E_OUT_OF_MEMORY;
    }
    if (err == CIO_OK) {
        size_t k = 0;
        for (const WCHAR *e = parent; e != NULL && *e != 0; e += wcslen(e) + 1) {
            bool replaced = false;
            for (size_t j = 0; j < m && !replaced; j++)
                replaced = same_name_w(e, add[j]);
            if (!replaced) {
                memcpy(block + k, e, (wcslen(e) + 1) * sizeof(WCHAR));
                k += wcslen(e) + 1;
            }
        }
        for (size_t j = 0; j < m; j++) {
            memcpy(block + k, add[j], (wcslen(add[j]) + 1) * sizeof(WCHAR));
            k += wcslen(add[j]) + 1;
        }
        if (k == 0)
            block[k++] = 0; /* an empty block is two NULs */
        block[k] = 0;
        *out = block;
    }
    if (parent != NULL)
        FreeEnvironmentStringsW(parent);
    for (size_t j = 0; j < m; j++)
        free(add[j]);
    free(add);
    return err;
}

/* ---- spawn ------------------------------------------------------------------------------------------- */

struct wplan {
    HANDLE child[3];  /* inheritable duplicates for the child (NULL: none) */
    HANDLE parent[3]; /* the parent's pipe ends (NULL: none) */
    WCHAR *cmd, *env, *cwd, *app;
    void *attrs;
    bool attrs_ready;
};

static void close_h(HANDLE h)
{
    if (h != NULL && h != INVALID_HANDLE_VALUE)
        (void)CIO__SYS(CloseHandle, spawn_close)(h);
}

static void wplan_release(struct wplan *p, bool parent_ends_too)
{
    for (int i = 0; i < 3; i++) {
        close_h(p->child[i]);
        p->child[i] = NULL;
        if (parent_ends_too) {
            close_h(p->parent[i]);
            p->parent[i] = NULL;
        }
    }
    if (p->attrs_ready)
        DeleteProcThreadAttributeList((LPPROC_THREAD_ATTRIBUTE_LIST)p->attrs);
    free(p->attrs);
    free(p->cmd);
    free(p->env);
    free(p->cwd);
    free(p->app);
}

static cio_err last_error(DWORD e)
{
    switch (e) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE: return CIO_E_FILE_NOT_FOUND;
    case ERROR_DIRECTORY: return CIO_E_NOT_DIR;
    case ERROR_ACCESS_DENIED: return CIO_E_ACCESS_DENIED;
    case ERROR_BAD_EXE_FORMAT:
    case ERROR_EXE_MACHINE_TYPE_MISMATCH:
    case ERROR_BAD_FORMAT:
    case ERROR_INVALID_EXE_SIGNATURE: return CIO_E_INVALID_EXE;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
    case ERROR_NO_SYSTEM_RESOURCES: return CIO_E_SYSTEM_RESOURCES;
    case ERROR_TOO_MANY_OPEN_FILES: return CIO_E_PROCESS_FD_QUOTA_EXCEEDED;
    case ERROR_FILENAME_EXCED_RANGE: return CIO_E_NAME_TOO_LONG;
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME: return CIO_E_BAD_PATH_NAME;
    case ERROR_SHARING_VIOLATION: return CIO_E_FILE_BUSY;
    default: return cio__unexpected_os(CIO_OS_ERROR_WIN32, (int64_t)e, "process_spawn");
    }
}

static cio_err inheritable_copy(HANDLE src, HANDLE *out)
{
    HANDLE self = GetCurrentProcess();
    if (!CIO__SYS(DuplicateHandle, spawn_stdio)(self, src, self, out, 0, TRUE, DUPLICATE_SAME_ACCESS)) {
        *out = NULL;
        DWORD e = GetLastError();
        return e == ERROR_INVALID_HANDLE ? CIO_E_INVALID_ARGUMENT : last_error(e);
    }
    return CIO_OK;
}


static cio_err info_failed(int32_t st)
{
    cio__mapped m = cio__ntstatus_nt_query_information_file(st);
    return m.action == CIO__MAP_ERROR ? m.err : CIO_E_UNEXPECTED;
}

/* A synchronous handle on the file behind the asynchronous src (the header says why). */
static cio_err sync_reopen(HANDLE src, HANDLE *out)
{
    *out = NULL;
    cio_nt_io_status_block iosb;
    uint32_t access = 0;
    cio_nt_file_position_information pos = {0};
    int32_t st = CIO__SYS(NtQueryInformationFile, spawn_stdio_access)(src, &iosb, &access, sizeof access,
                                                                      CIO_NT_FileAccessInformation);
    if (st >= 0)
        st = CIO__SYS(NtQueryInformationFile, spawn_stdio_position)(src, &iosb, &pos, sizeof pos,
                                                                    CIO_NT_FilePositionInformation);
    if (st < 0)
        return info_failed(st);
    cio_nt_unicode_string self = {0, 0, NULL};
    void *h = NULL;
    cio_err err = cio__win_open(src, &self, access | CIO_NT_SYNCHRONIZE, 0,
                                CIO_NT_FILE_SHARE_READ | CIO_NT_FILE_SHARE_WRITE | CIO_NT_FILE_SHARE_DELETE,
                                CIO_NT_FILE_OPEN, CIO_NT_FILE_SYNCHRONOUS_IO_NONALERT, cio__ntstatus_nt_create_file,
                                &h);
    if (err != CIO_OK)
        return err;
    st = CIO__SYS(NtSetInformationFile, spawn_stdio_position)(h, &iosb, &pos, sizeof pos,
                                                              CIO_NT_FilePositionInformation);
    if (st < 0) {
        close_h(h);
        return info_failed(st);
    }
    *out = h;
    return CIO_OK;
}

static cio_err plan_stdio_w(const cio_spawn_options *o, struct wplan *p)
{
    static const DWORD std_id[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    for (int i = 0; i < 3; i++) {
        const cio_stdio *s = &o->stdio[i];
        HANDLE src = NULL;
        cio_err err = CIO_OK;
        switch (s->kind) {
        case CIO_STDIO_INHERIT:
            src = GetStdHandle(std_id[i]);
            if (src == INVALID_HANDLE_VALUE)
                src = NULL;
            break;
        case CIO_STDIO_FILE:
            if (s->file.handle == NULL || s->file.handle == INVALID_HANDLE_VALUE)
                return CIO_E_INVALID_ARGUMENT;
            src = s->file.handle;
            break;
        case CIO_STDIO_IGNORE: {
            SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
            HANDLE h = CIO__SYS(CreateFileW, spawn_null)(L"NUL", GENERIC_READ | GENERIC_WRITE,
                                                         FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0,
                                                         NULL);
            if (h == INVALID_HANDLE_VALUE)
                return last_error(GetLastError());
            p->child[i] = h;
            continue;
        }
        case CIO_STDIO_PIPE: {
            HANDLE r = NULL, w = NULL;
            if (!CIO__SYS(CreatePipe, spawn_pipe)(&r, &w, NULL, 0))
                return last_error(GetLastError());
            p->parent[i] = i == 0 ? w : r;
            src = i == 0 ? r : w;
            err = inheritable_copy(src, &p->child[i]);
            close_h(src);
            if (err != CIO_OK)
                return err;
            continue;
        }
        default: return CIO_E_INVALID_ARGUMENT;
        }
        if (src != NULL && s->kind == CIO_STDIO_FILE && cio__win_handle_is_async(src)) {
            HANDLE sync = NULL;
            err = sync_reopen(src, &sync);
            if (err == CIO_OK)
                err = inheritable_copy(sync, &p->child[i]);
            close_h(sync);
            if (err != CIO_OK)
                return err;
        } else if (src != NULL) {
            err = inheritable_copy(src, &p->child[i]);
            if (err != CIO_OK)
                return err;
        }
    }
    return CIO_OK;
}

/* spawn_path's program: argv[0] in the directory `dir` (as given when absolute or when dir is NULL,
 * the current directory), '/' as '\\', ".exe" added when its last component has no extension. */
static cio_err program_in(void *dir, const char *name, WCHAR **out)
{
    *out = NULL;
    WCHAR *rel = NULL, *base = NULL;
    cio_err err = to_wide(name, strlen(name), &rel);
    if (err != CIO_OK)
        return err;
    bool absolute = rel[0] == L'\\' || rel[0] == L'/' || (rel[0] != 0 && rel[1] == L':');
    if (dir != NULL && !absolute)
        err = cio__win_dir_wpath(dir, &base);
    size_t bl = base != NULL ? wcslen(base) : 0, rl = wcslen(rel);
    WCHAR *w = NULL;
    if (err == CIO_OK) {
        w = (WCHAR *)CIO__SYS(malloc, spawn_program)((bl + 1 + rl + 5) * sizeof(WCHAR));
        if (w == NULL)
            err = CIO_E_OUT_OF_MEMORY;
    }
    if (err == CIO_OK) {
        size_t n = 0, last = 0;
        if (bl > 0) {
            memcpy(w, base, bl * sizeof(WCHAR));
            n = bl;
            if (w[n - 1] != L'\\')
                w[n++] = L'\\';
        }
        for (size_t i = 0; i < rl; i++) {
            w[n] = rel[i] == L'/' ? L'\\' : rel[i];
            if (w[n++] == L'\\')
                last = n;
        }
        w[n] = 0;
        if (wcschr(w + last, L'.') == NULL)
            memcpy(w + n, L".exe", 5 * sizeof(WCHAR));
        *out = w;
    }
    free(rel);
    free(base);
    return err;
}

static cio_err spawn_w(const cio_spawn_options *o, bool at_dir, void *dir, cio_child *out)
{
    if (o->new_session || o->set_uid || o->set_gid)
        return CIO_E_OPERATION_UNSUPPORTED;
    cio_err err = check_argv(o->argv);
    if (err != CIO_OK)
        return err;
    err = cio__t_cancel_point();
    if (err != CIO_OK)
        return err;
    struct wplan p;
    memset(&p, 0, sizeof p);
    err = command_line(o->argv, &p.cmd);
    if (err == CIO_OK)
        err = env_block(o, &p.env);
    if (err == CIO_OK && o->cwd != NULL)
        err = to_wide(o->cwd, strlen(o->cwd), &p.cwd);
    else if (err == CIO_OK && o->cwd_dir != NULL && o->cwd_dir->handle != NULL)
        err = cio__win_dir_wpath(o->cwd_dir->handle, &p.cwd);
    if (err == CIO_OK && at_dir)
        err = program_in(dir, o->argv[0], &p.app);
    if (err == CIO_OK)
        err = plan_stdio_w(o, &p);
    HANDLE list[3];
    DWORD n = 0;
    for (int i = 0; i < 3; i++)
        if (p.child[i] != NULL)
            list[n++] = p.child[i];
    STARTUPINFOEXW si;
    memset(&si, 0, sizeof si);
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = p.child[0];
    si.StartupInfo.hStdOutput = p.child[1];
    si.StartupInfo.hStdError = p.child[2];
    if (err == CIO_OK && n > 0) {
        SIZE_T size = 0;
        /* asks for the size: fails by design (ERROR_INSUFFICIENT_BUFFER) */
        (void)CIO__SYS(InitializeProcThreadAttributeList, spawn_size)(NULL, 1, 0, &size);
        p.attrs = CIO__SYS(malloc, spawn_attrs)(size);
        if (p.attrs == NULL) {
            err = CIO_E_OUT_OF_MEMORY;
        } else if (!CIO__SYS(InitializeProcThreadAttributeList, spawn)((LPPROC_THREAD_ATTRIBUTE_LIST)p.attrs, 1, 0,
                                                                       &size)) {
            err = last_error(GetLastError());
        } else {
            p.attrs_ready = true;
            if (!CIO__SYS(UpdateProcThreadAttribute, spawn)((LPPROC_THREAD_ATTRIBUTE_LIST)p.attrs, 0,
                                                            PROC_THREAD_ATTRIBUTE_HANDLE_LIST, list, n * sizeof(HANDLE),
                                                            NULL, NULL))
                err = last_error(GetLastError());
            si.lpAttributeList = (LPPROC_THREAD_ATTRIBUTE_LIST)p.attrs;
        }
    }
    if (err != CIO_OK) {
        wplan_release(&p, true);
        return err;
    }
    DWORD flags = CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
    if (o->set_pgid)
        flags |= CREATE_NEW_PROCESS_GROUP;
    PROCESS_INFORMATION pi;
    memset(&pi, 0, sizeof pi);
    if (!CIO__SYS(CreateProcessW, spawn)(p.app, p.cmd, NULL, NULL, n > 0, flags, p.env, p.cwd, &si.StartupInfo, &pi)) {
        err = last_error(GetLastError());
        wplan_release(&p, true);
        return err;
    }
    close_h(pi.hThread);
    wplan_release(&p, false);
    out->id = (int64_t)pi.dwProcessId;
    out->handle = pi.hProcess;
    for (int i = 0; i < 3; i++)
        out->stdio[i].handle = p.parent[i];
    return CIO_OK;
}

static void clear(cio_child *out)
{
    out->id = 0;
    out->handle = NULL;
    for (int i = 0; i < 3; i++)
        out->stdio[i].handle = NULL;
}

static cio_err spawn_common(const cio_spawn_options *options, bool at_dir, void *dir, cio_child *out)
{
    if (out == NULL || options == NULL || options->argv == NULL || options->argv[0] == NULL)
        return CIO_E_INVALID_ARGUMENT;
    clear(out);
    if (options->argv[0][0] == '\0')
        return CIO__IN_SET(process_spawn, CIO_E_FILE_NOT_FOUND);
    return CIO__IN_SET(process_spawn, spawn_w(options, at_dir, dir, out));
}

cio_err cio__os_process_spawn(void *ud, const cio_spawn_options *options, cio_child *out)
{
    (void)ud;
    return spawn_common(options, false, NULL, out);
}

cio_err cio__os_process_spawn_path(void *ud, cio_dir dir, const cio_spawn_options *options, cio_child *out)
{
    (void)ud;
    return spawn_common(options, true, dir.handle, out);
}

/* ---- wait, kill ---------------------------------------------------------------------------------------- */

static void finish(cio_child *child, cio_term *term)
{
    DWORD code = 0;
    if (term != NULL) {
        if (CIO__SYS(GetExitCodeProcess, child_wait)(child->handle, &code)) {
            term->kind = CIO_TERM_EXITED;
            term->code = (uint32_t)code;
        } else {
            term->kind = CIO_TERM_UNKNOWN;
            term->code = 0;
        }
    }
    close_h(child->handle);
    child->handle = NULL;
    child->id = 0;
}

cio_err cio__os_child_reap(cio_child *child, cio_term *term)
{
    finish(child, term);
    return CIO_OK;
}

cio_err cio__os_child_wait(void *ud, cio_child *child, cio_term *term)
{
    (void)ud;
    if (child == NULL || term == NULL || child->id <= 0 || child->handle == NULL)
        return CIO_E_INVALID_ARGUMENT;
    cio_err err = cio__t_syscall_begin();
    while (err == CIO_OK) {
        DWORD r = CIO__SYS(WaitForSingleObjectEx, child_wait)(child->handle, INFINITE, TRUE);
        if (r == WAIT_IO_COMPLETION) {
            err = cio__t_syscall_interrupted();
            continue;
        }
        cio__t_syscall_end();
        if (r != WAIT_OBJECT_0)
            err = GetLastError() == ERROR_ACCESS_DENIED ? CIO_E_ACCESS_DENIED : CIO_E_UNEXPECTED;
        break;
    }
    if (err == CIO_OK)
        finish(child, term);
    return CIO__IN_SET(process_wait, err);
}

void cio__os_child_kill(void *ud, cio_child *child)
{
    (void)ud;
    if (child == NULL || child->id <= 0 || child->handle == NULL)
        return;
    (void)CIO__SYS(TerminateProcess, child_kill)(child->handle, 1);
    (void)CIO__SYS(WaitForSingleObjectEx, child_kill)(child->handle, INFINITE, FALSE);
    finish(child, NULL);
}
