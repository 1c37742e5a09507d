"""Helpers for the hostile-input tests: raw HTTP over a socket, loopback agents that misbehave,
and the SQLite records as they are on disk."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from gateway.testing.loopback import audio_manifest


def raw_http(url: str, request: bytes, timeout: float = 10) -> tuple[int, bytes]:
    """Send ``request`` (bytes, as is) to the gateway at ``url``; the status and the whole reply
    (status 0: the connection was closed without a reply)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    if not head:
        return 0, b""
    status_line = head.split(b"\r\n", 1)[0]
    return int(status_line.split()[1]), head + b"\r\n\r\n" + body


def get(path: str, host: str, *headers: str) -> bytes:
    """A GET request line and headers, as bytes (``path`` may hold anything)."""
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", *headers, "Connection: close", "", ""]
    return "\r\n".join(lines).encode("utf-8", "surrogateescape")


def ws_handshake(host: str, *headers: str, path: str = "/ws") -> bytes:
    """A WebSocket upgrade request with ``Host: host`` and ``headers``."""
    return get(
        path,
        host,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        *headers,
    ).replace(b"Connection: close\r\n", b"")


def envelope(conversation: dict[str, Any], sender: str, events: list[dict]) -> dict[str, Any]:
    """An OFP 1.1.0 envelope from ``sender``."""
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": conversation,
            "sender": {"speakerUri": sender},
            "events": events,
        }
    }


def utterance(sender: str, text: str, **features: Any) -> dict[str, Any]:
    """An utterance event saying ``text`` (and other ``features``)."""
    return {
        "eventType": "utterance",
        "parameters": {
            "dialogEvent": {
                "speakerUri": sender,
                "features": {
                    "text": {"mimeType": "text/plain", "tokens": [{"value": text}]},
                    **features,
                },
            }
        },
    }


class LoopbackAgent:
    """An HTTP agent on 127.0.0.1: ``reply(body)`` gives the raw JSON text it answers with."""

    def __init__(self, reply: Callable[[dict[str, Any]], str]) -> None:
        self.reply = reply
        self.seen: list[dict[str, Any]] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> LoopbackAgent:
        async def handle(request: web.Request) -> web.Response:
            body = await request.json()
            self.seen.append(body)
            # It takes the person's voice: its manifest says so when the gateway asks.
            speaker = f"tag:loopback,2025:{self.url}"  # one per agent: two are two conversants
            manifest = audio_manifest(body, self.url, speaker, "Loopback")
            if manifest:
                conv = body["openFloor"]["conversation"]
                return web.json_response(envelope(conv, speaker, manifest))
            return web.Response(text=self.reply(body), content_type="application/json")

        app = web.Application()
        app.router.add_post("/agent", handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/agent"
        return self

    def utterances(self) -> list[dict[str, Any]]:
        """The dialog events of every utterance this agent was sent."""
        return [
            e["parameters"]["dialogEvent"]
            for b in self.seen
            for e in b["openFloor"]["events"]
            if e["eventType"] == "utterance"
        ]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def quiet(body: dict[str, Any]) -> str:
    """An acknowledgement: no events."""
    conv = body["openFloor"]["conversation"]
    return json.dumps(envelope(conv, "tag:quiet", []))


def records(data: Path, conversation_id: str) -> list[tuple[int, str, str | None, str]]:
    """(seq, kind, direction, body) of every record of a conversation, from the SQLite file."""
    db = sqlite3.connect(f"file:{data / 'records.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute(
            "SELECT seq, kind, direction, body FROM records WHERE conversation_id = ? ORDER BY seq",
            (conversation_id,),
        ).fetchall()
    finally:
        db.close()


def assert_nothing_lost(before: list[tuple], after: list[tuple]) -> None:
    """Every record of ``before`` is still in ``after``, unchanged."""
    kept = set(after)
    lost = [r for r in before if r not in kept]
    assert not lost, f"{len(lost)} records lost, first: {lost[0]}"
