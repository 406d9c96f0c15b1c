/*
 * Win32 path -> NT path conversion (see path_windows.h for the contract). Behaviour follows Zig's
 * std.os.windows (wToPrefixedFileW, removeDotDirs, getWin32PathType) and, for full paths, what
 * ntdll's RtlGetFullPathName_U / RtlDosPathNameToNtPathName_U produce; the code is our own.
 *
 * Invariants:
 *  - Pure: no I/O, no allocation, no globals; every write is bounds-checked against a capacity
 *    given by the caller, so an oversized input yields CIO_E_NAME_TOO_LONG, never an overflow.
 *  - A full path is built in out[CIO__WIN_WORK_OFF..], right after where "\??\" goes; a UNC one
 *    is then moved 2 units on ("\\server" -> "\??\UNC\server"), a device one 4 units back.
 *  - Canonicalisation never touches the part of the full path before its "mark" (the drive root
 *    "C:\", the UNC "\\server\share\" or the device prefix "\\.\"): ".." cannot climb above it.
 */
#include "path_windows.h"

#include <string.h>

#define CIO__WIN_WORK_OFF 4u /* strlen("\\??\\"): where the full path is built */

static bool is_sep(uint16_t c)
{
    return c == '\\' || c == '/';
}

static uint16_t unit_at(const uint16_t *p, size_t len, size_t i)
{
    return i < len ? p[i] : 0;
}

static uint16_t ascii_lower(uint16_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint16_t)(c + 32u) : c;
}

/* ---- UTF-8 / WTF-8 <-> WTF-16 ------------------------------------------------------------------- */

cio_err cio__win_utf8_to_wtf16(const char *s, size_t len, uint16_t *out, size_t cap, size_t *out_len)
{
    const unsigned char *b = (const unsigned char *)s;
    size_t i = 0, n = 0;
    while (i < len) {
        uint32_t cp;
        unsigned char c = b[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (c < 0x80) {
            cp = c;
            need = 0;
        } else if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1Fu;
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0Fu;
            need = 2;
            if (c == 0xE0)
                lo = 0xA0; /* overlong below U+0800; 0xED keeps 80..BF: WTF-8 surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07u;
            need = 3;
            if (c == 0xF0)
                lo = 0x90; /* overlong below U+10000 */
            if (c == 0xF4)
                hi = 0x8F; /* past U+10FFFF */
        } else {
            return CIO_E_BAD_PATH_NAME; /* stray continuation, C0, C1, F5..FF */
        }
        if (len - i - 1 < need)
            return CIO_E_BAD_PATH_NAME; /* truncated sequence */
        for (size_t k = 1; k <= need; k++) {
            unsigned char t = b[i + k];
            if (k == 1 ? (t < lo || t > hi) : (t < 0x80 || t > 0xBF))
                return CIO_E_BAD_PATH_NAME;
            cp = (cp << 6) | (t & 0x3Fu);
        }
        i += need + 1;
        if (cp < 0x10000u) {
            if (n + 1 > cap)
                return CIO_E_NAME_TOO_LONG;
            out[n++] = (uint16_t)cp;
        } else {
            if (n + 2 > cap)
                return CIO_E_NAME_TOO_LONG;
            cp -= 0x10000u;
            out[n++] = (uint16_t)(0xD800u | (cp >> 10));
            out[n++] = (uint16_t)(0xDC00u | (cp & 0x3FFu));
        }
    }
    *out_len = n;
    return CIO_OK;
}

cio_err cio__win_wtf16_to_wtf8(const uint16_t *s, size_t len, char *out, size_t cap, size_t *out_len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t cp = s[i];
        if (cp >= 0xD800u && cp <= 0xDBFFu && i + 1 < len && s[i + 1] >= 0xDC00u && s[i + 1] <= 0xDFFFu) {
            cp = 0x10000u + ((cp - 0xD800u) << 10) + (uint32_t)(s[i + 1] - 0xDC00u);
            i++;
        }
        size_t need = cp < 0x80u ? 1 : cp < 0x800u ? 2 : cp < 0x10000u ? 3 : 4;
        if (cap - n < need)
            return CIO_E_NAME_TOO_LONG;
        unsigned char *o = (unsigned char *)out + n;
        switch (need) {
        case 1: o[0] = (unsigned char)cp; break;
        case 2:
            o[0] = (unsigned char)(0xC0u | (cp >> 6));
            o[1] = (unsigned char)(0x80u | (cp & 0x3Fu));
            break;
        case 3:
            o[0] = (unsigned char)(0xE0u | (cp >> 12));
            o[1] = (unsigned char)(0x80u | ((cp >> 6) & 0x3Fu));
            o[2] = (unsigned char)(0x80u | (cp & 0x3Fu));
            break;
        default:
            o[0] = (unsigned char)(0xF0u | (cp >> 18));
            o[1] = (unsigned char)(0x80u | ((cp >> 12) & 0x3Fu));
            o[2] = (unsigned char)(0x80u | ((cp >> 6) & 0x3Fu));
            o[3] = (unsigned char)(0x80u | (cp & 0x3Fu));
            break;
        }
        n += need;
    }
    *out_len = n;
    return CIO_OK;
}

