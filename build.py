#!/usr/bin/env python3
"""cio's one driver: `python3 build.py --help` (tools/cio_build/cli.py says everything it does)."""

import sys

from tools.cio_build.cli import main

if __name__ == "__main__":
    sys.exit(main())
