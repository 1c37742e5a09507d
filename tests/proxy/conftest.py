"""Shared fixtures of the voice-session tests: the models, loaded once per module (the loopback
``site`` for agents written inside a test is the root conftest's)."""

from __future__ import annotations

import pytest

from gateway.proxy.models import VoiceModels


@pytest.fixture(scope="module")
def models() -> VoiceModels:
    return VoiceModels()
