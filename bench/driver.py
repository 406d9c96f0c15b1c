#!/usr/bin/env python3
"""cio's benchmark driver: runs bench/cio_bench contenders interleaved and reports.

Used by `python3 build.py bench` (full run: table, bench/results.json, bench/results.svg,
bench/results.md) and by `python3 build.py test` (--smoke: each benchmark once, tiny sizes, nothing
written under bench/). Can be run by hand on a built cio_bench:

    python3 bench/driver.py build/bench/bench/cio_bench [--rounds 5] [--seconds 0.3] [--only B3,B7]

Method (bench/README.md): for every case (a benchmark at one CPU placement and one parameter) the
contenders run as separate processes in turn, A B C A B C …, for `rounds` rounds; each process
measures for `seconds` and prints RESULT lines. Medians and min–max are over the rounds, and ratios
to the peer use the medians; the per-round ratios (paired by the interleaving) give the ratio's
range. Placements are never compared with each other.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CIO = ("threaded", "evented-uring", "evented-epoll",
       "threaded+timeout", "evented-uring+timeout", "evented-epoll+timeout",  # B15: with read timeouts
       "threaded+conc", "evented-uring+conc", "evented-epoll+conc")  # B3/B5: every task on a unit of its own
LABELS = {
    "threaded": "cio Threaded",
    "evented-uring": "cio Evented (io_uring)",
    "evented-epoll": "cio Evented (epoll)",
    "threaded+timeout": "cio Threaded, read timeouts",
    "evented-uring+timeout": "cio Evented (io_uring), read timeouts",
    "evented-epoll+timeout": "cio Evented (epoll), read timeouts",
    "threaded+conc": "cio Threaded, every task on a worker",
    "evented-uring+conc": "cio Evented (io_uring), every task a fiber",
    "evented-epoll+conc": "cio Evented (epoll), every task a fiber",
    "libuv": "libuv 1.44",
    "pthread": "pthreads",
    "direct": "direct call",
    "clock_gettime": "clock_gettime",
    "raw-swap": "raw register swap",
    "swapcontext": "glibc swapcontext",
    "futex-2hops": "futex round trip (2 hops)",
    "signal-read": "raw signal out of read(2) + futex reply",
    "sync": "sync syscalls (floor)",
    "liburing": "liburing 2.3 (io_uring)",
    "fiber": "cio fiber switch",
    "pthread-pool": "plain pthread pool (4 threads, one queue)",
    "thread-per-conn": "thread per connection (blocking read/write)",
    "raw-epoll": "raw epoll loop (one thread)",
    "nftw": "nftw + copy_file_range (one thread)",
    "go": "Go 1.19 goroutines",
    "boost-context": "Boost.Context 1.74 fiber",
    "boost-fiber": "Boost.Fiber 1.74 yield (scheduler)",
    "tokio": "Tokio 1.24 (multi-thread)",
}

# Peers that are programs of their own (bench/peers/), built by build.py bench from Debian's
# packages: the driver runs them with cio_bench's command line; CIO_BENCH_<NAME> names the program,
# CIO_BENCH_<NAME>_WHY why there is none.
EXTERNAL = ("go", "tokio", "boost-context", "boost-fiber")
PROGRAM = {"boost-context": "boost", "boost-fiber": "boost"}  # contender -> the program's name


def external_peer(name):
    name = PROGRAM.get(name, name)
    exe = os.environ.get("CIO_BENCH_" + name.upper())
    if exe and os.path.exists(exe):
        return exe, None
    return None, os.environ.get("CIO_BENCH_" + name.upper() + "_WHY", "not built here (python3 build.py bench builds it)")

SPLIT = ["same", "split"]

# A target: (contender, kind, value, peer). kinds: ratio_le / ratio_ge (contender/peer medians),
# delta_le (contender - peer), abs_le (contender's value), report (the ratio, no verdict),
# hops_le (value = (hops, ratio): the contender's "hops" metric, median over the rounds, at most
# `hops` AND its time at most `ratio` × the peer's: B6, where the peer is the raw floor of the
# same hops). Evaluated per case.
BENCHES = [
    dict(id="B1", title="Io call through the vtable (cio_now) vs a direct call", variants=["one"],
         contenders=["threaded", "direct", "clock_gettime"], peer="direct",
         targets=[("threaded", "delta_le", 2.0, "direct")]),
    dict(id="B2", title="fiber switch, 2 fibers yielding", variants=["one"],
         contenders=["fiber", "raw-swap", "swapcontext", "boost-context", "boost-fiber"], peer="raw-swap",
         run_peers_alone=True,
         targets=[("fiber", "ratio_le", 2.0, "raw-swap"), ("fiber", "ratio_le", 0.05, "swapcontext"),
                  ("fiber", "ratio_le", 1.0, "boost-context"), ("fiber", "report", None, "boost-fiber")]),
    # B3/B5: the plain contenders mostly run their tasks inline (the "inline" column says how many);
    # the "+conc" ones put every task on a worker / a fiber of its own, the path the row names, and
    # are the ones judged against the peer.
    dict(id="B3", title="async+await of an empty task, serial", variants=SPLIT,
         contenders=["threaded", "evented-uring", "evented-epoll", "threaded+conc", "evented-uring+conc",
                     "evented-epoll+conc", "libuv", "go", "tokio"], peer="libuv",
         abs_unit="ns", targets=[("threaded+conc", "ratio_le", 1.0, "libuv"),
                                 ("evented-uring+conc", "ratio_le", 1.0, "libuv"),
                                 ("evented-epoll+conc", "ratio_le", 1.0, "libuv"),
                                 ("evented-uring+conc", "ratio_le", 1.0, "go"),
                                 ("evented-uring+conc", "ratio_le", 1.0, "tokio"),
                                 ("threaded", "report", None, "libuv"), ("evented-uring", "abs_le", 40.0, None),
                                 ("evented-epoll", "abs_le", 40.0, None)]),
    dict(id="B4", title="concurrent spawn+await, serial", variants=SPLIT,
         contenders=["threaded", "pthread", "libuv"], peer="libuv",
         targets=[("threaded", "ratio_le", 1.0, "libuv")]),
    dict(id="B5", title="group of 1,000 tasks: spawn, then await", variants=SPLIT,
         contenders=["threaded", "evented-uring", "evented-epoll", "threaded+conc", "evented-uring+conc",
                     "evented-epoll+conc", "libuv", "pthread-pool", "go", "tokio"], peer="libuv",
         abs_unit="ns", targets=[("threaded+conc", "ratio_le", 1.0, "libuv"),
                                 ("threaded+conc", "ratio_le", 1.0, "pthread-pool"),
                                 ("evented-uring+conc", "ratio_le", 1.0, "libuv"),
                                 ("evented-epoll+conc", "ratio_le", 1.0, "libuv"),
                                 ("evented-uring+conc", "ratio_le", 1.0, "go"),
                                 ("evented-uring+conc", "ratio_le", 1.0, "tokio"),
                                 ("threaded", "report", None, "libuv"), ("evented-uring", "abs_le", 30.0, None),
                                 ("evented-epoll", "abs_le", 30.0, None)]),
    # B6 Threaded: "≤ 2 wake hops" (issue #8). A thread blocked in read(2) leaves it only through a
    # signal, so the two hops are a signal and a futex reply: signal-read is exactly that, raw. The
    # futex round trip (two futex hops) stays as a reported row: it was the yardstick before.
    dict(id="B6", title="cancel a task blocked in read(2): cancel+join (median round)", variants=SPLIT,
         contenders=["threaded", "evented-uring", "evented-epoll", "futex-2hops", "signal-read"], peer="signal-read",
         abs_unit="ns",
         targets=[("threaded", "hops_le", (2.0, 1.0), "signal-read"), ("threaded", "report", None, "futex-2hops"),
                  ("evented-uring", "abs_le", 150.0, None), ("evented-epoll", "abs_le", 150.0, None)]),
    dict(id="B7", title="Mutex+Condition ping-pong, 2 threads", variants=SPLIT,
         contenders=["threaded", "pthread"], peer="pthread",
         targets=[("threaded", "ratio_le", 1.0, "pthread"), ("threaded", "cpu_le", 1.0, "pthread")]),
    dict(id="B8a", title="Queue round trip, same thread (put+get)", variants=["one"],
         contenders=["threaded", "pthread"], peer="pthread", targets=[("threaded", "ratio_le", 1.0, "pthread")]),
    dict(id="B8b", title="Queue round trip, 2 threads", variants=SPLIT,
         contenders=["threaded", "pthread"], peer="pthread",
         targets=[("threaded", "ratio_le", 1.0, "pthread"), ("threaded", "cpu_le", 1.0, "pthread")]),
    dict(id="B9s", title="stat of a cached file, N in flight", variants=SPLIT, params=[1, 4, 32], param_name="depth",
         contenders=["threaded", "threaded+conc", "evented-uring", "libuv", "liburing", "pthread-pool", "sync"],
         peer="libuv",
         targets=[("threaded+conc", "ratio_ge", 1.0, "libuv"), ("threaded+conc", "ratio_ge", 1.0, "pthread-pool"),
                  ("threaded", "report", None, "libuv"), ("evented-uring", "ratio_ge", 1.0, "libuv"),
                  ("evented-uring", "ratio_ge", 0.9, "liburing")]),
    dict(id="B9r", title="4 KiB read of a cached file, N in flight", variants=SPLIT, params=[1, 4, 32],
         param_name="depth",
         contenders=["threaded", "threaded+conc", "evented-uring", "libuv", "liburing", "pthread-pool", "sync"],
         peer="libuv",
         targets=[("threaded+conc", "ratio_ge", 1.0, "libuv"), ("threaded+conc", "ratio_ge", 1.0, "pthread-pool"),
                  ("threaded", "report", None, "libuv"), ("evented-uring", "ratio_ge", 1.0, "libuv"),
                  ("evented-uring", "ratio_ge", 0.9, "liburing")]),
    dict(id="B10", title="TCP echo 64 B, 50 connections", variants=SPLIT, seconds_factor=3,
         contenders=["threaded", "evented-uring", "libuv", "go", "tokio", "raw-epoll", "thread-per-conn"], peer="libuv",
         targets=[("evented-uring", "ratio_ge", 1.0, "libuv"), ("evented-uring", "ratio_ge", 1.0, "go"),
                  ("evented-uring", "ratio_ge", 1.0, "tokio"), ("evented-uring", "report", None, "raw-epoll"),
                  ("threaded", "ratio_ge", 1.0, "thread-per-conn"), ("threaded", "report", None, "libuv")]),
    dict(id="B11", title="TCP bulk, 1 connection, 64 KiB writes", variants=SPLIT, seconds_factor=3,
         contenders=["threaded", "libuv"], peer="libuv", targets=[("threaded", "ratio_ge", 0.9, "libuv")]),
    dict(id="B12", title="100,000 tasks sleeping 1 s: wall time, peak RSS", variants=["free"], once=True,
         contenders=["evented-uring", "libuv", "go", "tokio"], peer="go", run_peers_alone=True, abs_unit="s",
         targets=[("evented-uring", "abs_le", 1.2, None), ("evented-uring", "abs_le_rss", 1024.0, None),
                  ("evented-uring", "ratio_le", 1.0, "go"), ("evented-uring", "rss_ratio_le", 1.0, "go"),
                  ("evented-uring", "report", None, "tokio")]),
    dict(id="B13", title="saveData: N files of 4 KiB written concurrently (ext4 /tmp: waits on the disk)",
         variants=SPLIT, params=[1, 8, 64],
         param_name="files", contenders=["threaded", "threaded+conc", "evented-uring", "libuv", "sync"], peer="libuv",
         targets=[("threaded+conc", "ratio_ge", 1.0, "libuv"), ("threaded", "report", None, "libuv"), ("evented-uring", "ratio_ge", 1.0, "libuv")]),
    dict(id="B13m", title="saveData as B13 on /dev/shm (tmpfs: the dispatch alone)", variants=SPLIT, params=[8, 64],
         param_name="files", contenders=["threaded", "threaded+conc", "evented-uring", "libuv", "sync"], peer="libuv",
         targets=[("threaded+conc", "ratio_ge", 1.0, "libuv"), ("threaded", "report", None, "libuv"), ("evented-uring", "ratio_ge", 1.0, "libuv")]),
    dict(id="B14", title="TCP echo 64 B, 50 connections, Evented epoll flavour", variants=SPLIT, seconds_factor=3,
         contenders=["evented-epoll", "libuv"], peer="libuv", targets=[("evented-epoll", "ratio_ge", 1.0, "libuv")]),
    dict(id="B15", title="TCP echo as B10, every server read with a 10 s idle timeout (+timeout) or without",
         variants=SPLIT, seconds_factor=3,
         contenders=["threaded", "threaded+timeout", "evented-uring", "evented-uring+timeout", "evented-epoll",
                     "evented-epoll+timeout"], peer="threaded",
         targets=[("threaded+timeout", "ratio_ge", 0.9, "threaded"),
                  ("evented-uring+timeout", "ratio_ge", 0.9, "evented-uring"),
                  ("evented-epoll+timeout", "ratio_ge", 0.9, "evented-epoll")]),
    dict(id="B16", title="TCP echo latency, 1 connection, one 64 B message at a time (p50; p99 beside)",
         variants=SPLIT, seconds_factor=3,
         contenders=["threaded", "evented-uring", "evented-epoll", "libuv", "go", "tokio", "raw-epoll",
                     "thread-per-conn"], peer="libuv", abs_unit="ns",
         targets=[("evented-uring", "ratio_le", 1.0, "libuv"), ("evented-epoll", "ratio_le", 1.0, "libuv"),
                  ("evented-uring", "ratio_le", 1.0, "go"), ("evented-uring", "ratio_le", 1.0, "tokio"),
                  ("threaded", "ratio_le", 1.0, "thread-per-conn"), ("evented-epoll", "report", None, "raw-epoll")]),
    # Issue 23 point 4: what users hit. B17's cio servers are examples/http_server itself.
    dict(id="B17", title="HTTP/1.1 keep-alive, fixed 16-byte body, N connections (req/s; p50, p99 beside)",
         variants=SPLIT, seconds_factor=3, params=[1, 10, 100, 1000], split_params=[1, 100], quick_params=[100],
         quick_variants=["same"], param_name="conns",
         contenders=["threaded", "evented-uring", "libuv", "go", "tokio"], peer="libuv",
         targets=[("evented-uring", "ratio_ge", 1.0, "libuv"), ("evented-uring", "ratio_ge", 1.0, "go"),
                  ("evented-uring", "ratio_ge", 1.0, "tokio"), ("threaded", "report", None, "go")]),
    dict(id="B18", title="copy a tree of N small files (100 directories; 100 B - 4 KiB each)", variants=["free"],
         once=True, params=[10000], quick_params=[1000], param_name="files",
         contenders=["threaded", "evented-uring", "evented-epoll", "nftw", "libuv", "go"], peer="nftw", abs_unit="ns",
         targets=[("threaded", "ratio_le", 1.0, "nftw"), ("evented-uring", "ratio_le", 1.0, "nftw"),
                  ("evented-uring", "ratio_le", 1.0, "libuv"), ("evented-uring", "ratio_le", 1.0, "go"),
                  ("threaded", "report", None, "go")]),
    dict(id="B19", title="timers: N tasks each sleeping 100 times in a row, 1-1000 µs each (N=10,000: 1,000,000 "
         "timers); judged on CPU per timer", variants=["free"], once=True, params=[1000, 10000], quick_params=[1000],
         param_name="pending",
         contenders=["threaded", "evented-uring", "evented-epoll", "libuv", "go", "tokio"], peer="libuv",
         targets=[("evented-uring", "cpu_le", 1.0, "libuv"), ("evented-uring", "cpu_le", 1.0, "go"),
                  ("evented-uring", "cpu_le", 1.0, "tokio"), ("evented-epoll", "cpu_le", 1.0, "libuv"),
                  ("evented-uring", "report", None, "go"), ("threaded", "cpu_le", 1.0, "libuv")]),
]


# cio_bench runs these for a peer program too: it is the client (the peer only the server), or, for
# B18, it makes the tree the Go program copies.
TWO_PROCESS = ("B10", "B11", "B14", "B15", "B16", "B17", "B18")
TCP_ROUNDS = 9   # rounds of a TCP case (the noisiest): the 4-of-5 rule needs more of them
REPORT_ROUNDS = 3  # rounds of a case that is reported, not judged (the split placement)
QUORUM = 0.8     # a target is met when at least this share of its per-round values clears it
OTHER_CPU = 0.25  # a case during which other processes used more CPUs than this on average is marked "under load"


def higher_is_better(unit):
    return unit.endswith("/s")


# ---- running ------------------------------------------------------------------------------------


def run_one(exe, bench, contender, variant, seconds, param, smoke, timeout):
    prefix = []
    if contender in EXTERNAL and bench not in TWO_PROCESS:
        exe, why = external_peer(contender)
        if exe is None:
            return {"na": why}
        if variant in ("one", "same"):  # cio_bench pins itself; a peer program is placed by taskset
            prefix = ["taskset", "-c", "0"]
    cmd = prefix + [exe, bench, contender, "--cpus", variant, "--seconds", f"{seconds:g}"]
    if param is not None:
        cmd += ["--param", str(param)]
    if smoke:
        cmd.append("--smoke")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout}s: {' '.join(cmd)}"}
    metrics = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "RESULT":
            metrics[parts[1]] = (float(parts[2]), parts[3])
        elif parts and parts[0] == "NA":
            return {"na": line[3:].strip()}
    if r.returncode != 0 or "main" not in metrics:
        return {"error": f"exit {r.returncode}: {' '.join(cmd)}\n{(r.stdout + r.stderr)[-1500:]}"}
    return {"metrics": metrics}


def listed(exe):
    out = subprocess.run([exe, "--list"], capture_output=True, text=True, check=True).stdout
    entries = set()
    evented = False
    for line in out.splitlines():
        a, b = line.split()
        if a == "evented":
            evented = b == "1"
        else:
            entries.add((a, b))
    return entries, evented


def cases_of(b, smoke, quick=False):
    variants = b["variants"]
    params = b.get("params", [None])
    if quick:  # --quick: the smaller sizes (and fewer placements) that keep the pass short
        params = b.get("quick_params", params)
        variants = b.get("quick_variants", variants)
    if smoke:  # one placement, the largest parameter (it exercises the most)
        variants = [v for v in variants if v in ("same", "one", "free")][:1] or variants[:1]
        params = params[-1:]
    for v in variants:
        for p in (b.get("split_params", params) if v == "split" and not quick and not smoke else params):
            yield v, p


def summarise(samples):
    return {"samples": samples, "median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def run_case(exe, b, variant, param, entries, opts, log):
    """Runs one case: every available contender, interleaved for opts.rounds rounds."""
    case = {"bench": b["id"], "title": b["title"], "variant": variant, "param": param,
            "param_name": b.get("param_name"), "peer": b["peer"], "contenders": {}}
    runnable = []
    for c in b["contenders"]:
        entry = {"label": LABELS.get(c, c), "cio": c in CIO or c == "fiber"}
        case["contenders"][c] = entry
        if c in b.get("pending", {}):
            entry["na"] = b["pending"][c]
        elif c in EXTERNAL and b["id"] not in TWO_PROCESS:
            runnable.append(c)
        elif (b["id"], c) not in entries:
            entry["na"] = "not built"
        else:
            runnable.append(c)
    # One probe run per cio contender finds those that cannot run here (Evented not built, …).
    seconds = opts.seconds * b.get("seconds_factor", 1)
    if opts.smoke:
        seconds = 0.01 * b.get("seconds_factor", 1)
    # B17's Threaded server at 1,000 connections can take tens of seconds to answer them all (one
    # thread per connection; the acceptor shares a CPU with the busy ones), and a run starts
    # measuring only once every connection has had its first answer.
    timeout = (180 if b["id"] == "B17" else 60) + seconds * 4
    raw = {c: [] for c in runnable}
    rounds = 1 if opts.smoke else min(opts.rounds, 3) if b.get("once") else opts.rounds
    case["judged"] = judged(b, variant)
    if not case["judged"]:
        rounds = min(rounds, REPORT_ROUNDS)  # reported only: its spread needs no 4-of-5 quorum
    elif b.get("seconds_factor", 1) > 1 and not opts.smoke and not getattr(opts, "quick", False):
        rounds = max(rounds, TCP_ROUNDS)  # TCP: noisier, more rounds for the 4-of-5 rule
    started = time.time()
    case["load_before"] = loadavg()
    snap = cpu_snapshot()
    for r in range(rounds):
        for c in list(runnable):
            res = run_one(exe, b["id"], c, variant, seconds, param, opts.smoke, timeout)
            if "na" in res:
                case["contenders"][c]["na"] = res["na"]
                runnable.remove(c)
                continue
            if "error" in res:
                case["contenders"][c]["error"] = res["error"]
                log.append(f"{b['id']} {variant} {c}: {res['error']}")
                runnable.remove(c)
                continue
            add_cpu_per_op(res["metrics"])
            raw[c].append(res["metrics"])
        if r == 0 and not opts.smoke:
            # Peers alone tell nothing about cio: skip them unless the benchmark says otherwise.
            if not any(c in CIO for c in runnable) and not b.get("run_peers_alone"):
                for c in runnable:
                    case["contenders"][c]["skipped"] = "no cio contender runs here yet"
                runnable = []
                break
    for c, runs in raw.items():
        if not runs or "skipped" in case["contenders"][c]:
            continue
        entry = case["contenders"][c]
        entry["unit"] = runs[0]["main"][1]
        for metric in runs[0]:
            vals = [m[metric][0] for m in runs if metric in m]
            s = summarise(vals)
            s["unit"] = runs[0][metric][1]
            entry.setdefault("metrics", {})[metric] = s
    case["load_after"] = loadavg()
    other = other_cpus(snap, cpu_snapshot())
    case["other_cpus"] = None if other is None else round(other, 3)
    case["loaded"] = other > OTHER_CPU if other is not None else load1(case["load_before"]) > 0.5
    evaluate(case, b)
    case["elapsed_s"] = round(time.time() - started, 1)
    return case


def judged(b, variant):
    """Issue 23 point 3: a benchmark run in both placements is judged on the one-CPU one (`same`);
    `split` (the measuring thread and the others on different CPUs) is reported beside it."""
    return variant != "split" or all(v == "split" for v in b["variants"])


def add_cpu_per_op(metrics):
    """CPU time per operation (ns), from the headline's time or rate and the process's CPU share:
    a contender that spins shows it here even when its wall time per op looks good. TCP rows: the
    server process's CPU time per round trip / request (from /proc, clock-tick resolution)."""
    for srv in ("server_us_per_rt", "server_us_per_req"):  # TCP: the server process's CPU per operation
        if srv in metrics:
            metrics["cpu_op"] = (metrics[srv][0] * 1e3, "ns/" + srv.rsplit("_", 1)[1])
            return
    if "cpu" not in metrics:
        return
    share = metrics["cpu"][0] / 100.0
    value, unit = metrics["main"]
    if unit.startswith("ns/"):
        metrics["cpu_op"] = (share * value, unit)
    elif unit.endswith("/s") and value > 0 and not unit.startswith(("Gbit", "MB", "MiB")):
        metrics["cpu_op"] = (share * 1e9 / value, "ns/" + unit[:-2])


