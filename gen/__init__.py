"""cio's generator, a package: `python3 -m gen.generate` (run by `python3 build.py gen`).

specload reads YAML with line numbers; checks holds the input validators; model builds the model
from every spec file (with model_errors, model_libc, bsdsyms and oscalls); generate renders it.
Imports go one way: generate -> model -> (model_errors, model_libc, bsdsyms, oscalls) -> checks ->
specload.
"""
