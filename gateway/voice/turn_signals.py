"""End-of-turn signals read from the audio, behind one small interface.

A signal is asked, at a pause, whether the person has finished: it gets the utterance so far
(16 kHz, int16 or float32) and the index one past its last voiced sample, and answers
P(finished) in [0, 1] — or None when it cannot judge (too little voice to read). Signals run off
the event loop, in parallel with the speculative decode; the session's :class:`TurnRule`
combines their answers with the transcript rule (``gateway.proxy.turn_rule``).

* ``prosody`` (:mod:`gateway.voice.prosody`): pitch contour, final lengthening and energy decay
  over the last voiced syllables; numpy only, ~13 ms a call on a busy 2-core machine.
* ``smart_turn`` (:mod:`gateway.voice.smart_turn`): pipecat's Smart Turn v3.2 audio model, when
  its weights are installed (the optional ``smart-turn`` extra).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class TurnSignal(Protocol):
    """One end-of-turn signal."""

    def score(self, audio: np.ndarray, voiced_end: int) -> float | None:
        """P(finished) for ``audio`` (the utterance so far) whose speech ends at ``voiced_end``."""
        ...


def default_signals() -> dict[str, TurnSignal]:
    """The signals this installation has, by name; models load on first use."""
    from gateway.voice.prosody import ProsodySignal
    from gateway.voice.smart_turn import SmartTurn, smart_turn_path

    signals: dict[str, TurnSignal] = {"prosody": ProsodySignal()}
    if smart_turn_path() is not None:
        signals["smart_turn"] = SmartTurn()
    return signals