def cpu_snapshot():
    """(wall time, the machine's busy CPU seconds from /proc/stat or None, the CPU seconds of this
    process and of its children that ended: the contenders and, through them, their servers)."""
    busy = None
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:8]]
        busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / os.sysconf("SC_CLK_TCK")  # user nice system irq softirq
    except (OSError, ValueError, IndexError):
        pass
    t = os.times()
    return time.time(), busy, t.user + t.system + t.children_user + t.children_system


def other_cpus(a, b):
    """CPUs' worth of work on the machine between snapshots a and b that was not the benchmark's:
    what marks a case "under load" (the load average counts the benchmark's own threads, and a
    case of 1,000 threads leaves it high for minutes)."""
    if a[1] is None or b[1] is None or b[0] <= a[0]:
        return None
    return max(0.0, ((b[1] - a[1]) - (b[2] - a[2])) / (b[0] - a[0]))


def load1(text):
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return 0.0


def clears(kind, value, x):
    return x <= value if kind in ("ratio_le", "abs_le", "abs_le_rss", "delta_le", "cpu_le", "rss_ratio_le") else x >= value


def verdict(kind, value, per_round):
    """met only when at least QUORUM (4 of 5) of the per-round values clear the bound."""
    if not per_round:
        return "no data"
    ok = sum(1 for x in per_round if clears(kind, value, x))
    return "met" if ok >= QUORUM * len(per_round) - 1e-9 else "missed"


