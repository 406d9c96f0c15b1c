"""spec/oscalls.yaml: the routed OS calls, their call sites, and the check of src/ against them.

build_oscalls() validates the spec and adds m.oscalls (what the cio_oscalls templates render);
check_sources() reads the source files the spec names and reports, as `file:line: message`, a site
that is missing from its function, a CIO__SYS use that is not a site, and a routed call made
directly in a file that routes it.
"""

import os
import re

from .checks import IDENT, check_keys, check_top, expect_row, get_bool, get_str, get_str_list, rows_of
from .specload import Seq, SpecError

FAIL_KINDS = ("errno", "pointer", "mapfailed", "code", "none", "ntstatus", "win32", "handle", "wsa")
# The Windows kinds' failure return (`value`): win32 defaults to 0 (FALSE, a NULL pointer), wsa to
# SOCKET_ERROR (INVALID_SOCKET for a SOCKET return); handle must say which of the two it uses.
WIN_VALUE_KINDS = ("win32", "handle", "wsa")
HANDLE_VALUES = ("NULL", "INVALID_HANDLE_VALUE")
C_VALUE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*|-?[0-9]+|0[xX][0-9A-Fa-f]+[uUlL]*)$")
# The errmaps.yaml map family a site's `map` names, by its call's fail kind (win32/handle: none).
MAP_FAMILY = {"errno": "errno", "pointer": "errno", "mapfailed": "errno", "code": "errno", "none": "errno", "ntstatus": "ntstatus",
              "wsa": "wsa"}
# "type name", with pointers and qualifiers; or a function pointer "ret (*name)(args)".
ARG_PLAIN = re.compile(r"^(?P<type>[A-Za-z_][A-Za-z0-9_ ]*?[ *]+)(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")
ARG_FNPTR = re.compile(r"^(?P<ret>[A-Za-z_][A-Za-z0-9_ *]*)\(\s*\*\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\)"
                       r"\s*\((?P<params>[A-Za-z0-9_ *,]*)\)$")
C_TYPE = re.compile(r"^(const\s+|volatile\s+|struct\s+|unsigned\s+|signed\s+|long\s+|short\s+)*"
                    r"[A-Za-z_][A-Za-z0-9_]*(\s*\*\s*(const\s*)?)*$")
HEADER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*\.h$")
SRC_PATH = re.compile(r"^src/[A-Za-z0-9_/]+\.c$")
STRUCT_TAG = re.compile(r"\bstruct\s+([A-Za-z_][A-Za-z0-9_]*)")
C_KEYWORDS = {"int", "char", "void", "long", "short", "unsigned", "signed", "const", "struct", "volatile",
              "return", "if", "else", "for", "while", "do", "switch", "case", "default", "static", "sizeof"}


def parse_arg(text, where, call):
    text = " ".join(text.split())
    m = ARG_FNPTR.match(text)
    if m:
        ret = m.group("ret").strip()
        if not C_TYPE.match(ret):
            raise SpecError(where, f"call {call}: bad return type in function pointer argument {text!r}")
        return {"decl": text, "name": m.group("name"), "type": f"{ret} (*)({m.group('params').strip()})"}
    m = ARG_PLAIN.match(text)
    if not m:
        raise SpecError(where, f"call {call}: argument {text!r} is not 'type name'")
    ctype = m.group("type").strip()
    name = m.group("name")
    if not C_TYPE.match(ctype) or ctype in ("const", "struct", "unsigned") or name in C_KEYWORDS:
        raise SpecError(where, f"call {call}: argument {text!r} is not 'type name'")
    if name.endswith("_"):
        raise SpecError(where, f"call {call}: argument name {name!r} ends with '_' (kept for generated locals)")
    if ctype == "void":
        raise SpecError(where, f"call {call}: argument {text!r} has type void")
    return {"decl": text, "name": name, "type": ctype}


