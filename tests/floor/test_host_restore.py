"""A conversation taken up from its records (as another node does after a failure) goes on with
the same agents, recording only what happens after."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.floor.host import FloorHost, user_identity
from gateway.ofp import Envelope, Event, EventType, text_event
from gateway.records import SQLiteRecorder
from gateway.server.rooms import floor_state, page_history, recall_builtins
from gateway.testing.outlet import Collector


def utterance(speaker: str, text: str) -> Event:
    de = text_event(speaker, text)
    return Event(event_type=EventType.UTTERANCE, parameters={"dialog_event": de})


async def test_restored_conversation_goes_on_with_the_same_agents(tmp_path: Path):
    recorder = SQLiteRecorder(tmp_path)
    directory = AgentDirectory(AddressPolicy.from_env_and_args([]))
    user = user_identity("user:1", name="You")
    outlet = Collector()
    heard: list[Envelope] = outlet.heard
    try:
        first = FloorHost(
            "c1", user=user, resolve=directory.resolve, outlet=outlet, recorder=recorder
        )
        recorder.conversation_started("c1", at=datetime.now(UTC), user_speaker_uri=user.speaker_uri)
        await first.say([Event(event_type=EventType.INVITE, to={"serviceUrl": "builtin:parrot"})])
        await first.wait_idle(10)
        await first.say([utterance(user.speaker_uri, "before")])
        assert await first.wait_idle(10)
        await first.close()  # the node is gone; its records stay

        stored = recorder.get_conversation("c1")
        records_before = len(stored.records)
        state = floor_state(stored)
        assert state.conversants[0].speaker_uri == user.speaker_uri
        assert len(state.conversants) == 2
        history = page_history(stored)
        assert ("transcript", "before") in [(e.TYPE, e.text) for e in history]
        assert ("utterance", "You said: before") in [(e.TYPE, e.text) for e in history]

        # Another node: its own built-in agents, which never heard this conversation, are
        # replayed what was delivered to them and remember it as the first node's did.
        other_node = AgentDirectory(AddressPolicy.from_env_and_args([]))
        remembered = [d.text() for d in directory.builtins["parrot"]._memory("c1").history]
        assert "before" in remembered
        fake_gateway = SimpleNamespace(directory=other_node)
        assert recall_builtins(fake_gateway, stored, state) > 0  # type: ignore[arg-type]
        recalled = [d.text() for d in other_node.builtins["parrot"]._memory("c1").history]
        assert recalled == remembered

        heard.clear()
        again = FloorHost(
            "c1",
            user=user,
            resolve=other_node.resolve,
            outlet=outlet,
            recorder=recorder,
            restore=state,
        )
        assert len(recorder.get_conversation("c1").records) == records_before  # nothing re-recorded
        assert [i.speaker_uri for i in again.floor.conversants] == [
            i.speaker_uri for i in state.conversants
        ]
        await again.say([utterance(user.speaker_uri, "after")])
        assert await again.wait_idle(10)
        replies = [e.dialog_event.text() for env in heard for e in env.events if e.dialog_event]
        assert replies == ["You said: after"]  # the parrot answers; it was not invited again
        await again.close()
        kinds = [r.kind for r in recorder.get_conversation("c1").records[records_before:]]
        assert kinds == ["envelope"] * len(kinds) and len(kinds) >= 3  # in, out, reply in, out
        await other_node.aclose()
    finally:
        await directory.aclose()
        recorder.close()
