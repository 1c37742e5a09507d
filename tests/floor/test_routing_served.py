"""Routing through a real `serve` process, with real HTTP agents: a specialist that does not
answer is passed over in the same turn, and one that hangs is routed around for the person's next
unaddressed words until it answers again (docs/floor.md, "Hand-overs and agents not answering")."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from websockets.asyncio.client import connect

from gateway.agents.builtin import Clock
from gateway.testing.processes import start_gateway, stop_gateway
from gateway.testing.routing_agents import Generalist, Hang, served
from gateway.testing.wire_agents import WireAgent

pytestmark = pytest.mark.slow  # a real serve process


async def _noop(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    return 500, None


class _Page:
    """A page with text only: what it is told, in order."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []

    async def until(self, pred: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for m in self.seen:
                if pred(m):
                    self.seen.remove(m)
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not seen in {timeout} s; seen {self.seen[-12:]}")
            try:
                raw = await asyncio.wait_for(self.ws.recv(), left)
            except TimeoutError:
                continue
            if isinstance(raw, str):
                self.seen.append(json.loads(raw))

    async def say(self, text: str) -> dict[str, Any]:
        """Type ``text``; its transcript (with whom it went to, and why)."""
        self.seen.clear()
        await self.ws.send(json.dumps({"type": "text", "text": text}))
        return await self.until(lambda m: m["type"] == "transcript" and m["text"] == text, 10)

    async def answer(self, timeout: float = 15) -> dict[str, Any]:
        return await self.until(lambda m: m["type"] == "utterance", timeout)


async def test_hand_over_and_a_hung_agent_routed_around(tmp_path: Path) -> None:
    hang = Hang()
    async with WireAgent(_noop) as clock_site, WireAgent(_noop) as general_site:
        clock_site.respond = served(Clock(clock_site.base), hang)
        general_site.respond = served(Generalist(general_site.base))
        gateway = await asyncio.to_thread(
            start_gateway,
            tmp_path,
            "--agent",
            clock_site.base,
            "--agent",
            general_site.base,
            "--allow-address",
            "127.0.0.0/8",
            "--agent-timeout",
            "4",  # the steps after the hang starts take well under this on any machine
        )
        try:
            async with connect(gateway.ws) as ws:
                await ws.send(json.dumps({"type": "hello", "transport": "none"}))
                page = _Page(ws)
                await page.until(lambda m: m["type"] == "welcome", 10)
                await page.until(lambda m: m.get("reason") == "@welcome", 20)
                # Clearly the clock's: it answers.
                said = await page.say("What time is it?")
                assert said["toName"] == "Clock"
                assert (await page.answer())["speaker"] == "Clock"
                # Not the clock's, though the person is talking with it: it passes it on.
                said = await page.say("How was your day?")
                assert said["toName"] == "Clock"
                handed = await page.until(lambda m: m.get("reason") == "@handover", 10)
                assert (handed["reason"], handed["text"]) == (
                    "@handover",
                    "Clock passed this to Generalist.",
                )
                answer = await page.answer()
                assert answer["text"] == "Generalist heard: How was your day?"

                # The clock hangs: the time asked now is handed over at its timeout...
                hang.start()
                said = await page.say("What time is it?")
                assert said["toName"] == "Clock"
                took = await page.until(lambda m: m.get("reason") == "@handover", 15)
                assert took["text"] == "Clock is not answering; Generalist took it."
                assert (await page.answer())["speaker"] == "Generalist"
                # ... and the next unaddressed request goes straight to the generalist, saying
                # why (the clock, hearing it as context, is held again: within its timeout)...
                said = await page.say("What is the date?")
                assert (said["toName"], said["why"]) == (
                    "Generalist",
                    "Clock is not answering; Generalist took it",
                )
                assert (await page.answer(3))["speaker"] == "Generalist"
                # ... while the clock named still gets it, the person told it is not answering.
                said = await page.say("Clock, what time is it?")
                assert said["toName"] == "Clock" and "not answering" in said["why"]
                # Once it answers again, it answers that, and gets what is clearly its own.
                hang.stop()
                assert (await page.answer(10))["speaker"] == "Clock"
                said = await page.say("What is the date?")
                assert said["toName"] == "Clock"
                assert (await page.answer())["speaker"] == "Clock"
        finally:
            stop_gateway(gateway)


def _spoken_time(at: datetime) -> str:
    return f"It's {at.hour % 12 or 12}:{at.minute:02d} {'AM' if at.hour < 12 else 'PM'}."


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "America/Los_Angeles", None])
async def test_the_clock_tells_the_time_where_the_page_is(tmp_path: Path, zone: str | None) -> None:
    """The page's time zone (hello's ``timeZone``) stamps the person's utterances; the clock
    answers in it. Without one, in the machine's zone."""
    gateway = await asyncio.to_thread(
        start_gateway, tmp_path, "--agent", "builtin:parrot", "--agent", "builtin:clock"
    )
    try:
        async with connect(gateway.ws) as ws:
            hello: dict[str, Any] = {"type": "hello", "transport": "none"}
            if zone:
                hello["timeZone"] = zone
            await ws.send(json.dumps(hello))
            page = _Page(ws)
            await page.until(lambda m: m.get("reason") == "@welcome", 20)
            said = await page.say("What time is it?")
            assert said["toName"] == "Clock"
            answer = await page.answer()
        where = ZoneInfo(zone) if zone else None
        now = datetime.now(UTC).astimezone(where)
        # The minute may turn between the answer and now: either is right.
        assert answer["text"] in {_spoken_time(now - timedelta(minutes=1)), _spoken_time(now)}
    finally:
        stop_gateway(gateway)


