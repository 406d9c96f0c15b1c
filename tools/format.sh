#!/bin/sh
# Reformats the C sources with the repository's .clang-format (see tools/format.py for which files;
# `--check` and `--count` change nothing). Needs Debian's clang-format (spec/targets.yaml, host-tests).
exec python3 "$(dirname "$0")/format.py" "$@"
