"""BSD targets with no sysroot: the library and a smoke program linked against libc stubs, checked with
readelf against spec/libc.yaml and spec/bsd_symbols.yaml.
"""

import os
import re
import shlex
import shutil
import subprocess

from .cmake import build_dir, cflags, libs
from .common import ROOT, run_step, say
from .spec import load_model


BSD_OSES = ("freebsd", "netbsd", "openbsd")


def bsd_build(t, jobs, log):
    """Cross-builds libcio (CMake, the target's toolchain file: generated stand-in headers), the libc
    stubs (platform/bsd/<os>/lib*.s, with their version scripts), the start-up code and the smoke
    program (tests/bsd). Returns (bdir, smoke path) or None."""
    bdir = build_dir(t, None)
    os_ = t["os"]
    cfg = ["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja",
           f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(ROOT, 'platform', 'cmake', t['name'] + '.cmake')}",
           "-DCIO_BUILD_TESTS=OFF", "-DCIO_BUILD_EXAMPLES=OFF", "-DCMAKE_BUILD_TYPE=Debug"]
    if not (run_step(cfg, log) and run_step(["cmake", "--build", bdir, "-j", str(jobs)], log)):
        return None
    m = load_model()
    plat = os.path.join(ROOT, "platform", "bsd", os_)
    stubs = os.path.join(bdir, "stubs")
    objs = os.path.join(bdir, "smoke-objs")
    os.makedirs(stubs, exist_ok=True)
    os.makedirs(objs, exist_ok=True)
    cc = ["clang", f"--target={t['triple']}"]
    for lib in m.libc[os_]["libraries"]:
        obj = os.path.join(stubs, f"lib{lib['name']}.o")
        so = os.path.join(stubs, lib["soname"])
        link = ["ld.lld", "-shared", "-soname", lib["soname"], "-o", so, obj]
        if lib["nodes"]:
            link += ["--version-script", os.path.join(plat, f"lib{lib['name']}.map")]
        if not (run_step(cc + ["-c", os.path.join(plat, f"lib{lib['name']}.s"), "-o", obj], log) and
                run_step(link, log)):
            return None
        alias = os.path.join(stubs, f"lib{lib['name']}.so")  # what -l<name> finds
        if os.path.lexists(alias):
            os.unlink(alias)
        os.symlink(lib["soname"], alias)
    flags = cflags(t)[1:] + ["-std=c11", "-Wall", "-Wextra", "-Werror"]  # [0] is --target, in cc
    srcs = [os.path.join(ROOT, "tests", "bsd", "smoke.c"), os.path.join(ROOT, "tests", "bsd", f"crt0_{os_}.c")]
    if os_ == "openbsd":
        srcs.append(os.path.join(ROOT, "tests", "bsd", "emutls_openbsd.c"))  # libcompiler_rt's part
    inputs = []
    for src in srcs:
        obj = os.path.join(objs, os.path.basename(src)[:-2] + ".o")
        if not run_step(cc + flags + ["-c", src, "-o", obj], log):
            return None
        inputs.append(obj)
    note = os.path.join(objs, "note.o")
    if not run_step(cc + ["-c", os.path.join(plat, "note.s"), "-o", note], log):
        return None
    abi = m.libc[os_]["abi"]
    exe = os.path.join(bdir, "cio_smoke")
    link = ["ld.lld", "-pie", "--dynamic-linker", abi["interp"], "-z", "now", "-o", exe, note] + inputs + \
        libs(t) + [f"--export-dynamic-symbol={d}" for d in abi["defines"]]
    if not run_step(link, log):
        return None
    return bdir, exe


def readelf(args, path):
    tool = shutil.which("llvm-readelf") or shutil.which("readelf")
    r = subprocess.run([tool, "--wide"] + args + [path], capture_output=True, text=True)
    return r.stdout + r.stderr