def evaluate(case, b):
    case["targets"] = []
    cs = case["contenders"]
    for who, kind, value, peer in b.get("targets", []):
        t = {"contender": who, "kind": kind, "value": value, "peer": peer, "unit": b.get("abs_unit", "")}
        me = cs.get(who, {})
        metric = "rss" if kind == "abs_le_rss" else "main"
        if "metrics" not in me or metric not in me["metrics"]:
            t["status"] = "pending" if me.get("na") or me.get("skipped") else "no data"
            t["why"] = me.get("na") or me.get("skipped") or me.get("error", "")
            case["targets"].append(t)
            continue
        mine = me["metrics"][metric]
        if kind in ("abs_le", "abs_le_rss"):
            t["actual"] = mine["median"]
            t["round_values"] = list(mine["samples"])
            t["status"] = verdict(kind, value, mine["samples"])
        else:
            other = cs.get(peer, {})
            if "metrics" not in other:
                t["status"] = "no data"
                t["why"] = f"{peer}: " + (other.get("na") or other.get("error", "did not run"))
                case["targets"].append(t)
                continue
            theirs = other["metrics"]["main"]
            if kind == "rss_ratio_le":
                a, p = me["metrics"].get("rss"), other["metrics"].get("rss")
                if a is None or p is None:
                    t["status"] = "no data"
                    t["why"] = "no peak RSS reported"
                else:
                    pairs = [x / y for x, y in zip(a["samples"], p["samples"]) if y > 0]
                    t["actual"] = a["median"] / p["median"]
                    t["round_ratios"] = pairs
                    t["status"] = verdict(kind, value, pairs)
            elif kind == "cpu_le":
                a, p = me["metrics"].get("cpu_op"), other["metrics"].get("cpu_op")
                if a is None or p is None:
                    t["status"] = "no data"
                    t["why"] = "no CPU share reported"
                else:
                    pairs = [x / y for x, y in zip(a["samples"], p["samples"]) if y > 0]
                    t["actual"] = a["median"] / p["median"]
                    t["round_ratios"] = pairs
                    t["status"] = verdict(kind, value, pairs)
            elif kind == "hops_le":
                max_hops, max_ratio = value
                hops = me["metrics"].get("hops")
                ratio = mine["median"] / theirs["median"]
                t["round_ratios"] = [a / p for a, p in zip(mine["samples"], theirs["samples"]) if p > 0]
                t["actual"] = ratio
                if hops is None:
                    t["status"] = "no data"
                    t["why"] = "no hops metric"
                else:
                    t["hops"] = hops["median"]
                    ok = [h <= max_hops and r <= max_ratio for h, r in zip(hops["samples"], t["round_ratios"])]
                    t["status"] = "met" if ok and sum(ok) >= QUORUM * len(ok) - 1e-9 else "missed"
            elif kind == "delta_le":
                t["actual"] = mine["median"] - theirs["median"]
                deltas = [a - p for a, p in zip(mine["samples"], theirs["samples"])]
                t["round_values"] = deltas
                t["status"] = verdict(kind, value, deltas)
            else:
                ratio = mine["median"] / theirs["median"]
                pairs = [a / p for a, p in zip(mine["samples"], theirs["samples"]) if p > 0]
                t["actual"] = ratio
                t["round_ratios"] = pairs
                if kind == "report":
                    t["status"] = "reported"
                else:
                    t["status"] = verdict(kind, value, pairs)
        if not case.get("judged", True) and t.get("status") in ("met", "missed"):
            t["would_be"] = t["status"]
            t["status"] = "reported"  # split placement: judged on `same`
        if me.get("error") and t.get("status") in ("met", "missed", "reported"):
            t["status"] += " (a later run failed)"
        if case.get("loaded") and t.get("status") in ("met", "missed"):
            t["status"] += " (under load)"
        case["targets"].append(t)


