"""How the benchmark scripts summarise what they measured."""

from __future__ import annotations

import statistics


def summarise(values: list[float]) -> tuple[float, float]:
    """Median and 95th percentile (the nearest rank: a value that was measured)."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95
