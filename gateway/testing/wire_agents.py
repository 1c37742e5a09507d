"""Agents we did not write, on 127.0.0.1, recording every byte they receive and send.

:class:`WireAgent` is a real aiohttp server whose root path (``/``) is the agent: the kind of
agent that ends up invited as ``http://host:port/``. What it answers is up to a ``respond``
function; :func:`openfloor_bot` (the ``openfloor`` package's BotAgent) and :func:`ovon09_only`
(an agent that reads only the ``ovon`` key and fails on anything else) are two such.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from openfloor import Envelope as OFEnvelope
from openfloor.agent import BotAgent
from openfloor.manifest import Identification as OFIdentification
from openfloor.manifest import Manifest as OFManifest

#: ``respond(request body) -> (HTTP status, reply body or None)``.
Respond = Callable[[dict[str, Any]], Awaitable[tuple[int, dict[str, Any] | None]]]


class WireAgent:
    """A loopback HTTP agent at ``/`` that keeps the exact bodies exchanged, in order."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.received: list[bytes] = []
        self.sent: list[bytes] = []
        self.statuses: list[int] = []
        self.base = ""  # http://127.0.0.1:PORT, no trailing slash
        self._runner: web.AppRunner | None = None

    async def _post(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self.received.append(raw)
        status, reply = await self.respond(json.loads(raw))
        self.statuses.append(status)
        if reply is None:
            return web.Response(status=204 if status == 200 else status)
        body = json.dumps(reply).encode()
        self.sent.append(body)
        return web.Response(status=status, body=body, content_type="application/json")

    def bodies(self, direction: str) -> list[Any]:
        """The bodies received (``"received"``) or sent (``"sent"``), parsed."""
        return [json.loads(b) for b in (self.received if direction == "received" else self.sent)]

    def event_types(self) -> list[list[str]]:
        """For each body received, the event types in it (either dialect)."""
        out = []
        for body in self.bodies("received"):
            inner = body.get("openFloor") or body.get("ovon") or {}
            out.append([e.get("eventType") for e in inner.get("events", [])])
        return out

    async def __aenter__(self) -> WireAgent:
        app = web.Application()
        app.router.add_post("/", self._post)
        # handler_cancellation: an agent that hangs on purpose must not hold up the test's end.
        self._runner = web.AppRunner(app, shutdown_timeout=0.1, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def openfloor_bot(
    service_url: str, name: str = "Simple Bot", *, hang_on_bye: float = 0.0
) -> Respond:
    """The ``openfloor`` package's BotAgent, publishing ``service_url`` as its serviceUrl (and a
    speaker URI made from ``name``, so two bots are two conversants). ``hang_on_bye``: seconds
    to sit on a ``bye`` before answering (a dead agent)."""
    speaker = "tag:openfloor-bot.example,2025:" + ("1" if name == "Simple Bot" else name)
    bot = BotAgent(
        OFManifest(
            identification=OFIdentification(
                speakerUri=speaker,
                serviceUrl=service_url,
                organization="openfloor package",
                conversationalName=name,
                synopsis="A BotAgent.",
            ),
            capabilities=[],
        )
    )

    async def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        events = body.get("openFloor", {}).get("events", [])
        if hang_on_bye and any(e.get("eventType") == "bye" for e in events):
            await asyncio.sleep(hang_on_bye)
        incoming = OFEnvelope.from_json(json.dumps(body), as_payload=True)
        reply = bot.process_envelope(incoming)
        return 200, json.loads(reply.to_json(as_payload=True))

    return respond


def ovon09_only(service_url: str) -> Respond:
    """An agent that speaks only OVON 0.9: a body without the ``ovon`` key gets HTTP 500 (as
    such agents do: they index ``body["ovon"]``). It greets on ``invite`` and echoes
    utterances, in OVON 0.9.0."""

    def envelope(conv_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "ovon": {
                "schema": {"version": "0.9.0"},
                "conversation": {"id": conv_id},
                "sender": {"from": service_url},
                "events": events,
            }
        }

    def say(text: str) -> dict[str, Any]:
        return {
            "eventType": "utterance",
            "parameters": {
                "dialogEvent": {
                    "speakerId": service_url,
                    "features": {"text": {"mimeType": "text/plain", "tokens": [{"value": text}]}},
                }
            },
        }

    async def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        if "ovon" not in body:
            return 500, {"error": "KeyError: 'ovon'"}
        ovon = body["ovon"]
        out = []
        for ev in ovon["events"]:
            if ev["eventType"] == "invite":
                out.append(say("Hello from a 0.9 agent."))
            elif ev["eventType"] == "utterance":
                tokens = ev["parameters"]["dialogEvent"]["features"]["text"]["tokens"]
                out.append(say("0.9 heard: " + " ".join(t["value"] for t in tokens)))
        return 200, envelope(ovon["conversation"]["id"], out)

    return respond
