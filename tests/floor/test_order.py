"""In-order processing (§2.2 NORMATIVE), convener insertion, and a big conversation."""

from __future__ import annotations

import pytest

from gateway.floor import FloorBusy
from gateway.ofp import Envelope, Sender

from .helpers import CONV, by_recipient, env, ev, floor_with


def texts(deliveries, who: str) -> list[str]:
    out = []
    for d in deliveries:
        if d.recipient.speaker_uri == f"tag:{who}":
            out += [e.dialog_event.text() for e in d.envelope.events if e.dialog_event]
    return out


def test_events_keep_their_listed_order_per_recipient() -> None:
    floor = floor_with("alice", "bob")
    out = floor.receive(env("tag:alice", *[ev("utterance", text=str(i)) for i in range(5)]))
    assert texts(out, "bob") == ["0", "1", "2", "3", "4"]
    assert len(out) == 1  # one envelope per recipient per batch


def test_convener_events_are_inserted_at_the_head_of_the_remaining_list() -> None:
    floor = floor_with("chair", "alice", "bob", convener="chair")
    first = floor.receive(
        env(
            "tag:alice",
            ev("utterance", text="before"),
            ev("invite", to_url="https://new.example/ofp"),
            ev("utterance", text="after"),
        )
    )
    # "before" is delivered, then the invite goes alone to the convener and processing stops.
    assert texts(first, "bob") == ["before"]
    assert first[-1].awaits_reply and len(first[-1].envelope.events) == 1
    # Meanwhile another envelope arrives: it must wait.
    assert floor.receive(env("tag:bob", ev("utterance", text="queued"))) == []
    assert floor.queued == 1
    reply = Envelope(
        conversation={"id": CONV},
        sender=Sender(speaker_uri="tag:chair"),
        events=[
            ev("utterance", text="convener says"),
            ev("invite", to_url="https://new.example/ofp"),
        ],
    )
    rest = floor.convener_replied(reply)
    assert not floor.awaiting_convener
    assert texts(rest, "bob") == ["convener says", "after"]
    assert texts(rest, "alice") == ["convener says", "queued"]  # not her own "after"
    assert "https://new.example/ofp" in [i.speaker_uri for i in floor.conversants]
    # The convener's own events are not delegated back to it.
    assert not any(d.awaits_reply for d in rest)
    # Sender is kept per batch: the convener's events come from it, the rest from alice.
    senders = [d.envelope.sender.speaker_uri for d in rest if d.recipient.speaker_uri == "tag:bob"]
    assert senders == ["tag:chair", "tag:alice"]


def test_convener_substituting_nothing_drops_the_event() -> None:
    floor = floor_with("chair", "alice", "bob", convener="chair")
    floor.receive(env("tag:alice", ev("uninvite", to="tag:bob")))
    empty = Envelope(conversation={"id": CONV}, sender=Sender(speaker_uri="tag:chair"), events=[])
    assert floor.convener_replied(empty) == []
    assert "tag:bob" in [i.speaker_uri for i in floor.conversants]


def test_queue_is_bounded_while_waiting() -> None:
    floor = floor_with("chair", "alice", convener="chair")
    floor.max_queued = 3
    floor.receive(env("tag:alice", ev("requestFloor")))
    for _ in range(3):
        floor.receive(env("tag:alice", ev("acceptInvite")))
    with pytest.raises(FloorBusy):
        floor.receive(env("tag:alice", ev("acceptInvite")))


def test_replying_without_delegation_is_an_error() -> None:
    floor = floor_with("alice")
    with pytest.raises(RuntimeError):
        floor.convener_replied(None)


def test_five_agents_and_a_convener() -> None:
    agents = ["a1", "a2", "a3", "a4", "a5"]
    floor = floor_with("user", "chair", convener="chair")
    # The user invites five agents; each invite is delegated and approved by the convener.
    for a in agents:
        out = floor.receive(env("tag:user", ev("invite", to=f"tag:{a}", to_url=f"https://{a}/ofp")))
        assert out[-1].awaits_reply
        approve = Envelope(
            conversation={"id": CONV},
            sender=Sender(speaker_uri="tag:chair"),
            events=[out[-1].envelope.events[0]],
        )
        floor.convener_replied(approve)
    assert len(floor.conversants) == 7
    # A public utterance from the user reaches all six others.
    got = by_recipient(floor.receive(env("tag:user", ev("utterance", text="hello all"))))
    assert got == {n: ["utterance"] for n in ["chair", *agents]}
    # Agent 3 yields; its next utterance goes to the convener for a decision.
    a3 = floor.find(service_url="https://a3/ofp")
    assert a3 is not None
    floor.receive(env(a3.speaker_uri, ev("yieldFloor")))
    out = floor.receive(env(a3.speaker_uri, ev("utterance", text="me again")))
    assert len(out) == 1 and out[0].awaits_reply
    # The convener refuses (returns nothing) and revokes nobody; a whisper to a5 stays private.
    floor.convener_replied(None)
    a5 = floor.find(service_url="https://a5/ofp")
    assert a5 is not None
    out = floor.receive(env("tag:chair", ev("utterance", to=a5.speaker_uri, private=True)))
    assert [d.recipient.speaker_uri for d in out] == [a5.speaker_uri]
    # The convener leaves: the role goes with it, and the floor runs without one.
    floor.receive(env("tag:chair", ev("bye")))
    assert floor.convener is None
    assert floor.receive(env(a3.speaker_uri, ev("utterance", text="ignored now"))) == []
