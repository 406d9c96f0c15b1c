"""The benchmarks (bench/): a Release build, the driver, and the smoke run the suites make.
"""

import os
import subprocess
import time

from .common import BENCH_DIR, HOST, ROOT, say
from .deps import ensure_packages
from .spec import spec_packages


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


def build_peers(allow_install):
    """Builds the Go and Tokio peers (bench/peers/) from Debian's packages, offline; returns
    {name: (exe or None, why not)}. A peer that cannot be built says so in its column."""
    miss = ensure_packages(spec_packages("bench-peers"), allow_install)
    out = {}
    peers_dir = os.path.join(BENCH_DIR, "peers")
    os.makedirs(peers_dir, exist_ok=True)
    env = dict(os.environ, HOME=peers_dir, GOCACHE=os.path.join(peers_dir, "go-cache"), GOFLAGS="-mod=mod",
               GOPROXY="off", CARGO_HOME=os.path.join(peers_dir, "cargo-home"),
               CARGO_TARGET_DIR=os.path.join(peers_dir, "tokio-target"), RUSTC="/usr/bin/rustc")
    go_exe = os.path.join(peers_dir, "go-peer")
    if "golang-go" in miss or not os.path.exists("/usr/bin/go"):
        out["go"] = (None, "cannot build: Debian's golang-go is not installed")
    else:
        r = subprocess.run(["/usr/bin/go", "build", "-o", go_exe, "."], cwd=os.path.join(ROOT, "bench", "peers", "go"),
                           env=env, capture_output=True, text=True)
        out["go"] = (go_exe, "built") if r.returncode == 0 else (None, "cannot build: go build: " +
                                                                   (r.stderr or r.stdout).strip()[-300:])
    boost_exe = os.path.join(peers_dir, "boost-peer")
    if any(p in miss for p in ("g++", "libboost-context-dev", "libboost-fiber-dev")):
        out["boost"] = (None, "cannot build: Debian's g++ / libboost-context-dev / libboost-fiber-dev are not installed")
    else:
        boost_src = os.path.join(ROOT, "bench", "peers", "boost", "boost_peer.cpp")
        if os.path.exists(boost_exe) and os.path.getmtime(boost_exe) > os.path.getmtime(boost_src):
            out["boost"] = (boost_exe, "built")  # up to date (g++ takes ~10 s of a --quick pass)
        else:
            r = subprocess.run(["g++", "-std=c++17", "-O2", "-o", boost_exe, boost_src,
                                "-lboost_fiber", "-lboost_context"], capture_output=True, text=True)
            out["boost"] = (boost_exe, "built") if r.returncode == 0 else (None, "cannot build: g++: " +
                                                                         r.stderr.strip()[-300:])
    if any(p in miss for p in ("cargo", "rustc", "librust-tokio-dev", "librust-libc-dev")):
        out["tokio"] = (None, "cannot build: Debian's cargo / librust-tokio-dev are not installed")
    else:
        # A copy of the project, so that cargo's lock file and config stay out of the source tree.
        src = os.path.join(peers_dir, "tokio-src")
        subprocess.run(["rm", "-rf", src], check=True)
        subprocess.run(["cp", "-a", os.path.join(ROOT, "bench", "peers", "tokio"), src], check=True)  # -a: mtimes kept, so cargo rebuilds only what changed
        r = subprocess.run(["/usr/bin/cargo", "build", "--release", "--offline"], cwd=src, env=env,
                           capture_output=True, text=True)
        exe = os.path.join(peers_dir, "tokio-target", "release", "tokio-peer")
        out["tokio"] = (exe, "built") if r.returncode == 0 else (None, "cannot build: cargo build --offline: " +
                                                                 r.stderr.strip()[-300:])
    return out


def peer_env(peers):
    """The environment the driver reads the peers from: CIO_BENCH_<NAME> (the program) or
    CIO_BENCH_<NAME>_WHY (why there is none)."""
    env = {}
    for name, (exe, why) in peers.items():
        key = "CIO_BENCH_" + name.upper()
        if exe:
            env[key] = exe
        else:
            env[key + "_WHY"] = why
    return env


def bench_driver():
    from bench import driver
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
    peers = build_peers(not args.no_install)
    for name, (_, why) in peers.items():
        say(f"build.py bench: peer {name}: {why}")
    os.environ.update(peer_env(peers))
    argv = [exe, "--rounds", str(args.rounds), "--seconds", str(args.seconds)]
    if args.only:  # a partial run never replaces the full results under bench/
        argv += ["--only", args.only, "--out", os.path.join(BENCH_DIR, "partial")]
    if getattr(args, "quick", False):
        argv.append("--quick")
    if args.conditions:
        argv += ["--conditions", args.conditions]
    return bench_driver().main(argv)
