#!/usr/bin/env python3
"""The README's two commands on a bare Debian 12, as a new user runs them (`python3 build.py fresh-check`).

What it proves: on a Debian 12 root that has nothing but debootstrap's `minbase` plus python3 and
git, as root, `python3 build.py` and `python3 build.py test` install every package they need with
apt-get (no Recommends, no hand-installed tool of this machine) and pass. Both apt source formats are
covered in one run, switching between the two commands:

  1. the root has the one-line /etc/apt/sources.list (as the Debian installer and debootstrap write
     it): `python3 build.py` installs the packages of every default target and builds them, cmocka for
     the cross targets from Debian's source package (the deb-src list derived from sources.list);
  2. the root is switched to deb822 (/etc/apt/sources.list.d/debian.sources, as Debian's container
     images write it; sources.list removed), the deb-src list build.py made and the cmocka builds are
     thrown away, and `python3 build.py test` runs: the host-test packages and cmocka's source come
     through debian.sources, every suite runs.

`--sources list` or `--sources deb822` instead runs both commands under one format only.

How: a minimal bookworm root is made with debootstrap once and kept as a tarball outside the checkout
(/var/tmp/cio-fresh-check, keyed by what went into it); every run unpacks a new copy, clones the
committed HEAD of this checkout into /src and runs the commands there as root under chroot, in
private mount and PID namespaces (unshare): its mounts and any process it leaves behind (dnsmasq,
wineserver) end with it, and the copy is deleted. Downloaded .deb files are kept in a cache beside the
tarball, seeded with this machine's own /var/cache/apt/archives, and lent to the root's
/var/cache/apt/archives: apt still resolves, verifies (against the signed indexes it fetches anew),
unpacks and configures every package; only the download is saved. Nothing of the host's apt
configuration is changed.

The last line is the inner `tests: N passed, M failed[, K skipped]`. Exit status: 0 only if both
commands exited 0, the test command printed that line with 0 failed, and (with --expect-passed N, the
count of the same suites on this machine) the bare machine passed at least 98 % of N: a package
missing from spec/targets.yaml shows up as a failure or as suites that skip or are not run.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("CIO_FRESH_DIR", "/var/tmp/cio-fresh-check")
SUITE = "bookworm"
INCLUDE = ["python3", "git"]  # what the README assumes a user has
TESTS_LINE = re.compile(r"^tests: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$", re.M)
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def say(msg):
    print(f"fresh-check: {msg}", flush=True)


def host_mirror():
    """The Debian mirror this machine's apt uses, from either source format."""
    try:
        for ln in open("/etc/apt/sources.list", encoding="utf-8"):
            m = re.match(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+" + SUITE + r"\s", ln)
            if m:
                return m.group(1)
    except OSError:
        pass
    d = "/etc/apt/sources.list.d"
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if n.endswith(".sources"):
            for block in re.split(r"\n\s*\n", open(os.path.join(d, n), encoding="utf-8").read()):
                uris = re.search(r"^URIs:\s*(\S+)", block, re.M)
                suites = re.search(r"^Suites:(.*)$", block, re.M)
                if uris and suites and SUITE in suites.group(1).split() and \
                        re.search(r"^Types:.*\bdeb\b", block, re.M):
                    return uris.group(1)
    return "http://deb.debian.org/debian"


def base_tarball(mirror):
    """The minimal root as a tarball, made once per (suite, packages, mirror)."""
    key = hashlib.sha256(f"{SUITE} minbase {','.join(INCLUDE)} {mirror}".encode()).hexdigest()[:12]
    tar = os.path.join(WORK, f"base-{SUITE}-{key}.tar")
    if os.path.exists(tar):
        return tar
    os.makedirs(WORK, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="debootstrap.", dir=WORK)
    log = os.path.join(WORK, "debootstrap.log")
    say(f"making the bare root once: debootstrap --variant=minbase --include={','.join(INCLUDE)} {SUITE} {mirror}")
    t0 = time.time()
    with open(log, "w") as f:
        r = subprocess.run(["debootstrap", "--variant=minbase", "--include=" + ",".join(INCLUDE), SUITE, tmp, mirror],
                           stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        sys.exit(f"fresh-check: debootstrap failed (see {log}):\n" + open(log).read()[-3000:])
    # debootstrap leaves its downloads in the root's apt cache: a bare machine has none.
    for d in ("var/cache/apt/archives",):
        for n in os.listdir(os.path.join(tmp, d)):
            if n.endswith(".deb"):
                os.unlink(os.path.join(tmp, d, n))
    subprocess.run(["tar", "-C", tmp, "-cf", tar + ".part", "."], check=True)
    os.replace(tar + ".part", tar)
    shutil.rmtree(tmp, ignore_errors=True)
    say(f"bare root made in {time.time() - t0:.0f} s: {tar}")
    return tar


def to_deb822(root):
    """Rewrites the root's one-line sources.list as debian.sources (the same entries)."""
    lst = os.path.join(root, "etc/apt/sources.list")
    stanzas = []
    for ln in open(lst, encoding="utf-8"):
        m = re.match(r"^\s*deb\s+(\S+)\s+(\S+)\s+(.*?)\s*$", ln)
        if m:
            stanzas.append(f"Types: deb\nURIs: {m.group(1)}\nSuites: {m.group(2)}\nComponents: {m.group(3)}\n"
                           "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    if not stanzas:
        sys.exit("fresh-check: the bare root's sources.list has no deb line")
    with open(os.path.join(root, "etc/apt/sources.list.d/debian.sources"), "w", encoding="utf-8") as f:
        f.write("\n".join(stanzas))
    os.unlink(lst)


def apt_archives():
    """The .deb cache lent to the root: this machine's own downloads (hard links, else copies) and
    what earlier runs downloaded."""
    archives = os.path.join(WORK, "apt-archives")
    os.makedirs(os.path.join(archives, "partial"), exist_ok=True)
    host = "/var/cache/apt/archives"
    for n in os.listdir(host) if os.path.isdir(host) else []:
        dst = os.path.join(archives, n)
        if n.endswith(".deb") and not os.path.exists(dst):
            try:
                os.link(os.path.join(host, n), dst)
            except OSError:
                shutil.copy(os.path.join(host, n), dst)
    return archives


def in_root(root, cmd, log):
    """Runs a shell command in the root as root (chroot, private mount and PID namespaces); its
    output goes to stdout and to log. Returns (exit status, output)."""
    inner = ("set -e; r=$1; a=$2; shift 2; "
             "mount -t proc proc \"$r/proc\"; mount --rbind /sys \"$r/sys\"; mount --make-rslave \"$r/sys\"; "
             "mount --rbind /dev \"$r/dev\"; mount --make-rslave \"$r/dev\"; "
             "mount -t tmpfs tmpfs \"$r/dev/shm\"; mount -t tmpfs tmpfs \"$r/tmp\"; "
             "mount --bind \"$a\" \"$r/var/cache/apt/archives\"; "
             f"exec chroot \"$r\" /usr/bin/env -i HOME=/root PATH={PATH} LANG=C.UTF-8 TERM=dumb "
             "bash -c \"cd /src && $1\"")
    archives = apt_archives()
    p = subprocess.Popen(["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "--",
                          "bash", "-c", inner, "_", root, archives, cmd],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace")
    out = []
    for line in p.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        log.write(line)
        out.append(line)
    return p.wait(), "".join(out)


def run(args):
    for tool in ("debootstrap", "unshare", "chroot", "tar", "git"):
        if shutil.which(tool) is None:
            sys.exit(f"fresh-check: {tool} is not installed (spec/targets.yaml `packages: fresh-check`)")
    if os.geteuid() != 0:
        sys.exit("fresh-check: must run as root (debootstrap, chroot, mount namespaces)")
    head = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        say("note: uncommitted changes are not part of the check (it clones the committed HEAD)")
    tar = base_tarball(host_mirror())
    root = tempfile.mkdtemp(prefix="run.", dir=WORK)
    log_path = os.path.join(WORK, "last-run.log")
    started = time.time()
    try:
        subprocess.run(["tar", "-C", root, "-xf", tar], check=True)
        os.chmod(root, 0o755)  # mkdtemp made it 0700: a real / lets every user (dnsmasq's nobody) through
        subprocess.run(["git", "clone", "-q", ROOT, os.path.join(root, "src")], check=True)
        shutil.copy("/etc/resolv.conf", os.path.join(root, "etc/resolv.conf"))
        first = "deb822" if args.sources == "deb822" else "list"
        if first == "deb822":
            to_deb822(root)
        say(f"{head}")
        with open(log_path, "w") as log:
            say(f"apt sources: {'debian.sources (deb822)' if first == 'deb822' else 'sources.list (one-line)'}")
            say(f"running: {args.build_cmd}")
            rc1, _ = in_root(root, args.build_cmd, log)
            say(f"`{args.build_cmd}` exited {rc1} after {time.time() - started:.0f} s")
            if args.sources == "switch":
                to_deb822(root)
                # what build.py derived from sources.list, and what it fetched through it, go: the
                # test command must find cmocka's source through debian.sources by itself
                for p in ("etc/apt/sources.list.d/cio-deb-src.sources", "src/build/deps"):
                    full = os.path.join(root, p)
                    if os.path.isdir(full):
                        shutil.rmtree(full)
                    elif os.path.exists(full):
                        os.unlink(full)
                say("apt sources switched to debian.sources (deb822); cio's deb-src list and cmocka builds removed")
            say(f"running: {args.test_cmd}")
            t1 = time.time()
            rc2, out = in_root(root, args.test_cmd, log)
            say(f"`{args.test_cmd}` exited {rc2} after {time.time() - t1:.0f} s")
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", root])
    lines = TESTS_LINE.findall(out)
    if not lines:
        say(f"FAILED: the test command printed no `tests:` line (log: {log_path})")
        print("tests: 0 passed, 1 failed")
        return 1
    passed, failed, skipped = (int(x or 0) for x in lines[-1])
    problems = []
    if rc1 != 0:
        problems.append(f"`{args.build_cmd}` exited {rc1}")
    if rc2 != 0 or failed:
        problems.append(f"`{args.test_cmd}` exited {rc2} with {failed} failed")
    if args.expect_passed and passed < 0.98 * args.expect_passed:
        problems.append(f"{passed} passed on the bare machine, under 98 % of the {args.expect_passed} "
                        "passed on this machine (suites skipped or not run: a package missing?)")
    verdict = "ok" if not problems else "FAILED: " + "; ".join(problems)
    say(f"{verdict} ({time.time() - started:.0f} s in all; log: {log_path})")
    if problems and not failed:
        failed = 1
    print(f"tests: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""), flush=True)
    return 0 if not problems else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", choices=["switch", "list", "deb822"], default="switch",
                    help="apt source format(s): one-line then deb822 (default), or one of them throughout")
    ap.add_argument("--build-cmd", default="python3 build.py", help="the first command (default: %(default)s)")
    ap.add_argument("--test-cmd", default="python3 build.py test", help="the second (default: %(default)s)")
    ap.add_argument("--expect-passed", type=int, default=0,
                    help="the passed count of the same test command on this machine (fail under 98 %% of it)")
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