# ---- reporting ----------------------------------------------------------------------------------


def fmt_value(v, unit):
    if unit.startswith("ns/"):
        per = unit[3:]
        if v >= 1e6:
            return f"{v / 1e6:.2f} ms/{per}"
        if v >= 1e4:
            return f"{v / 1e3:.1f} µs/{per}"
        if v >= 1e3:
            return f"{v / 1e3:.2f} µs/{per}"
        return f"{v:.1f} ns/{per}" if v >= 10 else f"{v:.2f} ns/{per}"
    if unit.endswith("/s") and unit != "Gbit/s":
        if v >= 1e6:
            return f"{v / 1e6:.2f}M {unit}"
        if v >= 1e3:
            return f"{v / 1e3:.1f}k {unit}"
        return f"{v:.0f} {unit}"
    if unit == "%":
        return f"{v:.0f}%"
    if unit == "n":
        return f"{v:,.0f}"
    return f"{v:.3g} {unit}"


def fmt_range(s, unit):
    lo, hi = fmt_value(s["min"], unit), fmt_value(s["max"], unit)
    if " " in lo and lo.split(" ", 1)[1] == hi.split(" ", 1)[1]:
        lo = lo.split(" ", 1)[0]
    return f"{lo} – {hi}"


def target_text(t):
    k, v, p = t["kind"], t["value"], t["peer"]
    if k == "ratio_le":
        return f"≤ {v:g}× {LABELS.get(p, p)}"
    if k == "ratio_ge":
        return f"≥ {v:g}× {LABELS.get(p, p)}"
    if k == "report":
        return f"reported (vs {LABELS.get(p, p)})"
    if k == "cpu_le":
        return f"CPU per op ≤ {v:g}× {LABELS.get(p, p)}'s"
    if k == "rss_ratio_le":
        return f"peak RSS ≤ {v:g}× {LABELS.get(p, p)}'s"
    if k == "hops_le":
        return f"≤ {v[0]:g} wake hops and ≤ {v[1]:g}× {LABELS.get(p, p)}"
    if k == "delta_le":
        return f"≤ {LABELS.get(p, p)} + {v:g} ns"
    if k == "abs_le_rss":
        return f"peak RSS ≤ {v:g} MiB"
    return f"≤ {v:g} {t.get('unit', '')}".rstrip()