def bsd_readelf_checks(t, exe, tally):
    """The smoke program is that OS's: OS/ABI byte (FreeBSD) and ident note, interpreter, NEEDED
    sonames, and every undefined dynamic symbol exported by that OS's libc per spec/libc.yaml
    (with its version node on FreeBSD, unversioned on NetBSD and OpenBSD)."""
    m = load_model()
    L = m.libc[t["os"]]
    abi = L["abi"]
    n = t["name"]
    osabi = open(exe, "rb").read(8)[7]
    checks = [("readelf: OS/ABI byte", osabi == abi["osabi"], f"EI_OSABI is {osabi}, want {abi['osabi']}")]
    notes = readelf(["-n"], exe)
    sect = re.search(r"Displaying notes found in: (\S+)\n(.*?)(?:\n\n|\Z)", notes, re.S)
    want = abi["note_name"]
    found = [(sec, body) for sec, body in re.findall(r"notes found in: (\S+)\n(.*?)(?=\nDisplaying|\Z)", notes, re.S)]
    ok_note = any(sec == abi["note_section"] and re.search(rf"^\s*{want}\s+0x0*4\b", body, re.M) for sec, body in found)
    checks.append((f"readelf: {abi['note_section']} note", ok_note and sect is not None,
                   f"no {abi['note_section']} note owned by {want}:\n{notes[-1500:]}"))
    # the note's description word (the OS version it claims)
    raw = subprocess.run(["llvm-objcopy", "--dump-section", f"{abi['note_section']}=/dev/stdout", exe, "/dev/null"],
                         capture_output=True) if shutil.which("llvm-objcopy") else None
    if raw is not None and raw.returncode == 0 and len(raw.stdout) >= 16:
        import struct
        namesz, descsz, ntype = struct.unpack_from("<III", raw.stdout, 0)
        desc = struct.unpack_from("<I", raw.stdout, 12 + ((namesz + 3) & ~3))[0]
        checks.append(("readelf: note type and version", ntype == abi["note_type"] and desc == abi["note_desc"],
                       f"type {ntype} desc {desc}, want {abi['note_type']} {abi['note_desc']}"))
    interp = re.search(r"Requesting program interpreter: ([^\]]+)\]", readelf(["-l"], exe))
    checks.append(("readelf: interpreter", interp is not None and interp.group(1) == abi["interp"],
                   f"interpreter {interp.group(1) if interp else None}, want {abi['interp']}"))
    dyn = readelf(["-d"], exe)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    sonames = [lib["soname"] for lib in L["libraries"]]
    checks.append(("readelf: NEEDED " + " ".join(sonames), sorted(needed) == sorted(sonames) or
                   (sonames[0] in needed and set(needed) <= set(sonames)),
                   f"NEEDED {needed}, want {sonames}"))
    exports = {e["symbol"]: e for e in L["exports"]}
    syms = readelf(["--dyn-syms"], exe)
    bad, seen = [], 0
    for line in syms.splitlines():
        f = line.split()
        if len(f) < 8 or f[6] != "UND" or not f[0].rstrip(":").isdigit():
            continue
        name = f[7]
        if f[4] == "WEAK" and name.startswith("_"):
            pass
        seen += 1
        base, _, ver = name.partition("@")
        ver = ver.lstrip("@").split(" ")[0]
        e = exports.get(base)
        if e is None:
            bad.append(f"{name}: not exported by {t['os']}'s libc per spec/libc.yaml")
        elif (e["version"] or "") != ver:
            bad.append(f"{name}: want version {e['version'] or '(none)'}")
    checks.append((f"readelf: {seen} undefined symbols exported per spec", seen > 0 and not bad,
                   "\n".join(bad[:40]) or "no undefined dynamic symbols found"))
    # the same binary against the OS's own symbol lists (spec/bsd_symbols.yaml), not the stubs
    from . import bsd_symbols as bsd_check
    checks += [("recorded: " + label, ok, detail) for label, ok, detail in
               bsd_check.checks(t, exe, os.path.join(os.path.dirname(exe), "libcio.a"), m)]
    for label, ok, detail in checks:
        tally.add(n, label, int(ok), int(not ok), 0, None if ok else detail)
        say(f"  {n:16} {label:40} {'ok' if ok else 'FAILED'}")
        if not ok:
            say("      " + detail.replace("\n", "\n      "))


def bsd_remote_run(t, exe, runner, tally):
    """--runner 'ssh host': the smoke program is piped to the host, run in a scratch directory there,
    and must print `smoke: ok`."""
    name = "cio-smoke-" + t["name"]
    script = (f"d=$(mktemp -d /tmp/cio.XXXXXX) && cat > $d/{name} && chmod +x $d/{name} && "
              f"cd $d && ./{name}; rc=$?; cd / && rm -rf $d; exit $rc")
    try:
        with open(exe, "rb") as f:
            r = subprocess.run(shlex.split(runner) + [script], stdin=f, capture_output=True, timeout=300)
        out = (r.stdout + r.stderr).decode(errors="replace")
        ok = r.returncode == 0 and "smoke: ok" in out
    except (OSError, subprocess.TimeoutExpired) as e:
        ok, out = False, str(e)
    tally.add(t["name"], "smoke program on " + runner, int(ok), int(not ok), 0, None if ok else out[-3000:])
    say(f"  {t['name']:16} {'smoke (runner)':40} {'ok' if ok else 'FAILED'}")
    say("      " + out.strip().replace("\n", "\n      "))


def bsd_checks(t, tally, args):
    log = []
    built = bsd_build(t, args.jobs, log)
    ok = built is not None
    tally.add(t["name"], "build libcio + smoke (no sysroot)", int(ok), int(not ok), 0, None if ok else "\n".join(log))
    say(f"  {t['name']:16} {'build libcio + smoke program':40} {'ok' if ok else 'FAILED'}")
    if not ok:
        say("      " + "\n".join(log)[-4000:].replace("\n", "\n      "))
        return
    bsd_readelf_checks(t, built[1], tally)
    if args.runner:
        bsd_remote_run(t, built[1], args.runner, tally)
