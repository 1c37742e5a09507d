"""A page's WebSocket through HAProxy to a cluster's nodes (:class:`Page`, with the node that
served it), and a rejoin as the page's script does it: for the cluster tests and
``scripts/bench_cluster.py``."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

#: The built-in parrot's speaker URI in process (gateway.agents.builtin.base.builtin_manifest).
PARROT = "tag:ofp-gateway,2025:builtin:parrot"


class Page:
    """A page's WebSocket through HAProxy: its JSON events, and the node that served it."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self.welcome: dict[str, Any] = {}
        self.closed: tuple[int, str] | None = None
        self._reader: asyncio.Task[None] | None = None
        cookie = ws.response.headers.get("Set-Cookie", "") if ws.response else ""
        #: The node HAProxy chose (its sticky cookie), as a browser would keep it.
        self.node = cookie.split(";")[0].partition("=")[2] if "OFPNODE=" in cookie else ""

    @classmethod
    async def open(cls, url: str, *, node: str = "", **hello: Any) -> Page:
        """Open ``/ws`` with the sticky cookie of ``node`` (if any), send hello, read welcome."""
        headers = {"Cookie": f"OFPNODE={node}"} if node else {}
        ws = await connect(url, max_size=2**20, additional_headers=headers, open_timeout=20)
        page = cls(ws)
        page.node = page.node or node
        await ws.send(json.dumps({"type": "hello", "transport": "none", **hello}))
        page.welcome = json.loads(await asyncio.wait_for(ws.recv(), 30))
        page._reader = asyncio.get_running_loop().create_task(page._read())
        return page

    async def _read(self) -> None:
        try:
            async for m in self.ws:
                if isinstance(m, str):
                    self.events.append(json.loads(m))
        except ConnectionClosed:
            pass
        if self.ws.close_code is not None:
            self.closed = (self.ws.close_code, self.ws.close_reason or "")

    async def wait_for(self, pred: Any, timeout: float = 30) -> dict[str, Any]:
        """The first event ``pred`` accepts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.events:
                if pred(e):
                    return e
            await asyncio.sleep(0.05)
        raise AssertionError(f"not seen in {timeout}s; events: {self.events}")

    async def say(self, text: str) -> dict[str, Any]:
        """Type ``text`` to the parrot and wait for its answer (one agent answers each
        utterance: docs/floor.md)."""
        await self.ws.send(json.dumps({"type": "text", "text": text, "to": PARROT}))
        return await self.wait_for(
            lambda e: e["type"] == "utterance" and e["text"] == f"You said: {text}"
        )

    async def close(self) -> None:
        """Close the WebSocket."""
        await self.ws.close()
        if self._reader:
            await self._reader


async def rejoin(url: str, page: Page, timeout: float = 30) -> tuple[Page, float]:
    """Reconnect as the page's script does (hello with its conversation and token, its sticky
    cookie), retrying every 100 ms; returns the new page and how long it took."""
    start = time.monotonic()
    last: Exception | None = None
    while time.monotonic() - start < timeout:
        try:
            again = await Page.open(
                url,
                node=page.node,
                conversationId=page.welcome["conversationId"],
                token=page.welcome["token"],
            )
            return again, time.monotonic() - start
        except (TimeoutError, OSError, ConnectionClosed, ValueError) as exc:
            last = exc
        except Exception as exc:  # InvalidStatus (HAProxy's 503 while it notices)
            last = exc
        await asyncio.sleep(0.1)
    raise AssertionError(f"could not rejoin in {timeout}s: {last}")
