"""The floor host's tests: a harness recording the person's side of a :class:`FloorHost` (the
loopback ``site`` for agents is the root conftest's)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.http import HttpSettings
from gateway.agents.policy import AddressPolicy
from gateway.floor.host import FloorHost, user_identity
from gateway.floor.notices import Notice
from gateway.ofp import Envelope
from gateway.testing.outlet import Collector


class Harness:
    """A conversation whose person's side is recorded."""

    def __init__(self, directory: AgentDirectory) -> None:
        self.directory = directory
        self.outlet = Collector()
        self.heard: list[Envelope] = self.outlet.heard
        self.notices: list[Notice] = self.outlet.notices
        self.conv = FloorHost(
            "conv-test", user=user_identity(), resolve=directory.resolve, outlet=self.outlet
        )

    def texts(self) -> list[str]:
        return [e.dialog_event.text() for env in self.heard for e in env.events if e.dialog_event]

    def event_types(self) -> list[str]:
        return [e.event_type.value for env in self.heard for e in env.events]


@pytest.fixture
async def harness() -> AsyncIterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(
        *, allow_loopback: bool = True, timeout: float = 10.0, max_reply: int = 1 << 20
    ) -> Harness:
        policy = AddressPolicy(["127.0.0.0/8"] if allow_loopback else [])
        settings = HttpSettings(
            timeout=timeout, connect_timeout=min(timeout, 3.0), max_reply_bytes=max_reply
        )
        h = Harness(AgentDirectory(policy, settings=settings))
        made.append(h)
        return h

    yield make
    for h in made:
        await h.conv.close()
        await h.directory.aclose()
    await asyncio.sleep(0)
