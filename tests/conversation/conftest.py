"""Real HTTP agents on loopback for conversation tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from gateway.agents.directory import AgentDirectory
from gateway.agents.http import HttpSettings
from gateway.agents.policy import AddressPolicy
from gateway.floor.host import FloorHost, Notice, user_identity
from gateway.ofp import Envelope

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Site:
    """An aiohttp server on 127.0.0.1 with named routes; records every body it was sent."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.app.router.add_post("/{name}", self._dispatch)
        self.received: dict[str, list[dict]] = {}
        self.handlers: dict[str, Handler] = {}
        self.base = ""
        self._runner: web.AppRunner | None = None

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        self.received.setdefault(name, []).append(json.loads(await request.read()))
        return await self.handlers[name](request)

    def route(self, name: str, handler: Handler) -> str:
        self.handlers[name] = handler
        return f"{self.base}/{name}"

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner:
            await self._runner.cleanup()


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    s = Site()
    await s.start()
    yield s
    await s.stop()


class Harness:
    """A conversation whose person's side is recorded."""

    def __init__(self, directory: AgentDirectory) -> None:
        self.directory = directory
        self.heard: list[Envelope] = []
        self.notices: list[Notice] = []
        self.conv = FloorHost(
            "conv-test",
            user=user_identity(),
            resolve=directory.resolve,
            on_user=self.heard.append,
            on_notice=self.notices.append,
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
