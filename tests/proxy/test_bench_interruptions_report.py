"""The interruption benchmark's report (gateway/testing/bench_interruptions.py) on trials made
here: what it counts as the agent paused again. No server, no model."""

from __future__ import annotations

import numpy as np

from gateway.testing.bench_interruptions import report
from gateway.testing.overlap import Clip, OverlapTrial


def trial(*outcomes: tuple[str, str | None]) -> OverlapTrial:
    """A trial whose page heard these ``playback`` messages, 0.1 s apart."""
    return OverlapTrial(
        playback=[
            (0.1 * i, {"outcome": o} | ({"why": why} if why else {}))
            for i, (o, why) in enumerate(outcomes)
        ]
    )


def test_a_pause_after_going_on_is_told_from_a_second_overlaps():
    yeah = Clip("Okay, | okay.", "backchannel", "en-us", np.zeros(0, np.int16))
    went_on_then_talked = trial(
        ("paused", None), ("resumed", None), ("paused", None), ("resumed", "backchannel")
    )
    two_overlaps = trial(
        ("paused", None), ("resumed", "backchannel"), ("paused", None), ("resumed", "backchannel")
    )
    went_on_once = trial(("paused", None), ("resumed", None), ("resumed", "backchannel"))
    text = report([(yeah, went_on_then_talked), (yeah, two_overlaps), (yeah, went_on_once)], None)
    assert "paused again after going on, by kind: {'backchannel': 1}" in text
    assert "paused again by a second overlap, by kind: {'backchannel': 1}" in text
    assert "false stops (backchannel, noise, echo): 0/3" in text
