"""Shared fixtures of the voice-session tests: the models (loaded once per module) and a
loopback HTTP site for agents written inside a test (the conversation tests' fixture)."""

from __future__ import annotations

import pytest

from gateway.proxy import VoiceModels
from tests.conversation.conftest import site  # noqa: F401 (a fixture, used by name)


@pytest.fixture(scope="module")
def models() -> VoiceModels:
    return VoiceModels()
