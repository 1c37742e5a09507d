"""The interruption benchmark's report (gateway/testing/bench_interruptions.py) on trials made
here: what it counts as the agent paused again. No server, no model."""

from __future__ import annotations

from pathlib import Path

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


def test_the_serve_logs_decisions_are_all_read_words_with_an_apostrophe_too(tmp_path: Path):
    """The session logs the words as a repr (gateway/proxy/session.py): in double quotes when
    they hold an apostrophe."""
    line = "overlap: %s by %s on %r after %d ms of voice, %d ms after it began, decodes %.0f ms%s"
    behind = "it's behind the library"
    log = tmp_path / "serve.log"
    log.write_text(
        "\n".join(
            [
                line % ("backchannel", "words", "okay i understand", 1312, 1700, 300, ""),
                line % ("interruption", "bound", "okay i'd understand", 1120, 2506, 1761, ""),
                line % ("backchannel", "words", "right", 320, 400, 100, "; joined"),
                # gateway/proxy/listening.py's, as %r puts it
                f"overlap: {behind!r} reads back what the agent said",
            ]
        )
    )
    yeah = Clip("Okay.", "backchannel", "en-us", np.zeros(0, np.int16))
    text = report([(yeah, trial(("paused", None), ("resumed", "backchannel")))], log)
    assert "decisions in the serve log: 3" in text
    assert "interruption by bound on \"okay i'd understand\" after 1120 ms" in text
    assert "judged with the backchannel before (join_ms): 1" in text
    assert "words read back, the feedback reader not asked: 1" in text
    assert "  \"it's behind the library\"" in text
