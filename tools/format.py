#!/usr/bin/env python3
"""The C files clang-format keeps in shape (.clang-format), and the two things done with them.

    python3 tools/format.py            reformat them in place
    python3 tools/format.py --check    change nothing; exit 1 and name the files that would change
    python3 tools/format.py --count    change nothing; print how many lines the reformat would change

The files: src/, include/, tests/ and examples/ (.c and .h, as git tracks them, or as they stand
when the tree is not a git checkout) and bench/*.c. Generated code (platform/) is not among them.
"""
import difflib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ("src", "include", "tests", "examples")


def files():
    out = []
    for d in DIRS:
        for r, _, fs in os.walk(os.path.join(ROOT, d)):
            out += [os.path.join(r, f) for f in fs if f.endswith((".c", ".h"))]
    bench = os.path.join(ROOT, "bench")
    if os.path.isdir(bench):
        out += [os.path.join(bench, f) for f in os.listdir(bench) if f.endswith(".c")]
    return sorted(out)


def formatted(path, text):
    """The file as clang-format leaves it, run until it stops changing (a reflowed comment can need
    a second pass)."""
    for _ in range(4):
        r = subprocess.run(["clang-format", "--style=file", "--assume-filename=" + path], input=text,
                           capture_output=True, text=True, check=True)
        if r.stdout == text:
            break
        text = r.stdout
    return text


def changed_lines(before, after):
    a, b = before.splitlines(), after.splitlines()
    n = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            n += max(i2 - i1, j2 - j1)
    return n


def main(argv):
    mode = argv[1] if len(argv) > 1 else ""
    if mode not in ("", "--check", "--count"):
        print(__doc__.strip())
        return 2
    if mode == "--check":
        r = subprocess.run(["clang-format", "--style=file", "--dry-run", "-Werror"] + files())
        return 0 if r.returncode == 0 else 1
    total = nfiles = 0
    for path in files():
        with open(path, encoding="utf-8") as f:
            before = f.read()
        after = formatted(path, before)
        if after == before:
            continue
        nfiles += 1
        total += changed_lines(before, after)
        if mode == "":
            with open(path, "w", encoding="utf-8") as f:
                f.write(after)
    verb = "changed" if mode == "" else "would change"
    print(f"clang-format {verb} {total} lines in {nfiles} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
