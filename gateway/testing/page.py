"""A client of ``/ws`` as the page is, for tests and scripts: hello, then what the gateway says.

It speaks through :mod:`gateway.server.messages`: the hello is a :class:`Hello`, and every message
the gateway sends is read as one of :data:`FROM_GATEWAY` — one that does not fit its definition
fails the test that received it (at its next :meth:`Page.wait_for` or :meth:`Page.close`). Tests
assert on :attr:`Page.events`, the messages as they came over the wire (JSON objects), so they
also see what the page's JavaScript sees.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from gateway.server.message_codec import Message, ProtocolError, read
from gateway.server.messages import (
    FROM_GATEWAY,
    AgentUtterance,
    FromGateway,
    Hello,
    SayText,
    Welcome,
)

Event = dict[str, Any]


#: The built-in parrot's speaker URI in process (gateway.agents.builtin.base.builtin_manifest).
PARROT = "tag:ofp-gateway,2025:builtin:parrot"


class Page:
    """One page's WebSocket: the JSON events it got, the audio bytes, and (behind HAProxy) the node
    that served it."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        #: What the gateway sent, as JSON objects, in order (the welcome is :attr:`welcome`).
        self.events: list[Event] = []
        #: The same, read as :mod:`gateway.server.messages` classes.
        self.messages: list[FromGateway] = []
        self.audio_bytes = 0
        #: The audio frames themselves (16-bit mono PCM at the welcome's ``outRate``), kept only
        #: when a test sets this to a bytearray (what was said can then be transcribed).
        self.audio: bytearray | None = None
        self.welcome: Event = {}
        #: The close code and reason, once the gateway closed the connection.
        self.closed: tuple[int, str] | None = None
        #: Messages that did not fit their definition (what was wrong with each).
        self.unreadable: list[str] = []
        self._reader: asyncio.Task[None] | None = None
        cookie = ws.response.headers.get("Set-Cookie", "") if ws.response else ""
        #: The node HAProxy chose (its sticky cookie), as a browser would keep it.
        self.node = cookie.split(";")[0].partition("=")[2] if "OFPNODE=" in cookie else ""

    @classmethod
    async def open(cls, url: str, *, node: str = "", **hello: Any) -> Page:
        """Open ``url`` (with the sticky cookie of ``node``, if any), send a hello made of
        ``hello`` (wire names: ``transport``, ``conversationId``, ``token``, ``mode``,
        ``wake``; text only by default) and read the welcome."""
        headers = {"Cookie": f"OFPNODE={node}"} if node else {}
        ws = await connect(url, max_size=2**20, additional_headers=headers, open_timeout=20)
        page = cls(ws)
        page.node = page.node or node
        await page.send(Hello.from_dict({"type": "hello", **hello}))
        page.welcome = json.loads(await asyncio.wait_for(ws.recv(), 30))
        page._check(page.welcome, keep=False)
        page._reader = asyncio.get_running_loop().create_task(page._read())
        return page

    @property
    def welcome_message(self) -> Welcome:
        """The welcome, read as the class it is."""
        return Welcome.from_dict(self.welcome)

    async def _read(self) -> None:
        try:
            async for m in self.ws:
                if isinstance(m, bytes):
                    self.audio_bytes += len(m)
                    if self.audio is not None:
                        self.audio += m
                else:
                    event = json.loads(m)
                    self._check(event)
                    self.events.append(event)
        except ConnectionClosed:
            pass
        if self.ws.close_code is not None:
            self.closed = (self.ws.close_code, self.ws.close_reason or "")

    def _check(self, event: Event, *, keep: bool = True) -> None:
        try:
            message = read(event, FROM_GATEWAY)
        except ProtocolError as exc:
            self.unreadable.append(f"{exc}: {json.dumps(event)[:300]}")
            return
        if keep:
            self.messages.append(message)

    def _assert_readable(self) -> None:
        assert not self.unreadable, f"the gateway sent messages off the protocol: {self.unreadable}"

    async def wait_for(
        self, pred: Callable[[Event], bool], timeout: float = 30, *, since: int = 0
    ) -> Event:
        """The first event (from index ``since`` on) that ``pred`` accepts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._assert_readable()
            for e in self.events[since:]:
                if pred(e):
                    return e
            await asyncio.sleep(0.05)
        raise AssertionError(
            f"not seen in {timeout}s; events: {[e.get('type') for e in self.events]}"
        )

    async def send(self, message: Message | None = None, **raw: Any) -> None:
        """Send ``message``; or, for hostile input, a JSON object made of ``raw`` as it is
        (``send(type="dance")``)."""
        await self.ws.send(message.to_json() if message is not None else json.dumps(raw))

    async def say(self, text: str) -> Event:
        """Type ``text`` to the parrot and wait for its answer (with several agents on the floor
        one answers each utterance: docs/floor.md)."""
        since = len(self.events)
        await self.send(SayText(text, to=PARROT))
        return await self.wait_for(
            lambda e: e["type"] == AgentUtterance.TYPE and e["text"] == f"You said: {text}",
            since=since,
        )

    async def close(self) -> None:
        """Close the WebSocket (and check that everything the gateway sent was readable)."""
        await self.ws.close()
        if self._reader:
            await self._reader
        self._assert_readable()
