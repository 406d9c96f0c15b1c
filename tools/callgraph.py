#!/usr/bin/env python3
"""Cross-file references among the C files under one directory (default: src/), and the cycles.

    python3 tools/callgraph.py [DIR]
    python3 tools/callgraph.py --python PACKAGE_DIR    (the same for a Python package's imports)

Lists, per pair of files, the functions and variables a file uses that another file of DIR defines
(with external linkage), then the cycles: groups of files each of which reaches every other through
such uses (A uses B and B uses A is a loop; so is A -> B -> C -> A). Exits 1 when there is a cycle.
A name defined in several files (alternatives the build chooses between, such as fiber_<arch>.c)
counts as a use of each, except in a file that defines it itself. Calls through pointers (vtables, poller ops, hooks) are not uses: that is
how a lower file reaches up without a loop. The C is read with a tokenizer, not a compiler: comments,
strings and preprocessor lines are dropped, a definition is a name at file scope followed by its
parameter list and a body, or a file-scope object that is neither static, extern nor a typedef.
"""
import os
import re
import sys

TOKEN = re.compile(r"[A-Za-z_]\w*|\S")
IDENT = re.compile(r"[A-Za-z_]")


def strip(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\\n])*'", "''", src)
    return re.sub(r"^\s*#(?:\\\n|[^\n])*", " ", src, flags=re.M)


def scan(path):
    """(names the file defines with external linkage, identifiers it uses)."""
    with open(path, encoding="utf-8") as f:
        toks = TOKEN.findall(strip(f.read()))
    defs, uses = set(), set()
    depth = 0
    start = 0  # first token of the current file-scope declaration
    i = 0
    body = False  # the next `{` at file scope opens a function body (not a struct, union or enum)
    in_body = False
    while i < len(toks):
        t = toks[i]
        if t == "{":
            if depth == 0:
                in_body, body = body, False
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0 and in_body:  # after `struct s {...}` the declaration goes on (`} name;`)
                start = i + 1
        elif depth == 0 and t in (";", "=", "["):
            decl = toks[start:i]
            if (decl and IDENT.match(decl[-1]) and "(" not in decl
                    and not {"static", "extern", "typedef"} & set(decl)):
                defs.add(decl[-1])
            if t == ";":
                start = i + 1
        elif depth == 0 and IDENT.match(t) and toks[i + 1:i + 2] == ["("]:
            j, nest = i + 1, 0
            while j < len(toks):
                nest += {"(": 1, ")": -1}.get(toks[j], 0)
                if nest == 0:
                    break
                j += 1
            if toks[j + 1:j + 2] == ["{"]:  # a function definition: skip its parameters
                if "static" not in toks[start:i]:
                    defs.add(t)
                body = True
                i = j
        elif depth > 0 and IDENT.match(t):
            uses.add(t)
        i += 1
    return defs, uses


def cycles(files, edges):
    """Strongly connected groups of more than one file (Tarjan)."""
    graph = {f: sorted({b for (a, b) in edges if a == f}) for f in files}
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for f in files:
        if f not in index:
            visit(f)
    return found


PY_FROM = re.compile(r"^\s*from\s+(\.+)(\w*)\s+import\s+\(?([\w\s,]+?)\)?\s*(?:#.*)?$", re.M)


def python_imports(d):
    """--python DIR: the modules of one package and which of them each imports (relative imports:
    `from .x import ...`, `from . import x, y`), at any depth in the file (lazy imports count)."""
    mods = sorted(f[:-3] for f in os.listdir(d) if f.endswith(".py") and f != "__init__.py")
    edges = {}
    for m in mods:
        with open(os.path.join(d, m + ".py"), encoding="utf-8") as f:
            text = f.read()
        for dots, mod, names in PY_FROM.findall(text):
            if dots != ".":
                continue
            targets = [mod] if mod else [n.strip() for n in names.replace("\n", " ").split(",")]
            for t in targets:
                if t in mods and t != m:
                    edges.setdefault((m + ".py", t + ".py"), set()).add("import")
    return [m + ".py" for m in mods], edges


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if sys.argv[1:2] == ["--python"]:
        files, edges = python_imports(sys.argv[2])
        for (a, b), _ in sorted(edges.items()):
            print(f"{a} -> {b}")
        found = cycles(files, edges)
        print("cycles:", "; ".join(" ".join(g) for g in found) if found else "none")
        return 1 if found else 0
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "src")
    files = sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs if f.endswith(".c"))
    info = {f: scan(os.path.join(d, f)) for f in files}
    owners = {}
    for f, (defs, _) in info.items():
        for name in defs:
            owners.setdefault(name, []).append(f)
    edges = {}
    for f, (_, uses) in info.items():
        for name in uses:
            if f in owners.get(name, []):
                continue  # its own definition (where alternatives each define it, the file's own)
            for g in owners.get(name, []):
                if g != f:
                    edges.setdefault((f, g), set()).add(name)
    for (a, b), names in sorted(edges.items()):
        print(f"{a} -> {b}: {', '.join(sorted(names))}")
    found = cycles(files, edges)
    print("cycles:", "; ".join(" ".join(g) for g in found) if found else "none")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
