"""spec/libc.yaml (the BSD C library surface), spec/ntapi.yaml and the conformance list.
"""

import re

from .checks import (IDENT, UPPER_IDENT, c_ident_upper, check_keys, check_top, expect_row, get_bool, get_int, get_str,
                     get_str_list, rows_of, unique, where_of)
from .specload import Seq, SpecError, Where

LIBC_OSES = ("freebsd", "netbsd", "openbsd")


MACRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\([a-z](, *[a-z])*\))?$")


HEADER_NAME = re.compile(r"^[a-z0-9_]+(/[a-z0-9_]+)*\.h$")


SONAME = re.compile(r"^lib[a-z0-9_]+\.so(\.[0-9]+)+$")


VERSION_NODE = re.compile(r"^[A-Z][A-Za-z0-9_]*(\.[0-9]+)*$")


NOTE_SECTION = re.compile(r"^\.note(\.[a-z0-9_]+)+$")


ABS_PATH = re.compile(r"^(/[A-Za-z0-9_.+-]+)+$")


C_DECL = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \t*]*[ *]\s*[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?$")


# A function pointer member: `void (*sa_handler)(int)` (the parameter list holds no parentheses).
C_FNPTR = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \t*]*\(\*\s*([A-Za-z_][A-Za-z0-9_]*)\)\s*\([^()]*\)$")


# A union member: `union { <member>; <member>; }` (anonymous, C11) or `union { ...; } name`.
C_UNION = re.compile(r"^union\s*\{(.*);\s*\}\s*([A-Za-z_][A-Za-z0-9_]*)?$")


def field_names(f):
    """The names a struct field declares (`int a[2]`: a; `void (*h)(int)`: h; an anonymous union:
    its members' names; a named union: its name), or None when `f` is none of the forms libc.yaml
    allows: `<type> <name>[n]`, a function pointer, a union of those."""
    f = f.strip()
    u = C_UNION.match(f)
    if u:
        members = [x.strip() for x in u.group(1).split(";")]
        inner = [field_names(x) if not x.startswith("union") else None for x in members]
        if not members or any(n is None for n in inner):
            return None
        return [u.group(2)] if u.group(2) else [n for names in inner for n in names]
    fp = C_FNPTR.match(f)
    if fp:
        return [fp.group(1)]
    if C_DECL.match(f):
        return [re.sub(r"\[[0-9]+\]$", "", f).split()[-1].lstrip("*")]
    return None


