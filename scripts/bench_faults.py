"""Faults while people talk: what each costs the people, their turns and their records.

The benchmark itself is :mod:`gateway.testing.bench_faults` (its docstring says what it
measures); this runs it:

    flock /tmp/bench.lock .venv/bin/python scripts/bench_faults.py          # 12 people
"""

import sys

from gateway.testing.bench_faults import main

if __name__ == "__main__":
    sys.exit(main())
