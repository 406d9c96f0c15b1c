"""cio's build driver, as a package; `python3 build.py` (the entry point) runs cli.main().

Modules, each importing only those above it in this list: common, spec, deps, lock, faults,
suites, cmake, checks, bsd, fuzz, bench, cli.
"""
