"""Readiness states and the drain, on a stand-in gateway (no models, no sockets)."""

from __future__ import annotations

import asyncio
import json
import time
from http import HTTPStatus
from types import SimpleNamespace
from typing import Any

from gateway.server.readiness import HANDOVER_CODE, drain, readiness, turns_in_progress


class FakeWs:
    def __init__(self) -> None:
        self.closed: tuple[int, str] | None = None

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


def client(state: str = "listening", idle: bool = True) -> Any:
    conversation = SimpleNamespace(floor_idle=idle)
    return SimpleNamespace(
        session=SimpleNamespace(state=state, conversation=conversation), ws=FakeWs()
    )


def gateway(*, ready: bool = True, draining: bool = False, refusal: str | None = None) -> Any:
    return SimpleNamespace(
        ready=ready,
        draining=draining,
        node="n1",
        clients=[],
        rooms={},
        recorder=None,
        settings=SimpleNamespace(max_sessions=12),
        models=SimpleNamespace(services=[]),  # speech in process
        refusal=lambda: refusal,
    )


def state(gw: Any) -> tuple[HTTPStatus, str]:
    status, body = readiness(gw)
    return status, json.loads(body)["state"]


def test_each_state_and_only_ready_is_200():
    assert state(gateway()) == (HTTPStatus.OK, "ready")
    assert state(gateway(ready=False)) == (HTTPStatus.SERVICE_UNAVAILABLE, "loading models")
    assert state(gateway(draining=True)) == (HTTPStatus.SERVICE_UNAVAILABLE, "draining")
    assert state(gateway(refusal="the gateway is full")) == (
        HTTPStatus.SERVICE_UNAVAILABLE,
        "full",
    )


def test_a_turn_is_in_progress_while_hearing_thinking_speaking_or_delivering():
    gw = gateway()
    gw.clients = [client(), client("idle")]
    assert turns_in_progress(gw) == 0
    for busy in (client("hearing"), client("thinking"), client("speaking"), client(idle=False)):
        gw.clients = [client(), busy]
        assert turns_in_progress(gw) == 1


async def test_drain_refuses_at_once_waits_for_turns_then_hands_over():
    gw = gateway()
    busy, quiet = client("speaking"), client()
    gw.clients = [busy, quiet]
    # An hour's timeout: only the turn ending can end this drain (the wait_for below is a guard
    # that turns a drain not noticing it into a failure instead of a hang).
    task = asyncio.get_running_loop().create_task(drain(gw, timeout_s=3600))
    await asyncio.sleep(0.3)
    assert gw.draining and state(gw)[1] == "draining"
    assert busy.ws.closed is None and quiet.ws.closed is None  # the turn is let finish
    busy.session.state = "listening"
    assert await asyncio.wait_for(task, 60) == 0
    assert busy.ws.closed is not None and busy.ws.closed[0] == HANDOVER_CODE
    assert quiet.ws.closed is not None and quiet.ws.closed[0] == HANDOVER_CODE


async def test_drain_gives_up_waiting_after_its_timeout():
    gw = gateway()
    stuck = client("thinking")
    gw.clients = [stuck]
    started = time.monotonic()
    # The turn never ends: only the timeout ends the drain, which says it cut one turn short.
    assert await asyncio.wait_for(drain(gw, timeout_s=0.5), 60) == 1
    assert time.monotonic() - started >= 0.5  # not before its timeout (no machine is early)
    assert stuck.ws.closed is not None and stuck.ws.closed[0] == HANDOVER_CODE
