"""What happens on the floor, shown and heard, against a real ``serve`` (``--slow-notice 1``): a
page with audio (binary PCM frames) sees the floor's notices and hears them — the audio it is sent
after each, transcribed by the real Whisper, says those words (within a wide margin). An agent that is slow to answer
brings one "One moment: Leaver is taking longer than usual to answer."; its ``yieldFloor`` and
its ``bye`` are told in words with their reasons."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import numpy as np
import pytest
from aiohttp import web

from gateway.audio.resample import resample
from gateway.server.messages import Invite, SayText
from gateway.testing.page import Page
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from gateway.testing.speech import normalise, word_error_rate
from gateway.voice.stt import SttSettings, Transcriber

pytestmark = pytest.mark.slow

LEAVER = "tag:leaver.example,2025:1"


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("floor-heard", *PARROT_ON_LOOPBACK, "--slow-notice", "1")


@pytest.fixture(scope="module")
def transcriber() -> Transcriber:
    return Transcriber(SttSettings())


def _envelope(of: dict, url: str, events: list[dict]) -> dict:
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": of["conversation"]["id"]},
            "sender": {"speakerUri": LEAVER, "serviceUrl": url},
            "events": events,
        }
    }


async def _quiet(page: Page, still_s: float = 1.0, limit_s: float = 40.0) -> None:
    """Until no audio has come for ``still_s`` (the frames are paced in real time)."""
    heard = -1
    for _ in range(int(limit_s / 0.1)):
        # Some audio first: on a loaded machine synthesis can take longer than ``still_s`` to
        # start, and a page that has heard nothing yet is not "quiet after speaking".
        if page.audio:
            break
        await asyncio.sleep(0.1)
    for _ in range(int(limit_s / still_s)):
        if page.audio_bytes == heard:
            return
        heard = page.audio_bytes
        await asyncio.sleep(still_s)
    raise AssertionError("the gateway kept sending audio")


async def _words(transcriber: Transcriber, pcm: bytes, rate: int) -> list[str]:
    samples = np.frombuffer(bytes(pcm), dtype=np.int16)
    assert len(samples) > rate // 2, "less than half a second was spoken"
    return normalise((await transcriber.transcribe(resample(samples, rate))).text)


async def test_floor_notices_are_shown_and_spoken(gateway, site, transcriber) -> None:
    answered = 0
    # The first answer is held until the test has seen the "One moment" notice (not for a fixed
    # 3 s: on a loaded machine the gateway's 1 s timer can fire late), within the 10 s timeout.
    waited = asyncio.Event()

    async def leaver(request: web.Request) -> web.Response:
        nonlocal answered
        of = (await request.json())["openFloor"]
        events: list[dict] = []
        for e in of["events"]:
            if e["eventType"] == "getManifests":
                ident = {
                    "speakerUri": LEAVER,
                    "serviceUrl": url,
                    "organization": "leaver.example",
                    "conversationalName": "Leaver",
                    "synopsis": "Yields, then leaves.",
                }
                manifest = {"identification": ident, "capabilities": [{"keyphrases": ["leave"]}]}
                events.append(
                    {
                        "eventType": "publishManifests",
                        "parameters": {"servicingManifests": [manifest]},
                    }
                )
            elif e["eventType"] == "utterance" and (e.get("to") or {}).get("speakerUri") == LEAVER:
                answered += 1
                if answered == 1:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(waited.wait(), 8)
                    events.append({"eventType": "yieldFloor", "reason": "@brb"})
                else:
                    events.append({"eventType": "bye", "reason": "@complete"})
        return web.json_response(_envelope(of, url, events))

    url = site.route("leaver", leaver)
    page = await Page.open(gateway.ws, transport="ws")
    try:
        rate = page.welcome["audio"]["outRate"]
        await page.send(Invite(url))
        await page.wait_for(
            lambda e: e["type"] == "floor" and any(c["serviceUrl"] == url for c in e["conversants"])
        )
        await _quiet(page)  # the greetings have played
        page.audio = bytearray()

        since = len(page.events)
        await page.send(SayText("Leaver, are you there?"))
        moment = await page.wait_for(lambda e: e["type"] == "notice", since=since)
        assert moment["reason"] == "@wait", moment
        assert moment["text"] == "One moment: Leaver is taking longer than usual to answer."
        assert moment["agent"] == LEAVER
        waited.set()
        yielded = await page.wait_for(
            lambda e: e["type"] == "notice" and e["reason"] == "@brb", since=since
        )
        assert yielded["text"] == "Leaver yielded the floor (it will be right back)."
        await _quiet(page)
        # Said once each, in order, and nothing else (the parrot was not addressed).
        notices = [e["text"] for e in page.events[since:] if e["type"] == "notice"]
        assert notices == [moment["text"], yielded["text"]]
        assert not [e for e in page.events[since:] if e["type"] == "utterance"]
        # Whisper mishears a word or two ("lever"): half the words right is a wide margin
        # (audio of anything else scores an error rate near 1).
        said = " ".join(await _words(transcriber, page.audio, rate))
        assert word_error_rate(f"{moment['text']} {yielded['text']}", said) <= 0.5, said

        page.audio = bytearray()
        since = len(page.events)
        await page.send(SayText("Leaver, goodbye then."))
        left = await page.wait_for(
            lambda e: e["type"] == "notice" and e["reason"] == "@complete", since=since
        )
        assert left["text"] == "Leaver left the conversation (its task is complete)."
        await _quiet(page)
        said = " ".join(await _words(transcriber, page.audio, rate))
        assert word_error_rate(left["text"], said) <= 0.5, said
    finally:
        await page.close()
