"""The transport tests' client, allowed to reach loopback (helpers in helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gateway.agents import HttpClient, HttpSettings
from tests.agents.helpers import LOOPBACK


@pytest.fixture
async def loopback_client() -> AsyncIterator[HttpClient]:
    """A client allowed to reach 127.0.0.0/8, with limits small enough for fast tests."""
    settings = HttpSettings(timeout=1.0, connect_timeout=0.5, max_reply_bytes=64 * 1024)
    async with HttpClient(LOOPBACK, settings) as client:
        yield client