/* ---- classification ----------------------------------------------------------------------------- */

cio__win_path_type cio__win_path_type_of(const uint16_t *path, size_t len)
{
    for (size_t i = 0; i < len; i++) /* a NUL ends the path, as for the NUL-terminated original */
        if (path[i] == 0) {
            len = i;
            break;
        }
    uint16_t c0 = unit_at(path, len, 0), c1 = unit_at(path, len, 1), c2 = unit_at(path, len, 2);
    if (is_sep(c0)) {
        if (!is_sep(c1))
            return CIO__WIN_PATH_ROOTED;
        if (c2 != '.' && c2 != '?')
            return CIO__WIN_PATH_UNC_ABSOLUTE;
        if (is_sep(unit_at(path, len, 3)))
            return CIO__WIN_PATH_LOCAL_DEVICE;
        return len > 3 ? CIO__WIN_PATH_UNC_ABSOLUTE : CIO__WIN_PATH_ROOT_LOCAL_DEVICE;
    }
    if (len == 0 || c1 != ':')
        return CIO__WIN_PATH_RELATIVE;
    return is_sep(c2) ? CIO__WIN_PATH_DRIVE_ABSOLUTE : CIO__WIN_PATH_DRIVE_RELATIVE;
}

/* ---- "." and ".." ------------------------------------------------------------------------------- */

int cio__win_remove_dot_dirs(uint16_t *path, size_t len, size_t *out_len)
{
    size_t w = 0, r = 0;
    while (r < len) {
        if (path[r] == '.') {
            if (r + 1 == len)
                break; /* final "." */
            if (path[r + 1] == '\\') {
                r += 2; /* ".\" */
                continue;
            }
            if (path[r + 1] == '.' && (r + 2 == len || path[r + 2] == '\\')) {
                if (w == 0)
                    return CIO__WIN_TOO_MANY_PARENT_DIRS;
                w--; /* the written text always ends with '\' here: drop it and its component */
                while (w > 0 && path[w - 1] != '\\')
                    w--;
                if (r + 2 == len)
                    break;
                r += 3;
                continue;
            }
        }
        while (r < len) { /* copy one component with its separator */
            uint16_t c = path[r++];
            path[w++] = c;
            if (c == '\\')
                break;
        }
    }
    *out_len = w;
    return 0;
}

cio_err cio__win_check_open_file_name(const uint16_t *name, size_t len)
{
    if ((len == 1 || len == 2) && name[0] == '.' && (len == 1 || name[1] == '.'))
        return CIO_E_IS_DIR;
    return CIO_OK;
}

/* ---- full paths (RtlGetFullPathName_U's canonical form) ----------------------------------------- */

/* Length of "\\server\share\" (with every separator run after each name) at the start of p. */
static size_t unc_prefix_len(const uint16_t *p, size_t len)
{
    size_t i = 2;
    for (int part = 0; part < 2; part++) {
        while (i < len && !is_sep(p[i]))
            i++;
        while (i < len && is_sep(p[i]))
            i++;
    }
    return i < len ? i : len;
}

static void remove_units(uint16_t *p, size_t *n, size_t at, size_t count)
{
    memmove(p + at, p + at + count, (*n - at - count) * sizeof *p);
    *n -= count;
}

/* Back from p (just past a component's separator) over the previous component, not below mark. */
static size_t back_one_component(const uint16_t *w, size_t p, size_t mark)
{
    if (p > mark) {
        p--;
        while (p > mark && w[p - 1] != '\\')
            p--;
    }
    return p;
}

