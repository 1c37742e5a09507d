"""Shared fixtures: one real Piper synthesizer for the whole session (helpers in helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gateway.render import Synthesizer, VoiceSettings
from gateway.render.tts import load_voice


@pytest.fixture(scope="session")
def synth() -> Iterator[Synthesizer]:
    load_voice(VoiceSettings())  # load once, outside any test's timing
    s = Synthesizer()
    yield s
    s.close()
