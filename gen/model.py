"""Validating spec/*.yaml and building the model the templates render.

Every check raises SpecError with the file:line of the offending row or key. The model is plain
Python data (lists and dicts in spec order) so that rendering is deterministic: nothing here looks at
the host, the clock or the environment.
"""

import os
import re

from specload import Row, Seq, SpecError, Where, load

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
UPPER_IDENT = re.compile(r"^[A-Z0-9_]+$")
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
SET_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$")

SPEC_FILES = ("platforms", "targets", "signals", "errno", "errors", "errmaps", "ntstatus", "wsa",
              "syscalls", "libc", "bsd_symbols", "oscalls", "ntapi")

# ---------------------------------------------------------------------------------------------
# small validation helpers


def where_of(obj, fallback):
    return getattr(obj, "where", None) or fallback


def expect_row(obj, where, what):
    if not isinstance(obj, Row):
        raise SpecError(where, f"{what} must be a mapping (a row in flow style: {{name: ...}})")
    return obj


def expect_list(obj, where, what):
    if not isinstance(obj, Seq):
        raise SpecError(where, f"{what} must be a list")
    return obj


def check_keys(row, required, optional=(), extra=None):
    """Unknown keys and missing fields. `extra` is a predicate for additional allowed keys."""
    for key in row:
        if key in required or key in optional:
            continue
        if extra is not None and extra(key):
            continue
        raise SpecError(row.key_where[key], f"unknown key '{key}'")
    for key in required:
        if key not in row:
            raise SpecError(row.where, f"missing field '{key}'")