/* Canonicalises w[0..*n) from mark on: separators, ".", "..", trailing dots and spaces. */
static void canonicalise(uint16_t *w, size_t *n, size_t mark)
{
    for (size_t i = 0; i < *n; i++)
        if (w[i] == '/')
            w[i] = '\\';
    size_t start = mark > 1 ? mark : 1, k = start;
    for (size_t r = start; r < *n; r++)
        if (w[r] != '\\' || w[k - 1] != '\\')
            w[k++] = w[r];
    *n = k;

    size_t p = mark;
    while (p < *n) {
        if (w[p] == '.') {
            uint16_t c1 = unit_at(w, *n, p + 1);
            if (c1 == '\\') { /* ".\" */
                remove_units(w, n, p, 2);
                continue;
            }
            if (c1 == 0) { /* final ".": drop it with the separator before it */
                *n = p > mark ? p - 1 : p;
                break;
            }
            if (c1 == '.') {
                uint16_t c2 = unit_at(w, *n, p + 2);
                if (c2 == '\\') { /* "..\": drop it and the previous component */
                    size_t q = back_one_component(w, p, mark);
                    remove_units(w, n, q, p + 3 - q);
                    p = q;
                    continue;
                }
                if (c2 == 0) { /* final "..": also the separator before the previous component */
                    size_t q = back_one_component(w, p, mark);
                    *n = q > mark ? q - 1 : q;
                    break;
                }
            }
        }
        while (p < *n && w[p] != '\\')
            p++;
        if (p < *n) {
            if (p > mark && w[p - 1] == '.')
                remove_units(w, n, p - 1, 1); /* one trailing dot of an inner component */
            else
                p++;
        }
    }
    while (*n > mark && (w[*n - 1] == ' ' || w[*n - 1] == '.'))
        (*n)--;
}

static bool append(uint16_t *w, size_t *n, size_t cap, const uint16_t *src, size_t len)
{
    if (cap - *n < len)
        return false;
    memcpy(w + *n, src, len * sizeof *w);
    *n += len;
    return true;
}

/* The full DOS path of path (type t) into w[0..cap): the join with cwd where needed, then
 * canonicalised. */
static cio_err full_path(const uint16_t *path, size_t len, cio__win_path_type t, const cio__win_nt_path_options *o,
                         uint16_t *w, size_t cap, size_t *out_n)
{
    size_t i = 0, n = 0, mark = 0, dep = 0;
    while (i < len && path[i] == ' ')
        i++;
    if (i == len)
        return CIO_E_BAD_PATH_NAME; /* empty or only spaces */
    const uint16_t *cwd = o ? o->cwd : NULL;
    size_t cwd_len = o ? o->cwd_len : 0;
    bool cwd_ok = cwd != NULL && cwd_len >= 2 && (cwd[1] == ':' || (cwd_len >= 3 && is_sep(cwd[0]) && is_sep(cwd[1])));
    bool use_cwd = false;
    switch (t) {
    case CIO__WIN_PATH_UNC_ABSOLUTE: mark = unc_prefix_len(path, len); break;
    case CIO__WIN_PATH_LOCAL_DEVICE: mark = 4; break;
    case CIO__WIN_PATH_DRIVE_ABSOLUTE: mark = 3; break;
    case CIO__WIN_PATH_ROOT_LOCAL_DEVICE: {
        static const uint16_t dev[4] = {'\\', '\\', '.', '\\'};
        (void)append(w, &n, cap, dev, 4); /* cap >= 4: checked by the caller */
        mark = 4;
        dep = 3;
        break;
    }
    case CIO__WIN_PATH_DRIVE_RELATIVE:
        dep = 2;
        if (cwd_ok && cwd[1] == ':' && ascii_lower(cwd[0]) == ascii_lower(path[0])) {
            use_cwd = true; /* same drive as the current directory: relative to it */
        } else {            /* another drive: its root (no per-drive "=X:" directories here) */
            uint16_t root[3] = {path[0], ':', '\\'};
            (void)append(w, &n, cap, root, 3);
            mark = 3;
        }
        break;
    case CIO__WIN_PATH_RELATIVE: use_cwd = true; break;
    case CIO__WIN_PATH_ROOTED:
        if (!cwd_ok)
            return CIO_E_BAD_PATH_NAME;
        mark = cwd[1] == ':' ? 2 : unc_prefix_len(cwd, cwd_len);
        if (!append(w, &n, cap, cwd, mark))
            return CIO_E_NAME_TOO_LONG;
        if (cwd[1] == ':')
            mark = 3;
        break;
    case CIO__WIN_PATH_UNKNOWN:
    default: return CIO_E_BAD_PATH_NAME;
    }
    if (use_cwd) {
        if (!cwd_ok)
            return CIO_E_BAD_PATH_NAME;
        static const uint16_t sep = '\\';
        if (!append(w, &n, cap, cwd, cwd_len) || (!is_sep(cwd[cwd_len - 1]) && !append(w, &n, cap, &sep, 1)))
            return CIO_E_NAME_TOO_LONG;
        mark = cwd[1] == ':' ? 3 : unc_prefix_len(cwd, cwd_len);
    }
    if (!append(w, &n, cap, path + dep, len - dep))
        return CIO_E_NAME_TOO_LONG;
    canonicalise(w, &n, mark);
    *out_n = n;
    return CIO_OK;
}

