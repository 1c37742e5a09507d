"""Load generator: N people talking to the built-in parrot at once, in real time.

The load run itself is :mod:`gateway.testing.load` (its docstring says what it measures); this
runs it:

    .venv/bin/python scripts/load.py --sessions 12 --seconds 60
"""

import asyncio
import sys

from gateway.testing.load import main

if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
