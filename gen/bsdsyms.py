"""spec/bsd_symbols.yaml: what the BSDs' own files say about every symbol cio imports there.

libc.yaml binds each function to a library, an ELF name (NetBSD's renamed entry points) and, on
FreeBSD, a version node; that binding is what the stubs are generated from and what a cross-built
binary asks for. This file is the separate record of the facts the binding must agree with, each row
naming the source file it was read from (FreeBSD's lib/libc/**/Symbol.map and lib/libthr/pthread.map,
NetBSD's headers' __RENAME lines, OpenBSD's Symbols.list / Symbols.map) and that source's release.

The generator checks coverage: every function libc.yaml declares for an OS must have a recorded row
(an import with no recorded node is an error, never a silent default), every row must name a declared
function, and FreeBSD rows must carry a version node. Whether the binding agrees with the record is
checked on the built binaries by tools/cio_build/bsd_symbols.py (`build.py test`), which reads this file itself.
"""

import re

from .specload import SpecError, Where

OSES = ("freebsd", "netbsd", "openbsd")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SOURCE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
VERSION_NODE = re.compile(r"^[A-Z][A-Za-z0-9_]*(\.[0-9]+)*$")


def _expect(cond, where, message):
    if not cond:
        raise SpecError(where, message)


def _keys(row, required, optional=()):
    for key in row:
        _expect(key in required or key in optional, row.key_where[key], f"unknown key '{key}'")
    for key in required:
        _expect(key in row, row.where, f"missing field '{key}'")


def _str(row, key, pattern=None, what="value"):
    v = row[key]
    _expect(isinstance(v, str) and (pattern is None or pattern.match(v)), row.key_where[key],
            f"'{key}': {v!r} is not a valid {what}")
    return v


