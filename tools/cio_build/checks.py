"""The checks that are not cmocka suites: headers, the cflags contract, install, examples, misuse
compile checks, the generator's own tests and the source-tree structure checks.
"""

import os
import re
import shutil
import subprocess
import sys

from .cmake import bsd_no_sysroot, cflags, cmd_gen
from .common import BOOTSTRAP_PACKAGES, BUILD, HOST, NATIVE_BSD, ROOT, say
from .spec import runner_cmd, spec_packages


def compile_check(t, src, extra, tally, label, expect_ok=True, expect_text=None):
    """One compile of `src` for target t counted as a test."""
    cc = ["clang"] if t["compiler"] == "clang" else [t["cc"]]
    cmd = cc + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"] + \
        cflags(t, for_clang=cc[0] == "clang") + extra + [src]
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    ok = (r.returncode == 0) == expect_ok and (expect_text is None or re.search(expect_text, out))
    if ok:
        tally.add(t["name"], label, 1, 0)
    else:
        tally.fail(t["name"], label, ("expected a diagnostic matching %r" % expect_text if not expect_ok
                                      else "compile failed") + "\n" + out[-3000:])
        say(f"  {t['name']:16} {label:28} FAILED\n" + "\n".join("      " + x for x in out.splitlines()[:40]))
    return ok


def header_checks(t, tally):
    """Targets without a runner: every generated header (and <cio.h>) must compile for them, and
    where the target has system headers, the conformance test's static asserts must hold."""
    tmp = os.path.join(BUILD, "checks", t["name"])
    os.makedirs(tmp, exist_ok=True)
    internal = os.path.join(ROOT, "platform", "internal")
    headers = [(f, []) for f in sorted(os.listdir(os.path.join(ROOT, "platform", "include", "cio")))
               if f.endswith(".h")]
    headers += [(f, [f"-I{internal}"]) for f in sorted(os.listdir(os.path.join(internal, "cio"))) if f.endswith(".h")]
    n_ok = 0
    for h, extra in headers + [("<cio.h>", [])]:
        inc = h if h.startswith("<") else f'"cio/{h}"'
        src = os.path.join(tmp, "hdr_" + re.sub(r"[^a-z0-9]", "_", h) + ".c")
        with open(src, "w") as f:
            f.write(f"#include {inc}\n#include {inc}\nint cio_check_{re.sub(r'[^a-z0-9]', '_', h)};\n")
        n_ok += compile_check(t, src, extra, tally, f"header {h}")
    if t["runner"] == "none" and t["os"] == "linux" or t["os"] == "wasi":
        compile_check(t, os.path.join(ROOT, "platform", "check", "conformance.c"),
                      ["-DCIO_CONFORMANCE_STATIC_ONLY=1", f"-I{internal}"], tally, "conformance (static asserts)")
    say(f"  {t['name']:16} {'headers':28} {n_ok}/{len(headers) + 1} compile")


def cflags_check(t, tally):
    """`clang $(python3 build.py cflags --target T) -c x.c` compiles <cio.h> for T."""
    if shutil.which("clang") is None:
        tally.fail(t["name"], "cflags contract", "clang not installed")
        return
    obj = os.path.join(BUILD, "checks", t["name"], "cflags_probe.o")
    os.makedirs(os.path.dirname(obj), exist_ok=True)
    cmd = ["clang"] + cflags(t) + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-c",
                                   os.path.join(ROOT, "tests", "cflags_probe.c"), "-o", obj]
    r = subprocess.run(cmd, capture_output=True, text=True)
    why = r.stderr[-2000:] if r.returncode != 0 else toolchain_drift(t)
    if not why:
        tally.add(t["name"], "cflags contract", 1, 0)
    else:
        tally.fail(t["name"], "cflags contract", why)
        say(f"  {t['name']:16} {'cflags contract':28} FAILED\n{why}")


def toolchain_drift(t):
    """For a BSD with no sysroot: the flags its toolchain file builds the library with
    (CMAKE_C_FLAGS_INIT) that `cflags` leaves out, as a message; None when there are none."""
    if not bsd_no_sysroot(t):
        return None
    tc_dir = os.path.join(ROOT, "platform", "cmake")
    text = open(os.path.join(tc_dir, t["name"] + ".cmake")).read()
    m = re.search(r'^set\(CMAKE_C_FLAGS_INIT "([^"]*)"\)', text, re.M)
    if m is None:
        return f"platform/cmake/{t['name']}.cmake sets no CMAKE_C_FLAGS_INIT"

    def norm(flags):  # -Ipath / -isystem path as ('-I', normalised path); others as they are
        out, it = [], iter(flags)
        for f in it:
            if f == "-isystem":
                out.append(("-isystem", os.path.normpath(next(it, ""))))
            elif f.startswith("-I"):
                out.append(("-I", os.path.normpath(f[2:] or next(it, ""))))
            else:
                out.append((f, None))
        return out
    want = norm(m.group(1).replace("${CMAKE_CURRENT_LIST_DIR}", tc_dir).split())
    have = norm(cflags(t))
    missing = [" ".join(x for x in f if x) for f in want if f not in have]
    return ("`build.py cflags` lacks what the library is built with: " + " ".join(missing)) if missing else None