async def test_a_crashed_agent_is_routed_around_before_it_is_removed(tmp_path: Path) -> None:
    """An agent that answers the person's words with HTTP 500 (crashed behind its server): the
    utterance to it goes on to the next agent placed, and so do the next unaddressed ones."""
    async with WireAgent(_noop) as clock_site, WireAgent(_noop) as general_site:
        clock = served(Clock(clock_site.base))
        generalist = Generalist(general_site.base)

        crashed_yet = False

        async def crashed(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
            # It crashes from the person's first words on, on every envelope: crashing on the
            # generalist's greeting too counted against it before the person spoke, and
            # answering anything after (the generalist's reply to the person) marks it answering
            # again; both raced the test's next step (each failed runs under load).
            nonlocal crashed_yet
            events = body.get("openFloor", {}).get("events", [])
            utterances = [
                (e.get("parameters", {}).get("dialogEvent") or {}).get("speakerUri")
                for e in events
                if e.get("eventType") == "utterance"
            ]
            crashed_yet = crashed_yet or any(u != generalist.speaker_uri for u in utterances)
            if crashed_yet:
                return 500, {"error": "internal error"}
            return await clock(body)

        clock_site.respond = crashed
        general_site.respond = served(generalist)
        gateway = await asyncio.to_thread(
            start_gateway,
            tmp_path,
            *("--agent", clock_site.base, "--agent", general_site.base),
            *("--allow-address", "127.0.0.0/8"),
        )
        try:
            async with connect(gateway.ws) as ws:
                await ws.send(json.dumps({"type": "hello", "transport": "none"}))
                page = _Page(ws)
                await page.until(lambda m: m.get("reason") == "@welcome", 20)
                said = await page.say("What time is it?")
                assert said["toName"] == "Clock"
                took = await page.until(lambda m: m.get("reason") == "@handover", 10)
                assert took["text"] == "Clock is not answering; Generalist took it."
                assert (await page.answer())["text"] == "Generalist heard: What time is it?"
                said = await page.say("What is the date?")
                assert (said["toName"], said["why"]) == (
                    "Generalist",
                    "Clock is not answering; Generalist took it",
                )
                assert (await page.answer())["speaker"] == "Generalist"
        finally:
            stop_gateway(gateway)
