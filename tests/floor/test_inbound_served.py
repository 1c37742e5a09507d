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
from gateway.testing.page import Page
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from gateway.testing.timer_agent import TIMER, TimerAgent, envelope, say
from tests.ofp_schemas import assert_valid_envelope

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("inbound", *PARROT_ON_LOOPBACK)


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
        assert await _post(wrong, envelope(conv, timer.url, [say("wrong token")])) == 404
        assert (
            await _post(
                url.rsplit("/", 2)[0] + "/other-node/" + url.rsplit("/", 1)[1],
                envelope(conv, timer.url, [say("other node")]),
            )
            == 404
        )
        assert await _post(url, envelope("conv:someone-else", timer.url, [say("x")])) == 409
        assert await _post(url, b"{not json") == 400
        assert await _post(url, b"x" * (10 * 1024 * 1024)) == 413
        statuses = await asyncio.gather(
            *(_post(url, envelope(conv, timer.url, [])) for _ in range(1000))
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
        assert await _post(url, envelope(conv, timer.url, [say("still here?")])) == 404
        log = (gateway.data / "serve.log").read_text()
        assert "Traceback" not in log
    finally:
        await page.close()


async def test_a_slow_answer_brings_one_moment_shown_and_heard(gateway, site) -> None:
    async def slowpoke(request):
        of = (await request.json())["openFloor"]
        events = []
        if any(e["eventType"] == "utterance" for e in of["events"]):
            await asyncio.sleep(6)  # past Limits.slow_notice_s (3 s), within the 10 s timeout
            events = [say("Sorry, that took a while.")]
        return web.json_response(envelope(of["conversation"]["id"], url, events))

    url = site.route("slowpoke", slowpoke)
    page = await Page.open(gateway.ws, transport="ws")
    try:
        await page.send(Invite(url))
        floor = await page.wait_for(
            lambda e: e["type"] == "floor" and any(c["serviceUrl"] == url for c in e["conversants"])
        )
        [slow] = [c["speakerUri"] for c in floor["conversants"] if c["serviceUrl"] == url]
        # Until the greetings have played: no audio for half a second.
        quiet = page.audio_bytes
        for _ in range(40):
            await asyncio.sleep(0.5)
            if page.audio_bytes == quiet:
                break
            quiet = page.audio_bytes
        await page.send(SayText("Hello?", to=slow))
        moment = await page.wait_for(
            lambda e: e["type"] == "error" or (e["type"] == "notice" and e["reason"] == "@wait")
        )
        assert moment["type"] == "notice", moment
        assert moment["text"].startswith("One moment")
        assert "taking longer than usual" in moment["text"] and moment["agent"] == slow
        answer = await page.wait_for(
            lambda e: e["type"] == "utterance" and e["text"] == "Sorry, that took a while."
        )
        spoken_before_the_answer = page.audio_bytes - quiet
        # "One moment" came first, and it was spoken: its audio reached the page before the
        # answer did (nothing else was said in between).
        assert page.events.index(moment) < page.events.index(answer)
        assert spoken_before_the_answer > 0
    finally:
        await page.close()


async def test_every_envelope_names_the_person_at_the_agents_inbound_url(gateway, site) -> None:
    """From the first envelope (``getManifests``, before the invite) on, the person's serviceUrl
    is the agent's inbound URL, never the main port (which takes no request bodies): an agent
    that keeps the first URL it saw can still speak later."""
    timer = TimerAgent(site, delay=1.0, keep_first=True)
    page = await Page.open(gateway.ws, transport="ws")
    try:
        await page.send(Invite(timer.url))
        await page.wait_for(lambda e: e["type"] == "utterance" and e["text"] == "Timer here.")
        await page.send(SayText("Timer, remind me in a second"))
        await page.wait_for(
            lambda e: e["type"] == "utterance" and e["text"] == "Ring ring: time's up!", timeout=40
        )
        kinds = [kind for kind, _ in timer.seen]
        assert kinds[0] == "getManifests" and "invite" in kinds and "utterance" in kinds
        urls = {url for _, url in timer.seen}
        assert len(urls) == 1, timer.seen
        [url] = urls
        assert url is not None and "/ofp/in/" in url and url.split("/ofp/in/")[0] != gateway.url
        assert timer.rang and timer.rang[0][0] == 200
    finally:
        await page.close()
