#!/usr/bin/env python3
"""run.py - the nsalloc benchmark runner: the entry point of `make bench`,
the bench.smoke test and CI. The code is the package beside it, bench/nsbench/
(see its __init__.py for which file does what); `run.py --help` for usage."""
import sys

from nsbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
