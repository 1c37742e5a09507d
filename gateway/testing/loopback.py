"""Agents and plain HTTP servers on loopback, written inside a test: an aiohttp :class:`Site` with
named routes that records what it was sent, an agent that captures utterances, and a threaded
``http.server`` for synchronous tests."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Site:
    """An aiohttp server on 127.0.0.1 with named routes; records every body it was sent."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.app.router.add_post("/{name}", self._dispatch)
        self.received: dict[str, list[dict[str, Any]]] = {}
        self.handlers: dict[str, Handler] = {}
        self.base = ""
        self._runner: web.AppRunner | None = None

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        self.received.setdefault(name, []).append(json.loads(await request.read()))
        return await self.handlers[name](request)

    def route(self, name: str, handler: Handler) -> str:
        """Answer POSTs to ``/name`` with ``handler``; the route's URL."""
        self.handlers[name] = handler
        return f"{self.base}/{name}"

    async def start(self) -> None:
        """Listen on a free port of 127.0.0.1."""
        self._runner = web.AppRunner(self.app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port: int = self._runner.addresses[0][1]  # (host, port) of the one socket
        self.base = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner:
            await self._runner.cleanup()


def audio_manifest(
    body: dict[str, Any], url: str, speaker: str, name: str = "Listener"
) -> list[dict[str, Any]]:
    """The ``publishManifests`` answering a ``getManifests`` in ``body`` (none otherwise): a
    manifest whose ``supportedLayers.input`` has audio, so the gateway sends this agent the
    person's voice (it sends it only to agents that ask: docs/floor.md)."""
    if not any(e["eventType"] == "getManifests" for e in body["openFloor"]["events"]):
        return []
    manifest = {
        "identification": {
            "speakerUri": speaker,
            "serviceUrl": url,
            "organization": "tests",
            "conversationalName": name,
            "synopsis": "Listens to the person's voice.",
        },
        "capabilities": [
            {
                "keyphrases": ["listen"],
                "descriptions": ["Takes the person's voice."],
                "supportedLayers": {"input": ["audio", "text"], "output": ["text"]},
            }
        ],
    }
    return [{"eventType": "publishManifests", "parameters": {"servicingManifests": [manifest]}}]


def capture_agent(site: Site) -> str:
    """Route ``capture`` on ``site``: an agent that answers every utterance with "Okay."; its URL."""
    async def agent(request: web.Request) -> web.Response:
        body = await request.json()
        events = [
            {
                "eventType": "utterance",
                "parameters": {
                    "dialogEvent": {
                        "speakerUri": "tag:capture",
                        "span": {"startOffset": "PT0S"},
                        "features": {
                            "text": {"mimeType": "text/plain", "tokens": [{"value": "Okay."}]}
                        },
                    }
                },
            }
            for e in body["openFloor"]["events"]
            if e["eventType"] == "utterance"
        ]
        events += audio_manifest(body, str(request.url), "tag:capture", "Capture")
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": body["openFloor"]["conversation"],
                    "sender": {"speakerUri": "tag:capture"},
                    "events": events,
                }
            }
        )

    return site.route("capture", agent)


def utterances_received(site: Site) -> list[dict[str, Any]]:
    """The dialog event of every utterance the ``capture`` agent was sent."""
    return [
        e["parameters"]["dialogEvent"]
        for b in site.received.get("capture", [])
        for e in b["openFloor"]["events"]
        if e["eventType"] == "utterance"
    ]


@contextlib.contextmanager
def threaded_http(server: http.server.HTTPServer) -> Iterator[str]:
    """Serve ``server`` (bound to 127.0.0.1) from a daemon thread; yields its base URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
