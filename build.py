#!/usr/bin/env python3
"""cio's one driver.

    python3 build.py                      regenerate platform/, build every target this machine can
                                          build, print the target matrix
    python3 build.py gen [--check]        regenerate platform/ from spec/ (--check: fail if stale)
    python3 build.py build [--target T]   build one target (default: the host), or `all`
    python3 build.py test [--target T]    run every suite on every default target this machine can
                                          run (or T, or `all`); ends with `tests: N passed, M failed`
    python3 build.py test --fuzz          also fuzz the DNS parser for --fuzz-seconds (default 60)
    python3 build.py targets              the target matrix with the last results
    python3 build.py cflags --target T    compiler flags for a file that includes <cio.h> for T
    python3 build.py libs --target T      linker flags for the library built by `build --target T`
    python3 build.py fresh-check [--sources switch|list|deb822] [--expect-passed N]
                                          the two commands above on a bare Debian 12 root
                                          (debootstrap + chroot; ci/fresh_check.py says what it proves)
    python3 build.py bench [--rounds N] [--seconds S] [--only B3,B7]
                                          the benchmarks against libuv, liburing, pthreads, swapcontext
                                          (a Release -O2 build in build/bench; bench/README.md)

Options: --sanitize address,undefined | thread (host only), --valgrind (host suites under memcheck),
--soak (host suites with a random CIO_SOAK_SEED, printed, and CIO_SOAK_SECONDS=60), --jobs N,
--no-install (never apt-get), --no-wait (fail at once instead of waiting for another run).
Every command but cflags, libs and targets holds build/.lock (flock) while it runs: a second run in
the same checkout waits for the first (saying so), and the lock goes when the run ends, however it
ends (Ctrl-C, kill).
On Debian, run as root, missing packages are installed with apt-get; otherwise their names are
printed and the targets that need them are reported as not buildable.
"""

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(ROOT, "build")
DEPS = os.path.join(BUILD, "deps")
RESULTS = os.path.join(BUILD, "results.json")
LOCK = os.path.join(BUILD, ".lock")

def detect_host():
    """The target this machine is: linux-x86_64 on the Debian machine the project is developed on;
    freebsd-/netbsd-/openbsd-<arch> on a real BSD, where that target builds natively and runs every
    suite (and only that one: the cross targets need Debian's packages)."""
    sysname = platform.system()
    arch = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64",
            "evbarm": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    if sysname in ("FreeBSD", "NetBSD", "OpenBSD"):
        return f"{sysname.lower()}-{arch}"
    return "linux-x86_64"


HOST = detect_host()
NATIVE_BSD = HOST.split("-")[0] in ("freebsd", "netbsd", "openbsd")
# On a BSD, what the native build needs, by the OS's own package tool (nothing is installed
# automatically there: build.py names what is missing).
BSD_TOOLS = {"cmake": "cmake", "ninja": "ninja (or samurai)", "cc": "a C compiler (cc)",
             "pkg-config": "pkgconf"}
BSD_INSTALL_HINT = {"freebsd": "pkg install cmake ninja cmocka pkgconf python3 py311-jinja2 py311-pyyaml",
                    "netbsd": "pkgin install cmake ninja-build cmocka pkgconf python311 py311-jinja2 py311-yaml",
                    "openbsd": "pkg_add cmake ninja cmocka pkgconf python py3-jinja2 py3-yaml"}
SYSTEM_PYTHON = "/usr/bin/python3"
# What build.py needs before it can read spec/ at all (spec/targets.yaml's `packages: base` has them
# too, checked by gen_selftests); every other Debian package list lives in spec/targets.yaml.
BOOTSTRAP_PACKAGES = ["python3-jinja2", "python3-yaml"]
TEST_TIMEOUT = 600
BENCH_DIR = os.path.join(BUILD, "bench")


def say(msg):
    print(msg, flush=True)


# ---- bootstrap: PyYAML and Jinja2 -------------------------------------------------------------


def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def have_apt():
    return shutil.which("apt-get") is not None and shutil.which("dpkg-query") is not None


def ensure_python_modules(allow_install):
    try:
        import jinja2  # noqa: F401
        import yaml  # noqa: F401
        return
    except ImportError:
        pass
    if allow_install and is_root() and have_apt():
        apt_install(BOOTSTRAP_PACKAGES)
    # Re-run under an interpreter that sees them: this one again (Python puts a site folder on
    # sys.path only if it existed when the interpreter started, and on a bare Debian the install
    # just now created /usr/lib/python3/dist-packages), else Debian's, where apt put them.
    if os.environ.get("CIO_BUILD_REEXEC") != "1":
        for py in dict.fromkeys([sys.executable, SYSTEM_PYTHON]):
            if py and os.path.exists(py) and \
                    subprocess.run([py, "-c", "import jinja2, yaml"], capture_output=True).returncode == 0:
                os.environ["CIO_BUILD_REEXEC"] = "1"
                os.execv(py, [py] + sys.argv)
    sys.exit("build.py: Python modules jinja2 and yaml are missing: install the Debian packages "
             "python3-jinja2 python3-yaml (or run as root to have them installed)")


# ---- one run at a time per checkout ------------------------------------------------------------


