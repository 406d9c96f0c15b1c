"""spec/signals, errno, errors, ntstatus, wsa, syscalls and errmaps: validated into the model.
"""

import re

from .checks import (CAMEL, IDENT, SET_NAME, UPPER_IDENT, c_ident_upper, check_keys, check_top, expect_row, get_int,
                     get_str, get_str_list, rows_of, set_c_name, unique, upper_snake)
from .specload import Row, SpecError, Where

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
        unions = get_str_list(row, "union", SET_NAME, optional=True)
        for u in unions:
            if u not in m.set_by_name:
                raise SpecError(row.key_where["union"], f"union names unknown set '{u}' "
                                "(sets must be defined before they are used)")
            for e in m.set_by_name[u]["members"]:
                if e not in members:
                    members.append(e)
        own = get_str_list(row, "errors", CAMEL, optional=True)
        for e in own:
            if e not in m.error_names:
                raise SpecError(row.key_where["errors"], f"set {name} names unknown error '{e}'")
            if e not in members:
                members.append(e)
        if not members:
            raise SpecError(row.where, f"set {name} is empty")
        order = {e["name"]: i for i, e in enumerate(m.errors)}
        members.sort(key=lambda e: order[e])
        s = {"name": name, "c_name": c_name, "members": members,
             "macros": [m.error_by_name[e]["macro"] for e in members],
             "union": [m.set_by_name[u] for u in unions], "own": own}
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
    # One function per map for every errno flavour: the rows every flavour has are written once; a row
    # only some flavours have (an errno that exists there, or whose value another row already took)
    # is written under #if of exactly those flavours. Per flavour, the cases are that flavour's rows.
    m.errno_flavours = [fl for fl in m.flavours if m.os_family.get(fl["os"][0]) != "windows"]
    m.errno_maps_shared = []
    for i, mp in enumerate(m.maps["errno"]):
        rows, order = {}, []
        for fl in m.errno_flavours:
            for e in m.errno_maps_by_flavour[fl["name"]][i]["entries"]:
                k = (e["macro"], e["action"], e["error"])
                if k not in rows:
                    rows[k] = (e, [])
                    order.append(k)
                rows[k][1].append(fl)
        blocks = []
        common = [rows[k][0] for k in order if len(rows[k][1]) == len(m.errno_flavours)]
        if common:
            blocks.append({"flavours": None, "entries": common})
        for k in order:
            e, fls = rows[k]
            if len(fls) == len(m.errno_flavours):
                continue
            names = [fl["name"] for fl in fls]
            for b in blocks:
                if b["flavours"] is not None and [fl["name"] for fl in b["flavours"]] == names:
                    b["entries"].append(e)
                    break
            else:
                blocks.append({"flavours": fls, "entries": [e]})
        m.errno_maps_shared.append({"name": mp["name"], "set": mp["set"], "blocks": blocks})
