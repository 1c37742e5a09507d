"""Moved: what tests and scripts share is :mod:`gateway.testing`. New code imports it from there.

This shim only keeps ``tests.support.<module>`` imports working while branches written before
the move are merged (they add modules here and import the moved ones by their old names):
each moved module is the same module object under both names. Remove it once none is left.
"""

import importlib
import sys

MOVED = (
    "browser",
    "cluster",
    "figures",
    "load_client",
    "load_metrics",
    "loopback",
    "page",
    "processes",
    "records",
    "speech",
    "wire_agents",
)

for _name in MOVED:
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"gateway.testing.{_name}")