def install_checks(bdir, tally, jobs):
    """Installs the host build into a scratch prefix and builds a consumer through pkg-config and
    through find_package(cio)."""
    failed_before = tally.failed
    prefix = os.path.join(BUILD, "install-test")
    shutil.rmtree(prefix, ignore_errors=True)
    steps = [("install", ["cmake", "--install", bdir, "--prefix", prefix])]
    src = os.path.join(ROOT, "tests", "install")
    pc = os.path.join(prefix, "lib", "pkgconfig")
    exe = os.path.join(prefix, "consumer-pc")
    env = dict(os.environ, PKG_CONFIG_PATH=pc)
    for label, cmd in steps:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tally.fail(HOST, label, r.stdout[-2000:] + r.stderr[-2000:])
            return

    def tree(d):
        return {os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs}
    public = tree(os.path.join(ROOT, "include")) | tree(os.path.join(ROOT, "platform", "include"))
    extra = sorted(tree(os.path.join(prefix, "include")) - public)
    tally.add(HOST, "install: public headers only", int(not extra), int(bool(extra)), 0,
              f"installed beyond include/ and platform/include/: {extra}" if extra else None)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "--static", "cio"], capture_output=True, text=True,
                           env=env)
    r = subprocess.run(["cc", os.path.join(src, "consumer.c"), "-o", exe] + flags.stdout.split(),
                       capture_output=True, text=True) if flags.returncode == 0 else flags
    ok = r.returncode == 0 and subprocess.run([exe], capture_output=True).returncode == 0
    tally.add(HOST, "install + pkg-config consumer", int(ok), int(not ok), 0, None if ok else r.stderr[-2000:])
    cb = os.path.join(prefix, "consumer-cmake")
    r1 = subprocess.run(["cmake", "-S", src, "-B", cb, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"],
                        capture_output=True, text=True)
    r2 = subprocess.run(["cmake", "--build", cb], capture_output=True, text=True) if r1.returncode == 0 else r1
    ok = r2.returncode == 0 and subprocess.run([os.path.join(cb, "consumer")], capture_output=True).returncode == 0
    tally.add(HOST, "install + find_package consumer", int(ok), int(not ok), 0,
              None if ok else (r2.stdout + r2.stderr)[-2000:])
    say(f"  {HOST:16} {'install (pkg-config, cmake)':28} {'ok' if tally.failed == failed_before else 'see failures'}")


def example_checks(t, bdir, tally, env):
    """The README's examples run and do what they say (on every target that builds them)."""
    exdir = os.path.join(bdir, "examples")
    if not os.path.isdir(exdir):
        return
    work = os.path.join(bdir, "example-run")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    suffix = {"windows": ".exe", "wasi": ".wasm"}.get(t["os"], "")
    checks = [("save_data", [], lambda out: "save complete" in out and all(
                  open(os.path.join(work, f)).read() == "hello from cio\n" for f in ("saveA.txt", "saveB.txt"))),
              ("save_data", ["--inline"], lambda out: "save complete" in out),
              ("cancel_read", [], lambda out: "returned Canceled" in out),
              ("connect_first", [], lambda out: "localhost: connected to" in out)]
    for flag in ([], ["--evented"]):  # the idle-timeout line server (issue 19), on both backends
        checks += [("idle_server", flag, lambda out: "summary: 5 lines echoed, 1 idle connection closed" in out
                    and 'the server said "idle: closing"' in out)]
    # run_jobs runs the OS's own tools: POSIX's echo, true, sleep and false; under Wine, which has none
    # of those, cmd's echo and exit and ping's 30 one-second rounds
    if t["os"] != "windows":
        echo, ok_, sleep, fail = ["echo"], ["true"], ["sleep", "30"], ["false"]
    else:
        echo, ok_, sleep, fail = ["cmd", "/c", "echo"], ["cmd", "/c", "exit", "0"], \
            ["ping", "-n", "30", "127.0.0.1"], ["cmd", "/c", "exit", "1"]
    for flag in ([], ["--evented"]):
        checks += [
            ("run_jobs", flag + ["-j", "2"] + echo + ["one", "::"] + echo + ["two", "::"] + ok_,
             lambda out: "summary: 3 ok, 0 failed" in out and "\none" in out and "\ntwo" in out),
            # the failure cancels the running sleep; the last one never starts, long before 30 s
            ("run_jobs", flag + ["-j", "2"] + sleep + ["::"] + fail + ["::"] + sleep,
             lambda out: "summary: 0 ok, 1 failed, 1 canceled, 1 not run" in out, 1)]
    if t["os"] == "windows" and os.path.exists(os.path.join(exdir, "http_server.exe")):
        for evented in (False, True):
            label = "example http_server" + (" --evented" if evented else "")
            good, detail = http_server_check(t, os.path.join(exdir, "http_server.exe"), work, env, evented)
            tally.add(t["name"], label, int(good), int(not good), 0, None if good else detail)
            say(f"  {t['name']:16} {label:28} {'ok' if good else 'FAILED'}")
            if not good:
                say("      " + detail.replace("\n", "\n      "))
    for name, args, ok, *code in checks:
        exe = os.path.join(exdir, name + suffix)
        if not os.path.exists(exe):
            continue
        label = f"example {name} {' '.join(args)}".strip()
        try:
            r = subprocess.run(runner_cmd(t) + [exe] + args, capture_output=True, text=True, cwd=work, env=env,
                               timeout=20 if name == "run_jobs" else 120)
            good = r.returncode == (code[0] if code else 0) and ok(r.stdout)
            detail = (r.stdout + r.stderr)[-2000:]
            if "--evented" in args and "no Evented backend on this target" in r.stderr:
                tally.add(t["name"], label, 0, 0, 1, None)  # a target without the backend (CIO_HAVE_EVENTED 0)
                say(f"  {t['name']:16} {label:28} skipped (no Evented backend here)")
                continue
        except (subprocess.TimeoutExpired, OSError) as e:
            good, detail = False, str(e)
        tally.add(t["name"], label, int(good), int(not good), 0, None if good else detail)
        say(f"  {t['name']:16} {label:28} {'ok' if good else 'FAILED'}")
        if not good:
            say("      " + detail.replace("\n", "\n      "))


def http_server_check(t, exe, work, env, evented):
    """examples/http_server under Wine (Linux runs it as test_http_server): 10 keep-alive clients, 40
    requests each, every fifth a 256 KiB file (cio_net_write_file), then SIGINT: it answers every
    request and exits 0 saying so. Returns (good, detail)."""
    import http.client
    import random
    import signal
    import socket
    import threading
    import time
    body = random.Random(24).randbytes(256 * 1024)
    with open(os.path.join(work, "big.bin"), "wb") as f:
        f.write(body)
    with socket.socket() as probe:  # a free port (the server binds it again at once)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = (["--evented"] if evented else []) + ["--port", str(port), "--root", "."]
    p = subprocess.Popen(runner_cmd(t) + [exe] + args, cwd=work, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    answered, errors = [], []

    def client():
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            for i in range(40):
                c.request("GET", "/files/big.bin" if i % 5 == 0 else "/")
                r = c.getresponse()
                b = r.read()
                if r.status != 200 or (i % 5 == 0 and b != body):
                    errors.append(f"request {i}: status {r.status}, {len(b)} bytes")
                    return
                answered.append(1)
            c.close()
        except OSError as e:
            errors.append(str(e))

    try:
        for _ in range(300):  # until it listens (Wine starts in a few seconds)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        th = [threading.Thread(target=client) for _ in range(10)]
        for x in th:
            x.start()
        for x in th:
            x.join()
        p.send_signal(signal.SIGINT)  # Wine turns it into the console's Ctrl-C
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return False, "no exit within 60 s of SIGINT\n" + (out or "")[-1500:]
    good = not errors and len(answered) == 400 and p.returncode == 0 and "400 requests answered" in out
    return good, f"{len(answered)} of 400 answered, exit {p.returncode}, {errors[:3]}\n" + out[-1500:]


def misuse_checks(tally):
    """cio_sig is a real type: misuse warns with the project's flags on gcc and clang."""
    host = {"name": HOST, "compiler": "gcc", "cc": "gcc", "cflags": [], "os": "linux", "triple": "x86_64-linux-gnu",
            "runner": "native"}
    cases = [
        ("int_as_sig.c", {"gcc": r"enum conversion.*c\+\+-compat", "clang": r".int. to .cio_sig..*sign-conversion"}),
        ("enum_compare.c", {"gcc": r".cio_sig. and .cio_err..*enum-compare", "clang": r"enum-compare"}),
    ]
    for comp in ("gcc", "clang"):
        if shutil.which(comp) is None:
            if NATIVE_BSD:
                say(f"  {HOST:16} misuse ({comp}): {comp} not installed here, not checked")
                continue
            tally.fail(HOST, f"misuse ({comp})", f"{comp} not installed")
            continue
        t = dict(host, compiler="gcc" if comp == "gcc" else "clang-host", cc=comp)
        flags = ["-Wconversion"] + (["-Wc++-compat"] if comp == "gcc" else [])
        for src, expect in cases:
            path = os.path.join(ROOT, "tests", "misuse", src)
            compile_check(t, path, flags, tally, f"misuse {src} ({comp})", expect_ok=False,
                          expect_text=expect[comp])
        compile_check(t, os.path.join(ROOT, "tests", "misuse", "correct_use.c"), flags, tally,
                      f"misuse correct_use.c ({comp})")


def gen_selftests(tally):
    r = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", os.path.join(ROOT, "gen", "tests"),
                        "-t", ROOT, "-v"], capture_output=True, text=True, cwd=ROOT)
    out = r.stderr
    ran = re.search(r"^Ran (\d+) tests?", out, re.M)
    n = int(ran.group(1)) if ran else 0
    fails = re.search(r"FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?", out)
    bad = 0
    if fails:
        bad = int(fails.group(1) or 0) + int(fails.group(2) or 0)
    if n == 0:
        tally.fail(HOST, "gen unittest", "ran no test\n" + out[-2000:])
    else:
        tally.add(HOST, "gen unittest", n - bad, bad, 0, out[-4000:] if bad else None)
    say(f"  {'generator':16} {'unittest':28} {n - bad} passed, {bad} failed")
    if bad:
        print(out[-4000:])
    stray = [p for p in BOOTSTRAP_PACKAGES if p not in spec_packages("base")]
    tally.add(HOST, "bootstrap packages in spec", int(not stray), int(bool(stray)), 0,
              f"build.py installs {stray} before reading spec/: add them to packages: base" if stray else None)
    rc = cmd_gen(True)
    if rc == 0:
        tally.add(HOST, "gen --check", 1, 0)
    else:
        tally.fail(HOST, "gen --check", "platform/ is stale")
    say(f"  {'generator':16} {'gen --check':28} {'ok' if rc == 0 else 'FAILED'}")
    structure_checks(tally)


