"""The person's proxy's events as the page's messages (gateway/server/page_events.py)."""

from __future__ import annotations

import typing

from gateway.floor.manager import Floor
from gateway.ofp import Identification, text_event
from gateway.proxy import events
from gateway.server.messages import (
    AgentUtterance,
    FinalTranscript,
    FloorUpdate,
    Flush,
    Manifests,
    PageNotice,
    PartialTranscript,
    Playback,
    SessionState,
    StateUpdate,
    WakeHeard,
)
from gateway.server.page_events import manifests, page_message


def _who(name: str) -> Identification:
    return Identification(
        speaker_uri=f"tag:test,2026:{name}",
        service_url=f"http://127.0.0.1/{name}",
        organization="test",
        conversational_name=name,
        synopsis="",
    )


def test_every_proxy_event_has_its_page_message() -> None:
    floor = Floor("conv", manager=_who("manager"))
    said = text_event("tag:test,2026:clock", "It is noon.")
    cases = [
        (events.StateShown("hearing"), StateUpdate(SessionState.HEARING)),
        (events.PartialText("turn on"), PartialTranscript("turn on")),
        (
            events.Transcribed("Hi", id="de:1", confidence=0.9, to="a", to_name="A", why="named"),
            FinalTranscript("Hi", id="de:1", confidence=0.9, to="a", to_name="A", why="named"),
        ),
        (events.Transcribed("Stop", command="stop"), FinalTranscript("Stop", command="stop")),
        (
            events.AgentSaid(said.id, said.speaker_uri, "Clock", "It is noon.", dialog_event=said),
            AgentUtterance.of(said, speaker="Clock", private=False),
        ),
        (
            events.AgentSaid("de:2", "tag:test,2026:a", "A", "So far", private=True),
            AgentUtterance("de:2", "tag:test,2026:a", "A", "So far", private=True),
        ),
        (events.FloorChanged.of(floor), FloorUpdate(())),
        (events.Flushed(), Flush()),
        (
            events.Overlapped("resumed", "backchannel", "yeah", "de:2", 1240),
            Playback("resumed", "backchannel", "yeah", "de:2", played_ms=1240),
        ),
        (  # the agent went on before the decision: no why yet
            events.Overlapped("resumed", heard="okay", reply="de:2", played_ms=640),
            Playback("resumed", None, "okay", "de:2", played_ms=640),
        ),
        (
            events.Overlapped("stopped", "interruption", "wait", "de:2", 900, "Once upon"),
            Playback("stopped", "interruption", "wait", "de:2", played_ms=900, said="Once upon"),
        ),
        (events.Told("Gone.", "@left", agent="a"), PageNotice("Gone.", "@left", agent="a")),
        (events.WakeWordHeard("alexa"), WakeHeard("alexa")),
    ]
    for event, message in cases:
        assert page_message(event) == message, event
    kinds = {type(e) for e, _ in cases}
    assert kinds == set(typing.get_args(events.ProxyEvent))


def test_a_floor_event_is_the_floor_when_it_changed_not_when_it_is_sent() -> None:
    floor = Floor("conv", manager=_who("manager"))
    floor.join(_who("clock"))
    changed = events.FloorChanged.of(floor)
    floor.join(_who("parrot"))  # the floor goes on changing before the page is sent the first
    update = page_message(changed)
    assert isinstance(update, FloorUpdate)
    assert [c.name for c in update.conversants] == ["clock"]


def test_what_discover_found_is_the_pages_manifests_answer() -> None:
    found = events.Discovery(
        "https://agents.example/concierge",
        (events.FoundAgent("https://x", "tag:x", "X", "does x", ("x",), 0.5, True),),
    )
    answer = manifests(found)
    assert isinstance(answer, Manifests) and answer.error is None
    assert answer.manifests[0].name == "X" and answer.manifests[0].recommended
    failed = manifests(events.Discovery("https://y", error="it did not answer in time"))
    assert failed.manifests == () and failed.error == "it did not answer in time"