def load_table(doc, path):
    """(sources, imports, renamed): the sources by name; {os: {c_name: {symbol, lib, version, source,
    where}}} for what cio imports; {os: {c_name: {symbol, source, where}}} for the other renames the
    OS's headers make (a C name the record knows to be renamed may not be imported by that name)."""
    for key in doc:
        _expect(key in ("sources", "symbols", "renamed"), doc.key_where[key], f"unknown top-level key '{key}'")
    for key in ("sources", "symbols"):
        _expect(key in doc and isinstance(doc[key], list), doc.key_where.get(key) or Where(path, 1),
                f"'{key}' must be a list of rows")
    sources = {}
    for row in doc["sources"]:
        _expect(isinstance(row, dict), doc.key_where["sources"], "an entry of 'sources' must be a row")
        _keys(row, ("name", "os", "file", "release", "read"))
        name = _str(row, "name", SOURCE_NAME, "source name (lower-case, dashes)")
        _expect(name not in sources, row.key_where["name"], f"duplicate source '{name}'")
        _expect(row["os"] in OSES, row.key_where["os"], f"os must be one of {', '.join(OSES)}")
        for key in ("file", "release", "read"):
            _str(row, key, what="text")
        sources[name] = dict(row)
    table = {o: {} for o in OSES}
    for row in doc["symbols"]:
        _expect(isinstance(row, dict), doc.key_where["symbols"], "an entry of 'symbols' must be a row")
        _keys(row, ("os", "lib", "source"), ("version", "names", "renames"))
        o = row["os"]
        _expect(o in OSES, row.key_where["os"], f"os must be one of {', '.join(OSES)}")
        lib = _str(row, "lib", IDENT, "library name")
        src = _str(row, "source", SOURCE_NAME, "source name")
        _expect(src in sources, row.key_where["source"], f"unknown source '{src}'")
        _expect(sources[src]["os"] == o, row.key_where["source"], f"source '{src}' is not {o}'s")
        version = None
        if o == "freebsd":
            _expect("version" in row, row.where, "a FreeBSD row needs the version node its source gives")
            version = _str(row, "version", VERSION_NODE, "version node")
        else:
            _expect("version" not in row, row.key_where.get("version"), f"{o} does not version its symbols")
        _expect(("names" in row) != ("renames" in row), row.where, "give exactly one of 'names' or 'renames'")
        if "names" in row:
            names = row["names"]
            _expect(isinstance(names, list), row.key_where["names"], "'names' must be a list")
            pairs = [(n, n) for n in names]
        else:
            ren = row["renames"]
            _expect(isinstance(ren, dict), row.key_where["renames"], "'renames' must map C names to symbols")
            pairs = list(ren.items())
        key = "names" if "names" in row else "renames"
        for name, sym in pairs:
            _expect(isinstance(name, str) and IDENT.match(name) and isinstance(sym, str) and IDENT.match(sym),
                    row.key_where[key], f"'{key}' has an invalid entry {name!r}")
            _expect(name not in table[o], row.key_where[key],
                    f"{o}: '{name}' is recorded twice (first at line {table[o].get(name, {}).get('line')})")
            table[o][name] = {"symbol": sym, "lib": lib, "version": version, "source": src,
                              "line": row.key_where[key].line, "where": row.key_where[key]}
    renamed = {o: {} for o in OSES}
    for row in doc.get("renamed") or []:
        _expect(isinstance(row, dict), doc.key_where["renamed"], "an entry of 'renamed' must be a row")
        _keys(row, ("os", "source", "renames"))
        o, src, ren = row["os"], row["source"], row["renames"]
        _expect(o in OSES, row.key_where["os"], f"os must be one of {', '.join(OSES)}")
        _expect(src in sources and sources[src]["os"] == o, row.key_where["source"], f"unknown {o} source '{src}'")
        _expect(isinstance(ren, dict), row.key_where["renames"], "'renames' must map C names to symbols")
        for name, sym in ren.items():
            w = row.key_where["renames"]
            _expect(isinstance(sym, str) and IDENT.match(str(name)) and IDENT.match(sym) and sym != name, w,
                    f"'renames' has an invalid entry {name!r}")
            _expect(name not in renamed[o], w, f"{o}: '{name}' is recorded twice")
            renamed[o][name] = {"symbol": sym, "source": src, "where": w}
    for o in OSES:
        for name, rec in table[o].items():
            other = renamed[o].get(name)
            _expect(other is None, rec["where"], f"{o}: '{name}' is imported here but recorded as renamed to"
                    f" {other and other['symbol']} (line {other and other['where'].line}): record it under"
                    " 'renames' with that name")
    return sources, table, renamed


def build_bsd_symbols(m, doc, path):
    """Coverage: every declared function of each OS is recorded, every record names one; FreeBSD
    libraries bind every export to an explicit node (no default)."""
    sources, table, _renamed = load_table(doc, path)
    for o in OSES:
        declared = {f["name"]: f for f in m.libc[o]["functions"]}
        for f in m.libc[o]["functions"]:
            if f["name"] not in table[o]:
                what = "version node (FreeBSD's Symbol.map)" if o == "freebsd" else "entry"
                raise SpecError(f["where"], f"{o} imports '{f['symbol'] or f['name']}' but {path} has no"
                                f" recorded {what} for it")
        libs = {lib["name"] for lib in m.libc[o]["libraries"]}
        for name, rec in table[o].items():
            _expect(rec["lib"] in libs, rec["where"], f"{o} has no library '{rec['lib']}' in libc.yaml")
            if name not in declared:
                raise SpecError(rec["where"], f"{o}: '{name}' is recorded but libc.yaml declares no such"
                                " function for it (remove the record or declare the function)")
        for lib in m.libc[o]["libraries"]:
            if o != "freebsd":
                _expect(not lib["versions"], lib["where"], f"{o} does not version its symbols")
                continue
            for e in lib["exports"]:
                if e["version"] is None:
                    raise SpecError(lib["where"], f"{lib['soname']}: '{e['name']}' is bound to no version"
                                    " node; list it under the node FreeBSD's Symbol.map gives"
                                    f" ({table[o][e['name']]['version']} per {path})")
