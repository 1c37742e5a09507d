"""Turn-taking: does the gateway cut people off when they pause mid-sentence, and how fast does
it answer when they have finished? (gateway/testing/bench_turns.py; options: --help)

    .venv/bin/python scripts/bench_turns.py [--set tuning|held-out] [--paced default,transcript]
        [--cache SET.pkl] [--json OUT.json] ...
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Clip and Pause by this module's name too: sets kept with --cache before the benchmark moved
# into the package were pickled as __main__.Clip.
from gateway.testing.bench_turns import Clip, Pause, run  # noqa: F401

if __name__ == "__main__":
    run()
