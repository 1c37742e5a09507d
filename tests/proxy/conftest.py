"""Shared fixtures of the voice-session tests: the models (loaded once per module) and a
loopback HTTP site for agents written inside a test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gateway.proxy import VoiceModels
from tests.conversation.conftest import Site


@pytest.fixture(scope="module")
def models() -> VoiceModels:
    return VoiceModels()


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    s = Site()
    await s.start()
    yield s
    await s.stop()
