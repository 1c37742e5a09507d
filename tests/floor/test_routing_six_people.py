"""Issue 41's own scenario through a real `serve` process: six people, each on a page of their
own, two agents; the one each person talks with hangs, and every person's unaddressed request
during the hang is answered by the other agent, each person told in words who took it
(docs/floor.md, "Hand-overs and agents not answering")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from gateway.agents.builtin import Clock
from gateway.testing.processes import start_gateway, stop_gateway
from gateway.testing.routing_agents import Generalist, Hang, served
from gateway.testing.wire_agents import WireAgent

from .test_routing_served import _noop, _Page

pytestmark = pytest.mark.slow  # a real serve process, six clients

PEOPLE = 6


async def _person(url: str, hang: Hang, ready: asyncio.Barrier) -> dict[str, Any]:
    """One person: asks the clock (it answers), then, once every person has and the clock hangs,
    asks again; what they were told."""
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "transport": "none"}))
        page = _Page(ws)
        await page.until(lambda m: m.get("reason") == "@welcome", 30)
        said = await page.say("What time is it?")
        assert said["toName"] == "Clock"
        assert (await page.answer(20))["speaker"] == "Clock"
        if await ready.wait() == 0:
            hang.start()  # one person starts the hang, after all six were answered
        await ready.wait()
        said = await page.say("What time is it?")
        took = await page.until(lambda m: m.get("reason") == "@handover", 20)
        answer = await page.answer(20)
        # Afterwards, the next unaddressed request goes straight to the generalist.
        again = await page.say("What is the date?")
        second = await page.answer(20)
        return {"to": said["toName"], "took": took["text"], "answer": answer, "again": again,
                "second": second}  # fmt: skip


async def test_six_people_one_agent_hung_the_other_answers_each_told(tmp_path: Path) -> None:
    hang = Hang()
    async with WireAgent(_noop) as clock_site, WireAgent(_noop) as general_site:
        clock_site.respond = served(Clock(clock_site.base), hang)
        general_site.respond = served(Generalist(general_site.base))
        gateway = await asyncio.to_thread(
            start_gateway,
            tmp_path,
            *("--agent", clock_site.base, "--agent", general_site.base),
            *("--allow-address", "127.0.0.0/8"),
            *("--agent-timeout", "4"),
        )
        try:
            ready = asyncio.Barrier(PEOPLE)
            results = await asyncio.gather(
                *(_person(gateway.ws, hang, ready) for _ in range(PEOPLE))
            )
        finally:
            hang.stop()
            stop_gateway(gateway)
    assert len(results) == PEOPLE
    for r in results:
        assert r["to"] == "Clock"  # clearly the clock's, so it went to the clock first...
        assert r["took"] == "Clock is not answering; Generalist took it."  # ... each told...
        assert (r["answer"]["speaker"], r["answer"]["text"]) == (
            "Generalist",
            "Generalist heard: What time is it?",
        )  # ... and answered by the other agent
        assert (r["again"]["toName"], r["again"]["why"]) == (
            "Generalist",
            "Clock is not answering; Generalist took it",
        )
        assert r["second"]["speaker"] == "Generalist"
