"""Agents that speak when they have something to say, against a real ``serve``: a timer agent
POSTs to its inbound URL five seconds after it was asked, and the person sees and hears it; hostile
posts to that endpoint (a wrong token, another conversation, 10 MB, 1000 at once, after leaving)
get a 4xx and change nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from gateway.server.messages import Invite, SayText, Uninvite
from tests.ofp_schemas import assert_valid_envelope
from tests.support.page import Page
from tests.support.processes import PARROT_ON_LOOPBACK, Served

pytestmark = pytest.mark.slow

TIMER = "tag:timer.example,2025:1"


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("inbound", *PARROT_ON_LOOPBACK)


def _envelope(conv: str, url: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": conv},
            "sender": {"speakerUri": TIMER, "serviceUrl": url},
            "events": events,
        }
    }


def _say(text: str, to: str | None = None) -> dict[str, Any]:
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

    def __init__(self, site, delay: float = 5.0) -> None:
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
                out += [{"eventType": "acceptInvite"}, _say("Timer here.")]
            elif kind == "utterance" and mine and of["sender"].get("speakerUri") != TIMER:
                out.append(_say(f"I'll ring in {self.delay:g} seconds."))
                task = asyncio.get_running_loop().create_task(self._ring())
                self._tasks.add(task)
        return web.json_response(_envelope(self.conv, self.url, out))

    async def _ring(self) -> None:
        await asyncio.sleep(self.delay)
        body = _envelope(self.conv, self.url, [_say("Ring ring: time's up!", to=self.inbound)])
        async with aiohttp.ClientSession() as s, s.post(self.inbound, json=body) as r:
            self.rang.append((r.status, await r.json()))


async def _post(url: str, body: bytes | dict[str, Any]) -> int:
    async with aiohttp.ClientSession() as s:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with s.post(url, data=data, headers={"Content-Type": "application/json"}) as r:
            await r.read()
            return r.status


def _utterances(page: Page) -> list[str]:
    return [e["text"] for e in page.events if e["type"] == "utterance"]


async def test_an_agent_rings_later_and_the_person_hears_it(gateway, site) -> None:
    timer = TimerAgent(site)
    page = await Page.open(gateway.ws, transport="ws")
    try:
        await page.send(Invite(timer.url))
        await page.wait_for(
            lambda e: e["type"] == "floor" and any(c["name"] == "Timer" for c in e["conversants"])
        )
        await page.wait_for(lambda e: e["type"] == "utterance" and e["text"] == "Timer here.")
        # Addressed by name, as the person would say it.
        await page.send(SayText("Timer, remind me in five seconds"))
        said = await page.wait_for(lambda e: e["type"] == "transcript" and e.get("typed"))
        assert said["toName"] == "Timer"
        await page.wait_for(lambda e: e["type"] == "utterance" and "I'll ring" in e["text"])
        assert timer.inbound and timer.inbound.startswith("http://127.0.0.1:")
        assert "/ofp/in/" in timer.inbound
        before_audio = page.audio_bytes
        rung = await page.wait_for(
            lambda e: e["type"] == "utterance" and e["text"] == "Ring ring: time's up!", timeout=40
        )
        assert rung["speaker"] == "Timer"
        # The POST got the §2.3 answer: an envelope with no events.
        status, answer = timer.rang[0]
        assert status == 200 and answer["openFloor"]["events"] == []
        assert_valid_envelope(answer)
        # ...and it is spoken: audio for it reaches the page.
        for _ in range(300):
            if page.audio_bytes > before_audio:
                break
            await asyncio.sleep(0.1)
        assert page.audio_bytes > before_audio

        # Hostile posts: each a 4xx, and nothing changes for the person.
        shown = len(_utterances(page))
        url = timer.inbound
        conv = timer.conv
        wrong = url[:-4] + ("AAAA" if not url.endswith("AAAA") else "BBBB")
        assert await _post(wrong, _envelope(conv, timer.url, [_say("wrong token")])) == 404
        assert (
            await _post(
                url.rsplit("/", 2)[0] + "/other-node/" + url.rsplit("/", 1)[1],
                _envelope(conv, timer.url, [_say("other node")]),
            )
            == 404
        )
        assert await _post(url, _envelope("conv:someone-else", timer.url, [_say("x")])) == 409
        assert await _post(url, b"{not json") == 400
        assert await _post(url, b"x" * (10 * 1024 * 1024)) == 413
        statuses = await asyncio.gather(
            *(_post(url, _envelope(conv, timer.url, [])) for _ in range(1000))
        )
        assert statuses.count(429) >= 1000 - 20 and set(statuses) <= {200, 429}
        await asyncio.sleep(1.0)
        assert len(_utterances(page)) == shown
        # The agent leaves: its URL is revoked.
        await page.send(Uninvite(TIMER))
        await page.wait_for(
            lambda e: e["type"] == "floor" and all(c["name"] != "Timer" for c in e["conversants"])
        )
        await asyncio.sleep(1.1)  # past the rate bound, so 404 is the revocation's
        assert await _post(url, _envelope(conv, timer.url, [_say("still here?")])) == 404
        log = (gateway.data / "serve.log").read_text()
        assert "Traceback" not in log
    finally:
        await page.close()
