"""One opening (gateway/floor/opening.py): a conversation that opens with several agents is
welcomed once, naming them, their greetings shown but not spoken; an agent that joins later is
introduced in a sentence; an agent alone is heard in its own words."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect

from gateway.agents.builtin import Clock
from gateway.audio.resample import resample
from gateway.floor.opening import Greetings, is_greeting, welcome
from gateway.ofp import Conversation, Envelope, Event, EventType, Sender, text_event
from gateway.testing.page import Page
from gateway.testing.processes import start_gateway, stop_gateway
from gateway.testing.speech import normalise
from gateway.voice.stt import SttSettings, Transcriber


def test_greetings_are_held_for_one_welcome_then_newcomers_introduced() -> None:
    g = Greetings(opening=3)
    for name in ("Parrot", "Clock", "Parrot"):
        assert g.greeted(name, "x", others_here=2) is None
    # The third never greets: the person's proxy ends the opening after its bound.
    assert g.opened() == "Welcome! Here with you: Parrot and Clock. Name one, or just ask."
    assert g.opened() is None  # said once
    later = g.greeted("Concierge", "Finds the right agent for you.", others_here=2)
    assert later == ("Concierge has joined: finds the right agent for you.", Greetings.JOINED)
    assert g.greeted("Echo", "", others_here=0) is Greetings.OWN


def test_the_welcome_comes_with_the_last_greeting() -> None:
    g = Greetings(opening=2)
    assert g.greeted("Parrot", "x", others_here=1) is None
    said = g.greeted("Clock", "x", others_here=1)
    assert said == (welcome(["Parrot", "Clock"]), Greetings.WELCOME)
    assert g.opened() is None


def test_an_agent_alone_is_heard_in_its_own_words() -> None:
    g = Greetings(opening=1)
    assert g.greeted("Clock", "Tells the time.", others_here=0) is Greetings.OWN
    assert g.opened() is None


def test_many_agents_are_named_within_a_bound() -> None:
    text = welcome([f"A{i}" for i in range(10)])
    assert "A4 and 5 more" in text and "A9" not in text


async def test_a_greeting_is_an_accept_with_an_utterance() -> None:
    clock = Clock()
    invite = Envelope(
        conversation=Conversation(id="c"),
        sender=Sender(speaker_uri="tag:person"),
        events=[Event(event_type=EventType.INVITE, to={"serviceUrl": "builtin:clock"})],
    )
    assert is_greeting(await clock.handle(invite))
    said = Envelope(
        conversation=Conversation(id="c"),
        sender=Sender(speaker_uri="tag:clock"),
        events=[
            Event(
                event_type=EventType.UTTERANCE,
                parameters={"dialog_event": text_event("tag:clock", "It's noon.")},
            )
        ],
    )
    assert not is_greeting(said)


@pytest.mark.slow  # a real serve process
async def test_serve_welcomes_once_and_introduces_a_later_agent(tmp_path: Path) -> None:
    served = await asyncio.to_thread(
        start_gateway, tmp_path, "--agent", "builtin:parrot", "--agent", "builtin:clock"
    )
    seen: list[dict[str, Any]] = []

    async def until(ws: Any, pred: Any, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in seen:
                if pred(m):
                    return m
            try:
                raw = await asyncio.wait_for(ws.recv(), max(0.05, deadline - time.monotonic()))
            except TimeoutError:
                break
            if isinstance(raw, str):
                seen.append(json.loads(raw))
        raise AssertionError(f"not seen; seen {seen[-10:]}")

    try:
        async with connect(served.ws) as ws:
            await ws.send(json.dumps({"type": "hello", "transport": "none"}))
            await until(ws, lambda m: m["type"] == "welcome")
            hello = await until(ws, lambda m: m.get("reason") == "@welcome")
            assert hello["text"] == (
                "Welcome! Here with you: Parrot and Clock. Name one, or just ask."
            )
            # The greetings are shown all the same.
            for name in ("Parrot", "Clock"):
                await until(ws, lambda m, n=name: m["type"] == "utterance" and m["speaker"] == n)
            await ws.send(json.dumps({"type": "invite", "url": "builtin:concierge"}))
            joined = await until(ws, lambda m: m.get("reason") == "@joined")
            assert joined["text"].startswith("Concierge has joined: finds the right agent")
            assert sum(1 for m in seen if m.get("reason") == "@welcome") == 1
    finally:
        stop_gateway(served)


@pytest.mark.slow  # a real serve process, and Whisper listening to what the page is sent
async def test_the_page_hears_the_welcome_not_the_greetings(tmp_path: Path) -> None:
    served = await asyncio.to_thread(
        start_gateway, tmp_path, "--agent", "builtin:parrot", "--agent", "builtin:clock"
    )
    try:
        page = await Page.open(served.ws, transport="ws")
        page.audio = bytearray()
        try:
            rate = page.welcome["audio"]["outRate"]
            await page.wait_for(lambda e: e.get("reason") == "@welcome", 30)
            for name in ("Parrot", "Clock"):  # shown
                await page.wait_for(lambda e, n=name: e.get("speaker") == n, 10)
            # Played to its end: the session speaks, then listens again. A pause in the audio
            # alone is no end: under the whole suite's load a sentence's synthesis took more
            # than a second, and the audio before it was judged all (Whisper heard no "clock").
            speaking = await page.wait_for(_state("speaking"), 30)
            await page.wait_for(_state("listening"), 40, since=page.events.index(speaking) + 1)
            await _quiet(page)
            samples = np.frombuffer(bytes(page.audio), dtype=np.int16)
            assert len(samples) > rate // 2, "the welcome was not spoken"
            heard = normalise(
                (await Transcriber(SttSettings()).transcribe(resample(samples, rate))).text
            )
        finally:
            await page.close()
    finally:
        stop_gateway(served)
    # The welcome, with both names; neither greeting ("…say it back", "…the time or the date").
    assert "welcome" in heard and "clock" in heard, heard
    assert "back" not in heard and "date" not in heard, heard


def _state(state: str) -> Callable[[dict[str, Any]], bool]:
    """Whether an event is the session's ``state`` message saying ``state``."""
    return lambda e: e.get("type") == "state" and e.get("state") == state


async def _quiet(page: Page, still_s: float = 1.0, limit_s: float = 40.0) -> None:
    """Until no audio has come for ``still_s`` (the frames are paced in real time)."""
    heard = -1
    for _ in range(int(limit_s / still_s)):
        if page.audio_bytes == heard and heard > 0:
            return
        heard = page.audio_bytes
        await asyncio.sleep(still_s)
    raise AssertionError("the gateway kept sending audio, or sent none")
