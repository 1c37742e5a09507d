"""Rooms (gateway/server/rooms.py): which conversations wait for their page and which end, decided
on a time the tests give, and this node's rooms opened, found and ended against real records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.floor.host import FloorHost, user_identity
from gateway.records import SQLiteRecorder
from gateway.server import rooms
from gateway.server.app import Gateway, GatewaySettings
from gateway.server.messages import (
    AgentUtterance,
    FinalTranscript,
    FloorConversant,
    FloorUpdate,
    PageNotice,
    PartialTranscript,
    SessionState,
    StateUpdate,
)
from gateway.server.rooms import HISTORY_EVENTS, Room
from gateway.testing.outlet import Collector

REJOIN_S = 600.0


def room() -> Room:
    """A room around a conversation nobody talks in (nothing here is sent anywhere)."""
    user = user_identity("user:1", name="You")
    conversation = FloorHost(
        "conv:1", user=user, resolve=AgentDirectory(AddressPolicy()).resolve, outlet=Collector()
    )
    return Room(conversation, "token")


#: Stand-ins for pages: a room only keeps and compares them.
PAGE, OTHER_PAGE = object(), object()


def detached(at: float) -> Room:
    r = room()
    r.attach(PAGE)  # type: ignore[arg-type]
    r.detach(PAGE, at)  # type: ignore[arg-type]
    return r


def test_a_room_expires_only_rejoin_s_after_its_page_went() -> None:
    held = {"gone": detached(100.0), "here": room(), "zero": detached(0.0)}
    held["here"].attach(PAGE)  # type: ignore[arg-type]
    assert rooms.expired(held, REJOIN_S, REJOIN_S) == []  # exactly rejoin_s: still waiting
    # Detached at time 0 is detached too (a clock may start there).
    assert rooms.expired(held, REJOIN_S + 0.5, REJOIN_S) == ["zero"]
    assert rooms.expired(held, 100.0 + REJOIN_S, REJOIN_S) == ["zero"]
    assert sorted(rooms.expired(held, 100.5 + REJOIN_S, REJOIN_S)) == ["gone", "zero"]
    # A page attached never expires, however late it is.
    assert "here" not in rooms.expired(held, 1e9, REJOIN_S)


def test_beyond_the_limit_the_rooms_detached_longest_end_first() -> None:
    held = {f"r{t}": detached(float(t)) for t in (30, 10, 50, 20, 40)}
    held["attached"] = room()
    held["attached"].attach(PAGE)  # type: ignore[arg-type]
    assert rooms.beyond_limit(held, 2) == ["r10", "r20", "r30"]
    assert rooms.beyond_limit(held, 5) == []
    assert rooms.beyond_limit(held, 64) == []
    assert sorted(rooms.beyond_limit(held, 0)) == ["r10", "r20", "r30", "r40", "r50"]


def test_a_stale_page_going_does_not_detach_the_page_that_took_the_room() -> None:
    r = room()
    r.attach(PAGE)  # type: ignore[arg-type]
    r.attach(OTHER_PAGE)  # type: ignore[arg-type]  (the conversation opened in another page)
    r.detach(PAGE, 5.0)  # type: ignore[arg-type]
    assert r.connection is OTHER_PAGE and r.detached_at is None
    r.detach(OTHER_PAGE, 7.0)  # type: ignore[arg-type]
    assert r.connection is None and r.detached_at == 7.0
    r.attach(PAGE)  # type: ignore[arg-type]  (a rejoin)
    assert r.detached_at is None


def test_a_room_remembers_what_a_reloaded_page_redraws() -> None:
    r = room()
    said = FinalTranscript("hello", id="de:1", confidence=0.9)
    reply = AgentUtterance("de:2", "tag:p", "P", "You said: hello")
    notice = PageNotice("P timed out", "@timedOut", agent="tag:p")
    floor = FloorUpdate((FloorConversant("user:1", "", "You"),))
    for message in (StateUpdate(SessionState.HEARING), PartialTranscript("hel"), said, floor):
        r.remember(message)
    r.remember(reply)
    r.remember(notice)
    assert list(r.history) == [said, reply, notice]  # not states, partials or floors
    assert r.floor == floor
    newer = FloorUpdate((), floor_granted=("user:1",))
    r.remember(newer)
    assert r.floor == newer
    for i in range(HISTORY_EVENTS + 5):
        r.remember(FinalTranscript(f"t{i}"))
    assert len(r.history) == HISTORY_EVENTS and r.history[-1] == FinalTranscript(
        f"t{HISTORY_EVENTS + 4}"
    )


def test_a_reloaded_page_gets_the_whole_request_once_after_a_continuation() -> None:
    # The person went on after "Turn on the lights." was sent and answered: the whole request
    # replaces it, its answer goes, a notice between them stays (as web/state.js does).
    r = room()
    before = FinalTranscript("hello", id="de:0")
    part = FinalTranscript("Turn on the lights.", id="de:1")
    early = AgentUtterance("de:2", "tag:p", "P", "You said: Turn on the lights.")
    notice = PageNotice("P is slow", "@wait", agent="tag:p")
    whole = FinalTranscript("Turn on the lights in the kitchen.", id="de:3", replaces="de:1")
    answer = AgentUtterance("de:4", "tag:p", "P", "You said: Turn on the lights in the kitchen.")
    for message in (before, part, early, notice, whole, answer):
        r.remember(message)
    assert list(r.history) == [before, notice, whole, answer]
    r.remember(FinalTranscript("again", id="de:5", replaces="de:unknown"))  # nothing to take back
    assert list(r.history)[-1].id == "de:5" and len(r.history) == 5


class Clock:
    """The gateway's time, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[tuple[Gateway, Clock, SQLiteRecorder]]:
    recorder = SQLiteRecorder(tmp_path)
    clock = Clock()
    settings = GatewaySettings(agents=("builtin:parrot",), max_detached=1, node="n1")
    models: Any = None  # no session is opened here: rooms never touch the models
    gw = Gateway(
        settings,
        models=models,
        directory=AgentDirectory(AddressPolicy()),
        recorder=recorder,
        clock=clock,
    )
    yield gw, clock, recorder
    recorder.close()


