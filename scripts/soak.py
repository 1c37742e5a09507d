"""Soak: sessions opening and closing by the thousand while a few people talk for minutes.

The soak itself is :mod:`gateway.testing.soak` (its docstring says what it measures); this runs it:

    .venv/bin/python scripts/soak.py --visits 1000 --hold 12 --minutes 10
"""

import sys

from gateway.testing.soak import main

if __name__ == "__main__":
    sys.exit(main())
