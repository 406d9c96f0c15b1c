"""Running the cmocka suites (natively, under QEMU, Wine or Node) and counting their results.
"""

import json
import os
import re
import subprocess
import time

from .common import BUILD, RESULTS, ROOT, TEST_TIMEOUT, say
from .faults import FAULT_COVERED
from .spec import runner_cmd


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []
        self.per_target = {}
        self.faults = {}  # target -> call site -> faults its test_faults run covered
        self.backends = {}  # target -> backend -> status -> set of (suite, test) (tests/backends.h names)

    def add(self, target, name, passed, failed, skipped=0, detail=None):
        self.passed += passed
        self.failed += failed
        self.skipped += skipped
        pt = self.per_target.setdefault(target, {"passed": 0, "failed": 0, "skipped": 0})
        pt["passed"] += passed
        pt["failed"] += failed
        pt["skipped"] += skipped
        if failed:
            self.failures.append(f"{target}: {name}" + (f": {detail}" if detail else ""))

    def fail(self, target, name, detail):
        self.add(target, name, 0, 1, 0, detail)


CMOCKA_PASSED = re.compile(r"^\[  PASSED  \] (\d+) test", re.M)


CMOCKA_FAILED = re.compile(r"^\[  FAILED  \] (\d+) test", re.M)


CMOCKA_SKIPPED = re.compile(r"^\[  SKIPPED \] (\d+) test", re.M)


# One test's result line, "[       OK ] evented/iocp: test_x": the backend is the name's prefix
# (tests/backends.h CIO_TESTS). A failure's name appears twice (at the test and in the summary): sets.
CMOCKA_TEST = re.compile(r"^\[ +(OK|SKIPPED|FAILED) +\] ([a-z_]+(?:/[a-z_]+)?): (\S+)\s*$", re.M)


def tally_backends(tally, target, suite, out):
    per = tally.backends.setdefault(target, {})
    for status, backend, test in CMOCKA_TEST.findall(out):
        per.setdefault(backend, {}).setdefault(status, set()).add((suite, test))


def backend_report(tally):
    """Lines: per target with more than one backend, each backend's passed/skipped/failed counts, and how
    many tests passed on threaded but were skipped on each other backend (their names in
    build/backends.txt)."""
    lines, detail = [], []
    for target in sorted(tally.backends):
        per = tally.backends[target]
        if len(per) < 2:
            continue
        parts = []
        for b in sorted(per):
            c = {k: len(per[b].get(k, ())) for k in ("OK", "SKIPPED", "FAILED")}
            parts.append(f"{b} {c['OK']} passed, {c['SKIPPED']} skipped, {c['FAILED']} failed")
        lines.append(f"  {target:16} " + "; ".join(parts))
        threaded_ok = per.get("threaded", {}).get("OK", set())
        for b in sorted(per):
            if b == "threaded":
                continue
            only = sorted(t for t in threaded_ok if t in per[b].get("SKIPPED", set()))
            if only:
                lines.append(f"  {target:16}   passed on threaded, skipped on {b}: {len(only)} (build/backends.txt)")
                detail += [f"{target} {b} skips what threaded passes: {suite} {test}" for suite, test in only]
    if detail:
        os.makedirs(BUILD, exist_ok=True)
        with open(os.path.join(BUILD, "backends.txt"), "w") as f:
            f.write("\n".join(detail) + "\n")
    return lines


def wine_env():
    prefix = os.path.join(BUILD, "wineprefix")
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    env.pop("DISPLAY", None)
    if not os.path.exists(os.path.join(prefix, "system.reg")):
        say("wine: creating a fresh prefix in build/wineprefix")
        subprocess.run(["wineboot", "-i"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=300)
        subprocess.run(["wineserver", "-w"], env=env, timeout=300)
    return env


def test_executables(bdir):
    out = []
    for f in sorted(os.listdir(bdir)):
        p = os.path.join(bdir, f)
        if f.startswith("test_") and os.path.isfile(p) and (os.access(p, os.X_OK) or f.endswith(".exe")):
            if f.endswith((".wasm", ".exe")) or "." not in f:
                out.append(p)
    return out


VALGRIND = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite", "--suppressions=" + os.path.join(ROOT, "tests", "valgrind.supp")]


def run_suite(t, exe, tally, env, verbose, prefix=()):
    cmd = list(prefix) + runner_cmd(t) + [exe]
    name = os.path.basename(exe)
    start = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TEST_TIMEOUT,
                           cwd=os.path.dirname(exe), errors="replace")
    except subprocess.TimeoutExpired:
        tally.fail(t["name"], name, f"timed out after {TEST_TIMEOUT}s")
        say(f"  {t['name']:16} {name:28} TIMEOUT")
        return
    out = r.stdout + r.stderr
    p = sum(int(x) for x in CMOCKA_PASSED.findall(out))
    f = sum(int(x) for x in CMOCKA_FAILED.findall(out))
    s = sum(int(x) for x in CMOCKA_SKIPPED.findall(out))
    detail = None
    if r.returncode != 0 and f == 0:
        f = 1
        detail = f"exit status {r.returncode} without a cmocka failure line"
    if p + f + s == 0:
        f = 1
        detail = "ran no test (no cmocka summary)"
    tally.add(t["name"], name, p, f, s, detail)
    tally_backends(tally, t["name"], name, out)
    for m in FAULT_COVERED.finditer(out):  # tests/test_faults.c: what each passing case covered
        tally.faults.setdefault(t["name"], {}).setdefault(m.group(1), set()).add(m.group(2))
    status = "ok" if f == 0 else "FAILED"
    say(f"  {t['name']:16} {name:28} {p} passed, {f} failed, {s} skipped  ({time.time() - start:.1f}s) {status}")
    if f or verbose:
        for line in out.splitlines():
            if f == 0 or "FAIL" in line or "ERROR" in line or "error" in line.lower() or "differs" in line \
                    or "spec" in line:
                print("      " + line)


def save_results(results):
    os.makedirs(BUILD, exist_ok=True)
    old = {}
    if os.path.exists(RESULTS):
        try:
            old = json.load(open(RESULTS))
        except (OSError, ValueError):
            old = {}
    old.update(results)
    with open(RESULTS, "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)