# A hand-written file is reviewed at about 600 lines and never grows past this (CONTRIBUTING.md).
MAX_LINES = 800

# The format check (.clang-format; `clang-format --dry-run -Werror` over src/ include/ tests/
# examples/ bench/*.c, through tools/format.py --check). On since the tree was reformatted (2026-12-05).
FORMAT_CHECK = True


def structure_checks(tally):
    """The tree's shape: no call cycle between the C files of src/ and no import cycle in the Python
    packages (tools/callgraph.py); no hand-written file in src/ over MAX_LINES lines."""
    graph = os.path.join(ROOT, "tools", "callgraph.py")
    for label, args in (("src/ call cycles", [os.path.join(ROOT, "src")]),
                        ("gen/ import cycles", ["--python", os.path.join(ROOT, "gen")]),
                        ("tools/cio_build import cycles", ["--python", os.path.join(ROOT, "tools", "cio_build")])):
        r = subprocess.run([sys.executable, graph] + args, capture_output=True, text=True)
        ok = r.returncode == 0
        tally.add(HOST, label, int(ok), int(not ok), 0, None if ok else (r.stdout + r.stderr)[-4000:])
        say(f"  {'tools':16} {label:28} {'no cycle' if ok else 'FAILED'}")
        if not ok:
            print((r.stdout + r.stderr)[-4000:])
    big = []
    for r, _, fs in os.walk(os.path.join(ROOT, "src")):
        for f in fs:
            if f.endswith((".c", ".h")):
                path = os.path.join(r, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    n = sum(1 for _ in fh)
                if n > MAX_LINES:
                    big.append(f"{os.path.relpath(path, ROOT)}: {n} lines")
    tally.add(HOST, f"src/ files <= {MAX_LINES} lines", int(not big), int(bool(big)), 0,
              "split these (CONTRIBUTING.md): " + "; ".join(sorted(big)) if big else None)
    say(f"  {'tools':16} {'src/ file sizes':28} {'ok' if not big else 'FAILED: ' + '; '.join(sorted(big))}")
    format_check(tally)


def format_check(tally):
    """clang-format --dry-run -Werror over the C sources (tools/format.py --check), when FORMAT_CHECK."""
    if not FORMAT_CHECK:
        say(f"  {'tools':16} {'clang-format':28} off (FORMAT_CHECK in tools/cio_build/checks.py)")
        return
    if shutil.which("clang-format") is None:
        tally.fail(HOST, "clang-format", "clang-format is not installed (packages: host-tests)")
        return
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "format.py"), "--check"],
                       capture_output=True, text=True)
    ok = r.returncode == 0
    tally.add(HOST, "clang-format", int(ok), int(not ok), 0,
              None if ok else "run tools/format.sh:\n" + (r.stdout + r.stderr)[-4000:])
    say(f"  {'tools':16} {'clang-format':28} {'ok' if ok else 'FAILED (run tools/format.sh)'}")
