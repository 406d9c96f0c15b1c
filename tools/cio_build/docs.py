"""The API reference and its checks: `python3 build.py docs` runs Doxygen (docs/Doxyfile) over the
public headers and the pages of docs/ into build/docs/html; `python3 build.py test` (host) counts
four checks: the reference builds with zero warnings (Doxygen itself requires every parameter and
return value documented), every public function's comment says whether it is a cancellation point
(`@cancellation`), every ```c block of docs/*.md compiles (each is a whole program), and every
`Set.Name \\errset_<c_name>` pair in a header names one set of spec/errors.yaml (the alias renders
the members; the name before it must be that set's).
"""

import glob
import os
import re
import shutil
import subprocess

from .common import BUILD, HOST, ROOT, say
from .deps import ensure_packages
from .spec import load_model, spec_packages

DOCS_OUT = os.path.join(BUILD, "docs")
WARNINGS = os.path.join(DOCS_OUT, "warnings.log")


def build_docs(allow_install):
    """Runs Doxygen; returns (ok, the warnings as lines, a message when it could not run)."""
    miss = ensure_packages(spec_packages("docs"), allow_install)
    if miss or shutil.which("doxygen") is None:
        return False, [], "missing Debian packages: " + (" ".join(miss) or "doxygen")
    shutil.rmtree(DOCS_OUT, ignore_errors=True)
    os.makedirs(DOCS_OUT)
    r = subprocess.run(["doxygen", os.path.join("docs", "Doxyfile")], cwd=ROOT, capture_output=True, text=True)
    warnings = []
    if os.path.exists(WARNINGS):
        warnings = [ln for ln in open(WARNINGS, encoding="utf-8", errors="replace").read().splitlines() if ln.strip()]
    ok = r.returncode == 0 and not warnings and os.path.exists(os.path.join(DOCS_OUT, "html", "index.html"))
    msg = "" if ok else (r.stdout + r.stderr)[-2000:]
    return ok, warnings, msg


def cmd_docs(args):
    ok, warnings, msg = build_docs(not args.no_install)
    for w in warnings:
        say(w)
    if msg:
        say(msg)
    say(f"docs: {len(warnings)} warnings; {os.path.relpath(os.path.join(DOCS_OUT, 'html', 'index.html'), ROOT)}"
        + ("" if ok else " (FAILED)"))
    return 0 if ok else 1


FENCE = re.compile(r"^```c[ \t]*\n(.*?)^```", re.M | re.S)


def code_blocks():
    """(page, line, code) for every ```c block of docs/*.md."""
    out = []
    for page in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        text = open(page, encoding="utf-8").read()
        for m in FENCE.finditer(text):
            out.append((os.path.relpath(page, ROOT), text.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


def sample_checks(tally):
    """Every ```c block of docs/*.md compiles as a program of its own against the public headers."""
    tmp = os.path.join(BUILD, "checks", "docs")
    os.makedirs(tmp, exist_ok=True)
    blocks = code_blocks()
    bad = []
    for i, (page, line, code) in enumerate(blocks):
        src = os.path.join(tmp, f"sample_{i}.c")
        with open(src, "w", encoding="utf-8") as f:
            f.write(f'#line {line} "{page}"\n' + code)
        r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", src, "-o", src[:-2] + ".o",
                            "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "platform", "include")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"{page}:{line}:\n{r.stderr[-1500:]}")
    if not blocks:
        bad.append("docs/*.md: no ```c block found (the check would prove nothing)")
    tally.add(HOST, "docs: code samples compile", len(blocks) - len(bad) if blocks else 0, len(bad), 0,
              "\n".join(bad) or None)
    say(f"  {HOST:16} {'docs: code samples':28} {len(blocks) - len(bad)}/{len(blocks)} compile")
    for b in bad:
        say("      " + b.replace("\n", "\n      "))


SET_REF = re.compile(r"([A-Za-z][A-Za-z0-9.]*)\s+\\errset_([a-z0-9_]+)")


def errset_name_checks(tally):
    """`File.OpenError \\errset_file_open` in a header: the alias is the set the text names."""
    by_c = {s["c_name"]: s["name"] for s in load_model().sets}
    bad, n = [], 0
    for h in public_headers():
        text = open(h, encoding="utf-8").read()
        for m in SET_REF.finditer(text):
            n += 1
            name, c = m.group(1).rstrip("."), m.group(2)
            if by_c.get(c) != name:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{os.path.relpath(h, ROOT)}:{line}: '{name} \\errset_{c}' "
                           f"(\\errset_{c} is {by_c.get(c, 'no set')})")
    tally.add(HOST, "docs: error set names", int(not bad), int(bool(bad)), 0, "\n".join(bad) or None)
    say(f"  {HOST:16} {'docs: error set names':28} {n} checked, {len(bad)} wrong")
    for b in bad:
        say("      " + b)


PROTO = re.compile(r"^(?:static inline )?(?!typedef)(?:const )?(?:struct )?\w+[\s*]+(cio_(?!_)\w+)\(", re.M)


def public_headers():
    return sorted(glob.glob(os.path.join(ROOT, "include", "**", "*.h"), recursive=True) +
                  glob.glob(os.path.join(ROOT, "platform", "include", "**", "*.h"), recursive=True))


def cancellation_checks(tally):
    """Every public function's doc comment (the /** block right above it) has @cancellation."""
    bad, n = [], 0
    for h in public_headers():
        text = open(h, encoding="utf-8").read()
        for m in PROTO.finditer(text):
            n += 1
            before = text[:m.start()].rstrip()
            doc = before[before.rfind("/**"):] if before.endswith("*/") else ""
            if "@cancellation" not in doc:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{os.path.relpath(h, ROOT)}:{line}: {m.group(1)}: no @cancellation in its /** comment")
    tally.add(HOST, "docs: cancellation points", int(not bad), int(bool(bad)), 0, "\n".join(bad) or None)
    say(f"  {HOST:16} {'docs: cancellation points':28} {n - len(bad)}/{n} functions say")
    for b in bad:
        say("      " + b)


def docs_checks(tally, allow_install):
    ok, warnings, msg = build_docs(allow_install)
    detail = "\n".join(warnings[:60]) + ("\n" + msg if msg else "")
    tally.add(HOST, "docs: doxygen, zero warnings", int(ok), int(not ok), 0, None if ok else detail)
    say(f"  {HOST:16} {'docs: doxygen':28} {'ok' if ok else 'FAILED'} ({len(warnings)} warnings)")
    if not ok:
        say("      " + detail.replace("\n", "\n      "))
    cancellation_checks(tally)
    sample_checks(tally)
    errset_name_checks(tally)