def actual_text(t):
    if "actual" not in t:
        return ""
    if t["kind"] in ("ratio_le", "ratio_ge", "report", "hops_le", "cpu_le", "rss_ratio_le"):
        rr = t.get("round_ratios") or [t["actual"]]
        text = f"{t['actual']:.2f}× ({min(rr):.2f}–{max(rr):.2f})"
        return f"{t['hops']:.2f} hops, {text}" if "hops" in t else text
    if t["kind"] == "delta_le":
        rv = t.get("round_values") or [t["actual"]]
        return f"{t['actual']:+.2f} ns ({min(rv):+.2f}–{max(rv):+.2f})"
    if t.get("round_values") and len(t["round_values"]) > 1:
        rv = t["round_values"]
        return f"{t['actual']:.3g} ({min(rv):.3g}–{max(rv):.3g})"
    return f"{t['actual']:.0f}" if t["actual"] >= 100 else f"{t['actual']:.3g}"


def case_name(c):
    name = c["bench"]
    if c["param"] is not None:
        name += f" {c['param_name']}={c['param']}"
    return name


def rows_of(results):
    """One row per (case, contender): bench, placement, contender, median, min–max, extra, vs target."""
    rows = []
    for c in results["cases"]:
        targets = {}
        for t in c["targets"]:
            targets.setdefault(t["contender"], []).append(t)
        for who, e in c["contenders"].items():
            tgt = targets.get(who, [])
            ttxt = "; ".join(f"{target_text(t)}: " + (f"{actual_text(t)} {t['status']}" if "actual" in t
                                                      else t["status"]) for t in tgt)
            if "metrics" in e:
                m = e["metrics"]["main"]
                extra = "; ".join(f"{k} {fmt_value(v['median'], v['unit'])}" for k, v in e["metrics"].items()
                                  if k in SHOWN)
                if e.get("error"):  # rounds before the failure: say how many, and that one failed
                    extra += f"{'; ' if extra else ''}{len(m['samples'])} rounds, then error: " + \
                        e["error"].splitlines()[0][:60]
                rows.append([case_name(c), c["variant"], e["label"], fmt_value(m["median"], m["unit"]),
                             fmt_range(m, m["unit"]), extra, ttxt])
            else:
                why = e.get("na") or e.get("skipped") or ("error: " + e.get("error", "?").splitlines()[0])
                rows.append([case_name(c), c["variant"], e["label"], "n/a", why, "", ttxt])
    return rows


