"""Paths, the host, and small helpers every module of the build driver uses.
"""

import os
import platform
import shlex
import shutil
import subprocess


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def have_apt():
    return shutil.which("apt-get") is not None and shutil.which("dpkg-query") is not None


def run_step(cmd, log, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        log.append("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + (r.stdout + r.stderr)[-3000:])
    return r.returncode == 0
