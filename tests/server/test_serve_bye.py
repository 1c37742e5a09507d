"""A real `serve` process tells remote agents `bye` when a conversation ends: when its page went
and did not come back within `--rejoin`, and when the server shuts down (bounded, even when an
agent never answers the bye)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from gateway.floor.host import Limits
from gateway.testing.processes import start_gateway, stop_gateway
from gateway.testing.wire_agents import WireAgent, openfloor_bot
from tests.ofp_schemas import assert_valid_envelope

pytestmark = pytest.mark.slow  # a real serve process


async def _until(pred, timeout: float, what: object) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not seen in {timeout} s: {what() if callable(what) else what}")


def _gave_up(log: Path) -> int:
    """Conversations whose end gave up on an agent's bye at Limits.bye_timeout_s."""
    return log.read_text().count(
        f"did not take its bye within {Limits().bye_timeout_s:g} s; ended anyway"
    )


def _byes(agent: WireAgent) -> list[dict]:
    return [
        b
        for b in agent.bodies("received")
        if [e["eventType"] for e in b["openFloor"]["events"]] == ["bye"]
    ]


def _invited(agent: WireAgent) -> int:
    """Invites of this agent it received (it also sees the others' invites pass by)."""
    return sum(
        1
        for b in agent.bodies("received")
        for e in b["openFloor"]["events"]
        if e["eventType"] == "invite" and e["to"]["serviceUrl"] == agent.base
    )


async def test_serve_says_bye_when_a_room_expires_and_when_it_shuts_down(tmp_path: Path) -> None:
    async with WireAgent(openfloor_bot("")) as alive, WireAgent(openfloor_bot("")) as dead:
        alive.respond = openfloor_bot(alive.base, "Alive")
        dead.respond = openfloor_bot(dead.base, "Dead", hang_on_bye=24 * 3600)  # never
        served = await asyncio.to_thread(
            start_gateway,
            tmp_path,
            "--agent",
            alive.base,
            "--agent",
            dead.base,
            "--allow-address",
            "127.0.0.0/8",
            "--rejoin",
            "1",
        )
        try:
            # A page says hello, the agents are invited, the page goes and never comes back.
            async with connect(served.ws) as ws:
                await ws.send(json.dumps({"type": "hello", "transport": "none"}))
                welcome = json.loads(await ws.recv())
                assert welcome["type"] == "welcome"
                await _until(lambda: _invited(alive) == 1 and _invited(dead) == 1, 20, "invites")
                assert _byes(alive) == []  # nothing ends while the page is there
            await _until(lambda: len(_byes(alive)) == 1, 20, "a bye after the rejoin window")
            await _until(lambda: len(_byes(dead)) == 1, 5, "the bye sent to the dead agent")
            await _until(lambda: _gave_up(served.log) == 1, 30, "the bye wait given up on")
            bye = _byes(alive)[0]
            assert_valid_envelope(bye)
            assert bye["openFloor"]["conversation"]["id"] == welcome["conversationId"]
            assert bye["openFloor"]["sender"]["speakerUri"].startswith(
                "tag:ofp-gateway.local,2025:user:"
            )
            assert "parameters" not in bye["openFloor"]["events"][0]

            # A second page is still there when the server is stopped: its agents are told too,
            # and the dead one, which never answers, holds the shutdown up by the bye timeout.
            async with connect(served.ws) as ws:
                await ws.send(json.dumps({"type": "hello", "transport": "none"}))
                assert json.loads(await ws.recv())["type"] == "welcome"
                await _until(lambda: _invited(alive) == 2 and _invited(dead) == 2, 20, "invites")
                served.proc.terminate()
                # The dead agent never answers, so only the bound lets the process end (the
                # 60 s only turns a missing bound into a failure instead of a hang).
                code = await asyncio.to_thread(served.proc.wait, 60)
        finally:
            if served.proc.poll() is None:
                stop_gateway(served)
        assert code == 0
        assert len(_byes(alive)) == 2 and len(_byes(dead)) == 2
        # Both ends (the expired room and the shutdown) gave up on the dead agent's bye.
        assert _gave_up(served.log) == 2, served.log.read_text()[-3000:]