def get_str(row, key, pattern=None, what=None, optional=False):
    if key not in row:
        if optional:
            return None
        raise SpecError(row.where, f"missing field '{key}'")
    value = row[key]
    if value is None and optional:
        return None
    if not isinstance(value, str) or value == "":
        raise SpecError(row.key_where[key], f"'{key}' must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise SpecError(row.key_where[key], f"'{key}' is not a valid {what or 'name'}: {value!r}")
    return value


def get_int(row, key, lo, hi):
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(row.key_where[key], f"'{key}' must be an integer, not {value!r}")
    if value < lo or value > hi:
        raise SpecError(row.key_where[key], f"'{key}' value {value} is out of range [{lo}, {hi}]")
    return value


def get_bool(row, key, default=None):
    if key not in row:
        return default
    value = row[key]
    if not isinstance(value, bool):
        raise SpecError(row.key_where[key], f"'{key}' must be true or false")
    return value


def get_str_list(row, key, pattern=None, optional=False):
    if key not in row:
        if optional:
            return []
        raise SpecError(row.where, f"missing field '{key}'")
    value = row[key]
    if not isinstance(value, Seq):
        raise SpecError(row.key_where[key], f"'{key}' must be a list")
    out = []
    for item in value:
        if not isinstance(item, str) or (pattern is not None and not pattern.match(item)):
            raise SpecError(row.key_where[key], f"'{key}' has an invalid entry {item!r}")
        if item in out:
            raise SpecError(row.key_where[key], f"'{key}' lists {item!r} twice")
        out.append(item)
    return out


def rows_of(doc, key, path, required=True):
    if key not in doc:
        if not required:
            return []
        raise SpecError(Where(path, 1), f"missing top-level key '{key}'")
    items = expect_list(doc[key], doc.key_where[key], f"'{key}'")
    for item in items:
        expect_row(item, where_of(item, items.where), f"an entry of '{key}'")
    return items


def check_top(doc, path, allowed):
    for key in doc:
        if key not in allowed:
            raise SpecError(doc.key_where[key], f"unknown top-level key '{key}'")


def unique(rows, key="name", scope=None):
    seen = {}
    for row in rows:
        name = row[key]
        if name in seen:
            raise SpecError(row.key_where[key],
                            f"duplicate name '{name}'{scope or ''} (first at line {seen[name].line})")
        seen[name] = row.where


def upper_snake(name):
    """FileNotFound -> FILE_NOT_FOUND, InvalidUtf8 -> INVALID_UTF8, WSAInit -> WSA_INIT."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)
    return s.upper()


def set_c_name(name):
    """File.OpenError -> file_open, File.Reader.Error -> file_reader, Queue.Error -> queue."""
    parts = name.split(".")
    last = parts[-1]
    if last == "Error" and len(parts) > 1:
        parts = parts[:-1]
    elif last.endswith("Error") and last != "Error":
        parts[-1] = last[: -len("Error")]
    return "_".join(upper_snake(p).lower() for p in parts)


# ---------------------------------------------------------------------------------------------
# the model


class Model:
    pass


def c_ident_upper(name):
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def load_all(spec_dir, display_dir="spec"):
    docs = {}
    for stem in SPEC_FILES:
        path = os.path.join(spec_dir, stem + ".yaml")
        docs[stem] = (load(path, f"{display_dir}/{stem}.yaml"), f"{display_dir}/{stem}.yaml")
    return build(docs)


def build(docs):
    m = Model()
    m.sources = {stem: path for stem, (_, path) in docs.items()}
    build_platforms(m, *docs["platforms"])
    build_targets(m, *docs["targets"])
    build_signals(m, *docs["signals"])
    build_errno(m, *docs["errno"])
    build_errors(m, *docs["errors"])
    build_ntstatus(m, *docs["ntstatus"])
    build_wsa(m, *docs["wsa"])
    build_syscalls(m, *docs["syscalls"])
    build_errmaps(m, *docs["errmaps"])
    build_libc(m, *docs["libc"])
    import bsdsyms  # noqa: E402
    bsdsyms.build_bsd_symbols(m, *docs["bsd_symbols"])
    import oscalls  # noqa: E402 - imports this module
    oscalls.build_oscalls(m, *docs["oscalls"])
    build_ntapi(m, *docs["ntapi"])
    m.conformance = conformance(m)
    return m


def build_platforms(m, doc, path):
    check_top(doc, path, ("oses", "arches", "flavours"))
    m.oses = []
    for row in rows_of(doc, "oses", path):
        check_keys(row, ("name", "family", "detect"))
        name = get_str(row, "name", IDENT)
        family = get_str(row, "family")
        if family not in ("posix", "windows", "wasi"):
            raise SpecError(row.key_where["family"], f"unknown family '{family}' (posix, windows, wasi)")
        m.oses.append({"name": name, "family": family, "detect": get_str(row, "detect"),
                       "macro": c_ident_upper(name)})
    unique(rows_of(doc, "oses", path))
    m.arches = []
    for row in rows_of(doc, "arches", path):
        check_keys(row, ("name", "detect"))
        m.arches.append({"name": get_str(row, "name", IDENT), "detect": get_str(row, "detect"),
                         "macro": c_ident_upper(get_str(row, "name"))})
    unique(rows_of(doc, "arches", path))
    os_names = {o["name"] for o in m.oses}
    arch_names = {a["name"] for a in m.arches}
    m.flavours = []
    m.flavour_by_name = {}
    for row in rows_of(doc, "flavours", path):
        check_keys(row, ("name", "os"), ("base", "arches"))
        name = get_str(row, "name", re.compile(r"^[a-z][a-z0-9-]*$"), "flavour name")
        base = get_str(row, "base", optional=True)
        if base is not None:
            if base not in m.flavour_by_name:
                raise SpecError(row.key_where["base"], f"unknown base flavour '{base}' (define it first)")
            if m.flavour_by_name[base]["base"] is not None:
                raise SpecError(row.key_where["base"], "a base flavour cannot itself be derived")
        oses = get_str_list(row, "os")
        for o in oses:
            if o not in os_names:
                raise SpecError(row.key_where["os"], f"unknown os '{o}'")
        arches = get_str_list(row, "arches", optional=True)
        for a in arches:
            if a not in arch_names:
                raise SpecError(row.key_where["arches"], f"unknown arch '{a}'")
        if name in m.flavour_by_name:
            raise SpecError(row.key_where["name"], f"duplicate name '{name}'")
        fl = {"name": name, "base": base, "os": oses, "arches": arches, "macro": c_ident_upper(name)}
        m.flavours.append(fl)
        m.flavour_by_name[name] = fl
    # Which flavour each (os, arch) gets: an arch-specific flavour wins over the OS-wide one.
    m.flavour_select = []
    for fl in sorted(m.flavours, key=lambda f: 0 if f["arches"] else 1):
        m.flavour_select.append(fl)
    m.os_family = {o["name"]: o["family"] for o in m.oses}


DEBIAN_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
PACKAGE_GROUPS = ("base", "cmocka-source", "host-tests", "bench", "fuzz", "valgrind", "fresh-check")


def build_targets(m, doc, path):
    check_top(doc, path, ("packages", "targets"))
    # Debian packages by purpose (what is not one target's); every group is required, so build.py
    # never falls back to a list of its own.
    if "packages" not in doc:
        raise SpecError(Where(path, 1), "missing top-level key 'packages'")
    groups = expect_row(doc["packages"], doc.key_where["packages"], "'packages'")
    check_keys(groups, PACKAGE_GROUPS)
    m.packages = {g: get_str_list(groups, g, DEBIAN_PACKAGE) for g in PACKAGE_GROUPS}
    rows = rows_of(doc, "targets", path)
    unique(rows)
    m.targets = []
    os_names = {o["name"] for o in m.oses}
    arch_names = {a["name"] for a in m.arches}
    for row in rows:
        check_keys(row, ("name", "os", "arch", "abi", "triple", "flavour", "sysabi", "compiler", "cc",
                         "runner", "level", "default", "packages"), ("cflags",))
        t = {"name": get_str(row, "name", re.compile(r"^[a-z0-9_]+-[a-z0-9_]+$"), "target name")}
        t["os"] = get_str(row, "os")
        if t["os"] not in os_names:
            raise SpecError(row.key_where["os"], f"unknown os '{t['os']}'")
        t["arch"] = get_str(row, "arch")
        if t["arch"] not in arch_names:
            raise SpecError(row.key_where["arch"], f"unknown arch '{t['arch']}'")
        t["abi"] = get_str(row, "abi")
        t["triple"] = get_str(row, "triple")
        t["flavour"] = get_str(row, "flavour")
        if t["flavour"] not in m.flavour_by_name:
            raise SpecError(row.key_where["flavour"], f"unknown flavour '{t['flavour']}'")
        t["sysabi"] = get_str(row, "sysabi", optional=True)
        t["compiler"] = get_str(row, "compiler")
        if t["compiler"] not in ("gcc", "clang", "mingw"):
            raise SpecError(row.key_where["compiler"], f"unknown compiler kind '{t['compiler']}'")
        t["cc"] = get_str(row, "cc")
        t["runner"] = get_str(row, "runner")
        if not (t["runner"] in ("native", "wine", "node-wasi", "none") or t["runner"].startswith("qemu:")):
            raise SpecError(row.key_where["runner"], f"unknown runner '{t['runner']}'")
        t["level"] = get_str(row, "level")
        if t["level"] not in ("full", "check", "headers"):
            raise SpecError(row.key_where["level"], f"unknown level '{t['level']}' (full, check, headers)")
        t["default"] = get_bool(row, "default")
        t["packages"] = get_str_list(row, "packages", DEBIAN_PACKAGE)
        t["cflags"] = get_str_list(row, "cflags", optional=True)
        t["macro"] = c_ident_upper(t["name"])
        m.targets.append(t)


# ----- flavoured tables (signals, errno) -----------------------------------------------------


def flavour_keys(m):
    return {f["name"] for f in m.flavours}


def resolve_flavoured(m, row, meta_keys):
    """For one row: {flavour: value} after inheritance; None-valued keys remove the name."""
    fkeys = flavour_keys(m)
    for key in row:
        if key not in meta_keys and key not in fkeys:
            raise SpecError(row.key_where[key], f"unknown key '{key}' (not a field and not a flavour)")
    out = {}
    for fl in m.flavours:
        name = fl["name"]
        if name in row:
            if row[name] is not None:
                out[name] = (row[name], row.key_where[name])
        elif fl["base"] is not None and fl["base"] in row and row[fl["base"]] is not None:
            out[name] = (row[fl["base"]], row.key_where[fl["base"]])
    for key in row:
        if key in fkeys and row[key] is None and m.flavour_by_name[key]["base"] is None:
            raise SpecError(row.key_where[key], f"'~' only makes sense for a derived flavour, not '{key}'")
    return out


def numbered_table(m, rows, kind, lo, hi, meta=("name",), name_re=UPPER_IDENT, extra=None):
    """Rows of {name, flavour: number}: per flavour, an ordered list of (name, value, where)."""
    unique(rows)
    table = {f["name"]: [] for f in m.flavours}
    for row in rows:
        check_keys(row, ("name",), meta, extra=lambda k: True)
        name = get_str(row, "name", name_re, f"{kind} name")
        if extra:
            extra(row)
        for fl, (value, w) in resolve_flavoured(m, row, meta).items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise SpecError(w, f"{kind} {name}: value for {fl} must be an integer, not {value!r}")
            if value < lo or value > hi:
                raise SpecError(w, f"{kind} {name}: value {value} for {fl} is out of range [{lo}, {hi}]")
            table[fl].append({"name": name, "value": value, "where": w})
    for fl, items in table.items():
        seen = {}
        for it in items:
            if it["value"] in seen:
                raise SpecError(it["where"], f"{kind} {it['name']} and {seen[it['value']]} have the same "
                                f"value {it['value']} on {fl}; make one an alias")
            seen[it["value"]] = it["name"]
    return table


def alias_table(m, rows, members, kind):
    unique(rows)
    table = {f["name"]: [] for f in m.flavours}
    for row in rows:
        check_keys(row, ("name",), ("kind",), extra=lambda k: True)
        name = get_str(row, "name", UPPER_IDENT, f"{kind} alias name")
        level = get_str(row, "kind", optional=True) or "libc"
        if level not in ("libc", "kernel"):
            raise SpecError(row.key_where["kind"], f"alias kind must be libc or kernel, not '{level}'")
        if level == "kernel":
            m.kernel_only.add(name)
        for fl, (target, w) in resolve_flavoured(m, row, ("name", "kind")).items():
            if not isinstance(target, str):
                raise SpecError(w, f"alias {name} on {fl} must name a {kind}, not {target!r}")
            names = {it["name"] for it in members[fl]}
            if target not in names:
                raise SpecError(w, f"alias {name} on {fl} names unknown {kind} '{target}'")
            if name in names:
                raise SpecError(w, f"{name} is both a {kind} and an alias on {fl}")
            table[fl].append({"name": name, "target": target})
    return table


def build_signals(m, doc, path):
    check_top(doc, path, ("signals", "aliases", "how", "limits"))
    m.kernel_only = set()
    m.signals = numbered_table(m, rows_of(doc, "signals", path), "signal", 1, 255)
    m.signal_aliases = alias_table(m, rows_of(doc, "aliases", path, required=False), m.signals, "signal")
    how_rows = rows_of(doc, "how", path)
    for row in how_rows:
        if row.get("name") not in ("BLOCK", "UNBLOCK", "SETMASK"):
            raise SpecError(row.where, f"how row must be BLOCK, UNBLOCK or SETMASK, not {row.get('name')!r}")
    m.signal_how = numbered_table(m, how_rows, "how-value", 0, 15)
    limit_rows = rows_of(doc, "limits", path, required=False)

    def check_kind(row):
        kind = get_str(row, "kind")
        if kind not in ("libc", "kernel"):
            raise SpecError(row.key_where["kind"], f"limit kind must be libc or kernel, not '{kind}'")

    m.signal_limits = {}
    unique(limit_rows)
    kinds = {}
    for row in limit_rows:
        check_keys(row, ("name", "kind"), extra=lambda k: True)
        check_kind(row)
        kinds[row["name"]] = row["kind"]
        get_str(row, "name", UPPER_IDENT, "limit name")
        for fl, (value, w) in resolve_flavoured(m, row, ("name", "kind")).items():
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
                raise SpecError(w, f"limit {row['name']}: value for {fl} must be an integer in [1, 1024]")
            m.signal_limits.setdefault(fl, []).append({"name": row["name"], "value": value,
                                                       "kind": row["kind"]})
    m.signal_limit_kinds = kinds
    m.signal_all_names = sorted({it["name"] for items in m.signals.values() for it in items}
                                | {it["name"] for items in m.signal_aliases.values() for it in items})


def build_errno(m, doc, path):
    check_top(doc, path, ("errno", "aliases"))
    signal_kernel_only = m.kernel_only
    rows = rows_of(doc, "errno", path)
    for row in rows:
        name = row.get("name")
        if isinstance(name, str) and not name.startswith("E"):
            raise SpecError(row.key_where["name"], f"errno name must start with E: {name!r}")
    m.errno = numbered_table(m, rows, "errno", -(2**31), 2**31 - 1)
    for items in m.errno.values():
        for it in items:
            if it["value"] == 0:
                raise SpecError(it["where"], f"errno {it['name']} cannot be 0")
    m.errno_aliases = alias_table(m, rows_of(doc, "aliases", path, required=False), m.errno, "errno")
    m.errno_kernel_only, m.kernel_only = m.kernel_only - signal_kernel_only, signal_kernel_only
    m.errno_all_names = sorted({it["name"] for items in m.errno.values() for it in items}
                               | {it["name"] for items in m.errno_aliases.values() for it in items})


def build_errors(m, doc, path):
    check_top(doc, path, ("errors", "sets"))
    rows = rows_of(doc, "errors", path)
    unique(rows)
    m.errors = []
    m.error_names = set()
    for row in rows:
        check_keys(row, ("name", "desc"))
        name = get_str(row, "name", CAMEL, "error name (CamelCase)")
        desc = get_str(row, "desc")
        if name in ("Ok", "OK"):
            raise SpecError(row.key_where["name"], "the name 'Ok' is reserved for success")
        if '"' in desc or "\\" in desc or "*/" in desc:
            raise SpecError(row.key_where["desc"], "desc must not contain quotes, backslashes or '*/'")
        m.errors.append({"name": name, "macro": "CIO_E_" + upper_snake(name), "desc": desc})
        m.error_names.add(name)
    macros = {}
    for e, row in zip(m.errors, rows):
        if e["macro"] in macros:
            raise SpecError(row.where, f"errors {e['name']} and {macros[e['macro']]} give the same C name")
        macros[e["macro"]] = e["name"]
    if "Unexpected" not in m.error_names or "Canceled" not in m.error_names:
        raise SpecError(Where(path, 1), "the error universe must contain Canceled and Unexpected")
    m.error_by_name = {e["name"]: e for e in m.errors}

    set_rows = rows_of(doc, "sets", path)
    unique(set_rows)
    m.sets = []
    m.set_by_name = {}
    c_names = {}
    for row in set_rows:
        check_keys(row, ("name",), ("c_name", "union", "errors"))
        name = get_str(row, "name", SET_NAME, "set name")
        c_name = get_str(row, "c_name", re.compile(r"^[a-z][a-z0-9_]*$"), "C name", optional=True) \
            or set_c_name(name)
        if c_name in c_names:
            raise SpecError(row.where, f"sets {name} and {c_names[c_name]} give the same C name "
                            f"'{c_name}'; give one a c_name")
        c_names[c_name] = name
        members = []
        for u in get_str_list(row, "union", SET_NAME, optional=True):
            if u not in m.set_by_name:
                raise SpecError(row.key_where["union"], f"union names unknown set '{u}' "
                                "(sets must be defined before they are used)")
            for e in m.set_by_name[u]["members"]:
                if e not in members:
                    members.append(e)
        for e in get_str_list(row, "errors", CAMEL, optional=True):
            if e not in m.error_names:
                raise SpecError(row.key_where["errors"], f"set {name} names unknown error '{e}'")
            if e not in members:
                members.append(e)
        if not members:
            raise SpecError(row.where, f"set {name} is empty")
        order = {e["name"]: i for i, e in enumerate(m.errors)}
        members.sort(key=lambda e: order[e])
        s = {"name": name, "c_name": c_name, "members": members,
             "macros": [m.error_by_name[e]["macro"] for e in members]}
        m.sets.append(s)
        m.set_by_name[name] = s


def build_ntstatus(m, doc, path):
    check_top(doc, path, ("ntstatus",))
    rows = rows_of(doc, "ntstatus", path)
    unique(rows)
    m.ntstatus = []
    for row in rows:
        check_keys(row, ("name", "value"))
        name = get_str(row, "name", UPPER_IDENT, "NTSTATUS name")
        if name.startswith("STATUS_"):
            raise SpecError(row.key_where["name"], "write NTSTATUS names without the STATUS_ prefix")
        m.ntstatus.append({"name": name, "value": get_int(row, "value", 0, 0xFFFFFFFF)})
    m.ntstatus_names = {n["name"] for n in m.ntstatus}


def build_wsa(m, doc, path):
    check_top(doc, path, ("wsa",))
    rows = rows_of(doc, "wsa", path)
    unique(rows)
    m.wsa = []
    for row in rows:
        check_keys(row, ("name", "value"))
        name = get_str(row, "name", UPPER_IDENT, "WSA name")
        if name.startswith("WSA"):
            raise SpecError(row.key_where["name"], "write WSA names without the WSA prefix")
        m.wsa.append({"name": name, "value": get_int(row, "value", 0, 65535)})
    m.wsa_names = {w["name"] for w in m.wsa}


def build_syscalls(m, doc, path):
    check_top(doc, path, ("abis", "syscalls", "io_uring"))
    abi_rows = rows_of(doc, "abis", path)
    unique(abi_rows)
    m.sysabis = []
    os_names = {o["name"] for o in m.oses}
    arch_names = {a["name"] for a in m.arches}
    for row in abi_rows:
        check_keys(row, ("name", "os", "arch", "bias"))
        name = get_str(row, "name", re.compile(r"^[a-z][a-z0-9_-]*$"), "ABI name")
        os_ = get_str(row, "os")
        if os_ not in os_names:
            raise SpecError(row.key_where["os"], f"unknown os '{os_}'")
        arch = get_str(row, "arch", optional=True)
        if arch is not None and arch not in arch_names:
            raise SpecError(row.key_where["arch"], f"unknown arch '{arch}'")
        m.sysabis.append({"name": name, "os": os_, "arch": arch, "bias": get_int(row, "bias", 0, 0x7FFFFFFF),
                          "macro": c_ident_upper(name), "calls": []})
    abi_by_name = {a["name"]: a for a in m.sysabis}
    for t in m.targets:
        if t["sysabi"] is not None and t["sysabi"] not in abi_by_name:
            raise SpecError(Where(m.sources["targets"], 0), f"target {t['name']} names unknown sysabi "
                            f"'{t['sysabi']}'")
    rows = rows_of(doc, "syscalls", path)
    unique(rows)
    m.syscall_names = []
    for row in rows:
        name = get_str(row, "name", IDENT, "syscall name")
        for key in row:
            if key == "name":
                continue
            if key not in abi_by_name:
                raise SpecError(row.key_where[key], f"unknown key '{key}' (not a field and not an ABI)")
            abi = abi_by_name[key]
            value = get_int(row, key, 0, 0x7FFFFFFF - abi["bias"])
            abi["calls"].append({"name": name, "macro": "CIO_SYS_" + name.upper(),
                                 "value": value + abi["bias"]})
        m.syscall_names.append(name)
    for abi in m.sysabis:
        seen = {}
        for c in abi["calls"]:
            if c["value"] in seen:
                raise SpecError(Where(path, 0), f"syscalls {c['name']} and {seen[c['value']]} have the same "
                                f"number {c['value']} on {abi['name']}")
            seen[c["value"]] = c["name"]
    # io_uring constants (Linux, the same on every architecture): opcodes and flags newer than the
    # kernel headers the library is built against.
    rows = rows_of(doc, "io_uring", path, required=False)
    unique(rows)
    m.io_uring = []
    seen = {}
    for row in rows:
        check_keys(row, ("name", "value"))
        name = get_str(row, "name", re.compile(r"^[A-Z][A-Z0-9_]*$"), "io_uring constant name")
        value = get_int(row, "value", 0, 0xFFFFFFFF)
        if name.startswith("IORING_OP_"):
            if value > 255:
                raise SpecError(row.key_where["value"], f"opcode {name} out of range (0..255)")
            if value in seen:
                raise SpecError(row.key_where["value"], f"opcodes {name} and {seen[value]} have the same "
                                f"number {value}")
            seen[value] = name
        m.io_uring.append({"name": name, "macro": "CIO_" + name, "value": value})


ACTIONS = {"retry": "RETRY", "bug": "BUG", "ok": "OK", "reinit": "REINIT"}


def build_errmaps(m, doc, path):
    check_top(doc, path, ("maps",))
    rows = rows_of(doc, "maps", path)
    unique(rows)
    m.maps = {"errno": [], "ntstatus": [], "wsa": []}
    for row in rows:
        check_keys(row, ("name", "kind", "set", "map"))
        name = get_str(row, "name", re.compile(r"^[a-z][a-z0-9_]*$"), "map name")
        kind = get_str(row, "kind")
        if kind not in m.maps:
            raise SpecError(row.key_where["kind"], f"unknown map kind '{kind}' (errno, ntstatus, wsa)")
        set_name = get_str(row, "set", SET_NAME, "set name")
        if set_name not in m.set_by_name:
            raise SpecError(row.key_where["set"], f"map {name} names unknown set '{set_name}'")
        members = set(m.set_by_name[set_name]["members"])
        entries = expect_row(row["map"], row.key_where["map"], "'map'")
        if kind == "errno":
            known = set(m.errno_all_names)
        elif kind == "ntstatus":
            known = m.ntstatus_names
        else:
            known = m.wsa_names
        out = []
        for native, target in entries.items():
            w = entries.key_where[native]
            if native not in known:
                raise SpecError(w, f"map {name} names unknown {kind} value '{native}'")
            if isinstance(target, Row):
                check_keys(target, ("backoff",))
                then = target["backoff"]
                if not isinstance(then, str) or then not in m.error_names:
                    raise SpecError(w, f"map {name}: backoff names unknown error {then!r}")
                if then not in members:
                    raise SpecError(w, f"map {name}: error {then} is not in set {set_name}")
                out.append({"native": native, "action": "BACKOFF", "error": m.error_by_name[then]["macro"]})
            elif isinstance(target, str) and target in ACTIONS:
                if target == "reinit" and kind != "wsa":
                    raise SpecError(w, f"map {name}: 'reinit' is only for WSA maps")
                if target == "retry" and "Canceled" not in members:
                    raise SpecError(w, f"map {name}: 'retry' checks for cancelation, so set {set_name} "
                                    "must contain Canceled")
                err = "CIO_E_UNEXPECTED" if target == "bug" else "CIO_OK"
                out.append({"native": native, "action": ACTIONS[target], "error": err})
            elif isinstance(target, str) and target in m.error_names:
                if target not in members:
                    raise SpecError(w, f"map {name}: error {target} is not in set {set_name}")
                out.append({"native": native, "action": "ERROR", "error": m.error_by_name[target]["macro"]})
            else:
                raise SpecError(w, f"map {name} names unknown error or action {target!r}")
        if "Unexpected" not in members:
            raise SpecError(row.key_where["set"], f"map {name}: set {set_name} must contain Unexpected "
                            "(unmapped native errors become Unexpected)")
        m.maps[kind].append({"name": name, "set": m.set_by_name[set_name], "entries": out})
    # Per flavour, the errno maps with names resolved to values (aliases folded, duplicates by value
    # dropped after the first: the spec order decides).
    m.errno_maps_by_flavour = {}
    for fl in m.flavours:
        values = {it["name"]: it["value"] for it in m.errno[fl["name"]]}
        for al in m.errno_aliases[fl["name"]]:
            values[al["name"]] = values[al["target"]]
        canon = {it["name"]: it["name"] for it in m.errno[fl["name"]]}
        for al in m.errno_aliases[fl["name"]]:
            canon[al["name"]] = al["target"]
        maps = []
        for mp in m.maps["errno"]:
            seen = set()
            entries = []
            for e in mp["entries"]:
                if e["native"] not in values:
                    continue
                v = values[e["native"]]
                if v in seen:
                    continue
                seen.add(v)
                entries.append(dict(e, macro="CIO_ERRNO_" + canon[e["native"]][1:]))
            maps.append({"name": mp["name"], "set": mp["set"], "entries": entries})
        m.errno_maps_by_flavour[fl["name"]] = maps
    # Flavours whose maps come out the same (the same canonical names) share one rendering.
    m.errno_map_groups = []
    for fl in m.flavours:
        if m.os_family.get(fl["os"][0]) == "windows":
            continue
        maps = m.errno_maps_by_flavour[fl["name"]]
        key = repr([(mp["name"], [(e["macro"], e["action"], e["error"]) for e in mp["entries"]]) for mp in maps])
        for g in m.errno_map_groups:
            if g["key"] == key:
                g["flavours"].append(fl)
                break
        else:
            m.errno_map_groups.append({"key": key, "flavours": [fl], "maps": maps})


LIBC_OSES = ("freebsd", "netbsd", "openbsd")
MACRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\([a-z](, *[a-z])*\))?$")
HEADER_NAME = re.compile(r"^[a-z0-9_]+(/[a-z0-9_]+)*\.h$")
SONAME = re.compile(r"^lib[a-z0-9_]+\.so(\.[0-9]+)+$")
VERSION_NODE = re.compile(r"^[A-Z][A-Za-z0-9_]*(\.[0-9]+)*$")
NOTE_SECTION = re.compile(r"^\.note(\.[a-z0-9_]+)+$")
ABS_PATH = re.compile(r"^(/[A-Za-z0-9_.+-]+)+$")
C_DECL = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \t*]*[ *]\s*[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?$")


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
        check_keys(row, ("name", "os", "fields"), ("size", "align"))
        name = get_str(row, "name", IDENT, "struct name")
        fields = get_str_list(row, "fields")
        for f in fields:
            if not C_DECL.match(f.strip()):
                raise SpecError(row.key_where["fields"], f"struct {name}: field {f!r} is not 'type name'")
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
        for o in os_list(row):
            if ("s", name) in seen[o]:
                raise SpecError(row.where, f"duplicate struct '{name}' on {o}")
            seen[o].add(("s", name))
            m.libc[o]["structs"].append({"name": name, "fields": [f.strip() for f in fields],
                                         "checks": [{"arch": a, "macro": c_ident_upper(a), **v}
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
