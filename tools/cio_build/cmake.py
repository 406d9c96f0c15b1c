"""Generating platform/, configuring and building a target with CMake, cmocka for cross targets,
and the compiler/linker flags of the `cflags` and `libs` commands.
"""

import os
import shutil
import subprocess
import sys

from .common import BSD_INSTALL_HINT, BSD_TOOLS, BUILD, DEPS, ROOT
from .deps import cmocka_source, ensure_packages
from .spec import compiler_available, load_model, runner_cmd, spec_packages


def cmd_gen(check):
    args = [sys.executable, "-m", "gen.generate"]
    if check:
        args.append("--check")
    return subprocess.run(args, cwd=ROOT).returncode  # -m: the package gen/ of this checkout


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
        out += ["-lws2_32", "-liphlpapi", "-lntdll", "-lsynchronization", "-lbcrypt", "-lpthread"]
    elif t["os"] == "wasi":
        out.append("-lwasi-emulated-signal")  # cio_sig_* on wasi-libc's signal emulation
    else:
        out.append("-lpthread")
        if t["arch"] in ("arm", "mips"):
            out.append("-latomic")
    return out