def build_libc(m, doc, path):
    check_top(doc, path, ("types", "structs", "functions", "constants", "macros", "headers", "libraries", "abi"))
    m.libc = {o: {"types": [], "structs": [], "functions": [], "constants": [], "macros": [], "libraries": [],
                  "abi": None} for o in LIBC_OSES}
    m.libc_headers = []

    def os_list(row):
        oses = get_str_list(row, "os")
        for o in oses:
            if o not in LIBC_OSES:
                raise SpecError(row.key_where["os"], f"libc.yaml covers {', '.join(LIBC_OSES)}, not '{o}'")
        return oses

    def per_os(row, meta):
        for key in row:
            if key not in meta and key not in LIBC_OSES:
                raise SpecError(row.key_where[key], f"unknown key '{key}'")
        return [(o, row[o], row.key_where[o]) for o in LIBC_OSES if o in row]

    seen = {o: set() for o in LIBC_OSES}
    for row in rows_of(doc, "types", path, required=False):
        name = get_str(row, "name", IDENT, "type name")
        for o, ctype, w in per_os(row, ("name",)):
            if not isinstance(ctype, str) or not ctype:
                raise SpecError(w, f"type {name}: {o} must give a C type")
            if ("t", name) in seen[o]:
                raise SpecError(w, f"duplicate type '{name}' on {o}")
            seen[o].add(("t", name))
            m.libc[o]["types"].append({"name": name, "ctype": ctype})
    arch_names = {a["name"] for a in m.arches}
    for row in rows_of(doc, "structs", path, required=False):
        check_keys(row, ("name", "os", "fields"), ("size", "align", "offsets"))
        name = get_str(row, "name", IDENT, "struct name")
        fields = get_str_list(row, "fields")
        declared = []
        for f in fields:
            names = field_names(f)
            if names is None:
                raise SpecError(row.key_where["fields"], f"struct {name}: field {f!r} is not 'type name', a"
                                " function pointer or a union of those")
            declared += names
        sizes = {}
        for key in ("size", "align"):
            if key in row:
                sz = expect_row(row[key], row.key_where[key], f"'{key}'")
                for arch, v in sz.items():
                    if arch not in arch_names:
                        raise SpecError(sz.key_where[arch], f"unknown arch '{arch}'")
                    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 65536:
                        raise SpecError(sz.key_where[arch], f"struct {name}: {key} for {arch} must be 1..65536")
                    sizes.setdefault(arch, {})[key] = v
        offsets = {}  # arch -> [(field, offset)]: offsetof asserts, for the fields whose place is a fact
        if "offsets" in row:
            offs = expect_row(row["offsets"], row.key_where["offsets"], "'offsets'")
            for field, per_arch in offs.items():
                if field not in declared:
                    raise SpecError(offs.key_where[field], f"struct {name}: offsets name '{field}', not a field")
                per_arch = expect_row(per_arch, offs.key_where[field], f"offsets of '{field}'")
                for arch, v in per_arch.items():
                    if arch not in arch_names:
                        raise SpecError(per_arch.key_where[arch], f"unknown arch '{arch}'")
                    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 65536:
                        raise SpecError(per_arch.key_where[arch], f"struct {name}: offset of {field} for {arch}"
                                        " must be 0..65535")
                    offsets.setdefault(arch, []).append({"field": field, "offset": v})
        for a in offsets:
            sizes.setdefault(a, {})
        for o in os_list(row):
            if ("s", name) in seen[o]:
                raise SpecError(row.where, f"duplicate struct '{name}' on {o}")
            seen[o].add(("s", name))
            m.libc[o]["structs"].append({"name": name, "fields": [f.strip() for f in fields],
                                         "checks": [{"arch": a, "macro": c_ident_upper(a), **v,
                                                     "offsets": offsets.get(a, [])}
                                                    for a, v in sorted(sizes.items())]})
    for row in rows_of(doc, "functions", path, required=False):
        check_keys(row, ("name", "os", "ret", "args"), ("symbol", "variadic"))
        name = get_str(row, "name", IDENT, "function name")
        ret = get_str(row, "ret")
        args = get_str_list(row, "args", optional=True) if "args" in row else []
        if "args" in row and not isinstance(row["args"], Seq):
            raise SpecError(row.key_where["args"], "'args' must be a list")
        symbol = get_str(row, "symbol", IDENT, "symbol", optional=True)
        variadic = get_bool(row, "variadic", False)
        for o in os_list(row):
            if ("f", name) in seen[o]:
                raise SpecError(row.where, f"duplicate function '{name}' on {o}")
            seen[o].add(("f", name))
            m.libc[o]["functions"].append({"name": name, "ret": ret, "args": list(args),
                                           "symbol": symbol, "variadic": variadic, "where": row.where})
    for row in rows_of(doc, "constants", path, required=False):
        name = get_str(row, "name", UPPER_IDENT, "constant name")
        for o, value, w in per_os(row, ("name",)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise SpecError(w, f"constant {name}: {o} value must be an integer")
            if not -(2**63) <= value < 2**64:
                raise SpecError(w, f"constant {name}: {o} value out of range")
            if ("c", name) in seen[o]:
                raise SpecError(w, f"duplicate constant '{name}' on {o}")
            seen[o].add(("c", name))
            m.libc[o]["constants"].append({"name": name, "value": value})
    for row in rows_of(doc, "macros", path, required=False):
        name = get_str(row, "name", MACRO_NAME, "macro name")
        ndebug = get_str(row, "ndebug", optional=True)
        for o, value, w in per_os(row, ("name", "ndebug")):
            if not isinstance(value, str) or not value:
                raise SpecError(w, f"macro {name}: {o} must give a C expression")
            if ("m", name) in seen[o]:
                raise SpecError(w, f"duplicate macro '{name}' on {o}")
            seen[o].add(("m", name))
            m.libc[o]["macros"].append({"name": name, "value": value, "ndebug": ndebug})
    if "headers" in doc:
        hs = doc["headers"]
        if not isinstance(hs, Seq):
            raise SpecError(where_of(hs, Where(path, 1)), "'headers' must be a list")
        for h in hs:
            if not isinstance(h, str) or not HEADER_NAME.match(h) or h == "cio_bsd_libc.h":
                raise SpecError(where_of(hs, Where(path, 1)), f"header {h!r} is not a header path like sys/stat.h")
            if h in m.libc_headers:
                raise SpecError(where_of(hs, Where(path, 1)), f"duplicate header '{h}'")
            m.libc_headers.append(h)
    for row in rows_of(doc, "libraries", path, required=False):
        check_keys(row, ("os", "name", "soname"), ("versions", "symbols"))
        o = get_str(row, "os")
        if o not in LIBC_OSES:
            raise SpecError(row.key_where["os"], f"libc.yaml covers {', '.join(LIBC_OSES)}, not '{o}'")
        lib = {"name": get_str(row, "name", IDENT, "library name"),
               "soname": get_str(row, "soname", SONAME, "soname"),
               "symbols": get_str_list(row, "symbols", IDENT, optional=True) or [],
               "versions": [], "where": row.where}
        if "versions" in row:
            vs = expect_row(row["versions"], row.key_where["versions"], "'versions'")
            for node, names in vs.items():
                if not VERSION_NODE.match(node):
                    raise SpecError(vs.key_where[node], f"'{node}' is not a version node name")
                if not isinstance(names, Seq) or not all(isinstance(n, str) for n in names):
                    raise SpecError(vs.key_where[node], f"version {node}: a list of function names")
                lib["versions"].append({"node": node, "names": list(names), "where": vs.key_where[node]})
        m.libc[o]["libraries"].append(lib)
    for row in rows_of(doc, "abi", path, required=False):
        check_keys(row, ("os", "osabi", "note_section", "note_name", "note_type", "note_desc", "interp", "defines"))
        o = get_str(row, "os")
        if o not in LIBC_OSES:
            raise SpecError(row.key_where["os"], f"libc.yaml covers {', '.join(LIBC_OSES)}, not '{o}'")
        if m.libc[o]["abi"] is not None:
            raise SpecError(row.where, f"duplicate abi row for {o}")
        m.libc[o]["abi"] = {"osabi": get_int(row, "osabi", 0, 255),
                            "note_section": get_str(row, "note_section", NOTE_SECTION, "note section"),
                            "note_name": get_str(row, "note_name", IDENT, "note name"),
                            "note_type": get_int(row, "note_type", 0, 2**32 - 1),
                            "note_desc": get_int(row, "note_desc", 0, 2**32 - 1),
                            "interp": get_str(row, "interp", ABS_PATH, "interpreter path"),
                            "defines": get_str_list(row, "defines", IDENT)}
    link_libraries(m)


def link_libraries(m):
    """Every function of an OS lives in exactly one of its libraries (the first, libc, unless another
    lists it), under its symbol name and (FreeBSD) a version node."""
    for o in LIBC_OSES:
        L = m.libc[o]
        libs = L["libraries"]
        if not libs:
            L["exports"] = []
            continue
        fnames = {f["name"]: f for f in L["functions"]}
        owner = {}
        for lib in libs:
            for n in lib["symbols"]:
                if n not in fnames:
                    raise SpecError(lib["where"], f"library {lib['soname']}: '{n}' is not a function declared for {o}")
                if n in owner:
                    raise SpecError(lib["where"], f"'{n}' is listed by two {o} libraries")
                owner[n] = lib
        exports = []
        for f in L["functions"]:
            lib = owner.get(f["name"], libs[0])
            sym = f["symbol"] or f["name"]
            version = None  # FreeBSD: every name is listed under its node (spec/bsd_symbols.yaml checks)
            for v in lib["versions"]:
                if f["name"] in v["names"]:
                    version = v["node"]
            f["library"] = lib["soname"]
            exports.append({"name": f["name"], "symbol": sym, "soname": lib["soname"], "lib": lib["name"],
                            "version": version})
        for lib in libs:
            for v in lib["versions"]:
                for n in v["names"]:
                    if n not in fnames:
                        raise SpecError(v["where"], f"version {v['node']}: '{n}' is not a function declared for {o}")
                    if owner.get(n, libs[0]) is not lib:
                        raise SpecError(v["where"], f"version {v['node']}: '{n}' is not in {lib['soname']}")
            lib["exports"] = [e for e in exports if e["soname"] == lib["soname"]]
            nodes = []
            for e in lib["exports"]:
                if e["version"] and e["version"] not in nodes:
                    nodes.append(e["version"])
            lib["nodes"] = sorted(nodes, key=version_key)
        L["exports"] = exports


def version_key(node):
    return [int(x) if x.isdigit() else x for x in re.split(r"[._]", node)]


NT_FIELD = re.compile(r"^(const )?(u?int(8|16|32|64|ptr)_t|void|cio_nt_[a-z_]+) (\*\*?)?[A-Za-z_][A-Za-z0-9_]*(\[[1-9][0-9]*\])?$")


def build_ntapi(m, doc, path):
    """ntapi.yaml: the ntdll structs (sizes checked on x86_64), prototypes and constants."""
    check_top(doc, path, ("structs", "functions", "constants"))
    m.ntapi = {"structs": [], "functions": [], "constants": []}
    known = set()
    struct_rows = rows_of(doc, "structs", path)
    unique(struct_rows)
    for row in struct_rows:
        check_keys(row, ("name", "fields", "size", "align"))
        name = get_str(row, "name", re.compile(r"^[a-z][a-z0-9_]*$"), "struct name (lower_snake)")
        fields = get_str_list(row, "fields")
        if not fields:
            raise SpecError(row.key_where["fields"], f"struct {name} has no fields")
        for f in fields:
            if not NT_FIELD.match(f):
                raise SpecError(row.key_where["fields"], f"struct {name}: field {f!r} is not '<type> <name>'"
                                " with a <stdint.h> type, void or cio_nt_<struct>")
            used = re.findall(r"cio_nt_([a-z_]+)", f)
            for u in used:
                if u not in known:
                    raise SpecError(row.key_where["fields"], f"struct {name}: field {f!r} uses cio_nt_{u},"
                                    " which is not declared above it")
        size = get_int(row, "size", 1, 65536)
        align = get_int(row, "align", 1, 16)
        if align & (align - 1) or size % align:
            raise SpecError(row.key_where["align"], f"struct {name}: align {align} must be a power of two"
                            f" that divides the size {size}")
        known.add(name)
        m.ntapi["structs"].append({"name": name, "fields": fields, "size": size, "align": align})
    fn_rows = rows_of(doc, "functions", path)
    unique(fn_rows)
    for row in fn_rows:
        check_keys(row, ("name", "ret", "args"))
        name = get_str(row, "name", re.compile(r"^(Nt|Rtl)[A-Z][A-Za-z0-9]*$"), "ntdll function name (Nt*/Rtl*)")
        ret = get_str(row, "ret")
        if not NT_FIELD.match(ret.replace(" *", "") + (" *r" if ret.endswith("*") else " r")):
            raise SpecError(row.key_where["ret"], f"function {name}: bad return type {ret!r}")
        if not isinstance(row.get("args"), Seq):
            raise SpecError(row.key_where.get("args", row.where), "'args' must be a list")
        args = get_str_list(row, "args")
        for a in args:
            if not NT_FIELD.match(a):
                raise SpecError(row.key_where["args"], f"function {name}: argument {a!r} is not '<type> <name>'")
            for u in re.findall(r"cio_nt_([a-z_]+)", a):
                if u not in known:
                    raise SpecError(row.key_where["args"], f"function {name}: unknown type cio_nt_{u}")
        m.ntapi["functions"].append({"name": name, "ret": ret, "args": args})
    const_rows = rows_of(doc, "constants", path)
    unique(const_rows)
    for row in const_rows:
        check_keys(row, ("name", "value"))
        name = get_str(row, "name", IDENT, "constant name")
        value = get_int(row, "value", -(2**31), 2**32 - 1)
        m.ntapi["constants"].append({"name": name, "value": value})


def conformance(m):
    """What the generated conformance test checks: every name of every flavour and Linux ABI."""
    out = {"flavours": [], "signals": m.signal_all_names, "errno": m.errno_all_names,
           "sig_kernel_only": sorted(m.kernel_only), "errno_kernel_only": sorted(m.errno_kernel_only)}
    for fl in m.flavours:
        sig = [it["name"] for it in m.signals[fl["name"]]] + [a["name"] for a in m.signal_aliases[fl["name"]]]
        out["flavours"].append({"fl": fl, "sig_spec": sig})
    out["limits"] = sorted({l["name"] for items in m.signal_limits.values() for l in items})
    names = []
    for abi in m.sysabis:
        if abi["os"] == "linux":
            for c in abi["calls"]:
                if c["name"] not in names:
                    names.append(c["name"])
    out["syscalls"] = names
    return out
