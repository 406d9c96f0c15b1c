"""--fuzz: the DNS parser under libFuzzer.
"""

import os
import re
import shutil
import subprocess

from .common import BUILD, HOST, ROOT, say
from .deps import ensure_packages
from .spec import spec_packages


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
