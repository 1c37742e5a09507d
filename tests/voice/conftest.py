"""Shared fixtures: real models, loaded once per test session."""

from __future__ import annotations

import pytest

from gateway.voice.stt import Transcriber
from gateway.voice.vad import SileroVad


@pytest.fixture(scope="session")
def vad() -> SileroVad:
    return SileroVad()


@pytest.fixture(scope="session")
def transcriber() -> Transcriber:
    """tiny.en with the default settings (one loaded model for the whole session)."""
    return Transcriber()
