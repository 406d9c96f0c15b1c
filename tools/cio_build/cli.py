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
    python3 build.py docs                 the API reference (Doxygen, docs/Doxyfile) into build/docs/html;
                                          fails on any warning (also checked by `test` on the host)
    python3 build.py fresh-check [--sources switch|list|deb822] [--expect-passed N]
                                          the two commands above on a bare Debian 12 root
                                          (debootstrap + chroot; ci/fresh_check.py says what it proves)
    python3 build.py bench [--quick] [--rounds N] [--seconds S] [--only B3,B7]
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
import shlex
import shutil
import sys
import time

from .bench import bench_map_count, bench_smoke, cmd_bench
from .bsd import bsd_build, bsd_checks
from .checks import cflags_check, example_checks, gen_selftests, header_checks, install_checks, misuse_checks
from .cmake import build_full, cflags, cmd_gen, libs
from .common import HOST, NATIVE_BSD, RESULTS, ROOT, have_apt, is_root, say
from .deps import ensure_packages, ensure_python_modules
from .docs import cmd_docs, docs_checks
from .faults import FAULT_REPORT, fault_report
from .fuzz import fuzz_checks
from .lock import build_lock, lock_checks
from .spec import compiler_available, load_targets, spec_packages
from .suites import Tally, VALGRIND, backend_report, run_suite, save_results, test_executables, wine_env


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
            docs_checks(tally, allow)
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
    per_backend = backend_report(tally)
    if per_backend:
        say("per backend:")
        for line in per_backend:
            say(line)
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
                    choices=["all", "gen", "build", "test", "targets", "cflags", "libs", "bench", "docs",
                             "fresh-check"])
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
    ap.add_argument("--seconds", type=float, default=0.2, help="bench: measuring time per run (default 0.2)")
    ap.add_argument("--only", help="bench: comma-separated benchmark ids (B3,B9s,...); the results go to "
                    "build/bench/partial, never over bench/results.*")
    ap.add_argument("--quick", action="store_true", help="bench: a short pass (5 rounds of 0.05 s)")
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
        from ci import fresh_check
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
    if args.command == "docs":
        return cmd_docs(args)
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
