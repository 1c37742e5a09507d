"""Speech in process against speech on a Wyoming server: the hop's cost and what it buys.

The benchmark itself is :mod:`gateway.testing.bench_speech` (its docstring says what it
measures); run it alone (``flock /tmp/bench.lock``), not nice'd:

    .venv/bin/python scripts/bench_speech.py
"""

import asyncio
import sys

from gateway.testing.bench_speech import main

if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
