"""Debian packages (apt-get, never Recommends), Python's bootstrap modules, and cmocka's source package
for the cross targets (a deb-src list beside the system's apt sources, in either format).
"""

import os
import re
import subprocess
import sys

from .common import BOOTSTRAP_PACKAGES, DEPS, SYSTEM_PYTHON, have_apt, is_root, say
from .spec import spec_packages


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