async def test_rooms_are_opened_found_and_ended_on_the_gateways_clock(gateway) -> None:
    gw, clock, recorder = gateway
    first_id, first = await gw.rooms.open()
    second_id, second = await gw.rooms.open()
    try:
        assert gw.rooms == {first_id: first, second_id: second}
        holder = recorder.holder(first_id)
        assert holder is not None and holder.node == "n1" and holder.ended_at is None
        assert gw.rooms.find(first_id, first.token) is first
        assert gw.rooms.find(first_id, second.token) is None
        assert gw.rooms.find(first_id, None) is None
        assert gw.rooms.token_ok(first_id, first.token)

        first.attach(PAGE)  # type: ignore[arg-type]
        first.detach(PAGE, clock())  # type: ignore[arg-type]
        clock.now += 10
        second.attach(PAGE)  # type: ignore[arg-type]
        second.detach(PAGE, clock())  # type: ignore[arg-type]
        clock.now += REJOIN_S - 5  # the first page went REJOIN_S + 5 s ago, the second not yet
        assert gw.rooms.expired(clock(), REJOIN_S) == [first_id]

        # Two detached, max_detached=1: the gateway ends the one detached longest.
        await gw._trim_detached()
        assert list(gw.rooms) == [second_id]
        ended = recorder.holder(first_id)
        assert ended is not None and ended.ended_at is not None
        assert recorder.get_conversation(first_id).info.status == "completed"
        # Ended is ended: the token no longer opens it from the records either.
        assert await gw.rooms.resume(first_id, first.token) is None
    finally:
        await gw.close()
    # Closing ends the rest.
    assert gw.rooms == {}
    assert recorder.get_conversation(second_id).info.status == "closed"
