"""spec/ as the generator reads it (gen.model), the targets, and what each needs to run.
"""

import os
import shutil
import sys

from .common import HOST, NATIVE_BSD, ROOT


_model = None


def load_model():
    """spec/ as the generator reads it (once per run); a bad spec ends the run with file:line."""
    global _model
    if _model is None:
        from gen import model
        from gen.specload import SpecError
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
    """One of spec/targets.yaml's `packages` lists (base, cmocka-source, host-tests, docs, bench, fuzz,
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
