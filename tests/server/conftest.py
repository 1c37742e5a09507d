"""A real `serve` process for protocol tests (module-scoped: models load once)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gateway.testing.processes import Served


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    """Three sessions at most, agents on loopback allowed, the person's audio sent by URL."""
    return served_gateway(
        "gw", "--max-sessions", "3", "--allow-address", "127.0.0.0/8", "--audio-feature", "url"
    )