SHOWN = ("cpu", "cpu_op", "inline", "units", "client_cpu", "rss", "p50", "p90", "p99", "spawn", "tasks", "hops", "kicks")  # extra metrics in the table (the JSON has all)
HEAD = ["bench", "cpus", "contender", "median", "min – max", "also", "target: ratio of medians (per-round range)"]


def print_table(results, out=sys.stdout):
    rows = rows_of(results)
    widths = [max(len(str(r[i])) for r in rows + [HEAD]) for i in range(len(HEAD))]
    widths[4] = min(widths[4], 34)
    last = None
    print("  ".join(h.ljust(w) for h, w in zip(HEAD, widths)).rstrip(), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        key = (r[0], r[1])
        if last is not None and key[0].split()[0] != last[0].split()[0]:
            print("", file=out)
        cells = list(r)
        if last == key:
            cells[0] = cells[1] = ""
        last = key
        print("  ".join(str(x).ljust(w) for x, w in zip(cells, widths)).rstrip(), file=out)


def conditions_line(results):
    meta = results["meta"]
    loaded = sum(1 for c in results["cases"] if c.get("loaded"))
    return (f"Taken {meta['date']} on {meta['machine']}; {meta['conditions']}. "
            f"{meta['rounds']} interleaved rounds of {meta['seconds']:g} s per contender (TCP: 3× the time, "
            f"{TCP_ROUNDS} rounds; the split placement: {REPORT_ROUNDS} rounds, reported, judged on the one-CPU one); "
            f"a target is met when at least {QUORUM * 5:.0f} of 5 per-round values clear it; load average before/after: {meta['load_before']} / {meta['load_after']}; "
            f"{loaded} of {len(results['cases'])} cases ran while other processes used more than {OTHER_CPU} "
            f"CPU on average (marked \"under load\").")


def compact_rows(results):
    """One row per target that has data: the cio number, the peer's, the ratio, the verdict."""
    rows, pending = [], []
    for c in results["cases"]:
        cs = c["contenders"]
        for t in c["targets"]:
            me = cs.get(t["contender"], {})
            if "actual" not in t:
                item = f"{c['bench']} {me.get('label', t['contender'])} {target_text(t)} ({t.get('why') or t['status']})"
                if item not in pending:
                    pending.append(item)
                continue
            # the numbers the target compares: peak RSS, CPU per op, else the headline
            metric = {"abs_le_rss": "rss", "rss_ratio_le": "rss", "cpu_le": "cpu_op"}.get(t["kind"], "main")
            m = me["metrics"][metric]
            peer = cs.get(t["peer"], {}) if t["peer"] else {}
            pm = peer.get("metrics", {}).get(metric)
            rows.append([case_name(c), c["variant"], f"{me['label']}: {fmt_value(m['median'], m['unit'])}",
                         f"{peer.get('label', '')}: {fmt_value(pm['median'], pm['unit'])}" if pm else "—",
                         actual_text(t), target_text(t), t["status"]])
    return rows, pending


def compact_markdown(results):
    """The conditions and one row per target: results.md's first table, and the README's."""
    head = ["bench", "cpus", "cio", "peer", "ratio (per-round range)", "target", ""]
    rows, pending = compact_rows(results)
    lines = [conditions_line(results), "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(x).replace("|", "/") for x in r) + " |" for r in rows]
    if pending:
        lines += ["", "Without a number: " + "; ".join(pending) + "."]
    return lines


README_BEGIN = "<!-- bench table: written by `python3 build.py bench` (bench/driver.py), do not edit -->"
README_END = "<!-- end of bench table -->"


def update_readme(results, path):
    """Puts the run's compact table between the README's markers; a message when it cannot."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        return f"README not updated: {e}"
    a, b = text.find(README_BEGIN), text.find(README_END)
    if a < 0 or b < a:
        return "README not updated: its bench table markers are missing"
    table = "\n".join(compact_markdown(results))
    text = text[:a + len(README_BEGIN)] + "\n" + table + "\n" + text[b:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return None


def markdown(results):
    lines = compact_markdown(results)
    lines += ["", "Every contender (peers, floors, extra metrics):", "",
              "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    for r in rows_of(results):
        lines.append("| " + " | ".join(str(x).replace("|", "/") for x in r) + " |")
    titles = "\n".join(f"- **{b['id']}**: {b['title']}" for b in BENCHES)
    return "\n".join(lines) + "\n\n" + titles + "\n"


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # Debian's python3-matplotlib lives in the system interpreter; this one may be another.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            tmp = path + ".json"
            with open(tmp, "w") as f:
                json.dump(results, f)
            r = subprocess.run([system, os.path.abspath(__file__), "--plot", tmp, path], capture_output=True,
                               text=True)
            os.unlink(tmp)
            if r.returncode == 0:
                return None
        return "matplotlib missing (Debian: python3-matplotlib): no plot"
    bars = []
    for c in results["cases"]:
        for t in c["targets"]:
            if t.get("kind") not in ("ratio_le", "ratio_ge", "report", "hops_le") or "actual" not in t:
                continue
            # "speed-up" > 1 means cio is better than the peer, whatever the unit's direction.
            unit = c["contenders"].get(t["contender"], {}).get("unit", "")
            inv = t["kind"] in ("ratio_le", "hops_le") or (t["kind"] == "report" and not higher_is_better(unit))
            rr = t.get("round_ratios") or [t["actual"]]
            sp = [1 / x if inv else x for x in rr]
            val = 1 / t["actual"] if inv else t["actual"]
            bound = t["value"][1] if t["kind"] == "hops_le" else t["value"]  # hops_le: the time ratio
            goal = None if bound is None else 1 / bound if inv else bound
            label = f"{case_name(c)} {c['variant']}: {LABELS.get(t['contender'])} vs {LABELS.get(t['peer'])}"
            bars.append((label, val, min(sp), max(sp), goal, t["status"]))
    if not bars:
        return "nothing to plot"
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(bars) + 1.6))
    ys = list(range(len(bars)))[::-1]
    for y, (label, val, lo, hi, goal, status) in zip(ys, bars):
        color = {"met": "#3a7d44", "missed": "#c0392b"}.get(status, "#888888")
        ax.barh(y, val, color=color, alpha=0.8)
        ax.plot([lo, hi], [y, y], color="black", linewidth=1)
        if goal is not None:
            ax.plot([goal, goal], [y - 0.4, y + 0.4], color="#1f4e9c", linewidth=2)
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars], fontsize=8)
    ax.set_xscale("log")
    ax.axvline(1.0, color="grey", linestyle=":")
    ax.set_xlabel("cio speed relative to the peer (>1: cio better)\nbar = ratio of medians, "
                  "line = per-round range, blue tick = target; green met, red missed, grey no target")
    ax.set_title(f"cio vs peers, {results['meta']['date']} ({results['meta']['conditions']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    return None


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} vCPU {cpu}, Linux {platform.release()}"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 3 and argv[0] == "--plot":  # plot(results.json, out.svg) under another Python
        with open(argv[1]) as f:
            msg = plot(json.load(f), argv[2])
        if msg:
            print(msg)
        return 0 if msg is None else 1
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exe")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.2)
    ap.add_argument("--only", help="comma-separated benchmark ids (B3,B9s,…)")
    ap.add_argument("--smoke", action="store_true", help="each benchmark once, tiny sizes; --out only")
    ap.add_argument("--quick", action="store_true",
                    help="a short pass: 5 rounds of 0.05 s (TCP: 0.15 s, 5 rounds); verdicts marked quick")
    ap.add_argument("--conditions", default="machine shared with other work (numbers taken under load)")
    ap.add_argument("--out", help="directory for results.json/.svg/.md (default: bench/; --smoke: none)")
    opts = ap.parse_args(argv)
    if opts.quick:
        opts.rounds, opts.seconds = 5, 0.05
        opts.conditions += "; quick pass"
    exe = os.path.abspath(opts.exe)
    entries, evented = listed(exe)
    only = set(opts.only.split(",")) if opts.only else None
    started = time.time()
    results = {"meta": {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine(),
                        "conditions": opts.conditions, "rounds": 1 if opts.smoke else opts.rounds,
                        "seconds": opts.seconds, "evented_built": evented, "load_before": loadavg(),
                        "method": "interleaved processes per case; medians over rounds; CPU placement "
                                  "one/same = CPU 0, split = measuring thread CPU 0, other threads CPU 1"},
               "cases": []}
    log = []
    for b in BENCHES:
        if only and b["id"] not in only:
            continue
        for variant, param in cases_of(b, opts.smoke, opts.quick):
            case = run_case(exe, b, variant, param, entries, opts, log)
            results["cases"].append(case)
            if not opts.smoke:
                print(f"  {case_name(case):14} {variant:5} done ({time.time() - started:.0f}s)", flush=True)
    results["meta"]["load_after"] = loadavg()
    results["meta"]["elapsed_s"] = round(time.time() - started, 1)
    print()
    print_table(results)
    for line in log:
        print("error: " + line)
    if opts.out or not opts.smoke:
        out = opts.out or HERE
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)
        with open(os.path.join(out, "results.md"), "w") as f:
            f.write(markdown(results))
        msg = plot(results, os.path.join(out, "results.svg"))
        print(f"\nwrote {out}/results.json, results.md" + (", results.svg" if msg is None else f" ({msg})"))
        if out == HERE and not opts.quick and not opts.only:  # a full run: the README shows it
            msg = update_readme(results, os.path.join(os.path.dirname(HERE), "README.md"))
            print(msg or "wrote README.md's bench table")
    print(f"({time.time() - started:.0f}s)")
    return 1 if log else 0


if __name__ == "__main__":
    sys.exit(main())
