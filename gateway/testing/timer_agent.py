"""A timer agent on loopback for tests: it answers at once, then rings later by POSTing to the
person's serviceUrl (the gateway's inbound URL for it: docs/floor.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from aiohttp import web

from gateway.testing.loopback import Site

TIMER = "tag:timer.example,2025:1"


def envelope(conv: str, url: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": conv},
            "sender": {"speakerUri": TIMER, "serviceUrl": url},
            "events": events,
        }
    }


def say(text: str, to: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventType": "utterance",
        "parameters": {
            "dialogEvent": {
                "speakerUri": TIMER,
                "span": {"startOffset": "PT0S"},
                "features": {"text": {"mimeType": "text/plain", "tokens": [{"value": text}]}},
            }
        },
    }
    if to:
        event["to"] = {"serviceUrl": to}
    return event


class TimerAgent:
    """Answers at once, then rings later by POSTing to the person's serviceUrl."""

    def __init__(self, site: Site, delay: float = 5.0) -> None:
        self.delay = delay
        self.url = site.route("timer", self.handle)
        self.inbound: str | None = None
        self.conv: str | None = None
        self.rang: list[tuple[int, Any]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def handle(self, request: web.Request) -> web.Response:
        of = (await request.json())["openFloor"]
        self.conv = of["conversation"]["id"]
        self.inbound = of["sender"].get("serviceUrl") or self.inbound
        out: list[dict[str, Any]] = []
        for e in of["events"]:
            kind, to = e["eventType"], e.get("to", {})
            mine = not to or to.get("serviceUrl") == self.url or to.get("speakerUri") == TIMER
            if kind == "getManifests":
                out.append(
                    {
                        "eventType": "publishManifests",
                        "parameters": {
                            "servicingManifests": [
                                {
                                    "identification": {
                                        "speakerUri": TIMER,
                                        "serviceUrl": self.url,
                                        "organization": "timer.example",
                                        "conversationalName": "Timer",
                                        "synopsis": "Rings later.",
                                    },
                                    "capabilities": [
                                        {
                                            "keyphrases": ["timer", "remind"],
                                            "descriptions": ["Rings later."],
                                        }
                                    ],
                                }
                            ]
                        },
                    }
                )
            elif kind == "invite" and mine:
                out += [{"eventType": "acceptInvite"}, say("Timer here.")]
            elif kind == "utterance" and mine and of["sender"].get("speakerUri") != TIMER:
                out.append(say(f"I'll ring in {self.delay:g} seconds."))
                task = asyncio.get_running_loop().create_task(self._ring())
                self._tasks.add(task)
        return web.json_response(envelope(self.conv, self.url, out))

    async def _ring(self) -> None:
        await asyncio.sleep(self.delay)
        conv, inbound = self.conv, self.inbound
        if conv is None or inbound is None:  # the request that set the timer names both
            raise RuntimeError("the timer has no conversation or serviceUrl to ring")
        body = envelope(conv, self.url, [say("Ring ring: time's up!", to=inbound)])
        async with aiohttp.ClientSession() as s, s.post(inbound, json=body) as r:
            self.rang.append((r.status, await r.json()))
