"""Validating spec/*.yaml and building the model the templates render.

Every check raises SpecError with the file:line of the offending row or key. The model is plain
Python data (lists and dicts in spec order) so that rendering is deterministic: nothing here looks at
the host, the clock or the environment.

This module reads the files and builds the model in order; the checks and builders live in
checks.py, model_errors.py (signals, errno, errors, NTSTATUS, WSA, syscalls, errmaps),
model_libc.py (BSD libc surface, ntapi, conformance), bsdsyms.py and oscalls.py.
"""

import os
import re

from . import bsdsyms, oscalls
from .checks import (IDENT, c_ident_upper, check_keys, check_top, expect_row, get_bool, get_str, get_str_list,
                     rows_of, unique)
from .model_errors import (build_errmaps, build_errno, build_errors, build_ntstatus, build_signals, build_syscalls,
                           build_wsa)
from .model_libc import build_libc, build_ntapi, conformance
from .specload import SpecError, Where, load

SPEC_FILES = ("platforms", "targets", "signals", "errno", "errors", "errmaps", "ntstatus", "wsa",
              "syscalls", "libc", "bsd_symbols", "oscalls", "ntapi")


class Model:
    pass


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
    bsdsyms.build_bsd_symbols(m, *docs["bsd_symbols"])
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


PACKAGE_GROUPS = ("base", "cmocka-source", "host-tests", "docs", "bench", "bench-peers", "fuzz", "valgrind", "fresh-check")


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
