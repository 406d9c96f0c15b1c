"""The BSD smoke binaries against the OSes' own symbol lists (spec/bsd_symbols.yaml).

bsd.py's other readelf checks compare a binary with the stubs it was linked against, which come from
spec/libc.yaml: they cannot notice a binding that FreeBSD, NetBSD or OpenBSD would refuse. These
checks read the built binary (and libcio.a) and compare every undefined reference with the record of
what the OS's files say, which libc.yaml does not feed:

  - every undefined dynamic reference of the smoke program is a recorded symbol; on FreeBSD its
    version is the node recorded from Symbol.map (an unversioned or differently versioned reference
    fails: FreeBSD's rtld refuses a version the library does not define); on NetBSD and OpenBSD it is
    unversioned, and a NetBSD reference by a name the headers rename (stat for __stat50) fails;
  - the library libc.yaml puts each one in is the one the record names;
  - every symbol libcio.a leaves undefined is recorded (an import the smoke program happens not to
    pull in is still covered);
  - OpenBSD: no system call outside libc (no `syscall`/`svc` instruction in the program, no import of
    syscall/__syscall): OpenBSD only accepts system calls from libc's pinned text.
"""

import os
import re
import shutil
import subprocess

from gen import bsdsyms, specload

from .common import ROOT

SPEC = os.path.join(ROOT, "spec", "bsd_symbols.yaml")
# What libcio.a may leave undefined that no OS library provides: the smoke program's own
# start-up/runtime objects define these (tests/bsd/emutls_openbsd.c: libcompiler_rt's emulated TLS).
RUNTIME = {"__emutls_get_address"}


def load_record():
    doc = specload.load(SPEC, "spec/bsd_symbols.yaml")
    return bsdsyms.load_table(doc, "spec/bsd_symbols.yaml")


def tool(*names):
    for n in names:
        if shutil.which(n):
            return n
    return None


def undefined_refs(exe):
    """(name, version or '') of every undefined dynamic symbol."""
    out = subprocess.run([tool("llvm-readelf", "readelf"), "--wide", "--dyn-syms", exe],
                         capture_output=True, text=True).stdout
    refs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or f[6] != "UND" or not f[0].rstrip(":").isdigit():
            continue
        name, _, ver = f[7].partition("@")
        refs.append((name, ver.lstrip("@")))
    return refs


def archive_imports(lib):
    nm = tool("llvm-nm", "nm")
    undef = subprocess.run([nm, "--undefined-only", "--format=just-symbols", lib], capture_output=True, text=True)
    defined = subprocess.run([nm, "--defined-only", "--format=just-symbols", lib], capture_output=True, text=True)
    names = lambda out: {s.strip() for s in out.splitlines() if s.strip() and not s.endswith(":")}  # noqa: E731
    return sorted(names(undef.stdout) - names(defined.stdout))


def check_references(os_, refs, binding, sources, table, other_renames):
    rec_by_symbol = {r["symbol"]: (c, r) for c, r in table.items()}
    renamed = dict(other_renames)
    renamed.update({c: r for c, r in table.items() if r["symbol"] != c})
    bad = []
    for name, ver in refs:
        shown = f"{name}@{ver}" if ver else name
        if name in renamed and name not in rec_by_symbol:
            r = renamed[name]
            bad.append(f"{shown}: {os_}'s headers bind {name} to {r['symbol']} ({sources[r['source']]['file']})")
            continue
        if name not in rec_by_symbol:
            bad.append(f"{shown}: not in spec/bsd_symbols.yaml (record it from the OS's symbol list)")
            continue
        cname, r = rec_by_symbol[name]
        src = sources[r["source"]]
        if os_ == "freebsd" and ver != r["version"]:
            bad.append(f"{shown}: FreeBSD {src['release']} defines {name} at {r['version']} ({src['file']})")
        elif os_ != "freebsd" and ver:
            bad.append(f"{shown}: {os_} does not version its symbols")
        e = binding.get(name)
        if e is not None and e["lib"] != r["lib"]:
            bad.append(f"{shown}: libc.yaml puts it in lib{e['lib']}, {src['file']} in lib{r['lib']}")
    return bad


def no_raw_syscalls(exe, arch, refs):
    """OpenBSD: the program makes no system call itself."""
    bad = [f"imports {n}" for n, _ in refs if n in ("syscall", "__syscall")]
    objdump = tool("llvm-objdump", "objdump")
    if objdump is None:
        return bad + ["llvm-objdump not found"]
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", exe], capture_output=True, text=True).stdout
    insn = r"\tsyscall\b" if arch == "x86_64" else r"\tsvc\b"
    where = None
    for line in text.splitlines():
        if line.endswith(">:"):
            where = line
        elif re.search(insn, line):
            bad.append(f"system call instruction in {where}: {line.strip()}")
    return bad


def checks(t, exe, libcio, model):
    """[(label, ok, detail)] for the BSD target t's smoke program exe and its libcio.a."""
    os_ = t["os"]
    sources, table, renamed = load_record()
    table = table[os_]
    binding = {e["symbol"]: e for e in model.libc[os_]["exports"]}
    refs = undefined_refs(exe)
    bad = check_references(os_, refs, binding, sources, table, renamed[os_])
    release = sorted({s["release"] for s in sources.values() if s["os"] == os_})
    out = [(f"{len(refs)} references match {os_} {'/'.join(release)} symbol lists", bool(refs) and not bad,
            "\n".join(bad[:40]) or "no undefined dynamic symbols found")]
    recorded = {r["symbol"] for r in table.values()}
    defines = set(model.libc[os_]["abi"]["defines"]) if model.libc[os_]["abi"] else set()
    imports = archive_imports(libcio)
    missing = [s for s in imports if s not in recorded and s not in RUNTIME and s not in defines]
    out.append((f"libcio.a: {len(imports)} imports recorded", bool(imports) and not missing,
                "not in spec/bsd_symbols.yaml: " + ", ".join(missing)))
    if os_ == "openbsd":
        bad = no_raw_syscalls(exe, t["arch"], refs)
        out.append(("no system call outside libc", not bad, "\n".join(bad[:20])))
    return out