def build_lock(path=LOCK, wait=True, quiet=False):
    """Takes an exclusive flock on path and returns the open file (keep it: the lock lasts as long as
    the file is open, and the OS drops it when this process ends, however it ends). When another
    process holds it: waits, saying who (as that process wrote into the file), or with wait=False
    returns None at once. Python opens the file close-on-exec, so the tools this run starts never
    inherit the lock. Where there is no fcntl module, no lock (returns True)."""
    try:
        import fcntl
    except ImportError:
        return True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    f = open(path, "a+")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another build.py run"
        if not wait:
            f.close()
            if not quiet:
                say(f"build.py: {os.path.relpath(path, ROOT)} is held by {holder}")
            return None
        say(f"build.py: waiting for {holder} to finish (it holds {os.path.relpath(path, ROOT)})")
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()} (build.py {' '.join(sys.argv[1:])})\n")
    f.flush()
    return f


def lock_checks(tally):
    """The lock: while this run holds build/.lock a second `build.py ... --no-wait` refuses; a process
    holding a lock that is interrupted (Ctrl-C) leaves it free."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "build.py"), "gen", "--check", "--no-wait"],
                       capture_output=True, text=True, timeout=120)
    ok = r.returncode != 0 and f"pid {os.getpid()} " in r.stdout + r.stderr
    detail = None if ok else f"a second run did not refuse (exit {r.returncode}): {(r.stdout + r.stderr)[-1500:]}"
    if ok:
        import signal
        path = os.path.join(BUILD, "checks", "lock-selftest")
        # The child restores Python's own Ctrl-C handler: a shell starts background jobs (`cmd &`)
        # with SIGINT ignored, and that is inherited.
        script = ("import signal, sys, time; signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "sys.path.insert(0, sys.argv[1]); import build; "
                  "f = build.build_lock(sys.argv[2]); print('held', flush=True); time.sleep(120)")
        child = subprocess.Popen([sys.executable, "-c", script, ROOT, path], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        try:
            held = child.stdout.readline().strip() == "held"
            refused = held and build_lock(path, wait=False, quiet=True) is None
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                refused = False  # reported below: the interrupted holder did not go away
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        mine = build_lock(path, wait=False, quiet=True) if refused else None
        ok = held and refused and mine is not None
        detail = None if ok else f"held {held}, refused while held {refused}, free after Ctrl-C {mine is not None}"
        if mine is not None:
            mine.close()
    tally.add(HOST, "build lock", int(ok), int(not ok), 0, detail)
    say(f"  {'build.py':16} {'build lock':28} {'ok' if ok else 'FAILED: ' + detail}")


# ---- packages ---------------------------------------------------------------------------------

_apt_updated = False


def dpkg_installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def apt_install(pkgs):
    global _apt_updated
    if not _apt_updated:
        say("apt-get update")
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        _apt_updated = True
    say("apt-get install " + " ".join(pkgs))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + pkgs, env=env,
                       stdout=subprocess.DEVNULL)
    return r.returncode == 0


def missing_packages(pkgs):
    if not have_apt():
        return []  # not Debian: tools are checked by name when they are used
    return [p for p in pkgs if not dpkg_installed(p)]


def ensure_packages(pkgs, allow_install):
    """Returns the packages still missing after trying to install them."""
    miss = missing_packages(pkgs)
    if miss and allow_install and is_root() and have_apt():
        apt_install(miss)
        miss = missing_packages(miss)
    return miss


# ---- spec access (targets) ----------------------------------------------------------------------


_model = None


def load_model():
    """spec/ as the generator reads it (once per run); a bad spec ends the run with file:line."""
    global _model
    if _model is None:
        sys.path.insert(0, os.path.join(ROOT, "gen"))
        import model  # noqa: E402
        from specload import SpecError  # noqa: E402
        try:
            _model = model.load_all(os.path.join(ROOT, "spec"))
        except SpecError as e:
            sys.exit(str(e))
    return _model


def load_targets():
    m = load_model()
    targets = {t["name"]: t for t in m.targets}
    if NATIVE_BSD and HOST in targets:
        # Built natively with the system's compiler and headers (no stand-ins, no stubs) and every
        # suite runs, as on the Linux host.
        targets[HOST] = dict(targets[HOST], runner="native", level="full", compiler="cc", cc="cc",
                             packages=[], native=True)
    return targets, [t["name"] for t in m.targets]


def spec_packages(group):
    """One of spec/targets.yaml's `packages` lists (base, cmocka-source, host-tests, bench, fuzz,
    valgrind, fresh-check)."""
    return list(load_model().packages[group])


def runner_cmd(t):
    r = t["runner"]
    if r == "native":
        return []
    if r.startswith("qemu:"):
        return [r[5:]]
    if r == "wine":
        return ["wine"]
    if r == "node-wasi":
        return ["node", os.path.join(ROOT, "tests", "wasi_run.mjs")]
    return None


def compiler_available(t):
    return shutil.which(t["cc"]) is not None


# ---- gen ----------------------------------------------------------------------------------------


def cmd_gen(check):
    args = [sys.executable, os.path.join(ROOT, "gen", "generate.py")]
    if check:
        args.append("--check")
    return subprocess.run(args).returncode


# ---- cmocka for cross targets, from Debian's source package -------------------------------------

DEB_SRC_LIST = "/etc/apt/sources.list.d/cio-deb-src.sources"
# One-line options and the deb822 fields they become (the rest do not matter for source packages).
ONE_LINE_OPTIONS = {"signed-by": "Signed-By", "trusted": "Trusted", "check-valid-until": "Check-Valid-Until"}


def os_codename():
    try:
        for line in open("/etc/os-release", encoding="utf-8"):
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def apt_deb_sources():
    """The `deb` entries apt reads, in either format: one-line (/etc/apt/sources.list and
    sources.list.d/*.list, as the Debian installer and debootstrap write them) and deb822
    (sources.list.d/*.sources, as Debian's container images write them). Each is a dict of deb822
    fields without Types. Only this release's suites (bookworm, bookworm-updates, ...): a
    third-party repository may publish no sources."""
    code = os_codename()
    d = "/etc/apt/sources.list.d"
    names = sorted(os.listdir(d)) if os.path.isdir(d) else []
    out = []
    for path in ["/etc/apt/sources.list"] + [os.path.join(d, n) for n in names if n.endswith(".list")]:
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except OSError:
            continue
        for ln in lines:
            m = re.match(r"^\s*deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*?)\s*(?:#.*)?$", ln)
            if m:
                entry = {"URIs": m.group(2), "Suites": m.group(3), "Components": m.group(4)}
                for opt in (m.group(1) or "").split():
                    key, _, value = opt.partition("=")
                    if key in ONE_LINE_OPTIONS:
                        entry[ONE_LINE_OPTIONS[key]] = value
                out.append(entry)
    for path in [os.path.join(d, n) for n in names if n.endswith(".sources") and
                 os.path.join(d, n) != DEB_SRC_LIST]:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError:
            continue
        for block in re.split(r"\n\s*\n", text):
            fields = {}
            for ln in block.splitlines():
                m = re.match(r"^([A-Za-z-]+):\s*(.*)$", ln)
                if m and not ln.startswith("#"):
                    fields[m.group(1)] = m.group(2).strip()
            if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no" and \
                    "URIs" in fields and "Suites" in fields:
                fields.pop("Types")
                out.append(fields)
    for e in out:
        e["Suites"] = " ".join(x for x in e["Suites"].split() if code is None or x.split("-")[0] == code)
    return [e for e in out if e["Suites"]]


def ensure_deb_src(allow_install):
    """Adds a deb-src list beside the system's apt sources (never editing them), with the same
    mirrors and suites, whichever format they are written in."""
    if os.path.exists(DEB_SRC_LIST):
        return True
    if not (allow_install and is_root()):
        return False
    entries = apt_deb_sources()
    if not entries:
        return False
    with open(DEB_SRC_LIST, "w", encoding="utf-8") as f:
        f.write("# Added by cio's build.py: source packages (cmocka for cross targets)\n")
        f.write("\n".join("Types: deb-src\n" + "".join(f"{k}: {v}\n" for k, v in e.items()) for e in entries))
    say(f"apt: added {DEB_SRC_LIST} (deb-src of " +
        ", ".join(f"{e['URIs']} {e['Suites']}" for e in entries) + ") for cmocka's source package")
    global _apt_updated
    _apt_updated = False
    subprocess.run(["apt-get", "update", "-qq"], check=False)
    _apt_updated = True
    return True


def cmocka_source(allow_install):
    src_root = os.path.join(DEPS, "src")
    os.makedirs(src_root, exist_ok=True)
    for d in sorted(os.listdir(src_root)):
        if d.startswith("cmocka-") and os.path.isfile(os.path.join(src_root, d, "CMakeLists.txt")):
            return os.path.join(src_root, d)
    if ensure_packages(spec_packages("cmocka-source"), allow_install):
        return None
    if not ensure_deb_src(allow_install):
        return None
    r = subprocess.run(["apt-get", "source", "-q", "--download-only", "-o", "APT::Sandbox::User=root", "cmocka"], cwd=src_root,
                       stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    dscs = sorted(f for f in os.listdir(src_root) if f.endswith(".dsc") and f.startswith("cmocka_"))
    if not dscs:
        return None
    r = subprocess.run(["dpkg-source", "--no-check", "-x", dscs[-1]], cwd=src_root, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    for d in sorted(os.listdir(src_root)):
        if d.startswith("cmocka-") and os.path.isfile(os.path.join(src_root, d, "CMakeLists.txt")):
            return os.path.join(src_root, d)
    return None


def cross_cmocka(t, allow_install, log):
    """Builds cmocka (static) for target t into build/deps/<t>; returns the prefix or None."""
    prefix = os.path.join(DEPS, t["name"])
    stamp_file = os.path.join(prefix, ".cmocka-done")
    if os.path.exists(stamp_file):
        return prefix
    src = cmocka_source(allow_install)
    if src is None:
        log.append("cmocka source package unavailable (needs dpkg-dev and a deb-src list; run as root)")
        return None
    bdir = os.path.join(DEPS, "build-" + t["name"])
    shutil.rmtree(bdir, ignore_errors=True)
    cfg = ["cmake", "-S", src, "-B", bdir, "-G", "Ninja",
           f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(ROOT, 'platform', 'cmake', t['name'] + '.cmake')}",
           f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DCMAKE_BUILD_TYPE=Release",
           "-DWITH_STATIC_LIB=ON", "-DBUILD_SHARED_LIBS=OFF", "-DUNIT_TESTING=OFF", "-DWITH_EXAMPLES=OFF",
           "-DPICKY_DEVELOPER=OFF", "-DCMAKE_POLICY_DEFAULT_CMP0077=NEW"]
    env = None
    if t["os"] == "wasi":
        # wasi-libc has no setjmp.h: tests/wasi/setjmp.h, with setjmp/longjmp lowered onto wasm
        # exception handling (tests/wasi/sjlj_*.c is the runtime, linked into the tests); signals
        # are wasi-libc's emulation (signal/raise only; the tests link -lwasi-emulated-signal);
        # _UINTPTR_T_DEFINED: cmocka.h would typedef uintptr_t again, as unsigned int.
        env = dict(os.environ, CFLAGS=f"-I{os.path.join(ROOT, 'tests', 'wasi')} -mllvm -wasm-enable-sjlj "
                                      "-mexception-handling -D_WASI_EMULATED_SIGNAL -D_UINTPTR_T_DEFINED")
        cfg += ["-DHAVE_SIGLONGJMP=0"]
    for step in (cfg, ["cmake", "--build", bdir], ["cmake", "--install", bdir]):
        r = subprocess.run(step, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            log.append("cmocka build failed for %s: %s\n%s" % (t["name"], " ".join(step), r.stdout[-2000:] + r.stderr[-2000:]))
            return None
    open(stamp_file, "w").close()
    return prefix


# ---- building -----------------------------------------------------------------------------------


def build_dir(t, sanitize):
    suffix = "" if not sanitize else "-" + sanitize.replace(",", "-")
    return os.path.join(BUILD, t["name"] + suffix)


class Unavailable(Exception):
    pass


def prepare_target(t, allow_install):
    """Packages, toolchain and (for cross targets) cmocka. Raises Unavailable with the reason."""
    pkgs = spec_packages("base") + list(t["packages"])
    miss = ensure_packages(pkgs, allow_install)
    if miss:
        raise Unavailable("missing Debian packages: " + " ".join(miss))
    if not compiler_available(t):
        raise Unavailable(f"compiler {t['cc']} not found")
    rc = runner_cmd(t)
    if rc and shutil.which(rc[0]) is None:
        raise Unavailable(f"runner {rc[0]} not found")


def build_full(t, sanitize, allow_install, jobs):
    """Configures and builds library + tests with CMake; returns (ok, message)."""
    try:
        prepare_target(t, allow_install)
    except Unavailable as e:
        return False, str(e)
    bdir = build_dir(t, sanitize)
    args = ["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja",
            f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(ROOT, 'platform', 'cmake', t['name'] + '.cmake')}",
            f"-DCIO_SANITIZE={sanitize or ''}"]
    if t.get("native"):
        missing = [desc for tool, desc in BSD_TOOLS.items() if shutil.which(tool) is None and
                   not (tool == "ninja" and shutil.which("samu"))]
        if missing:
            return False, ("missing on this machine: " + ", ".join(missing) + "; install with: " +
                           BSD_INSTALL_HINT[t["os"]])
        args = ["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja", f"-DCIO_SANITIZE={sanitize or ''}"]
    elif t["runner"] != "native":
        log = []
        prefix = cross_cmocka(t, allow_install, log)
        if prefix is None:
            return False, "; ".join(log)
        args.append(f"-DCMAKE_FIND_ROOT_PATH={prefix}")
    args.append("-DCMAKE_BUILD_TYPE=Debug")  # the suites' build; a plain cmake is RelWithDebInfo
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return False, "cmake configure failed:\n" + r.stdout[-3000:] + r.stderr[-3000:]
    r = subprocess.run(["cmake", "--build", bdir, "-j", str(jobs)], capture_output=True, text=True)
    if r.returncode != 0:
        return False, "build failed:\n" + r.stdout[-6000:] + r.stderr[-3000:]
    return True, bdir


def bsd_no_sysroot(t):
    """A BSD target cross-built here: the generated stand-in headers and libc stubs, no sysroot."""
    return t["os"] in ("freebsd", "netbsd", "openbsd") and t["runner"] == "none"


def cflags(t, for_clang=True):
    """Flags for compiling a file that includes <cio.h> for t: with clang (the public `cflags`
    command, --target=<triple>) or with the target's own gcc (for_clang=False). For a BSD with no
    sysroot, the flags its toolchain file (platform/cmake/T.cmake) builds the library with: only the
    stand-in system headers (never the host's; they take errno values from platform/internal), no
    stack protector, PIE; cflags_check compares."""
    inc = [f"-I{os.path.join(ROOT, 'include')}", f"-I{os.path.join(ROOT, 'platform', 'include')}"]
    flags = []
    if t["compiler"] == "clang" or for_clang:
        flags.append(f"--target={t['triple']}")
        if t["os"] == "wasi":
            flags.append("--sysroot=/usr")
        elif bsd_no_sysroot(t):
            flags += ["-nostdlibinc", "-isystem", os.path.join(ROOT, "platform", "bsd", "include"),
                      f"-I{os.path.join(ROOT, 'platform', 'internal')}", "-fno-stack-protector", "-fPIE"]
        elif t["runner"] == "none":
            flags += ["-ffreestanding", "-DCIO_NO_SYSROOT=1"]
    return flags + t["cflags"] + inc


def libs(t, sanitize=None):
    bdir = build_dir(t, sanitize)
    out = [f"-L{bdir}", "-lcio"]
    if bsd_no_sysroot(t):
        # the libc stubs `build` makes from spec/libc.yaml (libc, and libthr or libpthread), which
        # is what the smoke program links with (bsd_build uses this list)
        libc = load_model().libc[t["os"]]
        out += [f"-L{os.path.join(bdir, 'stubs')}"] + ["-l" + lib["name"] for lib in libc["libraries"]]
    elif t["os"] == "windows":
        out += ["-lws2_32", "-lntdll", "-lsynchronization", "-lbcrypt", "-lpthread"]
    elif t["os"] == "wasi":
        out.append("-lwasi-emulated-signal")  # cio_sig_* on wasi-libc's signal emulation
    else:
        out.append("-lpthread")
        if t["arch"] in ("arm", "mips"):
            out.append("-latomic")
    return out


# ---- running tests ------------------------------------------------------------------------------


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []
        self.per_target = {}
        self.faults = {}  # target -> call site -> faults its test_faults run covered

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
    for m in FAULT_COVERED.finditer(out):  # tests/test_faults.c: what each passing case covered
        tally.faults.setdefault(t["name"], {}).setdefault(m.group(1), set()).add(m.group(2))
    status = "ok" if f == 0 else "FAILED"
    say(f"  {t['name']:16} {name:28} {p} passed, {f} failed, {s} skipped  ({time.time() - start:.1f}s) {status}")
    if f or verbose:
        for line in out.splitlines():
            if f == 0 or "FAIL" in line or "ERROR" in line or "error" in line.lower() or "differs" in line \
                    or "spec" in line:
                print("      " + line)


# ---- the fault-injection report ----------------------------------------------------------------

FAULT_COVERED = re.compile(r"^\s*fault-covered: (\S+) (\S+)\s*$", re.M)
CALLSITES = os.path.join(ROOT, "platform", "internal", "callsites.tsv")
FAULT_REPORT = os.path.join(BUILD, "fault-report.md")


def load_callsites():
    sites, excluded = [], []
    with open(CALLSITES, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            if cols[0] == "excluded":
                excluded.append((cols[1], cols[2]))
            else:
                sites.append({"id": cols[0], "file": cols[1], "in": cols[2], "map": cols[3],
                              "os": cols[4].split(",")})
    return sites, excluded


def fault_report(targets, tally):
    """build/fault-report.md: every call site of spec/oscalls.yaml and the faults test_faults covered
    there on each target that ran it; the sites no target covered are named. Returns the summary."""
    ran = [n for n in tally.faults if n in targets]
    if not ran:
        return None
    sites, excluded = load_callsites()
    oses = {n: targets[n]["os"] for n in ran}
    lines = ["# Fault-injection coverage", "",
             "Generated by `python3 build.py test` from the `fault-covered:` lines of tests/test_faults.c "
             "(one per passing case) against platform/internal/callsites.tsv (spec/oscalls.yaml). "
             "Do not edit.", "",
             "| call site | file: function | " + " | ".join(ran) + " |",
             "|---|---|" + "---|" * len(ran)]
    untested = []
    covered = 0
    applicable = 0
    for s in sites:
        cells = []
        relevant = False
        hit = False
        for n in ran:
            if oses[n] not in s["os"]:
                cells.append("n/a")
                continue
            relevant = True
            got = sorted(tally.faults[n].get(s["id"], ()))
            hit |= bool(got)
            cells.append(", ".join(got) if got else "**untested**")
        if not relevant:
            continue
        applicable += 1
        if hit:
            covered += 1
        else:
            untested.append(s["id"])
        lines.append(f"| `{s['id']}` | {s['file']}: {s['in']} | " + " | ".join(cells) + " |")
    lines += ["", f"{covered} of {applicable} call sites covered on {', '.join(ran)}."]
    if untested:
        lines += ["", "Untested call sites: " + ", ".join(f"`{u}`" for u in untested) + "."]
    if excluded:
        lines += ["", "Made directly on purpose (spec/oscalls.yaml `excluded`):", ""]
        lines += [f"- {name}: {why}" for name, why in excluded]
    os.makedirs(BUILD, exist_ok=True)
    with open(FAULT_REPORT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return covered, applicable, untested


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


# ---- BSD targets with no sysroot: library + smoke program, libc stubs, readelf checks -----------

BSD_OSES = ("freebsd", "netbsd", "openbsd")


def run_step(cmd, log, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        log.append("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + (r.stdout + r.stderr)[-3000:])
    return r.returncode == 0


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
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import bsd_check  # noqa: E402
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
    for name, args, ok in checks:
        exe = os.path.join(exdir, name + suffix)
        if not os.path.exists(exe):
            continue
        label = f"example {name} {' '.join(args)}".strip()
        try:
            r = subprocess.run(runner_cmd(t) + [exe] + args, capture_output=True, text=True, cwd=work, env=env,
                               timeout=120)
            good = r.returncode == 0 and ok(r.stdout)
            detail = (r.stdout + r.stderr)[-2000:]
        except (subprocess.TimeoutExpired, OSError) as e:
            good, detail = False, str(e)
        tally.add(t["name"], label, int(good), int(not good), 0, None if good else detail)
        say(f"  {t['name']:16} {label:28} {'ok' if good else 'FAILED'}")
        if not good:
            say("      " + detail.replace("\n", "\n      "))


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
                        "-t", os.path.join(ROOT, "gen", "tests"), "-v"], capture_output=True, text=True)
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
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "callgraph.py"), os.path.join(ROOT, "src", "evented")],
                       capture_output=True, text=True)
    ok = r.returncode == 0
    tally.add(HOST, "src/evented call cycles", int(ok), int(not ok), 0, None if ok else (r.stdout + r.stderr)[-4000:])
    say(f"  {'tools':16} {'callgraph.py src/evented':28} {'no cycle' if ok else 'FAILED'}")
    if not ok:
        print((r.stdout + r.stderr)[-4000:])


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


# ---- benchmarks -----------------------------------------------------------------------------------


def build_bench(allow_install, jobs):
    """Builds bench/cio_bench in its own Release (-O2) directory; returns (exe or None, message)."""
    miss = ensure_packages(spec_packages("base") + spec_packages("bench"), allow_install)
    if miss:
        return None, "missing Debian packages: " + " ".join(miss)
    args = ["cmake", "-S", ROOT, "-B", BENCH_DIR, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG", "-DCIO_BUILD_TESTS=OFF", "-DCIO_BUILD_EXAMPLES=OFF",
            "-DCIO_BUILD_BENCH=ON", f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(ROOT, 'platform', 'cmake', HOST + '.cmake')}"]
    for step in (args, ["cmake", "--build", BENCH_DIR, "-j", str(jobs)]):
        r = subprocess.run(step, capture_output=True, text=True)
        if r.returncode != 0:
            return None, "bench build failed:\n" + r.stdout[-4000:] + r.stderr[-2000:]
    return os.path.join(BENCH_DIR, "bench", "cio_bench"), "built"


def bench_driver():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import driver  # noqa: E402
    return driver


def bench_smoke(tally, allow_install, jobs):
    """Each benchmark once with tiny sizes: they still build and run (not a measurement)."""
    label = "bench smoke (every benchmark once)"
    exe, msg = build_bench(allow_install, jobs)
    if exe is None:
        if msg.startswith("missing"):
            tally.add(HOST, label, 0, 0, 1)
            say(f"  {HOST:16} {label:28} skipped: {msg}")
        else:
            tally.fail(HOST, label, msg)
            say(f"  {HOST:16} {label:28} FAILED\n{msg}")
        return
    import contextlib
    import io
    started = time.time()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = bench_driver().main([exe, "--smoke"])
    out = buf.getvalue()
    good = rc == 0 and "error:" not in out
    tally.add(HOST, label, int(good), int(not good), 0, None if good else out[-3000:])
    say(f"  {HOST:16} {'bench smoke':28} {'ok' if good else 'FAILED'}  ({time.time() - started:.1f}s)")
    if not good:
        say("      " + out[-3000:].replace("\n", "\n      "))


BENCH_MAP_COUNT = 262144  # B12: 100,000 fibers, each a stack and a guard page (two mappings)


def bench_map_count(who="bench"):
    """B12 and test_evented need ~200,000 mappings; the kernel's default vm.max_map_count (65530) is
    too low for 100,000 fibers with guarded stacks."""
    path = "/proc/sys/vm/max_map_count"
    try:
        current = int(open(path).read())
    except (OSError, ValueError):
        return
    if current >= BENCH_MAP_COUNT:
        return
    if os.geteuid() == 0:
        r = subprocess.run(["sysctl", "-w", f"vm.max_map_count={BENCH_MAP_COUNT}"], capture_output=True, text=True)
        if r.returncode == 0:
            say(f"build.py {who}: raised vm.max_map_count from {current} to {BENCH_MAP_COUNT} (100,000 "
                "fibers with guarded stacks)")
            return
    say(f"build.py {who}: vm.max_map_count is {current} (not root, or sysctl failed): B12 and test_evented run "
        f"with the fibers that fit, about {(current - 2000) // 2} (`sysctl -w vm.max_map_count={BENCH_MAP_COUNT}` "
        "for 100,000)")


def cmd_bench(args):
    exe, msg = build_bench(not args.no_install, args.jobs)
    if exe is None:
        say("build.py bench: " + msg)
        return 1
    if not args.only or "B12" in args.only.split(","):
        bench_map_count()
    argv = [exe, "--rounds", str(args.rounds), "--seconds", str(args.seconds)]
    if args.only:
        argv += ["--only", args.only]
    if args.conditions:
        argv += ["--conditions", args.conditions]
    return bench_driver().main(argv)


# ---- commands -----------------------------------------------------------------------------------


def select(targets, order, which, default_only):
    if which == "all":
        return order
    if which:
        if which not in targets:
            sys.exit(f"build.py: unknown target '{which}' (see `python3 build.py targets`)")
        return [which]
    if NATIVE_BSD:
        return [HOST]  # the cross targets need Debian's toolchains
    return [n for n in order if targets[n]["default"]] if default_only else [HOST]


def cmd_build(targets, names, args):
    status = {}
    for n in names:
        t = targets[n]
        if t["level"] == "full":
            ok, msg = build_full(t, args.sanitize, not args.no_install, args.jobs)
            status[n] = "built" if ok else "not built: " + msg.splitlines()[0]
            if not ok and msg.count("\n"):
                say(msg)
        else:
            miss = ensure_packages(t["packages"], not args.no_install)
            if miss or not compiler_available(t):
                status[n] = "not built: missing " + (" ".join(miss) or t["cc"])
            else:
                tally = Tally()
                header_checks(t, tally)
                status[n] = "headers compile" if tally.failed == 0 else "headers FAILED"
                if t["level"] == "check" and tally.failed == 0:
                    log = []
                    built = bsd_build(t, args.jobs, log)
                    status[n] = "built (library + smoke program, not runnable here)" if built else \
                        "not built: " + ("\n".join(log) or "?")[:2000]
        say(f"{n:16} {status[n]}")
    return status


def fuzz_checks(tally, seconds):
    """--fuzz: the DNS parser under libFuzzer (clang; ASan + UBSan) for a bounded time, seeded from
    tests/fuzz/corpus/dns (new inputs go to build/fuzz/corpus-dns, crashes to build/fuzz/). A crash
    is a failure: add its input to tests/fuzz/corpus/dns, where tests/test_dns.c replays it."""
    label = f"fuzz dns ({seconds}s)"
    ensure_packages(spec_packages("fuzz"), True)
    if shutil.which("clang") is None:
        tally.fail(HOST, label, "clang not installed")
        return
    out = os.path.join(BUILD, "fuzz")
    work = os.path.join(out, "corpus-dns")
    os.makedirs(work, exist_ok=True)
    exe = os.path.join(out, "fuzz_dns")
    cmd = ["clang", "-g", "-O1", "-std=c11", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
           "-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "platform", "include"),
           "-I", os.path.join(ROOT, "platform", "internal"),
           "-I", os.path.join(ROOT, "src", "core"),
           os.path.join(ROOT, "tests", "fuzz", "fuzz_dns.c"), os.path.join(ROOT, "src", "core", "dns.c"), "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tally.fail(HOST, label, "build failed: " + (r.stdout + r.stderr)[-2000:])
        say(f"  {HOST:16} {label:28} FAILED (build)")
        return
    try:
        r = subprocess.run([exe, f"-max_total_time={seconds}", "-timeout=10", "-print_final_stats=1",
                            f"-artifact_prefix={out}/", work, os.path.join(ROOT, "tests", "fuzz", "corpus", "dns")],
                           capture_output=True, text=True, timeout=seconds + 120)
        good, detail = r.returncode == 0, r.stderr[-2000:]
    except subprocess.TimeoutExpired as e:
        good, detail = False, str(e)
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", detail or "")
    tally.add(HOST, label, int(good), int(not good), 0, None if good else detail)
    say(f"  {HOST:16} {label:28} {'ok' if good else 'FAILED'}" + (f"  ({runs.group(1)} runs)" if runs else ""))
    if not good:
        say("      " + detail.replace("\n", "\n      "))


def cmd_test(targets, names, args):
    tally = Tally()
    allow = not args.no_install
    started = time.time()
    if not args.target or args.target == "all" or args.target == HOST:
        ensure_packages(spec_packages("host-tests"), allow)  # clang for the misuse checks
        bench_map_count("test")
        gen_selftests(tally)
        lock_checks(tally)
        if not args.sanitize:
            misuse_checks(tally)
        if args.fuzz:
            fuzz_checks(tally, args.fuzz_seconds)
    soak_seed = int.from_bytes(os.urandom(4), "little")
    if args.soak:
        say(f"soak: CIO_SOAK_SEED={soak_seed} CIO_SOAK_SECONDS=60 for the host suites")
    for n in names:
        t = targets[n]
        if (args.sanitize or args.valgrind) and n != HOST:
            continue
        if args.valgrind and ensure_packages(spec_packages("valgrind"), allow):
            tally.fail(n, "valgrind", "valgrind is not installed")
            continue
        if not args.sanitize:
            ensure_packages(t["packages"], allow)  # its cross C library's headers: before the probe
            cflags_check(t, tally)
        if t["level"] != "full":
            miss = ensure_packages(t["packages"], allow)
            if miss or not compiler_available(t) or (t["level"] == "check" and shutil.which("ld.lld") is None):
                say(f"  {n:16} not tested: missing {' '.join(miss) or t['cc']}")
                tally.fail(n, "toolchain", "missing " + (" ".join(miss) or t["cc"] + " or ld.lld"))
                continue
            header_checks(t, tally)
            if t["level"] == "check":
                bsd_checks(t, tally, args)
            continue
        if t["os"] in ("linux", "windows"):  # windows: test_resolve runs the Linux dnsmasq under Wine
            ensure_packages(spec_packages("host-tests"), allow)
        ok, msg = build_full(t, args.sanitize, allow, args.jobs)
        if not ok:
            say(f"  {n:16} build FAILED: {msg[:4000]}")
            tally.fail(n, "build", msg[:4000])
            continue
        env = dict(os.environ)
        if t["runner"] == "wine":
            env = wine_env()
        if allow and is_root() and have_apt():  # tests/backends.h CIO_NEED_TOOL: no skipping for a tool
            env["CIO_TEST_TOOLS_REQUIRED"] = "1"  # that spec/targets.yaml should have had installed
        if args.valgrind:  # tests/backends.h, test_evented.c: what valgrind cannot run, and caps
            env["CIO_TEST_VALGRIND"] = "1"
        if args.soak and n == HOST:  # tests/test_soak.c: a random seed, the 60 s cap
            env.update(CIO_SOAK_SEED=str(soak_seed), CIO_SOAK_SECONDS="60")
        if n == HOST and not args.sanitize:
            install_checks(msg, tally, args.jobs)
        exes = test_executables(msg)
        if not exes:
            tally.fail(n, "suites", "no test executables were built")
        prefix = VALGRIND if args.valgrind else []
        for exe in exes:
            run_suite(t, exe, tally, env, args.verbose, prefix)
        example_checks(t, msg, tally, env)
        if n == HOST and not args.sanitize and not args.valgrind:
            bench_smoke(tally, allow, args.jobs)
    save_results({n: dict(tally.per_target.get(n, {}), when=int(time.time()), sanitize=args.sanitize or "")
                  for n in names})
    report = fault_report(targets, tally)
    if report is not None:
        covered, applicable, untested = report
        say(f"fault report: {covered} of {applicable} call sites covered "
            f"({os.path.relpath(FAULT_REPORT, ROOT)})")
        if untested:
            say("fault report: untested call sites: " + ", ".join(untested))
    if tally.failures:
        say("\nfailures:")
        for f in tally.failures:
            say("  " + f.splitlines()[0])
    say(f"({time.time() - started:.0f}s)")
    say(f"tests: {tally.passed} passed, {tally.failed} failed" + (f", {tally.skipped} skipped" if tally.skipped else ""))
    return 0 if tally.failed == 0 else 1


def cmd_targets(targets, order):
    last = {}
    if os.path.exists(RESULTS):
        try:
            last = json.load(open(RESULTS))
        except (OSError, ValueError):
            last = {}
    rows = [("target", "level", "default", "toolchain", "tests run", "last result")]
    for n in order:
        t = targets[n]
        tool = "yes" if compiler_available(t) else f"no ({t['cc']})"
        rn = t["runner"]
        where = {"native": "host", "wine": "Wine", "none": "compile checks", "node-wasi": "Node WASI"}.get(
            rn, "QEMU " + rn[5:] if rn.startswith("qemu:") else rn)
        if t["level"] == "check":
            where = "build + readelf (run: --runner)"
        elif t["level"] != "full":
            where = "compile checks"
        r = last.get(n)
        res = "-" if not r else f"{r.get('passed', 0)} passed, {r.get('failed', 0)} failed"
        rows.append((n, t["level"], "yes" if t["default"] else "no", tool, where, res))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        say("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            say("  ".join("-" * w for w in widths))


def main():
    ap = argparse.ArgumentParser(description="cio's build driver", formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    ap.add_argument("command", nargs="?", default="all",
                    choices=["all", "gen", "build", "test", "targets", "cflags", "libs", "bench", "fresh-check"])
    ap.add_argument("--target", help="target name, or `all`")
    ap.add_argument("--check", action="store_true", help="gen: fail if platform/ is stale")
    ap.add_argument("--sanitize", help="address,undefined | thread (host only)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-install", action="store_true", help="never run apt-get")
    ap.add_argument("--no-wait", action="store_true",
                    help="fail at once when another build.py run holds build/.lock (default: wait for it)")
    ap.add_argument("--fuzz", action="store_true", help="test: also run the DNS parser fuzzer (libFuzzer)")
    ap.add_argument("--fuzz-seconds", type=int, default=60, help="--fuzz: how long (default 60)")
    ap.add_argument("--valgrind", action="store_true", help="test: the host suites under valgrind memcheck")
    ap.add_argument("--soak", action="store_true",
                    help="test: the host suites with CIO_SOAK_SEED random (printed) and CIO_SOAK_SECONDS=60")
    ap.add_argument("--runner", help="test: a command prefix that runs a shell command on a real machine of "
                    "the target's OS (e.g. 'ssh host'); the BSD smoke program is piped to it and run there")
    ap.add_argument("--rounds", type=int, default=5, help="bench: interleaved rounds per contender (default 5)")
    ap.add_argument("--seconds", type=float, default=0.3, help="bench: measuring time per run (default 0.3)")
    ap.add_argument("--only", help="bench: comma-separated benchmark ids (B3,B9s,...)")
    ap.add_argument("--conditions", help="bench: how the machine was loaded, for the report")
    ap.add_argument("--sources", choices=["switch", "list", "deb822"], default="switch",
                    help="fresh-check: apt source format(s) of the bare root (default: one-line, then deb822)")
    ap.add_argument("--expect-passed", type=int, default=0,
                    help="fresh-check: fail if the bare machine passes under 98%% of this many tests")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()
    if args.sanitize and args.sanitize not in ("address", "undefined", "address,undefined", "thread"):
        sys.exit("build.py: --sanitize takes address,undefined or thread")
    if args.sanitize and args.valgrind:
        sys.exit("build.py: --valgrind runs the plain build; it does not mix with --sanitize")

    ensure_python_modules(not args.no_install)
    if args.command == "fresh-check":  # works on a copy of HEAD elsewhere: no lock on build/
        if missing := ensure_packages(spec_packages("fresh-check"), not args.no_install):
            sys.exit("build.py: missing Debian packages: " + " ".join(missing))
        sys.path.insert(0, os.path.join(ROOT, "ci"))
        import fresh_check  # noqa: E402
        return fresh_check.main(["--sources", args.sources, "--expect-passed", str(args.expect_passed)])
    if args.command not in ("cflags", "libs", "targets"):
        lock = build_lock(wait=not args.no_wait)  # held until this process ends
        if lock is None:
            sys.exit("build.py: another run is using this checkout's build/ (--no-wait: not waiting)")
    if args.command == "gen":
        return cmd_gen(args.check)
    if args.command in ("all", "build", "test") and not args.check:
        if args.command == "all" or args.command == "build":
            rc = cmd_gen(False)
            if rc != 0:
                return rc
        if missing := ensure_packages(spec_packages("base"), not args.no_install):
            say("build.py: missing Debian packages: " + " ".join(missing))
    targets, order = load_targets()
    if args.command in ("cflags", "libs"):
        if not args.target or args.target not in targets:
            sys.exit(f"build.py: {args.command} needs --target T (one of: {', '.join(order)})")
        t = targets[args.target]
        print(" ".join(shlex.quote(x) for x in (cflags(t) if args.command == "cflags" else libs(t, args.sanitize))))
        return 0
    if args.command == "targets":
        cmd_targets(targets, order)
        return 0
    if args.command == "bench":
        return cmd_bench(args)
    if args.command == "test":
        return cmd_test(targets, select(targets, order, args.target, default_only=True), args)
    if args.command == "build":
        status = cmd_build(targets, select(targets, order, args.target, default_only=False), args)
        return 0 if all(s.startswith(("built", "headers compile")) for s in status.values()) else 1
    # no command: regenerate, build everything buildable, print the matrix
    status = cmd_build(targets, [n for n in order if targets[n]["default"]], args)
    say("")
    cmd_targets(targets, order)
    return 0 if all(s.startswith(("built", "headers compile")) for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