def build_oscalls(m, doc, path):
    check_top(doc, path, ("includes", "files", "calls", "sites", "excluded"))
    os_names = [o["name"] for o in m.oses]
    map_names = {fam: {mp["name"] for mp in m.maps[fam]} for fam in ("errno", "ntstatus", "wsa")}

    def os_list(row, allowed, what):
        oses = get_str_list(row, "os")
        if not oses:
            raise SpecError(row.key_where["os"], f"{what}: 'os' must name at least one OS")
        for o in oses:
            if o not in os_names:
                raise SpecError(row.key_where["os"], f"{what}: unknown OS '{o}'")
            if allowed is not None and o not in allowed:
                raise SpecError(row.key_where["os"], f"{what}: OS '{o}' has no `includes` row (no table there)")
        return oses

    includes = []
    for row in rows_of(doc, "includes", path):
        check_keys(row, ("os", "headers"), ("defines",))
        o = get_str(row, "os", IDENT)
        defines = []
        if "defines" in row:
            d = expect_row(row["defines"], row.key_where["defines"], "'defines'")
            for k, v in d.items():
                if not isinstance(k, str) or not IDENT.match(k):
                    raise SpecError(d.key_where[k], f"'{k}' is not a macro name")
                if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                    raise SpecError(d.key_where[k], f"macro {k}: value must be an integer or ~")
                defines.append({"name": k, "value": v})
        if o not in os_names:
            raise SpecError(row.key_where["os"], f"unknown OS '{o}'")
        if any(i["os"] == o for i in includes):
            raise SpecError(row.key_where["os"], f"duplicate includes row for OS '{o}'")
        headers = get_str_list(row, "headers")
        for h in headers:
            if not HEADER.match(h):
                raise SpecError(row.key_where["headers"], f"'{h}' is not a header name")
        includes.append({"os": o, "macro": "CIO_OS_" + o.upper(), "headers": headers, "defines": defines})
    table_oses = [i["os"] for i in includes]

    files = {}
    for row in rows_of(doc, "files", path):
        check_keys(row, ("file", "os"))
        f = get_str(row, "file")
        if not SRC_PATH.match(f):
            raise SpecError(row.key_where["file"], f"'{f}' is not a C file under src/")
        if f in files:
            raise SpecError(row.key_where["file"], f"duplicate file '{f}' (first at line {files[f]['where'].line})")
        files[f] = {"file": f, "os": os_list(row, table_oses, f), "where": row.where}

    calls = {}
    for row in rows_of(doc, "calls", path):
        check_keys(row, ("name", "os", "ret", "args", "fail"), ("impl", "after", "short", "value"))
        name = get_str(row, "name", IDENT, "call name")
        if name in calls:
            raise SpecError(row.key_where["name"],
                            f"duplicate call '{name}' (first at line {calls[name]['where'].line})")
        oses = os_list(row, table_oses, f"call {name}")
        ret = " ".join(get_str(row, "ret").split())
        if not C_TYPE.match(ret):
            raise SpecError(row.key_where["ret"], f"call {name}: bad return type {ret!r}")
        if not isinstance(row["args"], Seq):
            raise SpecError(row.key_where["args"], "'args' must be a list")
        args = []
        for a in row["args"]:
            if not isinstance(a, str):
                raise SpecError(row.key_where["args"], f"call {name}: argument {a!r} is not a string")
            arg = parse_arg(a, row.key_where["args"], name)
            if any(x["name"] == arg["name"] for x in args):
                raise SpecError(row.key_where["args"], f"call {name}: argument name '{arg['name']}' twice")
            args.append(arg)
        fail = get_str(row, "fail")
        if fail not in FAIL_KINDS:
            raise SpecError(row.key_where["fail"], f"call {name}: fail must be one of {', '.join(FAIL_KINDS)}")
        pointer_ret = ret.endswith("*")
        if fail in ("pointer", "mapfailed") and not pointer_ret:
            raise SpecError(row.key_where["fail"], f"call {name}: fail: {fail} needs a pointer return type")
        if fail in ("errno", "code", "ntstatus") and (pointer_ret or ret == "void"):
            raise SpecError(row.key_where["fail"], f"call {name}: fail: {fail} needs an integer return type")
        if fail in WIN_VALUE_KINDS and ret == "void":
            raise SpecError(row.key_where["fail"], f"call {name}: fail: {fail} needs a return value to fail with")
        value = None
        if "value" in row:
            raw = row["value"]
            if raw is None or isinstance(raw, bool):
                raise SpecError(row.key_where["value"], f"call {name}: value must be a C constant (quote it: YAML "
                                "reads a bare NULL, TRUE or FALSE as null or a boolean)")
            value = str(raw).strip() if isinstance(raw, int) else get_str(row, "value")
        if value is not None:
            value = value.strip()
            if fail not in WIN_VALUE_KINDS:
                raise SpecError(row.key_where["value"], f"call {name}: value is only for fail: "
                                f"{', '.join(WIN_VALUE_KINDS)}")
            if not C_VALUE.match(value):
                raise SpecError(row.key_where["value"], f"call {name}: value {value!r} is not a C constant")
        if fail == "handle":
            if value not in HANDLE_VALUES:
                raise SpecError(row.key_where["value"] if value is not None else row.key_where["fail"],
                                f"call {name}: fail: handle needs value: NULL or INVALID_HANDLE_VALUE")
        elif fail == "win32" and value is None:
            value = "NULL" if pointer_ret else "0"
        elif fail == "wsa" and value is None:
            if pointer_ret:
                raise SpecError(row.key_where["fail"], f"call {name}: fail: wsa on a pointer return needs a value")
            value = "INVALID_SOCKET" if ret == "SOCKET" else "SOCKET_ERROR"
        impl = get_str(row, "impl", optional=True)
        bare = impl is None
        if impl is None:
            impl = f"{name}({', '.join(a['name'] for a in args)})"
        after = get_bool(row, "after", False)
        if after and fail == "none":
            raise SpecError(row.key_where["after"], f"call {name}: after: true on a call that cannot fail")
        short = None
        if "short" in row:
            sh = expect_row(row["short"], row.key_where["short"], "'short'")
            arg_names = {a["name"]: a for a in args}
            kinds = {("len",): "len", ("cnt", "iov"): "iov", ("msg",): "msg", ("cnt", "wsabuf"): "wsabuf"}
            kind = kinds.get(tuple(sorted(sh)))
            if kind is None:
                raise SpecError(row.key_where["short"], f"call {name}: short must be {{len: arg}}, "
                                "{iov: arg, cnt: arg}, {wsabuf: arg, cnt: arg} or {msg: arg}")
            if fail == "none":
                raise SpecError(row.key_where["short"], f"call {name}: short on a call that cannot fail")
            for k, v in sh.items():
                if v not in arg_names:
                    raise SpecError(sh.key_where[k], f"call {name}: short names unknown argument {v!r}")
            short = {"kind": kind, **{k: sh[k] for k in sh}}
            repl = {"iov": {sh.get("iov"): "t_", sh.get("cnt"): "k_"}, "msg": {sh.get("msg"): "&mm_"},
                    "wsabuf": {sh.get("wsabuf"): "t_", sh.get("cnt"): "k_"}, "len": {}}[kind]
            short["names"] = ", ".join(repl.get(a["name"], a["name"]) for a in args)
            if kind == "len":
                short["type"] = arg_names[sh["len"]]["type"]
        # struct tags the prototype mentions: declared at file scope before the table
        tags = []
        for text in [ret] + [a["decl"] for a in args]:
            for t in STRUCT_TAG.findall(text):
                if t not in tags:
                    tags.append(t)
        mo = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(", impl)
        calls[name] = {"name": name, "os": oses, "ret": ret, "args": args, "fail": fail, "impl": impl, "bare": bare,
                       "value": value, "target": mo.group(1) if mo else None,
                       "after": after, "short": short, "tags": tags, "where": row.where,
                       "params": ", ".join(a["decl"] for a in args) or "void",
                       "types": ", ".join(a["type"] for a in args) or "void",
                       "names": ", ".join(a["name"] for a in args)}

    sites = []
    seen = {}
    for row in rows_of(doc, "sites", path):
        check_keys(row, ("call", "site", "file", "in"), ("map", "os"))
        call = get_str(row, "call", IDENT, "call name")
        if call not in calls:
            raise SpecError(row.key_where["call"], f"site of unknown call '{call}'")
        site = get_str(row, "site", IDENT, "site name")
        if "__" in site:
            raise SpecError(row.key_where["site"], f"site name '{site}' must not contain '__'")
        key = (call, site)
        if key in seen:
            raise SpecError(row.key_where["site"], f"duplicate site '{call}@{site}' (first at line {seen[key].line})")
        seen[key] = row.where
        f = get_str(row, "file")
        if f not in files:
            raise SpecError(row.key_where["file"], f"site {call}@{site}: file '{f}' is not listed under `files`")
        func = get_str(row, "in", IDENT, "function name")
        emap = get_str(row, "map", IDENT, "map name", optional=True)
        family = MAP_FAMILY.get(calls[call]["fail"])
        if emap is not None and family is None:
            raise SpecError(row.key_where["map"], f"site {call}@{site}: a fail: {calls[call]['fail']} call has "
                            "no error map (its errors are handled where it is called)")
        if emap is not None and emap not in map_names[family]:
            raise SpecError(row.key_where["map"], f"site {call}@{site}: unknown {family} map '{emap}'")
        common = [o for o in os_names if o in calls[call]["os"] and o in files[f]["os"]]
        if "os" in row:
            oses = os_list(row, table_oses, f"site {call}@{site}")
            for o in oses:
                if o not in common:
                    raise SpecError(row.key_where["os"], f"site {call}@{site}: OS '{o}' is not one of both "
                                    f"the call's and the file's ({', '.join(common) or 'none'})")
        else:
            oses = common
        if not oses:
            raise SpecError(row.where, f"site {call}@{site}: the call and its file share no OS")
        sites.append({"call": call, "site": site, "slot": f"{call}__{site}", "id": f"{call}@{site}",
                      "file": f, "in": func, "map": emap, "os": oses, "where": row.where,
                      "macros": ["CIO_OS_" + o.upper() for o in oses]})
    for name, c in calls.items():
        if not any(s["call"] == name for s in sites):
            raise SpecError(c["where"], f"call '{name}' has no site")
        c["macros"] = ["CIO_OS_" + o.upper() for o in c["os"]]

    excluded = []
    for row in rows_of(doc, "excluded", path, required=False):
        check_keys(row, ("name", "why"))
        n = get_str(row, "name")
        for part in n.split(","):
            part = part.strip()
            if part.rstrip("*").rstrip("_") in calls or part in calls:
                raise SpecError(row.key_where["name"], f"'{part}' is both routed and excluded")
        excluded.append({"name": n, "why": get_str(row, "why")})

    tags = []
    for c in calls.values():
        for t in c["tags"]:
            if t not in tags:
                tags.append(t)

    def macros_of(kinds):
        return [i["macro"] for i in includes
                if any(c["short"] and c["short"]["kind"] in kinds and i["os"] in c["os"] for c in calls.values())]
    m.oscalls = {"includes": includes, "files": list(files.values()), "calls": list(calls.values()),
                 "sites": sites, "excluded": excluded, "tags": tags,
                 "iov_macros": macros_of(("iov", "msg")), "wsabuf_macros": macros_of(("wsabuf",))}


# ---------------------------------------------------------------------------------------------
# src/ against the spec

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
FUNC_DEF = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \t*]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\([^;]*$")
USE = re.compile(r"\bCIO__SYS\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")


def blank_comments(text):
    """Comments and literals replaced by spaces (newlines kept, so line numbers stay)."""
    return COMMENT.sub(lambda mo: re.sub(r"[^\n]", " ", mo.group(0)), text)


def functions_by_line(text):
    """For each line (1-based), the function whose body it is in (None at file scope). Good enough
    for this project's layout: a definition starts at column 0 and its body's braces balance."""
    out = [None]
    current = None
    pending = None
    depth = 0
    for line in text.split("\n"):
        if depth == 0:
            mo = FUNC_DEF.match(line)
            if mo and mo.group(1) not in C_KEYWORDS:
                pending = mo.group(1)
            elif ";" in line and "{" not in line:
                pending = None
            if "{" in line:
                current = pending
                pending = None
        out.append(current)
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            depth = 0
            current = None
    return out


def check_sources(m, root):
    """Returns a list of `file:line: message` problems (empty: src/ and the spec agree)."""
    oc = m.oscalls
    problems = []
    routed_calls = {c["name"]: c for c in oc["calls"]}
    for f in oc["files"]:
        path = os.path.join(root, f["file"])
        try:
            with open(path, encoding="utf-8") as fh:
                raw = fh.read()
        except OSError as e:
            problems.append(f"{f['where']}: cannot read {f['file']}: {e.strerror}")
            continue
        text = blank_comments(raw)
        funcs = functions_by_line(text)
        lines = text.split("\n")
        want = {(s["call"], s["site"]): s for s in oc["sites"] if s["file"] == f["file"]}
        found = set()
        for i, line in enumerate(lines, 1):
            for mo in USE.finditer(line):
                key = (mo.group(1), mo.group(2))
                s = want.get(key)
                if s is None:
                    problems.append(f"{f['file']}:{i}: CIO__SYS({key[0]}, {key[1]}) is not a site of this "
                                    "file in spec/oscalls.yaml")
                    continue
                if funcs[i] != s["in"]:
                    problems.append(f"{f['file']}:{i}: CIO__SYS({key[0]}, {key[1]}) is in {funcs[i] or 'file scope'}, "
                                    f"the spec says {s['in']} ({s['where']})")
                found.add(key)
        for key, s in want.items():
            if key not in found:
                problems.append(f"{s['where']}: site {s['id']} does not appear as CIO__SYS({key[0]}, {key[1]}) "
                                f"in {f['file']}")
        # a routed call made directly (any call the file routes somewhere, on an OS it shares)
        file_calls = {s["call"] for s in oc["sites"] if s["file"] == f["file"]}
        for i, line in enumerate(lines, 1):
            stripped = USE.sub("", line)
            for name in file_calls:
                c = routed_calls[name]
                # the call's own name, and the function its default calls when that is another name
                # (wsa_bind -> bind); not syscall(2) or a WASI import, which others reach too
                targets = {name}
                if c["target"] not in (None, "syscall") and not c["target"].startswith("__wasi_"):
                    targets.add(c["target"])
                for t in sorted(targets):
                    for mo in re.finditer(rf"(?<![.>\w])\b{re.escape(t)}\s*\(", stripped):
                        problems.append(f"{f['file']}:{i}: {t}() called directly; route it: CIO__SYS({name}, <site>)")
    return problems