/* ---- Win32 -> NT -------------------------------------------------------------------------------- */

static void put_prefix(uint16_t *out) /* "\??\" */
{
    out[0] = '\\';
    out[1] = '?';
    out[2] = '?';
    out[3] = '\\';
}

cio_err cio__win_to_nt_path(const uint16_t *path, size_t len, const cio__win_nt_path_options *options, uint16_t *out,
                            size_t cap, size_t *out_len, bool *is_absolute)
{
    size_t limit = cap < CIO__WIN_NT_PATH_MAX ? cap : CIO__WIN_NT_PATH_MAX;
    for (size_t i = 0; i < len; i++)
        if (path[i] == 0)
            return CIO_E_BAD_PATH_NAME;

    /* "\??\X" (NT) and "\\?\X" (verbatim), with backslashes only: the prefix is "\??\", the rest
     * is left exactly as given. */
    if (len >= 4 && path[0] == '\\' && path[3] == '\\' && path[2] == '?' && (path[1] == '?' || path[1] == '\\')) {
        if (len > limit)
            return CIO_E_NAME_TOO_LONG;
        put_prefix(out);
        memcpy(out + 4, path + 4, (len - 4) * sizeof *out);
        *out_len = len;
        *is_absolute = true;
        return CIO_OK;
    }

    cio__win_path_type t = cio__win_path_type_of(path, len);
    if (t == CIO__WIN_PATH_RELATIVE && options && options->keep_relative) {
        if (len > limit)
            return CIO_E_NAME_TOO_LONG;
        size_t n = 0;
        for (size_t i = 0; i < len; i++) { /* '/' -> '\', separator runs collapsed */
            uint16_t c = path[i] == '/' ? (uint16_t)'\\' : path[i];
            if (c == '\\' && n > 0 && out[n - 1] == '\\')
                continue;
            out[n++] = c;
        }
        if (cio__win_remove_dot_dirs(out, n, out_len) == 0) {
            *is_absolute = false;
            return CIO_OK;
        }
        /* Too many "..": resolved against the directory's path (options->cwd) below. */
    }

    if (limit < CIO__WIN_WORK_OFF + 4)
        return CIO_E_NAME_TOO_LONG;
    uint16_t *w = out + CIO__WIN_WORK_OFF;
    size_t n = 0;
    cio_err e = full_path(path, len, t, options, w, limit - CIO__WIN_WORK_OFF, &n);
    if (e != CIO_OK)
        return e;
    switch (cio__win_path_type_of(w, n)) {
    case CIO__WIN_PATH_UNC_ABSOLUTE: /* "\\server\share" -> "\??\UNC\server\share" */
        if (n + 6 > limit)
            return CIO_E_NAME_TOO_LONG;
        memmove(out + 7, w + 1, (n - 1) * sizeof *out);
        put_prefix(out);
        out[4] = 'U';
        out[5] = 'N';
        out[6] = 'C';
        *out_len = n + 6;
        break;
    case CIO__WIN_PATH_LOCAL_DEVICE: /* "\\.\X" -> "\??\X" */
        memmove(out + 4, w + 4, (n - 4) * sizeof *out);
        put_prefix(out);
        *out_len = n;
        break;
    default: /* already in place */
        put_prefix(out);
        *out_len = n + 4;
        break;
    }
    *is_absolute = true;
    return CIO_OK;
}

cio_err cio__win_utf8_to_nt_path(const char *path, size_t len, const cio__win_nt_path_options *options,
                                 uint16_t *scratch, size_t scratch_cap, uint16_t *out, size_t cap, size_t *out_len,
                                 bool *is_absolute)
{
    size_t wlen = 0;
    cio_err e = cio__win_utf8_to_wtf16(path, len, scratch, scratch_cap, &wlen);
    if (e != CIO_OK)
        return e;
    return cio__win_to_nt_path(scratch, wlen, options, out, cap, out_len, is_absolute);
}
